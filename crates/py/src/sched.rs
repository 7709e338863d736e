//! Thin bindings of `superlinear-sched`: config dicts in as the crate's typed settings, result
//! records out as dicts, no logic. Every function is prefixed `sched_`; the attack studies are
//! their users.

use crate::convert::{dict_list, record, settings, to_py};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde::Serialize;
use superlinear_sched::attack::optimal_attack;
use superlinear_sched::bench::{bench_queue, PATTERNS, QUEUES};
use superlinear_sched::config::{
    run_classifier_attacks, AdversaryRecord, ClassifierAttackSettings, ClassifierWorkloadRecord, KeyAttackSettings,
    SweepSettings, TrafficRecord, TrafficSettings,
};
use superlinear_sched::schedulers::REGISTRY;
use superlinear_sched::stage::{run_key_attack, AttackSummary, ADVERSARIES, CLASSIFIER_ADVERSARIES, CLASSIFIER_ALGOS};

/// The scheduling policies: name, summary.
#[pyfunction]
fn sched_policies(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    dict_list(py, REGISTRY, |d, e| {
        d.set_item("name", e.name)?;
        d.set_item("summary", e.summary)
    })
}

/// The key-worker and classifier adversaries, the protected classifiers, and the queue
/// benchmark's queues and patterns.
#[pyfunction]
fn sched_catalogue(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("adversaries", ADVERSARIES.to_vec())?;
    d.set_item("classifier_adversaries", CLASSIFIER_ADVERSARIES.to_vec())?;
    d.set_item("classifier_algos", CLASSIFIER_ALGOS.to_vec())?;
    d.set_item("queues", QUEUES.iter().map(|q| q.name).collect::<Vec<_>>())?;
    d.set_item("patterns", PATTERNS.to_vec())?;
    Ok(d)
}

/// One queue benchmark: enqueue+dequeue pairs with `n` queued; `None` if the queue cannot run
/// the pattern.
#[pyfunction]
#[pyo3(signature = (queue, pattern, n, pairs, width = 64, levels = 2, seed = 1))]
#[allow(clippy::too_many_arguments)] // Python keyword arguments, one per benchmark parameter.
fn sched_bench_queue<'py>(
    py: Python<'py>,
    queue: &str,
    pattern: &str,
    n: usize,
    pairs: usize,
    width: u32,
    levels: u32,
    seed: u64,
) -> PyResult<Bound<'py, PyAny>> {
    let r = py.allow_threads(|| bench_queue(queue, pattern, n, pairs, width, levels, seed)).map_err(to_py)?;
    record(py, &r.map(|b| b.record()))
}

/// Statistics of innocent traffic: E[P] (bits), E[J] (µs), r_max (bits/µs), limits.
#[pyfunction]
#[pyo3(signature = (traffic, samples = 200_000, seed = 7))]
fn sched_innocent_stats<'py>(
    py: Python<'py>,
    traffic: &Bound<'py, PyDict>,
    samples: usize,
    seed: u64,
) -> PyResult<Bound<'py, PyAny>> {
    let t = settings::<TrafficSettings>(traffic)?.to_traffic().map_err(to_py)?;
    let s = py.allow_threads(|| t.stats(samples, seed));
    record(py, &TrafficRecord::new(&t, &s))
}

/// One policy's displacement sweep in the simulator. Rates in bits/µs (Mbit/s).
#[pyfunction]
fn sched_sweep<'py>(py: Python<'py>, config: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyAny>> {
    let cfg: SweepSettings = settings(config)?;
    let run = py.allow_threads(|| cfg.run()).map_err(to_py)?;
    record(py, &run.record(&cfg.policy))
}

/// The optimal attack (packet bits, job µs) for a policy at rates r_I, r_A (bits/µs).
#[pyfunction]
fn sched_optimal_attack<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
    policy: &str,
    innocent_rate: f64,
    attack_rate: f64,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg: SweepSettings = settings(config)?;
    let (traffic, stats) = py.allow_threads(|| cfg.traffic_and_stats()).map_err(to_py)?;
    let a =
        optimal_attack(policy, &stats, innocent_rate, attack_rate, traffic.bits_min, traffic.job_max).map_err(to_py)?;
    record(py, &a)
}

/// A key attack's summary with the number of items.
#[derive(Serialize)]
struct KeyAttackRecord<'a> {
    #[serde(flatten)]
    summary: &'a AttackSummary,
    items: usize,
}

/// The attack experiment on a core key worker (real work, work-clocked time).
#[pyfunction]
fn sched_key_attack<'py>(py: Python<'py>, config: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyAny>> {
    let spec = settings::<KeyAttackSettings>(config)?.to_spec().map_err(to_py)?;
    let (summary, items) = py.allow_threads(|| run_key_attack(&spec)).map_err(to_py)?;
    record(py, &KeyAttackRecord { summary: &summary, items })
}

/// Every adversary's classifier attack over one workload.
#[derive(Serialize)]
struct ClassifierAttacksRecord {
    workload: ClassifierWorkloadRecord,
    adversaries: Vec<AdversaryRecord>,
}

/// The attack experiment on a packet classifier (real classification, work-clocked time), once
/// per adversary in `adversaries` over one loaded workload and one calibrated clock. In
/// `target_rules` (the first 16 attacked rules) −1 stands for the default policy.
#[pyfunction]
fn sched_classifier_attack<'py>(py: Python<'py>, config: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyAny>> {
    let cfg: ClassifierAttackSettings = settings(config)?;
    let workload = cfg.workload().map_err(to_py)?;
    let (snap, trace) = py.allow_threads(|| workload.load(cfg.packets, cfg.seed)).map_err(to_py)?;
    let spec = cfg.to_spec().map_err(to_py)?;
    let adversaries =
        py.allow_threads(|| run_classifier_attacks(&snap, &trace, &spec, &cfg.adversaries)).map_err(to_py)?;
    record(py, &ClassifierAttacksRecord { workload: ClassifierWorkloadRecord::new(&snap, &trace), adversaries })
}

/// Adds the `sched_*` functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sched_policies, m)?)?;
    m.add_function(wrap_pyfunction!(sched_catalogue, m)?)?;
    m.add_function(wrap_pyfunction!(sched_bench_queue, m)?)?;
    m.add_function(wrap_pyfunction!(sched_innocent_stats, m)?)?;
    m.add_function(wrap_pyfunction!(sched_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(sched_optimal_attack, m)?)?;
    m.add_function(wrap_pyfunction!(sched_key_attack, m)?)?;
    m.add_function(wrap_pyfunction!(sched_classifier_attack, m)?)?;
    Ok(())
}
