//! The wire forms of the scheduling experiments' configs (innocent traffic, displacement sweep,
//! key-worker and classifier attacks), as Python spells them: flat named fields with their one
//! default each, unknown fields rejected. Each turns into the typed spec it stands for, and the
//! sweep also chooses its innocent rate and its analytic bound here.

use crate::attack::{bound, Bound};
use crate::dist::Dist;
use crate::sim::SimOutcome;
use crate::stage::{
    run_classifier_attack, AttackSummary, ClassifierAttackSpec, ClassifierWorkload, KeyAttackSpec, LearnMode,
    Prediction,
};
use crate::sweep::{run_sweep, Sweep, SweepPoint, SweepSpec};
use crate::traffic::{InnocentStats, InnocentTraffic};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use superlinear_classify::config::read_options;
use superlinear_classify::trace::TraceFormat;
use superlinear_classify::{Packet, Snapshot};
use superlinear_core::workload::WorkloadSpec;
use superlinear_core::Error;

/// Smallest packet of distribution traffic when none is given (bytes).
pub const BYTES_MIN: u32 = 64;
/// Largest job of distribution traffic when none is given (µs).
pub const JOB_MAX_US: f64 = 10.0;

/// A job-size learning mode by name.
pub fn learn_mode(name: &str) -> Result<LearnMode, Error> {
    match name {
        "last" => Ok(LearnMode::Last),
        "max" => Ok(LearnMode::Max),
        "ewma" => Ok(LearnMode::Ewma(0.25)),
        other => Err(Error::config(format!("unknown learning mode '{other}' (known: last, max, ewma)"))),
    }
}

fn packet_sizes(spec: &str) -> Result<Dist, Error> {
    Dist::parse(spec, "--packet-size")
}

/// Innocent traffic: size distributions (bytes, µs) or a trace of `BYTES JOB_US` lines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrafficSettings {
    /// Packet size distribution in bytes.
    pub packet: String,
    /// Job size distribution in µs.
    pub job: String,
    /// Smallest packet (bytes), the adversary's smallest too: it lowers a trace's own smallest;
    /// `None`: the trace's smallest, or [`BYTES_MIN`].
    pub bytes_min: Option<u32>,
    /// Largest packet (bytes) of distribution traffic.
    pub bytes_max: u32,
    /// Largest job (µs), raising a trace's own largest; `None`: the trace's largest, or
    /// [`JOB_MAX_US`].
    pub job_max: Option<f64>,
    /// Trace file (instead of the distributions).
    pub trace: Option<String>,
    /// Flows the innocent packets are spread over.
    pub flows: u32,
}

impl Default for TrafficSettings {
    fn default() -> Self {
        Self {
            packet: "normal:1250:400".into(),
            job: "exp:1".into(),
            bytes_min: Some(BYTES_MIN),
            bytes_max: 1500,
            job_max: Some(JOB_MAX_US),
            trace: None,
            flows: 64,
        }
    }
}

impl TrafficSettings {
    /// The traffic these settings describe.
    pub fn to_traffic(&self) -> Result<InnocentTraffic, Error> {
        match &self.trace {
            Some(path) => InnocentTraffic::from_trace(path, self.bytes_min, self.job_max, self.flows),
            None => InnocentTraffic::from_dists(
                packet_sizes(&self.packet)?,
                Dist::parse(&self.job, "--job-size")?,
                self.bytes_min.unwrap_or(BYTES_MIN),
                self.bytes_max,
                self.job_max.unwrap_or(JOB_MAX_US),
                self.flows,
            ),
        }
    }
}

/// One policy's displacement sweep in the simulator (rates in bits/µs), on innocent traffic
/// given by the traffic fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SweepSettings {
    pub packet: String,
    pub job: String,
    pub bytes_min: Option<u32>,
    pub bytes_max: u32,
    pub job_max: Option<f64>,
    pub trace: Option<String>,
    pub flows: u32,
    pub policy: String,
    /// Innocent rate; `None`: `load` × r_max.
    pub innocent_rate: Option<f64>,
    /// Innocent load as a share of r_max (when `innocent_rate` is not given).
    pub load: f64,
    pub attack_rates: Vec<f64>,
    pub buffer: usize,
    pub width: u32,
    pub levels: u32,
    pub packets: usize,
    pub warmup: f64,
    pub seed: u64,
    pub probe_jobs: usize,
    pub threads: usize,
    /// Samples of the innocent traffic's statistics.
    pub stats_samples: usize,
}

impl Default for SweepSettings {
    fn default() -> Self {
        let t = TrafficSettings::default();
        Self {
            packet: t.packet,
            job: t.job,
            bytes_min: t.bytes_min,
            bytes_max: t.bytes_max,
            job_max: t.job_max,
            trace: t.trace,
            flows: t.flows,
            policy: "wsjf".into(),
            innocent_rate: None,
            load: 0.83,
            attack_rates: Vec::new(),
            buffer: 1024,
            width: 64,
            levels: 2,
            packets: 100_000,
            warmup: 0.2,
            seed: 1,
            probe_jobs: 0,
            threads: 2,
            stats_samples: 200_000,
        }
    }
}

/// A sweep as run: its traffic and the traffic's statistics, the innocent rate chosen, the
/// points, and the analytic bound of the policy's displacement factor where one is known.
pub struct SweepRun {
    pub traffic: InnocentTraffic,
    pub stats: InnocentStats,
    pub innocent_rate: f64,
    pub sweep: Sweep,
    pub bound: Option<Bound>,
}

impl SweepSettings {
    /// The traffic fields alone.
    pub fn traffic(&self) -> TrafficSettings {
        TrafficSettings {
            packet: self.packet.clone(),
            job: self.job.clone(),
            bytes_min: self.bytes_min,
            bytes_max: self.bytes_max,
            job_max: self.job_max,
            trace: self.trace.clone(),
            flows: self.flows,
        }
    }

    /// The traffic and its statistics (sampled with a seed apart from the simulation's).
    pub fn traffic_and_stats(&self) -> Result<(InnocentTraffic, InnocentStats), Error> {
        let traffic = self.traffic().to_traffic()?;
        let stats = traffic.stats(self.stats_samples, self.seed ^ 0x5eed);
        Ok((traffic, stats))
    }

    /// The innocent rate: the one given, or `load` × r_max of the traffic.
    pub fn innocent_rate(&self, stats: &InnocentStats) -> f64 {
        self.innocent_rate.unwrap_or(self.load * stats.r_max())
    }

    /// Runs the sweep.
    pub fn run(&self) -> Result<SweepRun, Error> {
        let (traffic, stats) = self.traffic_and_stats()?;
        let innocent_rate = self.innocent_rate(&stats);
        let spec = SweepSpec {
            policy: self.policy.clone(),
            innocent_rate,
            attack_rates: self.attack_rates.clone(),
            buffer: self.buffer,
            width: self.width,
            levels: self.levels,
            packets: self.packets,
            warmup: self.warmup,
            seed: self.seed,
            probe_jobs: self.probe_jobs,
            threads: self.threads,
        };
        let sweep = run_sweep(&traffic, &stats, &spec)?;
        let bound = bound(&self.policy, &stats, innocent_rate, traffic.bits_min, traffic.job_max, traffic.flows)?;
        Ok(SweepRun { traffic, stats, innocent_rate, sweep, bound: Some(bound) })
    }
}

/// Innocent traffic's statistics and limits as results carry them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrafficRecord {
    pub mean_bits: f64,
    pub mean_job_us: f64,
    pub r_max: f64,
    pub bits_min: u32,
    pub bits_max: u32,
    pub job_max_us: f64,
    pub flows: u32,
}

impl TrafficRecord {
    /// The record of `traffic` with its statistics.
    pub fn new(traffic: &InnocentTraffic, stats: &InnocentStats) -> Self {
        Self {
            mean_bits: stats.mean_bits,
            mean_job_us: stats.mean_job,
            r_max: stats.r_max(),
            bits_min: traffic.bits_min,
            bits_max: traffic.bits_max,
            job_max_us: traffic.job_max,
            flows: traffic.flows,
        }
    }
}

/// A sweep as results carry it.
#[derive(Clone, Debug, Serialize)]
pub struct SweepRecord<'a> {
    pub policy: &'a str,
    pub innocent_rate: f64,
    pub r_max: f64,
    pub mean_bits: f64,
    pub mean_job_us: f64,
    pub bits_min: u32,
    pub job_max_us: f64,
    pub baseline: &'a SimOutcome,
    pub displacement_factor: f64,
    /// The analytic bound of the displacement factor, where one is known.
    pub bound: Option<f64>,
    /// `lower` or `upper`.
    pub bound_kind: Option<&'static str>,
    pub points: &'a [SweepPoint],
}

impl SweepRun {
    /// The record of this sweep of `policy`.
    pub fn record<'a>(&'a self, policy: &'a str) -> SweepRecord<'a> {
        SweepRecord {
            policy,
            innocent_rate: self.innocent_rate,
            r_max: self.stats.r_max(),
            mean_bits: self.stats.mean_bits,
            mean_job_us: self.stats.mean_job,
            bits_min: self.traffic.bits_min,
            job_max_us: self.traffic.job_max,
            baseline: &self.sweep.baseline,
            displacement_factor: self.sweep.displacement_factor(),
            bound: self.bound.map(|b| b.value),
            bound_kind: self.bound.map(|b| if b.lower { "lower" } else { "upper" }),
            points: &self.sweep.points,
        }
    }
}

/// The attack experiment on a core key worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct KeyAttackSettings {
    pub algo: String,
    /// `zipf`, `uniform` or `trace`.
    pub workload: String,
    pub m: usize,
    pub alpha: f64,
    /// Key trace file (workload `trace`).
    pub trace: Option<String>,
    pub requests: usize,
    /// Innocent packet size distribution in bytes.
    pub packet: String,
    pub attack_bytes: u32,
    pub adversary: String,
    pub load: f64,
    pub attack_fractions: Vec<f64>,
    pub policies: Vec<String>,
    pub buffer: usize,
    /// `last`, `max` or `ewma`.
    pub learn: String,
    /// µs per work unit; `None`: calibrated.
    pub us_per_work: Option<f64>,
    pub warmup: f64,
    pub seed: u64,
    pub threads: usize,
}

impl Default for KeyAttackSettings {
    fn default() -> Self {
        Self {
            algo: "mtf".into(),
            workload: "zipf".into(),
            m: 5000,
            alpha: 1.1,
            trace: None,
            requests: 100_000,
            packet: "normal:1250:400".into(),
            attack_bytes: 64,
            adversary: "rotate".into(),
            load: 0.8,
            attack_fractions: Vec::new(),
            policies: vec!["fcfs".into(), "wsjf".into()],
            buffer: 1024,
            learn: "last".into(),
            us_per_work: None,
            warmup: 0.2,
            seed: 1,
            threads: 2,
        }
    }
}

impl KeyAttackSettings {
    /// The experiment's spec.
    pub fn to_spec(&self) -> Result<KeyAttackSpec, Error> {
        let m = self.m;
        let workload = match self.workload.as_str() {
            "zipf" => WorkloadSpec::Zipf { m, alpha: self.alpha },
            "uniform" => WorkloadSpec::Uniform { m },
            "trace" => WorkloadSpec::Trace { path: self.trace.clone().unwrap_or_default() },
            other => return Err(Error::config(format!("unknown workload '{other}' (known: zipf, uniform, trace)"))),
        };
        Ok(KeyAttackSpec {
            algo: self.algo.clone(),
            workload,
            requests: self.requests,
            packet_bytes: packet_sizes(&self.packet)?,
            attack_bytes: self.attack_bytes,
            adversary: self.adversary.clone(),
            load: self.load,
            attack_fractions: self.attack_fractions.clone(),
            policies: self.policies.clone(),
            buffer: self.buffer,
            learn: learn_mode(&self.learn)?,
            us_per_work: self.us_per_work,
            warmup: self.warmup,
            seed: self.seed,
            threads: self.threads,
        })
    }
}

/// The attack experiment on a packet classifier, once per adversary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClassifierAttackSettings {
    /// Rule file; `None`: the synthetic chains.
    pub rules: Option<String>,
    /// Trace file (needs `rules`); `None`: headers generated inside the rules.
    pub trace: Option<String>,
    pub rule_format: String,
    pub actions: String,
    pub default_action: String,
    pub trace_format: String,
    pub chains: usize,
    pub depth: usize,
    pub flows_per_chain: usize,
    pub alpha: f64,
    pub catch_all: f64,
    /// Innocent packets; `None`: the workload's own count.
    pub packets: Option<usize>,
    pub algo: String,
    /// `position`, `learned`, ...
    pub estimator: String,
    pub learn: String,
    pub adversaries: Vec<String>,
    pub packet: String,
    pub attack_bytes: u32,
    pub load: f64,
    pub attack_fractions: Vec<f64>,
    pub policies: Vec<String>,
    pub buffer: usize,
    pub us_per_work: Option<f64>,
    pub warmup: f64,
    pub seed: u64,
    pub threads: usize,
}

impl Default for ClassifierAttackSettings {
    fn default() -> Self {
        Self {
            rules: None,
            trace: None,
            rule_format: "auto".into(),
            actions: "random:0.5:1".into(),
            default_action: "accept".into(),
            trace_format: "auto".into(),
            chains: 500,
            depth: 4,
            flows_per_chain: 4,
            alpha: 1.1,
            catch_all: 0.002,
            packets: None,
            algo: "mrf".into(),
            estimator: "position".into(),
            learn: "last".into(),
            adversaries: vec!["rotate".into()],
            packet: "normal:1250:400".into(),
            attack_bytes: 64,
            load: 0.8,
            attack_fractions: Vec::new(),
            policies: vec!["fcfs".into(), "wsjf".into()],
            buffer: 1024,
            us_per_work: None,
            warmup: 0.2,
            seed: 1,
            threads: 2,
        }
    }
}

impl ClassifierAttackSettings {
    /// The workload: rule and trace files, or the synthetic chains.
    pub fn workload(&self) -> Result<ClassifierWorkload, Error> {
        match (&self.rules, &self.trace) {
            (Some(rules), trace) => Ok(ClassifierWorkload::Files {
                rules: rules.clone(),
                trace: trace.clone(),
                options: read_options(&self.rule_format, &self.actions, &self.default_action)?,
                trace_format: TraceFormat::parse(&self.trace_format)?,
            }),
            (None, Some(_)) => Err(Error::config("--trace needs --rules (the rules the trace is classified against)")),
            (None, None) => Ok(ClassifierWorkload::Synthetic {
                chains: self.chains,
                depth: self.depth,
                flows_per_chain: self.flows_per_chain,
                alpha: self.alpha,
                catch_all: self.catch_all,
            }),
        }
    }

    /// The experiment's spec, with no adversary yet (each run names one).
    pub fn to_spec(&self) -> Result<ClassifierAttackSpec, Error> {
        Ok(ClassifierAttackSpec {
            algo: self.algo.clone(),
            prediction: Prediction::parse(&self.estimator, learn_mode(&self.learn)?)?,
            adversary: String::new(),
            packet_bytes: packet_sizes(&self.packet)?,
            attack_bytes: self.attack_bytes,
            load: self.load,
            attack_fractions: self.attack_fractions.clone(),
            policies: self.policies.clone(),
            buffer: self.buffer,
            us_per_work: self.us_per_work,
            warmup: self.warmup,
            seed: self.seed,
            threads: self.threads,
        })
    }
}

/// The rule set and trace of a classifier attack, as results carry them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassifierWorkloadRecord {
    pub rules: usize,
    pub packets: usize,
    pub dependency_edges: usize,
    pub dependent_rules: usize,
    pub max_dependency_depth: u32,
}

impl ClassifierWorkloadRecord {
    /// The record of a loaded workload.
    pub fn new(snap: &Snapshot, packets: &[Packet]) -> Self {
        Self {
            rules: snap.len(),
            packets: packets.len(),
            dependency_edges: snap.deps.edges(),
            dependent_rules: snap.deps.dependent_rules(),
            max_dependency_depth: snap.deps.max_depth(),
        }
    }
}

/// One adversary's classifier attack as results carry it: the summary (its `calibrated`
/// telling whether any run so far calibrated the shared clock) and the attacked rules.
#[derive(Clone, Debug, Serialize)]
pub struct AdversaryRecord {
    #[serde(flatten)]
    pub summary: AttackSummary,
    pub adversary: String,
    /// Rules attacked.
    pub targets: usize,
    /// The first 16 attacked rules; −1 stands for the default policy.
    pub target_rules: Vec<i64>,
    /// Mean dependency depth of the attacked rules (the default policy left out).
    pub target_depth_mean: f64,
    pub probe_innocent_work: f64,
    pub probe_attack_work: f64,
    pub probe_attack_packets: u64,
}

/// Runs `spec` once per adversary over one workload and one clock: the first run calibrates
/// it (unless `spec` gives it), the others reuse it.
pub fn run_classifier_attacks(
    snap: &Arc<Snapshot>,
    packets: &[Packet],
    spec: &ClassifierAttackSpec,
    adversaries: &[String],
) -> Result<Vec<AdversaryRecord>, Error> {
    let (mut us_per_work, mut calibrated) = (spec.us_per_work, false);
    let mut out = Vec::with_capacity(adversaries.len());
    for adversary in adversaries {
        let spec = ClassifierAttackSpec { adversary: adversary.clone(), us_per_work, ..spec.clone() };
        let r = run_classifier_attack(snap, packets, &spec)?;
        calibrated |= r.summary.calibrated;
        us_per_work = Some(r.summary.us_per_work);
        let depths: Vec<f64> = r.targets.iter().flatten().map(|&t| snap.deps.depth(t) as f64).collect();
        out.push(AdversaryRecord {
            summary: AttackSummary { calibrated, ..r.summary },
            adversary: adversary.clone(),
            targets: r.targets.len(),
            target_rules: r.targets.iter().take(16).map(|t| t.map_or(-1, |x| x as i64)).collect(),
            // A fold from 0.0: the sum of no f64 is -0.0, printed "mean chain -0.0" when the only
            // target is the default policy (no catch-all rule).
            target_depth_mean: depths.iter().fold(0.0, |a, d| a + d) / depths.len().max(1) as f64,
            probe_innocent_work: r.probe_innocent_work,
            probe_attack_work: r.probe_attack_work,
            probe_attack_packets: r.probe_attack_packets,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, String> {
        let de = &mut serde_json::Deserializer::from_str(json);
        serde_path_to_error::deserialize(de).map_err(|e| format!("{}: {}", e.path(), e.inner()))
    }

    #[test]
    fn configs_reject_unknown_and_mistyped_fields_by_name() {
        assert!(parse::<TrafficSettings>(r#"{"flow": 3}"#).unwrap_err().contains("unknown field `flow`"));
        assert!(parse::<TrafficSettings>(r#"{"bytes_max": "big"}"#)
            .unwrap_err()
            .starts_with("bytes_max: invalid type"));
        assert!(parse::<SweepSettings>(r#"{"buffers": 3}"#).unwrap_err().contains("unknown field `buffers`"));
        assert!(parse::<SweepSettings>(r#"{"load": "high"}"#).unwrap_err().starts_with("load: invalid type"));
        assert!(parse::<KeyAttackSettings>(r#"{"adversery": "x"}"#).unwrap_err().contains("unknown field `adversery`"));
        assert!(parse::<KeyAttackSettings>(r#"{"m": -3}"#).unwrap_err().starts_with("m: invalid value"));
        let e = parse::<ClassifierAttackSettings>(r#"{"estimater": "position"}"#).unwrap_err();
        assert!(e.contains("unknown field `estimater`"), "{e}");
        let e = parse::<ClassifierAttackSettings>(r#"{"policies": "fcfs"}"#).unwrap_err();
        assert!(e.starts_with("policies: invalid type"), "{e}");
    }

    #[test]
    fn defaults_convert() {
        assert!(TrafficSettings::default().to_traffic().is_ok());
        assert!(KeyAttackSettings::default().to_spec().is_ok());
        assert!(ClassifierAttackSettings::default().to_spec().is_ok());
        assert!(matches!(ClassifierAttackSettings::default().workload(), Ok(ClassifierWorkload::Synthetic { .. })));
        let lone_trace = ClassifierAttackSettings { trace: Some("t".into()), ..Default::default() };
        assert!(lone_trace.workload().unwrap_err().to_string().contains("--trace needs --rules"));
        assert!(learn_mode("ewma").is_ok() && learn_mode("mean").is_err());
    }

    #[test]
    fn sweep_takes_its_rate_from_the_load_unless_given_and_bounds_known_policies() {
        let s = SweepSettings { attack_rates: vec![1.0], packets: 2000, stats_samples: 5000, ..Default::default() };
        let run = s.run().unwrap();
        assert!((run.innocent_rate - 0.83 * run.stats.r_max()).abs() < 1e-9);
        assert!(run.bound.is_some_and(|b| !b.lower));
        assert_eq!(run.sweep.points.len(), 1);
        let given = SweepSettings { innocent_rate: Some(100.0), policy: "fcfs".into(), ..s }.run().unwrap();
        assert_eq!(given.innocent_rate, 100.0);
        assert!(given.bound.is_some_and(|b| b.lower));
    }

    #[test]
    fn classifier_attacks_share_one_clock_across_adversaries() {
        let cfg = ClassifierAttackSettings {
            chains: 20,
            depth: 2,
            packets: Some(3000),
            attack_fractions: vec![0.1],
            policies: vec!["fcfs".into()],
            adversaries: vec!["rotate".into(), "rotate".into()],
            ..Default::default()
        };
        let (snap, packets) = cfg.workload().unwrap().load(cfg.packets, cfg.seed).unwrap();
        let info = ClassifierWorkloadRecord::new(&snap, &packets);
        assert_eq!(info.packets, 3000);
        let runs = run_classifier_attacks(&snap, &packets, &cfg.to_spec().unwrap(), &cfg.adversaries).unwrap();
        assert_eq!(runs.len(), 2);
        assert!(runs[0].summary.calibrated && runs[1].summary.calibrated);
        assert_eq!(runs[0].summary.us_per_work, runs[1].summary.us_per_work);
        assert!(runs.iter().all(|r| r.target_rules.len() == r.targets.min(16)));
    }
}
