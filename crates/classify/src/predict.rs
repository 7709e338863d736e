//! Predicting a run's work from a sample of its traffic, by exact simulation: the classifier the
//! run will use (MRF with its dependency bounds, MRF-swap or the static list; paper §4.1,
//! Alg. 1), behind the dispatcher the run will use (the same routing, seed and rule-aware field
//! choice as [`crate::run::execute`]), serves the sample on k workers and one worker, and the work
//! speedup is one worker's work over the busiest worker's (q(k)·ℓ(k) of the paper's App. A,
//! Definitions A.1–A.2, computed on the real worker instead of the move-to-front law).
//!
//! The working-set law scores move-to-front workers on the first-match rule stream; MRF moves a
//! hit rule only up to its nearest dependency and then moves that dependency, so with
//! dependencies the law over-predicts (about 2× on ClassBench fw1) and can misrank field sets.
//! This module is the same exact simulation the rule-aware dispatcher uses for its shortlist
//! ([`crate::dispatch::score_with_mrf`]), extended from the steady state to a whole run:
//!
//! * the sample (a slice of the trace) is routed, and each worker (fresh, in the initial rule
//!   order) serves its part of the sample's first half (work `a`), then of its second half (`b`);
//! * the rest of the trace, beyond the sample, is *fresh* traffic: it costs what the second half
//!   cost per sample packet after the first half had been served (`b / (sample − sample/2)`
//!   each), a rate that still carries the discovery of rules the worker has not pulled forward
//!   yet, at the rate the sample shows it;
//! * packets beyond the trace's own length are *replays* of it: the worker serves its part again
//!   once per replay, the last pass only as far as the run goes (up to [`MAX_REPLAY_PASSES`]
//!   passes; further ones cost the last pass's rate);
//! * so the prediction is exact when the sample is the whole trace (the prediction is then the
//!   run's own work count), replays up to [`MAX_REPLAY_PASSES`] included; an extrapolation
//!   otherwise.
use crate::classifier::{self, ClassifierOptions};
use crate::dispatch::{self, RuleAwarePlanner};
use crate::packet::Packet;
use crate::run;
use serde::Serialize;
use superlinear_core::cputime::thread_cpu_ns;
use superlinear_core::Error;

/// What to predict: the run's classifier, dispatcher, workers, seed and length.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkSpec {
    /// Classifier name (`static`, `mrf`, `mrf-swap`).
    pub algo: String,
    /// Dispatcher spec, as a run takes it.
    pub dispatch: String,
    /// Workers.
    pub k: usize,
    /// Seed of seeded dispatchers (as the run's).
    pub seed: u64,
    /// Packets the run serves (the sample's work is extrapolated to this many).
    pub target: usize,
    /// Packets of the trace before it repeats (a run longer than this replays it); 0: the
    /// sample's own length.
    pub period: usize,
}

/// A run's work predicted from a sample (all work in the classifier's units: rules compared).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkPrediction {
    /// Classifier.
    pub algo: String,
    /// The dispatcher's canonical name at k (the rule-aware one names its fields).
    pub dispatch: String,
    /// Workers.
    pub k: usize,
    /// Packets simulated.
    pub sample: usize,
    /// Packets the prediction is for.
    pub target: usize,
    /// One worker's predicted work over `target` packets (the baseline T(1)).
    pub baseline_work: f64,
    /// Each worker's predicted work over `target` packets.
    pub worker_work: Vec<f64>,
    /// Sample packets each worker received.
    pub worker_packets: Vec<u64>,
    /// One worker's predicted work over the busiest worker's: the predicted work speedup.
    pub work_speedup: f64,
    /// The busiest worker's share of all work (1/k is perfect balance).
    pub busiest_share: f64,
    /// The busiest worker's packets over the mean (the run's `load_imbalance`).
    pub load_imbalance: f64,
    /// Thread CPU time of routing one packet (the dispatcher's serial cost), on this machine.
    pub dispatch_ns_per_packet: f64,
    /// Thread CPU time per work unit of the single worker, on this machine.
    pub ns_per_work: f64,
}

/// One worker's part of a sample: its packets and their indices in the sample (ascending).
#[derive(Default)]
struct Part {
    packets: Vec<Packet>,
    index: Vec<usize>,
}

impl Part {
    /// The part's packets among the sample's first `n`.
    fn prefix(&self, n: usize) -> &[Packet] {
        &self.packets[..self.index.partition_point(|&i| i < n)]
    }
}

/// Replays of the sample simulated pass by pass; further ones cost the last pass's rate.
pub const MAX_REPLAY_PASSES: usize = 8;

/// What a part cost a fresh worker: the sample's first half, its second half, then each replay
/// pass (sample packets it covers, work).
struct Passes {
    a: u64,
    b: u64,
    again: Vec<(usize, u64)>,
}

/// Packets of fresh traffic and of replays in a run of `target` packets over a trace of
/// `period` packets, from a sample of `sample`.
fn split(sample: usize, period: usize, target: usize) -> (usize, usize) {
    (target.min(period).saturating_sub(sample), target.saturating_sub(period.max(sample)))
}

/// Serves a part on a fresh worker: the sample's two halves, then the replays of the run (up to
/// [`MAX_REPLAY_PASSES`] passes, the last one partial where the run ends inside it).
fn serve(
    entry: &classifier::ClassifierEntry,
    planner: &RuleAwarePlanner,
    part: &Part,
    sample: usize,
    replay: usize,
) -> Passes {
    let mut w = (entry.build)(planner.snapshot().clone(), ClassifierOptions::default());
    let half = part.prefix(sample / 2).len();
    let a = w.serve_batch(&part.packets[..half]);
    let b = w.serve_batch(&part.packets[half..]);
    let mut again = Vec::new();
    let mut left = replay;
    while left > 0 && again.len() < MAX_REPLAY_PASSES {
        let n = left.min(sample);
        again.push((n, w.serve_batch(part.prefix(n))));
        left -= n;
    }
    Passes { a, b, again }
}

/// The extrapolation of the module documentation.
fn extrapolate(p: &Passes, sample: usize, period: usize, target: usize) -> f64 {
    let (fresh, replay) = split(sample, period, target);
    let simulated: usize = p.again.iter().map(|&(n, _)| n).sum();
    let last_rate = p.again.last().map_or(0.0, |&(n, w)| w as f64 / n.max(1) as f64);
    (p.a + p.b) as f64
        + fresh as f64 * p.b as f64 / (sample - sample / 2).max(1) as f64
        + p.again.iter().map(|&(_, w)| w as f64).sum::<f64>()
        + (replay - simulated) as f64 * last_rate
}

/// One worker serving a sample (the baseline T(1) of every candidate and k on that sample):
/// computed once and shared, since it depends on neither the dispatcher nor k.
#[derive(Clone, Debug, PartialEq)]
pub struct Baseline {
    /// One worker's predicted work over the run's packets.
    pub work: f64,
    /// Thread CPU time per work unit of that worker, on this machine.
    pub ns_per_work: f64,
}

fn checked<'a>(
    sample: &'a [Packet],
    spec: &WorkSpec,
) -> Result<(&'static classifier::ClassifierEntry, &'a [Packet]), Error> {
    let entry = classifier::lookup(&spec.algo)?;
    if spec.k == 0 {
        return Err(Error::config("k must be at least 1"));
    }
    if sample.is_empty() || spec.target == 0 {
        return Err(Error::config("nothing to predict from: the sample holds no packets"));
    }
    Ok((entry, &sample[..sample.len().min(spec.target)]))
}

/// The single worker's predicted work on `sample` for the run `spec` (its dispatcher and k are
/// not used).
pub fn baseline(planner: &RuleAwarePlanner, sample: &[Packet], spec: &WorkSpec) -> Result<Baseline, Error> {
    let (entry, sample) = checked(sample, spec)?;
    let period = if spec.period == 0 { sample.len() } else { spec.period };
    let (_, replay) = split(sample.len(), period, spec.target);
    let one = Part { packets: sample.to_vec(), index: (0..sample.len()).collect() };
    let t0 = thread_cpu_ns();
    let base = serve(entry, planner, &one, sample.len(), replay);
    let baseline_ns = thread_cpu_ns() - t0;
    let simulated = base.a + base.b + base.again.iter().map(|&(_, w)| w).sum::<u64>();
    Ok(Baseline {
        work: extrapolate(&base, sample.len(), period, spec.target),
        ns_per_work: baseline_ns as f64 / simulated.max(1) as f64,
    })
}

/// Predicts the run `spec` from `sample` (a slice of its traffic; only its first `target`
/// packets when it is longer than the run).
pub fn predict_work(planner: &RuleAwarePlanner, sample: &[Packet], spec: &WorkSpec) -> Result<WorkPrediction, Error> {
    predict_work_with(planner, sample, spec, None)
}

/// [`predict_work`] with the single worker's [`Baseline`] on the same sample and run already
/// computed (by [`baseline`]); `None` computes it.
pub fn predict_work_with(
    planner: &RuleAwarePlanner,
    sample: &[Packet],
    spec: &WorkSpec,
    base: Option<&Baseline>,
) -> Result<WorkPrediction, Error> {
    let (entry, sample) = checked(sample, spec)?;
    let name = dispatch::describe(&spec.dispatch, spec.k, planner)?;
    // Routed once untimed (the rule-aware dispatcher chooses its fields on first use), then timed.
    run::assign(planner, sample, &spec.dispatch, spec.k, spec.seed)?;
    let t0 = thread_cpu_ns();
    let route = run::assign(planner, sample, &spec.dispatch, spec.k, spec.seed)?;
    let dispatch_ns = thread_cpu_ns() - t0;
    let mut parts: Vec<Part> = (0..spec.k).map(|_| Part::default()).collect();
    for (i, (p, &w)) in sample.iter().zip(&route).enumerate() {
        parts[w as usize].packets.push(*p);
        parts[w as usize].index.push(i);
    }
    let period = if spec.period == 0 { sample.len() } else { spec.period };
    let (_, replay) = split(sample.len(), period, spec.target);
    let base = match base {
        Some(b) => b.clone(),
        None => baseline(planner, sample, spec)?,
    };
    let worker_work: Vec<f64> = parts
        .iter()
        .map(|part| extrapolate(&serve(entry, planner, part, sample.len(), replay), sample.len(), period, spec.target))
        .collect();
    let span = worker_work.iter().copied().fold(0.0, f64::max);
    let total: f64 = worker_work.iter().sum();
    let worker_packets: Vec<u64> = parts.iter().map(|p| p.packets.len() as u64).collect();
    let busiest = worker_packets.iter().copied().max().unwrap_or(0) as f64;
    Ok(WorkPrediction {
        algo: entry.name.to_string(),
        dispatch: name,
        k: spec.k,
        sample: sample.len(),
        target: spec.target,
        baseline_work: base.work,
        work_speedup: base.work / span.max(1.0),
        busiest_share: if total > 0.0 { span / total } else { 1.0 / spec.k as f64 },
        load_imbalance: busiest * spec.k as f64 / sample.len() as f64,
        worker_work,
        worker_packets,
        dispatch_ns_per_packet: dispatch_ns as f64 / sample.len() as f64,
        ns_per_work: base.ns_per_work,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::SyntheticSpec;
    use crate::run::{execute, RunSpec};
    use crate::snapshot::Snapshot;
    use std::sync::Arc;

    fn planner(depth: usize) -> (RuleAwarePlanner, Vec<Packet>) {
        let spec = SyntheticSpec { rules: 199, depth, flows_per_rule: 20, catch_all_fraction: 0.0 };
        let planner = RuleAwarePlanner::new(Arc::new(Snapshot::new(spec.rule_set().unwrap())));
        let packets = spec.trace(6_000, 5).unwrap();
        planner.calibrate(&packets);
        (planner, packets)
    }

    fn run_work(planner: &RuleAwarePlanner, packets: &[Packet], algo: &str, dispatch: &str, k: usize) -> Vec<u64> {
        let spec = RunSpec { algo: algo.into(), dispatch: dispatch.into(), k, ..RunSpec::default() };
        execute(planner, packets, &spec).unwrap().projected.unwrap().worker_work
    }

    #[test]
    fn the_whole_trace_as_sample_predicts_a_run_exactly() {
        let (planner, packets) = planner(3);
        for (algo, dispatch) in [("mrf", "rss:sip,dip"), ("mrf-swap", "rule"), ("static", "rss:dport"), ("mrf", "rr")] {
            let n = packets.len();
            let spec = WorkSpec { algo: algo.into(), dispatch: dispatch.into(), k: 4, seed: 1, target: n, period: n };
            let p = predict_work(&planner, &packets, &spec).unwrap();
            let got = run_work(&planner, &packets, algo, dispatch, 4);
            let want: Vec<f64> = got.iter().map(|&w| w as f64).collect();
            assert_eq!(p.worker_work, want, "{algo} behind {dispatch}");
            let one = run_work(&planner, &packets, algo, dispatch, 1);
            assert_eq!(p.baseline_work, one[0] as f64);
        }
    }

    #[test]
    fn a_trace_replayed_whole_is_predicted_exactly() {
        let (planner, packets) = planner(2);
        let replayed: Vec<Packet> = packets.iter().cycle().take(3 * packets.len() + 1234).copied().collect();
        let (target, period) = (replayed.len(), packets.len());
        let spec = WorkSpec { algo: "mrf".into(), dispatch: "rss:sip".into(), k: 8, seed: 1, target, period };
        let p = predict_work(&planner, &packets, &spec).unwrap();
        let got: Vec<f64> = run_work(&planner, &replayed, "mrf", "rss:sip", 8).iter().map(|&w| w as f64).collect();
        assert_eq!(p.worker_work, got);
    }

    #[test]
    fn half_a_stationary_trace_predicts_the_whole_within_ten_percent() {
        let (planner, packets) = planner(3);
        let n = packets.len();
        let one = run_work(&planner, &packets, "mrf", "rss:dport", 1)[0] as f64;
        for dispatch in ["rss:sip,dip,sport,dport,proto", "rss:dport", "rule"] {
            let spec = WorkSpec { algo: "mrf".into(), dispatch: dispatch.into(), k: 8, seed: 1, target: n, period: n };
            let p = predict_work(&planner, &packets[..n / 2], &spec).unwrap();
            let span = *run_work(&planner, &packets, "mrf", dispatch, 8).iter().max().unwrap() as f64;
            let obtained = one / span;
            assert!((p.work_speedup / obtained - 1.0).abs() < 0.10, "{dispatch}: {} vs {obtained}", p.work_speedup);
        }
    }

    #[test]
    fn a_shared_baseline_gives_the_same_prediction() {
        let (planner, packets) = planner(2);
        let n = packets.len();
        let spec = WorkSpec { algo: "mrf".into(), dispatch: "rss:dport".into(), k: 4, seed: 1, target: n, period: n };
        let b = baseline(&planner, &packets[..2000], &spec).unwrap();
        let with = predict_work_with(&planner, &packets[..2000], &spec, Some(&b)).unwrap();
        let without = predict_work(&planner, &packets[..2000], &spec).unwrap();
        assert_eq!((with.baseline_work, &with.worker_work), (without.baseline_work, &without.worker_work));
    }

    #[test]
    fn refuses_empty_samples_and_unknown_names() {
        let (planner, packets) = planner(0);
        let spec = WorkSpec { algo: "mrf".into(), dispatch: "rss:dport".into(), k: 2, seed: 1, target: 10, period: 0 };
        assert!(predict_work(&planner, &[], &spec).is_err());
        assert!(predict_work(&planner, &packets, &WorkSpec { algo: "nope".into(), ..spec.clone() }).is_err());
        assert!(predict_work(&planner, &packets, &WorkSpec { dispatch: "rss:nope".into(), ..spec }).is_err());
    }
}
