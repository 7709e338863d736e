//! Bindings of `superlinear-classify`: a `PacketWorkload` (one rule set and one packet trace,
//! loaded or generated once) whose methods run, check, benchmark and describe classifiers
//! behind dispatchers. Config dicts in as the crate's typed settings, records out as dicts, no logic.

use crate::convert::{dict_list, record, settings, to_py};
use crate::SuperlinearError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use superlinear_classify::classifier::{WorkerStats, REGISTRY as CLASSIFIERS};
use superlinear_classify::config::{LoadSettings, RunSettings, SyntheticSettings};
use superlinear_classify::dispatch::{self, REGISTRY as DISPATCHERS};
use superlinear_classify::footprint;
use superlinear_classify::generate;
use superlinear_classify::predict::{self, WorkSpec};
use superlinear_classify::record::RunRecord;
use superlinear_classify::rules::{self, ReadOptions, RuleFormat, RuleSet};
use superlinear_classify::run::{self, RunReport, RunSpec};
use superlinear_classify::trace::{self, TraceFormat};
use superlinear_classify::{Packet, RuleAwarePlanner, Snapshot};

/// One rule set (compiled, with its dependency graph) and one packet trace.
#[pyclass(module = "superlinear._native", name = "PacketWorkload")]
pub struct PacketWorkload {
    pub(crate) snap: Arc<Snapshot>,
    /// The rule-aware dispatcher's calibration and choices, kept across runs.
    pub(crate) planner: RuleAwarePlanner,
    pub(crate) packets: Vec<Packet>,
    /// The trace before any replay (calibration samples come from it).
    base_len: usize,
    info: Vec<(&'static str, PyObject)>,
    /// Single-worker baselines of `predict_work`, by (algo, start, sample, target, period): the
    /// same for every dispatcher and k, so an advisor's candidates share one simulation.
    baselines: Mutex<HashMap<BaselineKey, predict::Baseline>>,
    /// Every packet's first-match rule and flow (`footprint`), computed once.
    ids: Mutex<Option<PacketIds>>,
}

type PacketIds = (Arc<Vec<u32>>, Arc<Vec<u32>>);

type BaselineKey = (String, usize, usize, usize, usize);

impl PacketWorkload {
    /// Compiles the rules (dependency graph included, timed into `info`) for the packets.
    pub(crate) fn build(
        py: Python<'_>,
        set: RuleSet,
        packets: Vec<Packet>,
        extra: Vec<(&'static str, PyObject)>,
    ) -> PyResult<Self> {
        let t0 = Instant::now();
        let snap = py.allow_threads(|| Arc::new(Snapshot::new(set)));
        let mut info = extra;
        info.push(("dependency_seconds", t0.elapsed().as_secs_f64().into_pyobject(py)?.into_any().unbind()));
        let base_len = packets.len();
        let planner = RuleAwarePlanner::new(snap.clone());
        Ok(Self { snap, planner, packets, base_len, info, baselines: Mutex::default(), ids: Mutex::default() })
    }

    /// Every packet's first-match rule and flow, computed once per packet list.
    fn packet_ids(&self) -> PacketIds {
        let mut ids = self.ids.lock().expect("ids");
        ids.get_or_insert_with(|| {
            (Arc::new(run::first_match_ids(&self.snap, &self.packets)), Arc::new(footprint::flow_ids(&self.packets)))
        })
        .clone()
    }

    /// Calibrates the rule-aware planner on the first `n` packets of the trace.
    pub(crate) fn calibrate_prefix(&self, n: usize) {
        self.planner.calibrate(&self.packets[..n.min(self.trace_in_use())]);
    }

    /// The same rules (compiled once, shared) with other packets; a fresh planner, since the
    /// rule-aware dispatcher calibrates on the traffic.
    pub(crate) fn with_packets(&self, packets: Vec<Packet>) -> Self {
        let base_len = packets.len();
        let planner = RuleAwarePlanner::new(self.snap.clone());
        Python::with_gil(|py| Self {
            snap: self.snap.clone(),
            planner,
            packets,
            base_len,
            info: self.info.iter().map(|(k, v)| (*k, v.clone_ref(py))).collect(),
            baselines: Mutex::default(),
            ids: Mutex::default(),
        })
    }

    /// The rules of a file and the packets of a trace file (path and format), or without a
    /// trace `generate` headers drawn from the rules (seeded). The trace's skipped frames go
    /// into `info`.
    pub(crate) fn read(
        py: Python<'_>,
        rules_path: &str,
        trace: Option<(&str, TraceFormat)>,
        options: &ReadOptions,
        generate: usize,
        seed: u64,
    ) -> PyResult<Self> {
        let set = py.allow_threads(|| rules::read_rules(rules_path, options)).map_err(to_py)?;
        if set.is_empty() {
            // Every packet would take the default policy: nothing to classify, measure or convert.
            return Err(SuperlinearError::new_err(format!("{rules_path}: no rules")));
        }
        let mut extra: Vec<(&'static str, PyObject)> = Vec::new();
        let packets = match trace {
            Some((path, format)) => {
                let tr = py.allow_threads(|| trace::read_trace(path, format)).map_err(to_py)?;
                extra.push(("skipped_not_ipv4", tr.skipped.not_ipv4.into_pyobject(py)?.into_any().unbind()));
                extra.push(("skipped_not_tcp_udp", tr.skipped.not_tcp_udp.into_pyobject(py)?.into_any().unbind()));
                extra.push(("skipped_truncated", tr.skipped.truncated.into_pyobject(py)?.into_any().unbind()));
                tr.packets
            }
            None => generate::headers_for_rules(&set, generate, seed).map_err(to_py)?,
        };
        Self::build(py, set, packets, extra)
    }

    /// Packets of the trace that runs see: the whole trace, or its first packets when a
    /// replay asked for fewer than it holds.
    fn trace_in_use(&self) -> usize {
        self.base_len.min(self.packets.len())
    }

    /// Runs the classifiers over the trace (GIL released).
    pub(crate) fn execute(&self, py: Python<'_>, spec: &RunSpec) -> PyResult<RunReport> {
        let (planner, packets) = (&self.planner, &self.packets);
        // A replayed trace repeats with the period of the capture.
        let spec = RunSpec { period: self.trace_in_use(), ..spec.clone() };
        py.allow_threads(|| run::execute(planner, packets, &spec)).map_err(to_py)
    }
}

#[pymethods]
impl PacketWorkload {
    /// Rules and trace from files (config: rule_format, actions, default_action, trace_format).
    /// Without a trace, `generate` packets are generated inside the rules (seeded).
    #[staticmethod]
    #[pyo3(signature = (rules_path, trace_path, config))]
    fn load(py: Python<'_>, rules_path: &str, trace_path: Option<&str>, config: &Bound<'_, PyDict>) -> PyResult<Self> {
        let cfg: LoadSettings = settings(config)?;
        let opts = cfg.read_options().map_err(to_py)?;
        let trace = match trace_path {
            Some(t) => Some((t, cfg.trace_format().map_err(to_py)?)),
            None => None,
        };
        let w = Self::read(py, rules_path, trace, &opts, cfg.generate, cfg.seed)?;
        if w.packets.is_empty() {
            return Err(SuperlinearError::new_err(format!(
                "{}: no TCP/UDP IPv4 packets to classify",
                trace_path.unwrap_or("trace")
            )));
        }
        Ok(w)
    }

    /// A synthetic workload (spec: rules, depth, flows_per_rule, catch_all) of `packets`.
    #[staticmethod]
    #[pyo3(signature = (spec, packets, seed = 1))]
    fn synthetic(py: Python<'_>, spec: &Bound<'_, PyDict>, packets: usize, seed: u64) -> PyResult<Self> {
        let s = settings::<SyntheticSettings>(spec)?.to_spec();
        let set = s.rule_set().map_err(to_py)?;
        let packets = py.allow_threads(|| s.trace(packets, seed)).map_err(to_py)?;
        let flows = s.flows().into_pyobject(py)?.into_any().unbind();
        Self::build(py, set, packets, vec![("flows", flows)])
    }

    /// Cycles the trace until it holds `n` packets (a traffic generator looping a capture).
    fn replay(&mut self, n: usize) {
        let base = self.packets[..self.trace_in_use()].to_vec();
        self.packets = base.iter().copied().cycle().take(n.max(1)).collect();
        *self.ids.lock().expect("ids") = None;
    }

    /// Gives the rule-aware dispatcher its calibration sample: the first `n` packets of the
    /// trace (before replay).
    fn calibrate(&self, n: usize) {
        self.calibrate_prefix(n);
    }

    /// Number of rules.
    #[getter]
    fn rules(&self) -> usize {
        self.snap.len()
    }

    /// Number of packets (after replay).
    #[getter]
    fn packets(&self) -> usize {
        self.packets.len()
    }

    /// Rule set and trace facts: rules, packets, dependency edges, dependent rules, longest
    /// chain, same-action overlaps, seconds to build the dependency graph, skipped frames.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let g = &self.snap.deps;
        d.set_item("rules", self.snap.len())?;
        d.set_item("packets", self.packets.len())?;
        d.set_item("trace_packets", self.base_len)?;
        d.set_item("default_action", self.snap.rules.default_action.name())?;
        d.set_item("dependency_edges", g.edges())?;
        d.set_item("dependent_rules", g.dependent_rules())?;
        d.set_item("max_dependency_depth", g.max_depth())?;
        d.set_item("same_action_overlaps", g.same_action_pairs())?;
        for (k, v) in &self.info {
            d.set_item(*k, v.clone_ref(py))?;
        }
        Ok(d)
    }

    /// One run (config: algo, dispatch, k, modes, repeats, parallel, seed, stats, window, warmup):
    /// {dispatch, cores, items, projected, measured, stats}.
    fn run<'py>(&self, py: Python<'py>, config: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyAny>> {
        let spec = settings::<RunSettings>(config)?.to_spec().map_err(to_py)?;
        let report = self.execute(py, &spec)?;
        record(py, &RunRecord::new(&report, self.snap.len()))
    }

    /// Checks every verdict against brute force: {checked, mismatches, first_mismatch,
    /// matches, default_hits}.
    #[pyo3(signature = (algo, dispatch, k, seed = 1, front = 0))]
    fn check<'py>(
        &self,
        py: Python<'py>,
        algo: &str,
        dispatch: &str,
        k: usize,
        seed: u64,
        front: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (planner, packets) = (&self.planner, &self.packets);
        let r = py.allow_threads(|| run::check(planner, packets, algo, dispatch, k, seed, front)).map_err(to_py)?;
        record(py, &r)
    }

    /// Classifies the packets while the rule changes of a schedule file are published before
    /// their packets (`rules::schedule`); with `check`, every verdict against brute force over
    /// the rule set in force. `config` reads the files of `replace` lines (rule_format is
    /// detected there); a `rule-cache` worker gets a front of `front` rules (0: the default).
    /// Returns the `UpdateReport` as a dict.
    #[pyo3(signature = (schedule, config, algo, dispatch, k, seed = 1, check = true, front = 0))]
    #[allow(clippy::too_many_arguments)]
    fn run_updates<'py>(
        &self,
        py: Python<'py>,
        schedule: &str,
        config: &Bound<'py, PyDict>,
        algo: &str,
        dispatch: &str,
        k: usize,
        seed: u64,
        check: bool,
        front: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let cfg: LoadSettings = settings(config)?;
        let opts = ReadOptions { format: RuleFormat::Auto, ..cfg.read_options().map_err(to_py)? };
        let (planner, packets, snap) = (&self.planner, &self.packets, &self.snap);
        let r = py
            .allow_threads(|| {
                let read = rules::schedule::read_schedule(schedule, &snap.rules, &opts)?;
                let past =
                    read.iter().find_map(|u| rules::schedule::past_the_run(u.packet, packets.len()).map(|m| (u, m)));
                if let Some((u, why)) = past {
                    return Err(superlinear_classify::Error::input(schedule, Some(u.line), why));
                }
                let updates: Vec<(usize, RuleSet, String)> = read
                    .into_iter()
                    .map(|u| (u.packet, u.rules, format!("line {}: {}", u.line, u.change.describe())))
                    .collect();
                run::run_with_updates(planner, packets, algo, dispatch, k, seed, &updates, check, front)
            })
            .map_err(to_py)?;
        record(py, &r)
    }

    /// The first-match rule of every packet (rules.len() for the default policy).
    fn items(&self, py: Python<'_>) -> Vec<u32> {
        py.allow_threads(|| self.packet_ids().0.to_vec())
    }

    /// The flow of every packet: distinct 5-tuples numbered in order of first appearance.
    fn flow_ids(&self, py: Python<'_>) -> Vec<u32> {
        py.allow_threads(|| self.packet_ids().1.to_vec())
    }

    /// Memory of one worker of `algo` behind `dispatch` at k, counted exactly
    /// (`superlinear_classify::footprint`): own, shared and per-worker hot bytes.
    #[pyo3(signature = (algo, dispatch, k, seed = 1, front = 0))]
    #[allow(clippy::too_many_arguments)]
    fn footprint<'py>(
        &self,
        py: Python<'py>,
        algo: &str,
        dispatch: &str,
        k: usize,
        seed: u64,
        front: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let r = py
            .allow_threads(|| {
                let (rules, flows) = self.packet_ids();
                footprint::footprint(&self.planner, &self.packets, &rules, &flows, algo, dispatch, k, seed, front)
            })
            .map_err(to_py)?;
        record(py, &r)
    }

    /// Bytes one worker of `algo` holds for itself in a run: its own structures
    /// (`superlinear_classify::footprint::own_bytes`) and, with `stats`, its per-rule counters.
    /// A run of k workers adds k times this to memory.
    #[pyo3(signature = (algo, front = 0, stats = true))]
    fn worker_bytes(&self, py: Python<'_>, algo: &str, front: usize, stats: bool) -> PyResult<u64> {
        let (own, _) = py.allow_threads(|| footprint::own_bytes(&self.snap, algo, front)).map_err(to_py)?;
        let counters = if stats { WorkerStats::bytes(self.snap.len()) } else { 0 };
        Ok(own + counters)
    }

    /// The worker of every packet under a dispatcher, as a run routes them.
    #[pyo3(signature = (dispatch, k, seed = 1))]
    fn assign(&self, py: Python<'_>, dispatch: &str, k: usize, seed: u64) -> PyResult<Vec<u32>> {
        py.allow_threads(|| run::assign(&self.planner, &self.packets, dispatch, k, seed)).map_err(to_py)
    }

    /// A run's work predicted by simulating its classifier behind its dispatcher on the packets
    /// `start..start + sample` of the trace (before replay), extrapolated to `target` packets
    /// (0: the run's packets; beyond the trace's length a replay of it): {algo, dispatch, k, sample, target, baseline_work, worker_work,
    /// worker_packets, work_speedup, busiest_share, load_imbalance, dispatch_ns_per_packet,
    /// ns_per_work}.
    #[pyo3(signature = (algo, dispatch, k, sample, start = 0, target = 0, seed = 1))]
    #[allow(clippy::too_many_arguments)]
    fn predict_work<'py>(
        &self,
        py: Python<'py>,
        algo: &str,
        dispatch: &str,
        k: usize,
        sample: usize,
        start: usize,
        target: usize,
        seed: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let base = &self.packets[..self.trace_in_use()];
        let start = start.min(base.len());
        let slice = &base[start..(start + sample).min(base.len())];
        let target = if target == 0 { self.packets.len() } else { target };
        let period = base.len();
        let spec = WorkSpec { algo: algo.into(), dispatch: dispatch.into(), k, seed, target, period };
        let planner = &self.planner;
        let key = (algo.to_string(), start, slice.len(), target, period);
        let cached = self.baselines.lock().expect("baseline cache").get(&key).cloned();
        let p = py
            .allow_threads(|| {
                let base = match cached {
                    Some(b) => b,
                    None => predict::baseline(planner, slice, &spec)?,
                };
                let p = predict::predict_work_with(planner, slice, &spec, Some(&base))?;
                Ok::<_, superlinear_classify::Error>((p, base))
            })
            .map_err(to_py)?;
        self.baselines.lock().expect("baseline cache").insert(key, p.1);
        record(py, &p.0)
    }

    /// The canonical name of a dispatcher at k (the rule-aware one names its fields).
    pub(crate) fn describe_dispatch(&self, dispatch: &str, k: usize) -> PyResult<String> {
        dispatch::describe(dispatch, k, &self.planner).map_err(to_py)
    }

    /// Single-core throughput: (packets/s of thread CPU time, mean work per packet).
    #[pyo3(signature = (algo, repeats = 3))]
    pub(crate) fn bench(&self, py: Python<'_>, algo: &str, repeats: usize) -> PyResult<(f64, f64)> {
        py.allow_threads(|| run::single_core(&self.snap, &self.packets, algo, repeats)).map_err(to_py)
    }

    /// Writes the rules (format: native, nft, classbench).
    fn write_rules(&self, path: &str, format: &str) -> PyResult<()> {
        rules::write_rules(path, &self.snap.rules, RuleFormat::parse(format).map_err(to_py)?).map_err(to_py)
    }

    /// Writes the packets (format: binary, pcap, pcapng, classbench); returns how many of them a
    /// reader of that format skips (pcap and pcapng carry TCP and UDP only).
    fn write_trace(&self, path: &str, format: &str) -> PyResult<usize> {
        let format = TraceFormat::parse(format).map_err(to_py)?;
        trace::write_trace(path, &self.packets, format).map_err(to_py)?;
        Ok(trace::skipped_on_reading(&self.packets, format))
    }
}

/// The classifier registry: name, self_adjusting, summary.
#[pyfunction]
fn classify_algorithms(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    dict_list(py, CLASSIFIERS, |d, e| {
        d.set_item("name", e.name)?;
        d.set_item("self_adjusting", e.self_adjusting)?;
        d.set_item("summary", e.summary)
    })
}

/// The packet dispatcher registry: name, argument (what may follow `name:`, with its help, or
/// None), seeded, flow_affine, summary.
#[pyfunction]
fn classify_dispatchers(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    dict_list(py, DISPATCHERS, |d, e| {
        d.set_item("name", e.name)?;
        d.set_item("argument", e.argument)?;
        d.set_item("seeded", e.seeded)?;
        d.set_item("flow_affine", e.flow_affine)?;
        d.set_item("summary", e.summary)
    })
}

/// The format the rule reader detects in the file `path` (`classbench`, `native`, `nft`); None
/// where the file cannot be read (the reader then says why when it loads it).
#[pyfunction]
fn classify_rule_format(py: Python<'_>, path: &str) -> Option<&'static str> {
    py.allow_threads(|| superlinear_core::input::read_text(path).ok().map(|t| RuleFormat::detect(&t).name()))
}

/// Registers the classifier's bindings.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PacketWorkload>()?;
    m.add_function(wrap_pyfunction!(classify_rule_format, m)?)?;
    m.add_function(wrap_pyfunction!(classify_algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(classify_dispatchers, m)?)?;
    Ok(())
}
