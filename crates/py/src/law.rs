//! Bindings of the working-set law (`superlinear_core::law`): a `LawModel` holding one item
//! sequence (and, for key workloads, the keys dispatchers route on) that evaluates ℓ(k), q(k)
//! and S(k) per dispatcher and k. Python drives the loop over k (and shows progress).

use crate::convert::{record, to_py};
use crate::{workload_from, SuperlinearError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use superlinear_core::law::{self, Access, Evaluator, ItemSequence};

/// One item sequence under one cost function.
#[pyclass(module = "superlinear._native", name = "LawModel")]
pub struct LawModel {
    keys: Vec<u64>,
    seed: u64,
    evaluator: Evaluator,
}

fn check_s(s: f64) -> PyResult<()> {
    if (0.0..=1.0).contains(&s) {
        Ok(())
    } else {
        Err(SuperlinearError::new_err(format!("serial fraction s must be in [0, 1], got {s}")))
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
        let cost = law::cost_function(algo, rho).map_err(to_py)?;
        let w = py.allow_threads(|| law::key_workload(&spec, requests, seed)).map_err(to_py)?;
        Ok(Self { keys: w.keys, seed, evaluator: Evaluator::new(w.items, cost) })
    }

    /// Item ids given directly: `items[t]` is request t's item as its position in the initial
    /// order (0..m; ≥ m: absent). Dispatch then comes as worker assignments (`point_assigned`).
    #[staticmethod]
    #[pyo3(signature = (items, m, algo, rho = 0))]
    fn from_items(items: Vec<u32>, m: usize, algo: &str, rho: u64) -> PyResult<Self> {
        let cost = law::cost_function(algo, rho).map_err(to_py)?;
        let items = ItemSequence::new(items, m).map_err(to_py)?;
        Ok(Self { keys: Vec::new(), seed: 0, evaluator: Evaluator::new(items, cost) })
    }

    /// Number of requests.
    #[getter]
    fn requests(&self) -> usize {
        self.evaluator.items().len()
    }

    /// Items in the initial order.
    #[getter]
    fn m(&self) -> usize {
        self.evaluator.items().m()
    }

    /// The algorithm (`mtf`, `lru:C`).
    #[getter]
    fn algo(&self) -> String {
        self.evaluator.cost().name()
    }

    /// The single worker's stats: T(1) is its `work`.
    fn baseline<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let stats = py.allow_threads(|| self.evaluator.baseline());
        record(py, &stats.record())
    }

    /// The law at k under the engine's key dispatcher `dispatch`, seeded as the engine would.
    #[pyo3(signature = (dispatch, k, s = 0.0))]
    fn point<'py>(&mut self, py: Python<'py>, dispatch: &str, k: usize, s: f64) -> PyResult<Bound<'py, PyAny>> {
        check_s(s)?;
        if self.keys.is_empty() && !self.evaluator.items().is_empty() {
            return Err(SuperlinearError::new_err(
                "this model holds item ids only: give the dispatch as worker assignments (point_assigned)",
            ));
        }
        let candidate = law::key_candidate(dispatch, &self.keys, self.seed).map_err(to_py)?;
        let evaluator = &mut self.evaluator;
        let point = py.allow_threads(|| evaluator.candidate(&candidate, k)).map_err(to_py)?;
        record(py, &point.record(s))
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
        let point = py.allow_threads(|| self.evaluator.assigned(&workers, k)).map_err(to_py)?;
        record(py, &point.record(s))
    }

    /// |W_t(x)| of every request on its worker (single worker without `workers`); -1 marks an
    /// item's first access on its worker, -2 a key outside the item set of a list.
    #[pyo3(signature = (workers = None, k = 1))]
    fn working_sets(&mut self, py: Python<'_>, workers: Option<Vec<u32>>, k: usize) -> PyResult<Vec<i64>> {
        let accesses = py.allow_threads(|| self.evaluator.accesses(workers.as_deref(), k)).map_err(to_py)?;
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
