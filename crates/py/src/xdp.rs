//! Bindings of `superlinear-xdp` for `superlinear xdp` and `xdp-bench`: load a rule set (an
//! `NftWorkload`: rules, trace, rule-aware planner) into the XDP datapath on an interface,
//! possibly inside a named network namespace, update it, read its counters and orders, unload.

use crate::convert::{record, settings, to_py};
use crate::nftbench::NftWorkload;
use crate::SuperlinearError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::Path;
use superlinear_classify::dispatch::{self, rss::FieldMask};
use superlinear_core::Error;
use superlinear_nftbench::netns;
use superlinear_nftbench::sender::SendSpec;
use superlinear_xdp::config::XdpLoadSettings;
use superlinear_xdp::replay::LiveReplayer;
use superlinear_xdp::{datapath, KernelAlgo, LoadSpec, Pinned};

/// Runs `f` on a thread inside network namespace `ns` (empty: this one).
fn in_namespace<T: Send>(ns: &str, f: impl FnOnce() -> Result<T, Error> + Send) -> Result<T, Error> {
    std::thread::scope(|s| {
        s.spawn(|| {
            if !ns.is_empty() {
                netns::enter(ns)?;
            }
            f()
        })
        .join()
        .unwrap_or_else(|_| Err(Error::config("the XDP loader thread panicked".to_string())))
    })
}

/// What an XDP dispatcher spec hashes: fixed header fields, or the rule-aware planner's choice.
enum XdpDispatch {
    Fields(FieldMask),
    RuleAware,
}

fn parse_dispatch(spec: &str) -> Result<XdpDispatch, Error> {
    let not_xdp = |name: &str| {
        Error::config(format!("the XDP dispatcher hashes header fields: use rss[:FIELDS] or rule, not '{name}'"))
    };
    // Named before the registry is asked, whose 'unknown' would list dispatchers XDP has not.
    let name = spec.split(':').next().unwrap_or("").trim();
    if name != "rss" && name != "rule" {
        return Err(not_xdp(name));
    }
    let (entry, arg) = dispatch::lookup(spec)?;
    match (entry.name, arg.is_empty()) {
        ("rss", true) => Ok(XdpDispatch::Fields(FieldMask::FIVE_TUPLE)),
        ("rss", false) => Ok(XdpDispatch::Fields(FieldMask::parse(arg)?)),
        ("rule", true) => Ok(XdpDispatch::RuleAware),
        ("rule", false) => Err(Error::config("dispatcher 'rule' takes no ':' argument".to_string())),
        (other, _) => Err(not_xdp(other)),
    }
}

/// The header fields a dispatcher spec hashes at k (rule-aware: its choice for k).
fn fields_of(w: &NftWorkload, spec: &str, k: usize) -> Result<FieldMask, Error> {
    match parse_dispatch(spec)? {
        XdpDispatch::Fields(mask) => Ok(mask),
        XdpDispatch::RuleAware => Ok(w.workload.planner.fields(k)),
    }
}

/// Refuses a dispatcher spec the XDP datapath cannot use (before any rules are read or
/// privileges asked for).
#[pyfunction]
fn xdp_check_dispatch(spec: &str) -> PyResult<()> {
    parse_dispatch(spec).map(|_| ()).map_err(to_py)
}

fn online_cpus() -> Vec<u32> {
    let n = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    (0..n as u32).collect()
}

/// Why this build has no XDP datapath (None: it has one).
#[pyfunction]
fn xdp_build_error() -> Option<&'static str> {
    datapath::build_error()
}

/// Loads `workload`'s rules into the XDP datapath as `config` says (`xdp_load` settings);
/// returns what was loaded: fields hashed, k, CPUs, rules.
#[pyfunction]
fn xdp_load<'py>(
    py: Python<'py>,
    workload: PyRef<'_, NftWorkload>,
    config: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg: XdpLoadSettings = settings(config)?;
    let algo = KernelAlgo::parse(&cfg.algo).map_err(to_py)?;
    let cpus = if cfg.cpus.is_empty() { online_cpus() } else { cfg.cpus.clone() };
    let k = if cfg.k == 0 { cpus.len() } else { cfg.k };
    let generic = match cfg.mode.as_str() {
        "native" => false,
        "generic" => true,
        other => return Err(to_py(format!("unknown XDP mode '{other}' (native, generic)"))),
    };
    if cfg.pin_dir.is_empty() || cfg.iface.is_empty() {
        return Err(to_py("xdp_load config: iface and pin_dir are required"));
    }
    let fields = fields_of(&workload, &cfg.dispatch, k).map_err(to_py)?;
    let snap = workload.workload.snap.clone();
    let (iface, ns, dir) = (cfg.iface.clone(), cfg.netns.clone(), cfg.pin_dir.clone());
    let spec_cpus = cpus.clone();
    py.allow_threads(|| {
        in_namespace(&ns, || {
            let ifindex = netns::ifindex(&iface)?;
            let spec = LoadSpec { ifindex, algo, fields, k, cpus: spec_cpus, queue_size: cfg.queue_size, generic };
            let r = datapath::load(&spec, &snap, Path::new(&dir));
            if r.is_err() {
                // Leave nothing half-loaded behind.
                let _ = datapath::unload(Path::new(&dir));
            }
            r
        })
    })
    .map_err(to_py)?;
    #[derive(serde::Serialize)]
    struct Loaded<'a> {
        fields: String,
        k: usize,
        cpus: &'a [u32],
        rules: usize,
        algo: KernelAlgo,
    }
    record(py, &Loaded { fields: fields.name(), k, cpus: &cpus, rules: snap.len(), algo })
}

/// Puts `workload`'s rules in force in the datapath pinned at `pin_dir`; returns the new slot.
#[pyfunction]
fn xdp_update(py: Python<'_>, workload: PyRef<'_, NftWorkload>, pin_dir: &str) -> PyResult<u32> {
    let snap = workload.workload.snap.clone();
    py.allow_threads(|| Pinned::open(Path::new(pin_dir))?.update(&snap)).map_err(to_py)
}

/// Zeroes the counters of the datapath pinned at `pin_dir`.
#[pyfunction]
fn xdp_reset(py: Python<'_>, pin_dir: &str) -> PyResult<()> {
    py.allow_threads(|| Pinned::open(Path::new(pin_dir))?.reset_counters()).map_err(to_py)
}

/// Every counter of the datapath pinned at `pin_dir`.
#[pyfunction]
fn xdp_counters<'py>(py: Python<'py>, pin_dir: &str) -> PyResult<Bound<'py, PyAny>> {
    let c = py.allow_threads(|| Pinned::open(Path::new(pin_dir))?.counters()).map_err(to_py)?;
    record(py, &c)
}

/// Checks every logical worker's order in the kernel against `workload`'s dependencies;
/// returns one line per worker that breaks the MRF invariant (empty: all keep it).
#[pyfunction]
fn xdp_check_orders(py: Python<'_>, workload: PyRef<'_, NftWorkload>, pin_dir: &str) -> PyResult<Vec<String>> {
    let snap = workload.workload.snap.clone();
    py.allow_threads(|| {
        let orders = Pinned::open(Path::new(pin_dir))?.orders()?;
        Ok::<_, Error>(
            orders
                .iter()
                .enumerate()
                .filter_map(|(w, o)| datapath::check_order(&snap, o).err().map(|e| format!("worker {w}: {e}")))
                .collect(),
        )
    })
    .map_err(to_py)
}

/// Detaches and removes the datapath pinned at `pin_dir`; False when there was none.
#[pyfunction]
fn xdp_unload(py: Python<'_>, pin_dir: &str) -> PyResult<bool> {
    py.allow_threads(|| datapath::unload(Path::new(pin_dir))).map_err(to_py)
}

/// The in-kernel trace replayer (`xdp-bench --generator xdp-live`), loaded with a workload's
/// frames; `send` takes the same settings and gives the same report as `NftWorkload.send`.
#[pyclass(frozen, module = "superlinear._native", name = "XdpReplayer")]
pub struct XdpReplayer {
    replayer: LiveReplayer,
}

#[pymethods]
impl XdpReplayer {
    /// Loads the replayer with `workload`'s frames (`build_frames` must come first).
    #[new]
    fn new(py: Python<'_>, workload: PyRef<'_, NftWorkload>) -> PyResult<Self> {
        let frames = workload
            .frames
            .as_ref()
            .ok_or_else(|| SuperlinearError::new_err("build_frames must come before the replayer"))?;
        let replayer = py.allow_threads(|| LiveReplayer::new(frames)).map_err(to_py)?;
        Ok(Self { replayer })
    }

    /// Sends frames (`netns`, `device`, `start`, `count`, `seconds`, `rate_pps`, `batch`, `cpu`);
    /// returns sent, next, elapsed_ns, cpu_ns, calls, refused.
    fn send<'py>(&self, py: Python<'py>, config: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyAny>> {
        let spec: SendSpec = settings(config)?;
        let r = py.allow_threads(|| self.replayer.send(&spec)).map_err(to_py)?;
        record(py, &r)
    }
}

/// Registers the XDP bindings.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(xdp_build_error, m)?)?;
    m.add_function(wrap_pyfunction!(xdp_load, m)?)?;
    m.add_function(wrap_pyfunction!(xdp_check_dispatch, m)?)?;
    m.add_function(wrap_pyfunction!(xdp_update, m)?)?;
    m.add_function(wrap_pyfunction!(xdp_reset, m)?)?;
    m.add_function(wrap_pyfunction!(xdp_counters, m)?)?;
    m.add_function(wrap_pyfunction!(xdp_check_orders, m)?)?;
    m.add_function(wrap_pyfunction!(xdp_unload, m)?)?;
    m.add_class::<XdpReplayer>()?;
    Ok(())
}
