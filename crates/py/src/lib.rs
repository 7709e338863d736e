//! Thin PyO3 bindings of `superlinear-core`: config dicts in as the crates' typed settings,
//! result records out as dicts, no logic.
//! The Python package `superlinear` owns the user-facing API, the CLI and the experiments.

mod cachetier;
mod classify;
mod convert;
mod latency;
mod law;
mod memory_probe;
mod nftbench;
mod sched;
mod xdp;

use convert::{checked, defaults_of, dict_list, record, settings, to_py, CONFIG_NAMES};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use superlinear_core::config::{RunSettings, WorkloadSettings};
use superlinear_core::run_config::execute;
use superlinear_core::workers::{AlgoSpec, REGISTRY as WORKERS};
use superlinear_core::workload::{read_trace as core_read_trace, write_binary_trace, write_text_trace, WorkloadSpec};
use superlinear_core::{bench, busy, dispatch};

create_exception!(_native, SuperlinearError, PyException, "A user-facing error: a bad parameter or input file.");

/// A workload dict (`kind`, `m`, `alpha`, `path`) as the engine's spec.
fn workload_from(d: &Bound<'_, PyDict>) -> PyResult<WorkloadSpec> {
    settings::<WorkloadSettings>(d)?.to_spec().map_err(to_py)
}

/// Asks every running native loop to stop (Ctrl-C); the call returns `interrupted`.
#[pyfunction]
fn cancel_request() {
    superlinear_core::cancel::request();
}

/// Clears a stop request before the next native call.
#[pyfunction]
fn cancel_clear() {
    superlinear_core::cancel::clear();
}

/// Runs one configured point and returns its accounting per mode.
#[pyfunction]
fn run<'py>(py: Python<'py>, config: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyAny>> {
    let cfg = settings::<RunSettings>(config)?.to_run_config().map_err(to_py)?;
    let report = py.allow_threads(|| execute(&cfg)).map_err(to_py)?;
    record(py, &report.record())
}

/// The names of the configs the bindings take.
#[pyfunction]
fn config_names() -> Vec<&'static str> {
    CONFIG_NAMES.to_vec()
}

fn unknown_config(name: &str) -> PyErr {
    SuperlinearError::new_err(format!("unknown config '{name}' (known: {})", CONFIG_NAMES.join(", ")))
}

/// The defaults of one config, as the bindings use them.
#[pyfunction]
fn config_defaults<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    defaults_of(py, name)?.ok_or_else(|| unknown_config(name))
}

/// Checks a config (a misspelt or mistyped field raises SuperlinearError naming it) and
/// returns it completed with its defaults, as the bindings would use it.
#[pyfunction]
fn config_check<'py>(py: Python<'py>, name: &str, config: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyAny>> {
    checked(py, name, config)?.ok_or_else(|| unknown_config(name))
}

/// The worker registry: name, self_adjusting, takes_capacity, reads (the cost fields its
/// constructor reads), summary.
#[pyfunction]
fn algorithms(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    dict_list(py, WORKERS, |d, e| {
        d.set_item("name", e.name)?;
        d.set_item("self_adjusting", e.self_adjusting)?;
        d.set_item("takes_capacity", e.takes_capacity)?;
        d.set_item("reads", e.reads.to_vec())?;
        d.set_item("summary", e.summary)
    })
}

/// The dispatcher registry: name, aliases, key_affine, seeded, summary.
#[pyfunction]
fn dispatchers(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    dict_list(py, dispatch::REGISTRY, |d, e| {
        d.set_item("name", e.name)?;
        d.set_item("aliases", e.aliases.to_vec())?;
        d.set_item("key_affine", e.key_affine)?;
        d.set_item("seeded", e.seeded)?;
        d.set_item("summary", e.summary)
    })
}

/// Checks an algorithm name such as `lru:2500`; raises SuperlinearError if it is not valid.
#[pyfunction]
fn check_algo(name: &str) -> PyResult<String> {
    AlgoSpec::parse(name).map(|a| a.to_string()).map_err(to_py)
}

/// Generates `n` keys of a workload (dict as in `run`'s config).
#[pyfunction]
fn generate_keys(py: Python<'_>, workload: &Bound<'_, PyDict>, n: usize, seed: u64) -> PyResult<Vec<u64>> {
    let spec = workload_from(workload)?;
    py.allow_threads(|| spec.generate(n, seed)).map(|w| w.requests).map_err(to_py)
}

/// Writes a key trace, binary (compact) or text.
#[pyfunction]
#[pyo3(signature = (path, keys, binary = true))]
fn write_trace(path: &str, keys: Vec<u64>, binary: bool) -> PyResult<()> {
    if binary { write_binary_trace(path, &keys) } else { write_text_trace(path, &keys) }.map_err(to_py)
}

/// Reads a key trace (format detected from its first bytes).
#[pyfunction]
fn read_trace(py: Python<'_>, path: &str) -> PyResult<Vec<u64>> {
    py.allow_threads(|| core_read_trace(path)).map_err(to_py)
}

/// The number of keys in a key trace, without handing them to Python (a list of Python ints
/// takes some 36 bytes a key, against the 8 the engine keeps).
#[pyfunction]
fn trace_length(py: Python<'_>, path: &str) -> PyResult<usize> {
    py.allow_threads(|| core_read_trace(path).map(|keys| keys.len())).map_err(to_py)
}

/// Cores available to this process (the k up to which speedups are measured).
#[pyfunction]
fn available_cores() -> usize {
    superlinear_core::cputime::available_cores()
}

/// Busy-loop calibration: loop iterations per cycle on this machine.
#[pyfunction]
fn iterations_per_cycle() -> f64 {
    busy::iterations_per_cycle()
}

/// Single-thread lookups per second of one structure on uniform keys.
#[pyfunction]
#[pyo3(signature = (algo, m, lookups, compare_cycles = 0, miss_cycles = 0, seed = 1))]
fn bench_structure(
    py: Python<'_>,
    algo: &str,
    m: usize,
    lookups: usize,
    compare_cycles: u64,
    miss_cycles: u64,
    seed: u64,
) -> PyResult<f64> {
    let spec = AlgoSpec::parse(algo).map_err(to_py)?;
    py.allow_threads(|| bench::structure_lookups_per_second(&spec, m, lookups, compare_cycles, miss_cycles, seed))
        .map_err(to_py)
}

/// Dispatcher cost in nanoseconds per request (route + enqueue into per-worker batches).
#[pyfunction]
#[pyo3(signature = (dispatch, k, requests, seed = 1))]
fn bench_dispatcher(py: Python<'_>, dispatch: &str, k: usize, requests: usize, seed: u64) -> PyResult<f64> {
    py.allow_threads(|| bench::dispatcher_ns_per_request(dispatch, k, requests, seed)).map_err(to_py)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SuperlinearError", m.py().get_type::<SuperlinearError>())?;
    // The most timed passes a window repeats, which `--timed-window`'s help names.
    m.add("MAX_WINDOW_PASSES", superlinear_core::runner::MAX_WINDOW_PASSES)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(cancel_request, m)?)?;
    m.add_function(wrap_pyfunction!(cancel_clear, m)?)?;
    m.add_function(wrap_pyfunction!(config_names, m)?)?;
    m.add_function(wrap_pyfunction!(config_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(config_check, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(dispatchers, m)?)?;
    m.add_function(wrap_pyfunction!(check_algo, m)?)?;
    m.add_function(wrap_pyfunction!(generate_keys, m)?)?;
    m.add_function(wrap_pyfunction!(write_trace, m)?)?;
    m.add_function(wrap_pyfunction!(read_trace, m)?)?;
    m.add_function(wrap_pyfunction!(trace_length, m)?)?;
    m.add_function(wrap_pyfunction!(iterations_per_cycle, m)?)?;
    m.add_function(wrap_pyfunction!(available_cores, m)?)?;
    m.add_function(wrap_pyfunction!(bench_structure, m)?)?;
    m.add_function(wrap_pyfunction!(bench_dispatcher, m)?)?;
    law::register(m)?;
    memory_probe::register(m)?;
    sched::register(m)?;
    cachetier::register(m)?;
    latency::register(m)?;
    classify::register(m)?;
    nftbench::register(m)?;
    xdp::register(m)?;
    Ok(())
}
