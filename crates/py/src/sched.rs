//! Thin bindings of `superlinear-sched`: config dicts in, result dicts out, no logic.
//! Every function is prefixed `sched_`; `python/superlinear/sched_cli.py` is their user.

use crate::classify::read_options;
use crate::convert::{dict_list, get, to_py};
use crate::SuperlinearError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use superlinear_classify::trace::TraceFormat;
use superlinear_core::workload::WorkloadSpec;
use superlinear_sched::attack::{bound, optimal_attack, AttackParams};
use superlinear_sched::bench::{bench_queue, PATTERNS, QUEUES};
use superlinear_sched::dist::Dist;
use superlinear_sched::schedulers::REGISTRY;
use superlinear_sched::sim::SimOutcome;
use superlinear_sched::stage::{
    run_classifier_attack, run_key_attack, AttackSummary, ClassifierAttackSpec, ClassifierWorkload, KeyAttackSpec,
    LearnMode, Prediction, StageOutcome, ADVERSARIES, CLASSIFIER_ADVERSARIES, CLASSIFIER_ALGOS,
};
use superlinear_sched::sweep::{run_sweep, SweepSpec};
use superlinear_sched::traffic::InnocentTraffic;

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
    d.set_item("queues", QUEUES.to_vec())?;
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
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let r = py.allow_threads(|| bench_queue(queue, pattern, n, pairs, width, levels, seed)).map_err(to_py)?;
    r.map(|b| {
        let d = PyDict::new(py);
        d.set_item("pairs", b.pairs)?;
        d.set_item("cpu_ns", b.cpu_ns)?;
        d.set_item("pairs_per_s", b.pairs_per_second())?;
        d.set_item("checksum", b.checksum)?;
        Ok(d)
    })
    .transpose()
}

fn traffic_from(d: &Bound<'_, PyDict>) -> PyResult<InnocentTraffic> {
    let flows: u32 = get(d, "flows", 64)?;
    let trace: Option<String> = get(d, "trace", None)?;
    let t = match trace {
        Some(path) => InnocentTraffic::from_trace(&path, get(d, "bytes_min", None)?, get(d, "job_max", None)?, flows),
        None => {
            let packet =
                Dist::parse(&get::<String>(d, "packet", "normal:1250:400".into())?, "--packet-size").map_err(to_py)?;
            let job = Dist::parse(&get::<String>(d, "job", "exp:1".into())?, "--job-size").map_err(to_py)?;
            InnocentTraffic::from_dists(
                packet,
                job,
                get(d, "bytes_min", Some(64u32))?.unwrap_or(64),
                get(d, "bytes_max", 1500)?,
                get(d, "job_max", Some(10.0f64))?.unwrap_or(10.0),
                flows,
            )
        }
    };
    t.map_err(to_py)
}

fn sim_dict<'py>(py: Python<'py>, o: &SimOutcome) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("duration_us", o.duration)?;
    d.set_item("window_us", o.window)?;
    d.set_item("goodput", o.goodput)?;
    d.set_item("attack_goodput", o.attack_goodput)?;
    d.set_item("innocent_offered", o.innocent_offered)?;
    d.set_item("innocent_served", o.innocent_served)?;
    d.set_item("innocent_dropped", o.innocent_dropped)?;
    d.set_item("attack_offered", o.attack_offered)?;
    d.set_item("attack_served", o.attack_served)?;
    d.set_item("attack_dropped", o.attack_dropped)?;
    d.set_item("utilisation", o.utilisation)?;
    Ok(d)
}

fn attack_dict<'py>(py: Python<'py>, a: &AttackParams) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("bits", a.bits)?;
    d.set_item("job_us", a.job)?;
    Ok(d)
}

/// Statistics of innocent traffic: E[P] (bits), E[J] (µs), r_max (bits/µs), limits.
#[pyfunction]
#[pyo3(signature = (traffic, samples = 200_000, seed = 7))]
fn sched_innocent_stats<'py>(
    py: Python<'py>,
    traffic: &Bound<'py, PyDict>,
    samples: usize,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let t = traffic_from(traffic)?;
    let s = py.allow_threads(|| t.stats(samples, seed));
    let d = PyDict::new(py);
    d.set_item("mean_bits", s.mean_bits)?;
    d.set_item("mean_job_us", s.mean_job)?;
    d.set_item("r_max", s.r_max())?;
    d.set_item("bits_min", t.bits_min)?;
    d.set_item("bits_max", t.bits_max)?;
    d.set_item("job_max_us", t.job_max)?;
    d.set_item("flows", t.flows)?;
    Ok(d)
}

/// One policy's displacement sweep in the simulator. Rates in bits/µs (Mbit/s).
#[pyfunction]
fn sched_sweep<'py>(py: Python<'py>, config: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyDict>> {
    let traffic = traffic_from(config)?;
    let seed: u64 = get(config, "seed", 1)?;
    let samples: usize = get(config, "stats_samples", 200_000)?;
    let policy: String = get(config, "policy", "wsjf".to_string())?;
    let stats = py.allow_threads(|| traffic.stats(samples, seed ^ 0x5eed));
    let innocent_rate: f64 = match get::<Option<f64>>(config, "innocent_rate", None)? {
        Some(r) => r,
        None => get(config, "load", 0.83)? * stats.r_max(),
    };
    let spec = SweepSpec {
        policy: policy.clone(),
        innocent_rate,
        attack_rates: get(config, "attack_rates", Vec::new())?,
        buffer: get(config, "buffer", 1024)?,
        width: get(config, "width", 64)?,
        levels: get(config, "levels", 2)?,
        packets: get(config, "packets", 100_000)?,
        warmup: get(config, "warmup", 0.2)?,
        seed,
        probe_jobs: get(config, "probe_jobs", 0)?,
        threads: get(config, "threads", 2)?,
    };
    let sweep = py.allow_threads(|| run_sweep(&traffic, &stats, &spec)).map_err(to_py)?;
    let out = PyDict::new(py);
    out.set_item("policy", &policy)?;
    out.set_item("innocent_rate", innocent_rate)?;
    out.set_item("r_max", stats.r_max())?;
    out.set_item("mean_bits", stats.mean_bits)?;
    out.set_item("mean_job_us", stats.mean_job)?;
    out.set_item("bits_min", traffic.bits_min)?;
    out.set_item("job_max_us", traffic.job_max)?;
    out.set_item("baseline", sim_dict(py, &sweep.baseline)?)?;
    out.set_item("displacement_factor", sweep.displacement_factor())?;
    match bound(&policy, &stats, innocent_rate, traffic.bits_min, traffic.job_max, traffic.flows) {
        Some(b) => {
            out.set_item("bound", b.value)?;
            out.set_item("bound_kind", if b.lower { "lower" } else { "upper" })?;
        }
        None => {
            out.set_item("bound", py.None())?;
            out.set_item("bound_kind", py.None())?;
        }
    }
    let points = PyList::empty(py);
    for p in &sweep.points {
        let d = PyDict::new(py);
        d.set_item("attack_rate", p.attack_rate)?;
        d.set_item("optimal", attack_dict(py, &p.optimal)?)?;
        d.set_item("used", attack_dict(py, &p.used)?)?;
        d.set_item("outcome", sim_dict(py, &p.outcome)?)?;
        d.set_item("displaced", p.displaced)?;
        d.set_item("df", p.df)?;
        d.set_item("resolved", p.resolved)?;
        points.append(d)?;
    }
    out.set_item("points", points)?;
    Ok(out)
}

/// The optimal attack (packet bits, job µs) for a policy at rates r_I, r_A (bits/µs).
#[pyfunction]
fn sched_optimal_attack<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
    policy: &str,
    innocent_rate: f64,
    attack_rate: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let traffic = traffic_from(config)?;
    let stats = traffic.stats(get(config, "stats_samples", 200_000)?, get::<u64>(config, "seed", 1)? ^ 0x5eed);
    let a = optimal_attack(policy, &stats, innocent_rate, attack_rate, traffic.bits_min, traffic.job_max);
    attack_dict(py, &a)
}

fn stage_dict<'py>(py: Python<'py>, o: &StageOutcome) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("duration_us", o.duration)?;
    d.set_item("window_us", o.window)?;
    d.set_item("goodput", o.goodput)?;
    d.set_item("attack_goodput", o.attack_goodput)?;
    d.set_item("innocent_offered", o.innocent_offered)?;
    d.set_item("innocent_served", o.innocent_served)?;
    d.set_item("innocent_dropped", o.innocent_dropped)?;
    d.set_item("attack_offered", o.attack_offered)?;
    d.set_item("attack_served", o.attack_served)?;
    d.set_item("attack_dropped", o.attack_dropped)?;
    d.set_item("innocent_work", o.innocent_work)?;
    d.set_item("attack_work", o.attack_work)?;
    d.set_item("utilisation", o.utilisation)?;
    d.set_item("estimate_error", o.estimate_error)?;
    d.set_item("cpu_ns", o.cpu_ns)?;
    Ok(d)
}

/// The attack experiment on a core key worker (real work, work-clocked time).
#[pyfunction]
fn sched_key_attack<'py>(py: Python<'py>, config: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyDict>> {
    let kind: String = get(config, "workload", "zipf".to_string())?;
    let m: usize = get(config, "m", 5000)?;
    let workload = match kind.as_str() {
        "zipf" => WorkloadSpec::Zipf { m, alpha: get(config, "alpha", 1.1)? },
        "uniform" => WorkloadSpec::Uniform { m },
        "trace" => WorkloadSpec::Trace { path: get(config, "trace", String::new())? },
        other => {
            return Err(SuperlinearError::new_err(format!("unknown workload '{other}' (known: zipf, uniform, trace)")))
        }
    };
    let learn = learn_mode(&get::<String>(config, "learn", "last".into())?)?;
    let spec = KeyAttackSpec {
        algo: get(config, "algo", "mtf".to_string())?,
        workload,
        requests: get(config, "requests", 100_000)?,
        packet_bytes: Dist::parse(&get::<String>(config, "packet", "normal:1250:400".into())?, "--packet-size")
            .map_err(to_py)?,
        attack_bytes: get(config, "attack_bytes", 64)?,
        adversary: get(config, "adversary", "rotate".to_string())?,
        load: get(config, "load", 0.8)?,
        attack_fractions: get(config, "attack_fractions", Vec::new())?,
        policies: get(config, "policies", vec!["fcfs".to_string(), "wsjf".to_string()])?,
        buffer: get(config, "buffer", 1024)?,
        learn,
        us_per_work: get(config, "us_per_work", None)?,
        warmup: get(config, "warmup", 0.2)?,
        seed: get(config, "seed", 1)?,
        threads: get(config, "threads", 2)?,
    };
    let (s, items) = py.allow_threads(|| run_key_attack(&spec)).map_err(to_py)?;
    let out = summary_dict(py, &s)?;
    out.set_item("items", items)?;
    Ok(out)
}

/// The fields of an attack experiment's summary, its rows included.
fn summary_dict<'py>(py: Python<'py>, s: &AttackSummary) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("mean_work", s.mean_work)?;
    out.set_item("max_work", s.max_work)?;
    out.set_item("us_per_work", s.us_per_work)?;
    out.set_item("calibrated", s.calibrated)?;
    out.set_item("mean_bits", s.mean_bits)?;
    out.set_item("r_max", s.r_max)?;
    out.set_item("innocent_rate", s.innocent_rate)?;
    let rows = PyList::empty(py);
    for r in &s.rows {
        let d = PyDict::new(py);
        d.set_item("policy", &r.policy)?;
        d.set_item("attack_fraction", r.attack_fraction)?;
        d.set_item("attack_rate", r.attack_rate)?;
        d.set_item("displaced", r.displaced)?;
        d.set_item("df", r.df)?;
        d.set_item("resolved", r.resolved)?;
        d.set_item("outcome", stage_dict(py, &r.outcome)?)?;
        rows.append(d)?;
    }
    out.set_item("rows", rows)?;
    Ok(out)
}

fn learn_mode(name: &str) -> PyResult<LearnMode> {
    match name {
        "last" => Ok(LearnMode::Last),
        "max" => Ok(LearnMode::Max),
        "ewma" => Ok(LearnMode::Ewma(0.25)),
        other => Err(SuperlinearError::new_err(format!("unknown learning mode '{other}' (known: last, max, ewma)"))),
    }
}

/// The attack experiment on a packet classifier (real classification, work-clocked time), once
/// per adversary in `adversaries` over one loaded workload and one calibrated clock. In
/// `target_rules` (the first 16 attacked rules) −1 stands for the default policy.
#[pyfunction]
fn sched_classifier_attack<'py>(py: Python<'py>, config: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyDict>> {
    let workload = match get::<Option<String>>(config, "rules", None)? {
        Some(rules) => ClassifierWorkload::Files {
            rules,
            trace: get(config, "trace", None)?,
            options: read_options(config)?,
            trace_format: TraceFormat::parse(&get::<String>(config, "trace_format", "auto".into())?).map_err(to_py)?,
        },
        None if get::<Option<String>>(config, "trace", None)?.is_some() => {
            return Err(SuperlinearError::new_err("--trace needs --rules (the rules the trace is classified against)"))
        }
        None => ClassifierWorkload::Synthetic {
            chains: get(config, "chains", 500)?,
            depth: get(config, "depth", 4)?,
            flows_per_chain: get(config, "flows_per_chain", 4)?,
            alpha: get(config, "alpha", 1.1)?,
            catch_all: get(config, "catch_all", 0.002)?,
        },
    };
    let seed: u64 = get(config, "seed", 1)?;
    let packets: Option<usize> = get(config, "packets", None)?;
    let (snap, trace) = py.allow_threads(|| workload.load(packets, seed)).map_err(to_py)?;
    let learn = learn_mode(&get::<String>(config, "learn", "last".into())?)?;
    let spec = ClassifierAttackSpec {
        algo: get(config, "algo", "mrf".to_string())?,
        prediction: Prediction::parse(&get::<String>(config, "estimator", "position".into())?, learn).map_err(to_py)?,
        adversary: String::new(),
        packet_bytes: Dist::parse(&get::<String>(config, "packet", "normal:1250:400".into())?, "--packet-size")
            .map_err(to_py)?,
        attack_bytes: get(config, "attack_bytes", 64)?,
        load: get(config, "load", 0.8)?,
        attack_fractions: get(config, "attack_fractions", Vec::new())?,
        policies: get(config, "policies", vec!["fcfs".to_string(), "wsjf".to_string()])?,
        buffer: get(config, "buffer", 1024)?,
        us_per_work: get(config, "us_per_work", None)?,
        warmup: get(config, "warmup", 0.2)?,
        seed,
        threads: get(config, "threads", 2)?,
    };
    let adversaries: Vec<String> = get(config, "adversaries", vec!["rotate".to_string()])?;
    let out = PyDict::new(py);
    let info = PyDict::new(py);
    info.set_item("rules", snap.len())?;
    info.set_item("packets", trace.len())?;
    info.set_item("dependency_edges", snap.deps.edges())?;
    info.set_item("dependent_rules", snap.deps.dependent_rules())?;
    info.set_item("max_dependency_depth", snap.deps.max_depth())?;
    out.set_item("workload", info)?;
    let results = PyList::empty(py);
    // One clock for every adversary: the first run calibrates it (unless given), the others reuse it.
    let (mut us_per_work, mut calibrated) = (spec.us_per_work, false);
    for adversary in adversaries {
        let spec = ClassifierAttackSpec { adversary: adversary.clone(), us_per_work, ..spec.clone() };
        let r = py.allow_threads(|| run_classifier_attack(&snap, &trace, &spec)).map_err(to_py)?;
        calibrated |= r.summary.calibrated;
        us_per_work = Some(r.summary.us_per_work);
        let d = summary_dict(py, &r.summary)?;
        d.set_item("calibrated", calibrated)?;
        d.set_item("adversary", adversary)?;
        d.set_item("targets", r.targets.len())?;
        d.set_item(
            "target_rules",
            r.targets.iter().take(16).map(|t| t.map_or(-1, |x| x as i64)).collect::<Vec<i64>>(),
        )?;
        d.set_item("target_depth_mean", {
            let depths: Vec<f64> = r.targets.iter().flatten().map(|&t| snap.deps.depth(t) as f64).collect();
            depths.iter().sum::<f64>() / depths.len().max(1) as f64
        })?;
        d.set_item("probe_innocent_work", r.probe_innocent_work)?;
        d.set_item("probe_attack_work", r.probe_attack_work)?;
        d.set_item("probe_attack_packets", r.probe_attack_packets)?;
        results.append(d)?;
    }
    out.set_item("adversaries", results)?;
    Ok(out)
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
