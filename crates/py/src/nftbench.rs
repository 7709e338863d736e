//! Bindings of `superlinear-nftbench` for `superlinear nft-bench`: one rule set and trace
//! loaded once (`NftWorkload`, a classify `PacketWorkload` with the trace's frames), the
//! benchmark table's text, our classifiers' per-rule counts and timings (single core,
//! projected), and the AF_PACKET sender. Python owns the namespaces, nft itself and the report
//! (`superlinear.netns`, `superlinear.nft_bench`).

use crate::classify::PacketWorkload;
use crate::convert::{record, settings, to_py};
use crate::SuperlinearError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::Serialize;
use superlinear_classify::config::SyntheticSettings;
use superlinear_classify::rules::{write_rules, RuleFormat};
use superlinear_classify::run::RunSpec;
use superlinear_classify::trace::encode::{parse_mac, Macs};
use superlinear_classify::trace::{shape, write_trace, TraceFormat};
use superlinear_core::accounting::AccountingRecord;
use superlinear_nftbench::chain::{bench_table, kernel_action, ChainOptions};
use superlinear_nftbench::config::LoadSettings;
use superlinear_nftbench::counts::count;
use superlinear_nftbench::frame::Frames;
use superlinear_nftbench::sender::{send, SendSpec};
use superlinear_nftbench::synthetic::synthetic_workload;

/// A projected run's accounting with the dispatcher's canonical name.
#[derive(Serialize)]
struct ProjectedRecord<'a> {
    #[serde(flatten)]
    accounting: AccountingRecord<'a>,
    dispatch: &'a str,
}

/// A rule set and a trace, with the trace's frames once they are built.
#[pyclass(module = "superlinear._native", name = "NftWorkload")]
pub struct NftWorkload {
    pub(crate) workload: PacketWorkload,
    pub(crate) frames: Option<Frames>,
}

fn mac(s: &str) -> PyResult<[u8; 6]> {
    parse_mac(s).ok_or_else(|| SuperlinearError::new_err(format!("bad MAC address '{s}' (aa:bb:cc:dd:ee:ff)")))
}

#[pymethods]
impl NftWorkload {
    /// Reads a rule file (ClassBench, native or nft; `options`: `format`, `actions` for
    /// ClassBench filters, `default` policy) and a trace (ClassBench, pcap, pcapng, binary;
    /// `trace_format`). Without a trace, `generate` headers are made from the rules
    /// (`seed`), ClassBench style.
    #[staticmethod]
    #[pyo3(signature = (rules_path, trace_path, options))]
    fn load(py: Python<'_>, rules_path: &str, trace_path: Option<&str>, options: &Bound<'_, PyDict>) -> PyResult<Self> {
        let cfg: LoadSettings = settings(options)?;
        let opts = cfg.read_options().map_err(to_py)?;
        let trace = match trace_path {
            Some(t) => Some((t, cfg.trace_format().map_err(to_py)?)),
            None => None,
        };
        let workload = PacketWorkload::read(py, rules_path, trace, &opts, cfg.generate, cfg.seed)?;
        Ok(Self { workload, frames: None })
    }

    /// The paper's synthetic rules (`rules`, `depth`, `flows_per_rule`, `catch_all_fraction`)
    /// with `packets` packets: half the synthetic trace, half ClassBench-style headers drawn
    /// from the rules.
    #[staticmethod]
    #[pyo3(signature = (spec, packets, seed = 1))]
    fn synthetic(py: Python<'_>, spec: &Bound<'_, PyDict>, packets: usize, seed: u64) -> PyResult<Self> {
        let spec = settings::<SyntheticSettings>(spec)?.to_spec();
        let (set, trace) = py.allow_threads(|| synthetic_workload(&spec, packets, seed)).map_err(to_py)?;
        Ok(Self { workload: PacketWorkload::build(py, set, trace, Vec::new())?, frames: None })
    }

    /// The same rules with the trace reshaped: `shuffled` (same headers, random order, no
    /// temporal locality; seeded) or `trains` (each header `train` times in a row: high
    /// locality), same length.
    #[pyo3(signature = (locality, seed = 1, train = 16))]
    fn reshaped(&self, locality: &str, seed: u64, train: usize) -> PyResult<Self> {
        let p = &self.workload.packets;
        let packets = match locality {
            "shuffled" | "none" => shape::shuffled(p, seed),
            "trains" | "high" => shape::trains(p, train),
            other => return Err(to_py(format!("unknown locality '{other}' (none, high)"))),
        };
        Ok(Self { workload: self.workload.with_packets(packets), frames: None })
    }

    /// Gives the rule-aware dispatcher its calibration sample: the first `n` packets of the
    /// trace (as `superlinear classify --calibration N` does).
    fn calibrate(&self, n: usize) {
        self.workload.calibrate_prefix(n);
    }

    /// Writes the rules in the native format and, with a path, the trace as a ClassBench trace.
    #[pyo3(signature = (rules_path, trace_path = None))]
    fn write(&self, rules_path: &str, trace_path: Option<&str>) -> PyResult<()> {
        write_rules(rules_path, &self.workload.snap.rules, RuleFormat::Native).map_err(to_py)?;
        if let Some(t) = trace_path {
            write_trace(t, &self.workload.packets, TraceFormat::ClassBench).map_err(to_py)?;
        }
        Ok(())
    }

    /// Number of rules.
    fn rules(&self) -> usize {
        self.workload.snap.len()
    }

    /// Number of packets in the trace.
    fn packets(&self) -> usize {
        self.workload.packets.len()
    }

    /// The default policy, as read and as the kernel chain runs it.
    fn default_action(&self) -> (&'static str, &'static str) {
        let a = self.workload.snap.rules.default_action;
        (a.name(), kernel_action(a).name())
    }

    /// Whether the rule file set the default policy itself (rather than the `default` option).
    fn default_from_file(&self) -> bool {
        self.workload.snap.rules.default_from_file
    }

    /// Every rule as (src_lo, src_hi, dst_lo, dst_hi, sport_lo, sport_hi, dport_lo, dport_hi,
    /// proto_value, proto_mask, action, kernel_action), in priority order.
    #[allow(clippy::type_complexity)]
    fn rule_rows(&self) -> Vec<(u32, u32, u32, u32, u16, u16, u16, u16, u8, u8, &'static str, &'static str)> {
        self.workload
            .snap
            .rules
            .rules
            .iter()
            .map(|r| {
                (
                    r.src.lo,
                    r.src.hi,
                    r.dst.lo,
                    r.dst.hi,
                    r.sport.lo,
                    r.sport.hi,
                    r.dport.lo,
                    r.dport.hi,
                    r.proto.value & r.proto.mask,
                    r.proto.mask,
                    r.action.name(),
                    kernel_action(r.action).name(),
                )
            })
            .collect()
    }

    /// The benchmark table as `nft -f` input (`empty`: the rule-less baseline chain).
    #[pyo3(signature = (table, device, empty = false))]
    fn nft_table(&self, table: &str, device: &str, empty: bool) -> PyResult<String> {
        bench_table(&self.workload.snap.rules, &ChainOptions { table: table.into(), device: device.into(), empty })
            .map_err(to_py)
    }

    /// Our classifier's packets per first-match rule and the default policy's, in trace order.
    fn counts(&self, py: Python<'_>, algo: &str) -> PyResult<(Vec<u64>, u64)> {
        let c = py.allow_threads(|| count(&self.workload.snap, &self.workload.packets, algo)).map_err(to_py)?;
        Ok((c.per_rule, c.default))
    }

    /// Single-thread classification rate (packets per second of thread CPU time, best of
    /// `repeats`, each from a fresh classifier) and mean work (rules compared) per packet.
    fn single_core(&self, py: Python<'_>, algo: &str, repeats: usize) -> PyResult<(f64, f64)> {
        self.workload.bench(py, algo, repeats)
    }

    /// A projected run with k workers behind a dispatcher: its accounting.
    #[pyo3(signature = (algo, dispatch, k, repeats = 1, seed = 1))]
    fn projected<'py>(
        &self,
        py: Python<'py>,
        algo: &str,
        dispatch: &str,
        k: usize,
        repeats: usize,
        seed: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let spec = RunSpec {
            algo: algo.into(),
            dispatch: dispatch.into(),
            k,
            projected: true,
            measured: false,
            repeats: repeats.max(1),
            seed,
            ..Default::default()
        };
        let report = self.workload.execute(py, &spec)?;
        let acc = report.projected.expect("projected mode was asked for");
        record(py, &ProjectedRecord { accounting: acc.record(), dispatch: &report.dispatch })
    }

    /// The dispatcher's canonical name for k workers (an error for a bad spec).
    fn describe_dispatch(&self, dispatch: &str, k: usize) -> PyResult<String> {
        self.workload.describe_dispatch(dispatch, k)
    }

    /// Builds the trace's frames with these link-layer addresses (before `send`).
    fn build_frames(&mut self, py: Python<'_>, dst_mac: &str, src_mac: &str) -> PyResult<()> {
        let macs = Macs { dst: mac(dst_mac)?, src: mac(src_mac)? };
        let packets = &self.workload.packets;
        self.frames = Some(py.allow_threads(|| Frames::build(packets, &macs)));
        Ok(())
    }

    /// Sends frames (`netns`, `device`, `start`, `count`, `seconds`, `rate_pps`, `batch`,
    /// `cpu`); returns sent, next, elapsed_ns, cpu_ns, calls, refused.
    fn send<'py>(&self, py: Python<'py>, config: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyAny>> {
        let frames =
            self.frames.as_ref().ok_or_else(|| SuperlinearError::new_err("build_frames must come before send"))?;
        let spec: SendSpec = settings(config)?;
        let r = py.allow_threads(|| send(frames, &spec)).map_err(to_py)?;
        record(py, &r)
    }
}

/// Registers the nft-bench bindings.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NftWorkload>()?;
    Ok(())
}
