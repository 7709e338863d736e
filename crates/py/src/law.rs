//! Bindings of the working-set law (`superlinear_core::law`): a `LawModel` holding one item
//! sequence (and, for key workloads, the keys dispatchers route on) that evaluates ℓ(k), q(k)
//! and S(k) per dispatcher and k. Python drives the loop over k (and shows progress).
//!
//! Algorithms with a cost function of the working set (`mtf`, `lru:C`) take the law; every
//! other engine worker (`splay`, ...) takes the exact simulation of `law::simulate`. The model
//! names itself (`model`), so that every printed number says which one made it.

use crate::convert::{record, to_py};
use crate::{workload_from, SuperlinearError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use superlinear_core::law::{self, Access, Evaluator, ItemSequence, Simulator};
use superlinear_core::workers::AlgoSpec;

/// One item sequence under one cost function.
#[pyclass(module = "superlinear._native", name = "LawModel")]
pub struct LawModel {
    keys: Vec<u64>,
    seed: u64,
    model: Model,
}

/// The working-set law, or the simulation of the engine's worker.
enum Model {
    Law(Evaluator),
    Simulation(Simulator),
}

/// Whether `algo` has a cost function of the working set (else it is simulated); an unknown or
/// malformed name has none (building its model then says what is wrong with it).
fn has_law(algo: &str) -> bool {
    AlgoSpec::parse(algo).is_ok_and(|spec| spec.entry().law.is_some())
}

fn check_s(s: f64) -> PyResult<()> {
    if (0.0..=1.0).contains(&s) {
        Ok(())
    } else {
        Err(SuperlinearError::new_err(format!(
            "serial fraction s must be in [0, 1], got {}",
            superlinear_core::error::number_text(s)
        )))
    }
}

#[pymethods]
impl LawModel {
    /// A key workload (dict as in `run`'s config), generated or read exactly as an engine run
    /// with the same `requests` and `seed` (traces: `requests` = 0 takes all of it).
    #[staticmethod]
    #[pyo3(signature = (workload, requests, seed, algo, rho = 0))]
    fn from_workload(
        py: Python<'_>,
        workload: &Bound<'_, PyDict>,
        requests: usize,
        seed: u64,
        algo: &str,
        rho: u64,
    ) -> PyResult<Self> {
        let spec = workload_from(workload)?;
        if !has_law(algo) {
            AlgoSpec::parse(algo).map_err(to_py)?;
            let w = py.allow_threads(|| law::key_workload(&spec, requests, seed)).map_err(to_py)?;
            let sim = Simulator::new(algo, rho, w.item_keys, w.keys.clone()).map_err(to_py)?;
            return Ok(Self { keys: w.keys, seed, model: Model::Simulation(sim) });
        }
        let cost = law::cost_function(algo, rho).map_err(to_py)?;
        let w = py.allow_threads(|| law::key_workload(&spec, requests, seed)).map_err(to_py)?;
        Ok(Self { keys: w.keys, seed, model: Model::Law(Evaluator::new(w.items, cost)) })
    }

    /// Item ids given directly: `items[t]` is request t's item as its position in the initial
    /// order (0..m; ≥ m: absent). Dispatch then comes as worker assignments (`point_assigned`).
    #[staticmethod]
    #[pyo3(signature = (items, m, algo, rho = 0))]
    fn from_items(items: Vec<u32>, m: usize, algo: &str, rho: u64) -> PyResult<Self> {
        let cost = law::cost_function(algo, rho).map_err(to_py)?;
        let items = ItemSequence::new(items, m).map_err(to_py)?;
        Ok(Self { keys: Vec::new(), seed: 0, model: Model::Law(Evaluator::new(items, cost)) })
    }

    /// Number of requests.
    #[getter]
    fn requests(&self) -> usize {
        match &self.model {
            Model::Law(e) => e.items().len(),
            Model::Simulation(s) => s.requests(),
        }
    }

    /// Items in the initial order.
    #[getter]
    fn m(&self) -> usize {
        match &self.model {
            Model::Law(e) => e.items().m(),
            Model::Simulation(s) => s.m(),
        }
    }

    /// The algorithm (`mtf`, `lru:C`, `splay`, ...).
    #[getter]
    fn algo(&self) -> String {
        match &self.model {
            Model::Law(e) => e.cost().name(),
            Model::Simulation(s) => s.name(),
        }
    }

    /// Which model makes the numbers: `working-set law` or `exact simulation of the ALGO worker`.
    #[getter]
    fn model(&self) -> String {
        match &self.model {
            Model::Law(_) => "working-set law".into(),
            Model::Simulation(s) => format!("exact simulation of the {} worker", s.name()),
        }
    }

    /// The single worker's stats: T(1) is its `work`.
    fn baseline<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let model = &mut self.model;
        let stats = py.allow_threads(|| match model {
            Model::Law(e) => e.baseline(),
            Model::Simulation(s) => s.baseline(),
        });
        // A pass a stop request cut short counted part of the stream: no figure to give.
        superlinear_core::cancel::check().map_err(to_py)?;
        record(py, &stats.record())
    }

    /// The law at k under the engine's key dispatcher `dispatch`, seeded as the engine would.
    #[pyo3(signature = (dispatch, k, s = 0.0))]
    fn point<'py>(&mut self, py: Python<'py>, dispatch: &str, k: usize, s: f64) -> PyResult<Bound<'py, PyAny>> {
        check_s(s)?;
        if self.keys.is_empty() && self.requests() > 0 {
            return Err(SuperlinearError::new_err(
                "this model holds item ids only: give the dispatch as worker assignments (point_assigned)",
            ));
        }
        let candidate = law::key_candidate(dispatch, &self.keys, self.seed).map_err(to_py)?;
        let model = &mut self.model;
        let rec = py
            .allow_threads(|| match model {
                Model::Law(e) => e.candidate(&candidate, k).map(|p| p.record(s)),
                Model::Simulation(sim) => sim.candidate(&candidate, k).map(|p| law::simulated_record(&p, s)),
            })
            .map_err(to_py)?;
        record(py, &rec)
    }

    /// The law at k for given workers: `workers[t]` in 0..k serves request t.
    #[pyo3(signature = (workers, k, s = 0.0))]
    fn point_assigned<'py>(
        &mut self,
        py: Python<'py>,
        workers: Vec<u32>,
        k: usize,
        s: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        check_s(s)?;
        let model = &mut self.model;
        let rec = py
            .allow_threads(|| match model {
                Model::Law(e) => e.assigned(&workers, k).map(|p| p.record(s)),
                Model::Simulation(sim) => sim.assigned(&workers, k).map(|p| law::simulated_record(&p, s)),
            })
            .map_err(to_py)?;
        record(py, &rec)
    }

    /// |W_t(x)| of every request on its worker (single worker without `workers`); -1 marks an
    /// item's first access on its worker, -2 a key outside the item set of a list.
    #[pyo3(signature = (workers = None, k = 1))]
    fn working_sets(&mut self, py: Python<'_>, workers: Option<Vec<u32>>, k: usize) -> PyResult<Vec<i64>> {
        let Model::Law(evaluator) = &mut self.model else {
            return Err(SuperlinearError::new_err(format!(
                "{} has no working-set law: its prediction is a simulation, without working sets",
                self.algo()
            )));
        };
        let accesses = py.allow_threads(|| evaluator.accesses(workers.as_deref(), k)).map_err(to_py)?;
        Ok(accesses
            .into_iter()
            .map(|a| match a {
                Access::Repeat { working_set } => working_set as i64,
                Access::First { .. } => -1,
                Access::Absent => -2,
            })
            .collect())
    }
}

/// Registers the law's bindings.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<LawModel>()
}
