//! Bindings of `superlinear-cache` (delayed hits, thesis ch. 2): a trace class, the simulator,
//! the policy registry, Belatedly's flow network as LP arrays plus its rounding, the exhaustive
//! optimum and the speed benchmark. Every function is prefixed `latency_`; no logic here.
//! `python/superlinear/latency.py` is their user.

use crate::convert::{dict_list, record, settings, to_py};
use crate::SuperlinearError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde::Serialize;
use std::sync::Arc;
use superlinear_cache::belatedly::{round_schedules, FlowNetwork, Rounding};
use superlinear_cache::bench::time_policy;
use superlinear_cache::generate::{write_text, TraceSpec};
use superlinear_cache::optimal::{optimal_latency, Model};
use superlinear_cache::policies::{self, REGISTRY};
use superlinear_cache::{simulate, LatencyTrace as Trace, MissLatency, PolicyContext, SimReport, Timing};
use superlinear_core::workload::write_binary_trace;
use superlinear_core::Error;

/// A simulation's report with extra figures (mean Z, CPU time and rate, or the rounding).
#[derive(Serialize)]
struct ReportRecord<'a, X: Serialize> {
    #[serde(flatten)]
    report: &'a SimReport,
    #[serde(flatten)]
    extra: X,
}

#[derive(Serialize)]
struct MeanZ {
    mean_z: f64,
}

#[derive(Serialize)]
struct Speed {
    cpu_ns: u64,
    requests_per_s: f64,
}

#[derive(Serialize)]
struct RoundingName {
    rounding: String,
}

/// A request trace for the delayed-hits model (immutable, shared without copies).
#[pyclass(frozen, module = "superlinear._native")]
pub struct LatencyTrace {
    inner: Arc<Trace>,
}

impl LatencyTrace {
    fn z(&self, z: Option<u64>) -> PyResult<MissLatency> {
        self.inner.miss_latency(z).map_err(to_py)
    }
}

#[pymethods]
impl LatencyTrace {
    /// Reads a text (`OBJECT [TIMESTAMP [LATENCY]]`) or binary (`SLKT`) trace.
    #[staticmethod]
    fn read(py: Python<'_>, path: &str) -> PyResult<Self> {
        let t = py.allow_threads(|| Trace::read(path)).map_err(to_py)?;
        Ok(Self { inner: Arc::new(t) })
    }

    /// A trace from object keys (numbered by first appearance).
    #[staticmethod]
    fn from_keys(keys: Vec<u64>) -> PyResult<Self> {
        Ok(Self { inner: Arc::new(Trace::from_keys(&keys).map_err(to_py)?) })
    }

    /// Generates bursty and paced objects; returns the trace and which objects are bursty.
    #[staticmethod]
    fn generate(py: Python<'_>, spec: &Bound<'_, PyDict>) -> PyResult<(Self, Vec<bool>)> {
        let spec: TraceSpec = settings(spec)?;
        let g = py.allow_threads(|| spec.generate()).map_err(to_py)?;
        let objects = g.bursty.len();
        let t = Trace::from_requests(g.requests, objects).map_err(to_py)?;
        Ok((Self { inner: Arc::new(t) }, g.bursty))
    }

    /// Requests (time steps).
    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Distinct objects.
    #[getter]
    fn objects(&self) -> usize {
        self.inner.objects
    }

    /// Objects the requests name at least once: a generated trace draws from `objects`, and a
    /// short one names only some of them.
    #[getter]
    fn requested_objects(&self) -> usize {
        let mut seen = vec![false; self.inner.objects];
        self.inner.requests.iter().filter(|&&o| !std::mem::replace(&mut seen[o as usize], true)).count()
    }

    /// Mean inter-request time in timestamp units, if the trace has timestamps.
    #[getter]
    fn mean_interval(&self) -> Option<f64> {
        self.inner.mean_interval
    }

    /// Whether the trace has a latency column.
    #[getter]
    fn has_latencies(&self) -> bool {
        self.inner.latencies.is_some()
    }

    /// The object of every request.
    fn requests(&self) -> Vec<u32> {
        self.inner.requests.clone()
    }

    /// Z of every object (`z` for all, or from the latency column).
    #[pyo3(signature = (z = None))]
    fn miss_latencies(&self, z: Option<u64>) -> PyResult<Vec<u64>> {
        let m = self.z(z)?;
        Ok((0..self.inner.objects as u32).map(|o| m.of(o)).collect())
    }

    /// Writes the trace: binary `SLKT` (objects only), or text with the step as timestamp and,
    /// when given, each object's Z as latency.
    #[pyo3(signature = (path, binary = false, latencies = None))]
    fn write(&self, py: Python<'_>, path: &str, binary: bool, latencies: Option<Vec<u64>>) -> PyResult<()> {
        if let Some(l) = &latencies {
            if l.len() != self.inner.objects {
                return Err(SuperlinearError::new_err(format!(
                    "{} latencies for {} objects",
                    l.len(),
                    self.inner.objects
                )));
            }
        }
        let t = Arc::clone(&self.inner);
        py.allow_threads(move || {
            if binary {
                let keys: Vec<u64> = t.requests.iter().map(|&o| o as u64).collect();
                write_binary_trace(path, &keys)
            } else {
                write_text(path, &t.requests, latencies.as_deref())
            }
        })
        .map_err(to_py)
    }
}

/// The eviction policies: name, offline, latency_aware, summary.
#[pyfunction]
fn latency_policies(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    dict_list(py, REGISTRY, |d, e| {
        d.set_item("name", e.name)?;
        d.set_item("offline", e.offline)?;
        d.set_item("latency_aware", e.latency_aware)?;
        d.set_item("summary", e.summary)
    })
}

/// One simulation: `z` for every object (or `None`: the trace's latency column); `classical`
/// fills before the next request (no delayed hits).
#[pyfunction]
#[pyo3(signature = (trace, policy, z, capacity, classical = false))]
fn latency_simulate<'py>(
    py: Python<'py>,
    trace: &LatencyTrace,
    policy: &str,
    z: Option<u64>,
    capacity: usize,
    classical: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let zl = trace.z(z)?;
    let t = Arc::clone(&trace.inner);
    let r = py
        .allow_threads(|| {
            let ctx = PolicyContext { requests: &t.requests, objects: t.objects, z: &zl, capacity };
            let mut p = policies::build(policy, &ctx)?;
            let timing = if classical { Timing::Classical } else { Timing::Delayed };
            let report = simulate(&t.requests, t.objects, &zl, capacity, p.as_mut(), timing);
            superlinear_core::cancel::check()?;
            Ok::<_, Error>(report)
        })
        .map_err(to_py)?;
    record(py, &ReportRecord { report: &r, extra: MeanZ { mean_z: zl.mean_over(&t.requests) } })
}

/// Simulator speed of one policy: the report plus thread CPU time (kind: measured).
#[pyfunction]
#[pyo3(signature = (trace, policy, z, capacity))]
fn latency_bench<'py>(
    py: Python<'py>,
    trace: &LatencyTrace,
    policy: &str,
    z: Option<u64>,
    capacity: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let zl = trace.z(z)?;
    let t = Arc::clone(&trace.inner);
    let s = py.allow_threads(|| time_policy(policy, &t.requests, t.objects, &zl, capacity)).map_err(to_py)?;
    record(
        py,
        &ReportRecord { report: &s.report, extra: Speed { cpu_ns: s.cpu_ns, requests_per_s: s.requests_per_second() } },
    )
}

/// The optimal latency of a tiny instance by exhaustive search; `any_time` allows evictions
/// at every step (the thesis' model), otherwise only at fills (the simulator's).
#[pyfunction]
#[pyo3(signature = (trace, z, capacity, any_time = false))]
fn latency_optimal(
    py: Python<'_>,
    trace: &LatencyTrace,
    z: Option<u64>,
    capacity: usize,
    any_time: bool,
) -> PyResult<u64> {
    let zl = trace.z(z)?;
    let t = Arc::clone(&trace.inner);
    let model = if any_time { Model::AnyTime } else { Model::AtFills };
    py.allow_threads(|| optimal_latency(&t.requests, t.objects, &zl, capacity, model)).map_err(to_py)
}

/// Belatedly's flow network for one trace, Z and capacity, as LP arrays; rounds solutions.
#[pyclass(frozen, module = "superlinear._native")]
pub struct LatencyLp {
    net: FlowNetwork,
    trace: Arc<Trace>,
    z: MissLatency,
}

#[pymethods]
impl LatencyLp {
    #[new]
    #[pyo3(signature = (trace, z, capacity))]
    fn new(py: Python<'_>, trace: &LatencyTrace, z: Option<u64>, capacity: usize) -> PyResult<Self> {
        let zl = trace.z(z)?;
        let t = Arc::clone(&trace.inner);
        let net = py.allow_threads(|| FlowNetwork::build(&t.requests, t.objects, &zl, capacity)).map_err(to_py)?;
        Ok(Self { net, trace: t, z: zl })
    }

    /// minimise cost·x + constant subject to A x = rhs, lower ≤ x ≤ upper; A as CSR.
    fn arrays<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        record(py, &self.net)
    }

    /// Variables, rows, non-zeros and caching intervals.
    fn size<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        record(py, &self.net.size())
    }

    /// Total latency of a solution: constant + cost·x.
    fn latency(&self, x: Vec<f64>) -> PyResult<f64> {
        self.check(&x)?;
        Ok(self.net.latency(&x))
    }

    /// Rounds `x` by threshold and `random` times at random; each schedule is replayed by the
    /// simulator. Returns one report per rounding with its name.
    #[pyo3(signature = (x, random = 4, seed = 1))]
    fn round<'py>(&self, py: Python<'py>, x: Vec<f64>, random: usize, seed: u64) -> PyResult<Bound<'py, PyAny>> {
        self.check(&x)?;
        let outcomes = py.allow_threads(|| round_schedules(&self.net, &x, &self.trace.requests, &self.z, random, seed));
        superlinear_core::cancel::check().map_err(to_py)?;
        let records: Vec<_> = outcomes
            .iter()
            .map(|o| ReportRecord {
                report: &o.report,
                extra: RoundingName {
                    rounding: match o.rounding {
                        Rounding::Threshold => "threshold".to_string(),
                        Rounding::Classes => "classes".to_string(),
                        Rounding::Random(s) => format!("random:{s}"),
                    },
                },
            })
            .collect();
        record(py, &records)
    }
}

impl LatencyLp {
    fn check(&self, x: &[f64]) -> PyResult<()> {
        if x.len() != self.net.cost.len() {
            return Err(SuperlinearError::new_err(format!(
                "solution has {} values for {} variables",
                x.len(),
                self.net.cost.len()
            )));
        }
        Ok(())
    }
}

/// Registers the classes and functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<LatencyTrace>()?;
    m.add_class::<LatencyLp>()?;
    m.add_function(wrap_pyfunction!(latency_policies, m)?)?;
    m.add_function(wrap_pyfunction!(latency_simulate, m)?)?;
    m.add_function(wrap_pyfunction!(latency_bench, m)?)?;
    m.add_function(wrap_pyfunction!(latency_optimal, m)?)?;
    Ok(())
}
