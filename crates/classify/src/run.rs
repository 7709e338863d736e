//! Running classifiers behind dispatchers: through the core runner (projected and measured
//! speedups, exact work counts), the brute-force check, the item sequence and assignments the
//! working-set law needs, and the single-core benchmark.

use crate::classifier::{self, ClassifierOptions, PacketClassifier, RuleUpdates, StatsSink, WorkerStats};
use crate::dispatch::descriptor::{Descriptor, DescriptorWorker};
use crate::dispatch::{self, RuleAwarePlanner};
use crate::packet::Packet;
use crate::rules::RuleSet;
use crate::snapshot::Snapshot;
use std::sync::Arc;
use superlinear_core::accounting::Accounting;
use superlinear_core::cputime::{available_cores, thread_cpu_ns};
use superlinear_core::law::{Candidate, DispatcherCandidate};
use superlinear_core::run_config::ENGINE_DISPATCH_SALT;
use superlinear_core::runner::{run_projected_dispatchers, run_threaded_dispatchers_within, Placement, Streams};
use superlinear_core::{Error, Worker};

/// Most dispatcher threads a projected run models.
pub const MAX_DISPATCHERS: usize = 256;

/// One run: classifier × dispatcher × k.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    /// Classifier name (a [`classifier::REGISTRY`] entry).
    pub algo: String,
    /// Dispatcher spec (`rss:FIELDS`, `rule`, `rr`, `random`).
    pub dispatch: String,
    /// Workers.
    pub k: usize,
    /// Run the projected mode (serial dispatch, then each worker on its own stream).
    pub projected: bool,
    /// Run with real threads, one core per worker (only when k ≤ cores).
    pub measured: bool,
    /// Projected mode: best of this many runs.
    pub repeats: usize,
    /// Projected and measured modes: passes (threaded runs) are added until they span this many
    /// milliseconds, keeping the least time (0: `repeats` passes and one threaded run). Per-worker
    /// statistics (`stats`) come from one threaded run whatever this is.
    pub min_timed_ms: u64,
    /// Workers at once in projected mode (0: every core).
    pub parallel: usize,
    /// Seed of seeded dispatchers.
    pub seed: u64,
    /// Collect per-worker statistics.
    pub stats: bool,
    /// Active-set window in packets (0: default).
    pub window: usize,
    /// The packets repeat with this period (a capture replayed in a loop; 0: no repetition).
    /// Descriptors then point into the first `period` packets, as a NIC's receive ring reuses
    /// a bounded set of buffers: the headers the dispatcher and workers read occupy the
    /// capture's memory, not a copy per replayed packet (which would turn the dispatcher's
    /// header reads into a DRAM stream no receive path has).
    pub period: usize,
    /// Packets served first and left out of every figure (steady state): the first `warmup`
    /// packets warm each worker's order, the rest are timed and counted.
    pub warmup: usize,
    /// Front capacity of `rule-cache` workers in rules (others ignore it).
    pub front: usize,
    /// Dispatcher threads of the projected mode, each routing its own contiguous share of the
    /// packets (1: DESIGN.md's serial dispatcher; see
    /// [`superlinear_core::runner::run_projected_dispatchers`]); the measured mode runs as many
    /// dispatcher threads ([`superlinear_core::runner::run_threaded_dispatchers`]), where k + D
    /// threads fit the cores (with 1, where k does: the dispatcher may share a worker's core).
    pub dispatchers: usize,
}

impl Default for RunSpec {
    fn default() -> Self {
        Self {
            algo: "mrf".into(),
            dispatch: "rss".into(),
            k: 1,
            projected: true,
            measured: false,
            repeats: 1,
            min_timed_ms: 0,
            parallel: 0,
            seed: 1,
            stats: false,
            window: 0,
            period: 0,
            warmup: 0,
            front: classifier::DEFAULT_FRONT,
            dispatchers: 1,
        }
    }
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// The dispatcher's canonical name.
    pub dispatch: String,
    /// Cores available.
    pub cores: usize,
    /// Projected run (with exact work counts).
    pub projected: Option<Accounting>,
    /// Measured run, when k ≤ cores.
    pub measured: Option<Accounting>,
    /// Per-worker statistics, when asked for.
    pub stats: Vec<Option<WorkerStats>>,
}

/// Runs `packets` through k classifiers behind a dispatcher, over the planner's rules.
pub fn execute(planner: &RuleAwarePlanner, packets: &[Packet], spec: &RunSpec) -> Result<RunReport, Error> {
    let snap = planner.snapshot();
    let entry = classifier::lookup(&spec.algo)?;
    if spec.k == 0 {
        return Err(Error::config("k must be at least 1"));
    }
    if packets.is_empty() {
        return Err(Error::config("the trace holds no packets"));
    }
    if spec.dispatchers == 0 || spec.dispatchers > MAX_DISPATCHERS {
        return Err(Error::config(format!("dispatchers must be 1 to {MAX_DISPATCHERS}, not {}", spec.dispatchers)));
    }
    if packets.len() <= spec.warmup {
        return Err(Error::config(format!(
            "the trace holds {} packets: nothing left to count after a warm-up of {}",
            packets.len(),
            spec.warmup
        )));
    }
    let dispatch_name = dispatch::describe(&spec.dispatch, spec.k, planner)?;
    let seed = spec.seed ^ ENGINE_DISPATCH_SALT;
    dispatch::build(&spec.dispatch, spec.k, seed, planner)?;
    if packets.len() >= u32::MAX as usize {
        return Err(Error::config(format!("{} packets exceed the 2^32 - 1 a run holds", packets.len())));
    }
    let period = if spec.period == 0 { packets.len() } else { spec.period.min(packets.len()) };
    if let Some(i) = (period..packets.len()).find(|&i| packets[i] != packets[i % period]) {
        return Err(Error::config(format!("packet {i} breaks the replay period of {period} packets")));
    }
    // The dispatcher hands out descriptors (indices into the shared trace), as NIC RSS does.
    let shared: Arc<[Packet]> = packets[..period].into();
    let descriptors: Vec<Descriptor> = (0..packets.len()).map(|i| (i % period) as Descriptor).collect();
    let sink = spec.stats.then(|| StatsSink::new(spec.k));
    let factory = |i: usize| -> Box<dyn Worker<Descriptor>> {
        let opts = ClassifierOptions { stats: sink.clone().map(|s| (s, i)), window: spec.window, front: spec.front };
        Box::new(DescriptorWorker::new((entry.build)(snap.clone(), opts), shared.clone()))
    };
    let make =
        || dispatch::build_descriptors(&spec.dispatch, spec.k, seed, planner, shared.clone()).expect("checked above");
    let (warmup, counted) = descriptors.split_at(spec.warmup);
    let streams = Streams { warmup, counted };
    let cores = available_cores();
    let parallel = if spec.parallel == 0 { cores } else { spec.parallel };
    let min_timed = std::time::Duration::from_millis(spec.min_timed_ms);
    let projected = spec.projected.then(|| {
        run_projected_dispatchers(streams, &make, spec.k, &factory, parallel, spec.repeats, min_timed, spec.dispatchers)
    });
    // Statistics are collected by every run; with them on, one threaded run counts them once.
    let measured_window = if spec.stats { std::time::Duration::ZERO } else { min_timed };
    let fits = if spec.dispatchers <= 1 { spec.k <= cores } else { spec.k + spec.dispatchers <= cores };
    let measured = (spec.measured && fits).then(|| {
        let placement = Placement::OneCorePerWorker;
        run_threaded_dispatchers_within(streams, &make, spec.k, &factory, placement, measured_window, spec.dispatchers)
    });
    let stats = sink.map(|s| s.take()).unwrap_or_default();
    superlinear_core::cancel::check()?;
    Ok(RunReport { dispatch: dispatch_name, cores, projected, measured, stats })
}

/// A fresh worker of the named classifier over `snap`, without statistics; a `rule-cache`
/// gets a front of `front` rules (0: the default).
pub fn build(algo: &str, snap: Arc<Snapshot>, front: usize) -> Result<Box<dyn PacketClassifier>, Error> {
    let entry = classifier::lookup(algo)?;
    Ok((entry.build)(snap, ClassifierOptions { front, ..Default::default() }))
}

/// The outcome of a brute-force check.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CheckReport {
    /// Packets checked.
    pub checked: u64,
    /// Packets whose rule or verdict differed from the brute-force first match.
    pub mismatches: u64,
    /// The first mismatch, described.
    pub first_mismatch: Option<String>,
    /// Packets per first-match rule.
    pub matches: Vec<u64>,
    /// Packets no rule matched.
    pub default_hits: u64,
}

/// Classifies every packet with k classifiers behind the dispatcher (each worker seeing
/// exactly its stream of a real run) and compares rule and verdict with a brute-force
/// first-match over the rules as read (not the compact table).
pub fn check(
    planner: &RuleAwarePlanner,
    packets: &[Packet],
    algo: &str,
    dispatch_spec: &str,
    k: usize,
    seed: u64,
    front: usize,
) -> Result<CheckReport, Error> {
    let snap = planner.snapshot();
    let mut workers: Vec<Box<dyn PacketClassifier>> =
        (0..k.max(1)).map(|_| build(algo, snap.clone(), front)).collect::<Result<_, _>>()?;
    let assignment = assign(planner, packets, dispatch_spec, k, seed)?;
    let mut report = CheckReport { matches: vec![0; snap.len()], ..Default::default() };
    for (p, &w) in packets.iter().zip(&assignment) {
        let got = workers[w as usize].classify(p);
        let (first, verdict) = snap.rules.decide(p);
        let want = first.map(|i| i as u32);
        report.checked += 1;
        match want {
            Some(r) => report.matches[r as usize] += 1,
            None => report.default_hits += 1,
        }
        if got.rule != want || got.action != verdict {
            report.mismatches += 1;
            if report.first_mismatch.is_none() {
                report.first_mismatch = Some(format!(
                    "packet {} ({p}) on worker {w}: got rule {:?} {}, brute force rule {want:?} {verdict}",
                    report.checked - 1,
                    got.rule,
                    got.action
                ));
            }
        }
    }
    Ok(report)
}

/// What a run with rule updates did: per generation the packets classified, and the check of
/// every verdict against brute-force first match over the rule set in force at that packet.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct UpdateReport {
    /// Packets classified (and checked, with `check`).
    pub packets: u64,
    /// Updates published.
    pub updates_applied: u64,
    /// Packets whose rule or verdict differed from brute force on the rule set in force, or
    /// that a worker classified against an older generation (with `check`).
    pub mismatches: u64,
    /// Whether verdicts were checked.
    pub checked: bool,
    /// Packets (with `check`) whose brute-force rule or verdict over the rule set in force
    /// differs from that over the initial rules: what the updates changed, so a check with
    /// no mismatches shows it saw the updates take effect.
    pub changed_by_updates: u64,
    /// The first mismatch, described.
    pub first_mismatch: Option<String>,
    /// Per generation (0: the initial rule set): from which packet, its rules, packets
    /// classified and rules compared.
    pub generations: Vec<GenerationReport>,
}

/// One generation of a run with updates.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct GenerationReport {
    pub generation: u64,
    pub from_packet: u64,
    pub rules: u64,
    pub change: Option<String>,
    pub packets: u64,
    pub work: u64,
}

/// A worker of a run with updates: one whose registry entry can follow published generations
/// does so itself (MRF: one atomic load per packet of the crate's
/// [`RuleUpdates`](crate::classifier::RuleUpdates), a fresh order on a new generation); the
/// others (static list, tuple-merge, rule-cache, flow-cache) are rebuilt on the new snapshot (a
/// rule cache starts with an empty front and an empty flow cache), with the generation they
/// were built on.
enum Follower {
    Following(Box<dyn PacketClassifier>),
    Rebuilt(Box<dyn PacketClassifier>, u64),
}

/// A wrong worker for the tests of the check (never used outside them): the check must count
/// exactly the packets it gets wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
enum Fault {
    /// A correct worker.
    None,
    /// Rebuilt workers never switch generations (they keep classifying with the initial rules)
    /// but report the generation in force, so only the comparison of rule and verdict with
    /// brute force can notice.
    Stale,
    /// The worker's verdict of this packet (trace index) is flipped.
    Flip(usize),
}

/// Classifies the packets with k workers behind the dispatcher (in trace order, each worker its
/// own stream) while `updates` (rule set, packet index) are published before their packet, and
/// with `check` compares every verdict with brute-force first match over the rule set in
/// force. The dispatcher keeps the calibration of the initial rule set. A `rule-cache` worker
/// gets a front of `front` rules (0: the default).
#[allow(clippy::too_many_arguments)]
pub fn run_with_updates(
    planner: &RuleAwarePlanner,
    packets: &[Packet],
    algo: &str,
    dispatch_spec: &str,
    k: usize,
    seed: u64,
    updates: &[(usize, RuleSet, String)],
    check: bool,
    front: usize,
) -> Result<UpdateReport, Error> {
    run_updates_with(planner, packets, algo, dispatch_spec, k, seed, updates, check, front, Fault::None)
}

#[allow(clippy::too_many_arguments)]
fn run_updates_with(
    planner: &RuleAwarePlanner,
    packets: &[Packet],
    algo: &str,
    dispatch_spec: &str,
    k: usize,
    seed: u64,
    updates: &[(usize, RuleSet, String)],
    check: bool,
    front: usize,
    fault: Fault,
) -> Result<UpdateReport, Error> {
    if let Some(why) = updates.iter().find_map(|(at, _, _)| crate::rules::schedule::past_the_run(*at, packets.len())) {
        return Err(Error::config(why));
    }
    let entry = classifier::lookup(algo)?;
    let opts = || ClassifierOptions { front, ..Default::default() };
    let snap = planner.snapshot().clone();
    let published = RuleUpdates::new(snap.rules.clone());
    let mut sets: Vec<Arc<Snapshot>> = vec![snap.clone()];
    let mut workers: Vec<Follower> = (0..k.max(1))
        .map(|_| match entry.follow {
            Some(follow) => Follower::Following(follow(published.clone(), opts())),
            None => Follower::Rebuilt((entry.build)(snap.clone(), opts()), 0),
        })
        .collect();
    let assignment = assign(planner, packets, dispatch_spec, k, seed)?;
    let mut report = UpdateReport { checked: check, ..Default::default() };
    report.generations.push(GenerationReport { rules: snap.len() as u64, ..Default::default() });
    let mut next = 0;
    for (i, (p, &w)) in packets.iter().zip(&assignment).enumerate() {
        if superlinear_core::cancel::requested() {
            return Err(Error::config("interrupted"));
        }
        while next < updates.len() && updates[next].0 == i {
            let (_, rules, change) = &updates[next];
            let generation = published.publish(rules.clone());
            sets.push(published.current());
            report.updates_applied += 1;
            report.generations.push(GenerationReport {
                generation,
                from_packet: i as u64,
                rules: rules.len() as u64,
                change: Some(change.clone()),
                ..Default::default()
            });
            next += 1;
        }
        let (mut got, used) = match &mut workers[w as usize] {
            Follower::Following(c) => {
                let got = c.classify(p);
                (got, c.snapshot().generation)
            }
            Follower::Rebuilt(c, _) if fault == Fault::Stale => (c.classify(p), published.version()),
            Follower::Rebuilt(c, generation) => {
                if *generation != published.version() {
                    *generation = published.version();
                    *c = (entry.build)(sets[*generation as usize].clone(), opts());
                }
                (c.classify(p), *generation)
            }
        };
        if fault == Fault::Flip(i) {
            got.action = match got.action {
                crate::rules::Action::Accept => crate::rules::Action::Drop,
                _ => crate::rules::Action::Accept,
            };
        }
        let g = report.generations.last_mut().expect("generation 0");
        g.packets += 1;
        g.work += got.work;
        report.packets += 1;
        if check {
            let in_force = &sets[sets.len() - 1].rules;
            let (first, verdict) = in_force.decide(p);
            let want = first.map(|r| r as u32);
            let latest = (sets.len() - 1) as u64;
            if latest > 0 {
                report.changed_by_updates += u64::from(sets[0].rules.decide(p) != (first, verdict));
            }
            if used != latest || got.rule != want || got.action != verdict {
                report.mismatches += 1;
                if report.first_mismatch.is_none() {
                    report.first_mismatch = Some(format!(
                        "packet {i} ({p}) on worker {w}: got rule {:?} {} (generation {used}), brute force over \
                         generation {latest}: rule {want:?} {verdict}",
                        got.rule, got.action
                    ));
                }
            }
        }
    }
    Ok(report)
}

/// The first-match rule of every packet (the law's item sequence); `snap.len()` when no rule
/// matches (the default policy, a full scan).
pub fn first_match_ids(snap: &Snapshot, packets: &[Packet]) -> Vec<u32> {
    snap.first_match_ids(packets)
}

/// The worker of every packet under a dispatcher, exactly as a run routes them.
pub fn assign(
    planner: &RuleAwarePlanner,
    packets: &[Packet],
    dispatch_spec: &str,
    k: usize,
    seed: u64,
) -> Result<Vec<u32>, Error> {
    dispatch::build(dispatch_spec, k, seed ^ ENGINE_DISPATCH_SALT, planner)?;
    let spec = dispatch_spec.to_string();
    let salted = seed ^ ENGINE_DISPATCH_SALT;
    let candidate = DispatcherCandidate::new(spec.clone(), packets, move |k| {
        dispatch::build(&spec, k, salted, planner).expect("checked above")
    });
    let mut out = Vec::new();
    candidate.assign(k.max(1), &mut out);
    Ok(out)
}

/// Single-core throughput: (packets per second of thread CPU time, mean work per packet),
/// best of `repeats` runs from a fresh classifier.
pub fn single_core(snap: &Arc<Snapshot>, packets: &[Packet], algo: &str, repeats: usize) -> Result<(f64, f64), Error> {
    let entry = classifier::lookup(algo)?;
    let mut best = u64::MAX;
    let mut work = 0;
    for _ in 0..repeats.max(1) {
        let mut w = (entry.build)(snap.clone(), ClassifierOptions::default());
        let t0 = thread_cpu_ns();
        work = w.serve_batch(packets);
        best = best.min(thread_cpu_ns() - t0);
    }
    Ok((packets.len() as f64 * 1e9 / best.max(1) as f64, work as f64 / packets.len().max(1) as f64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{headers_for_rules, SyntheticSpec};
    use crate::rules::Action;

    /// A generated rule set (chains of depth 2 and a catch-all), traffic to its rules and
    /// headers inside them, and three updates that change first matches: every rule's action
    /// flipped at packet 1,500, the first 40 rules deleted at 3,000, another generated set at
    /// 4,500.
    fn scenario() -> (RuleAwarePlanner, Vec<Packet>, Vec<(usize, RuleSet, String)>) {
        let spec = SyntheticSpec { rules: 60, depth: 2, flows_per_rule: 3, catch_all_fraction: 0.1 };
        let initial = spec.rule_set().unwrap();
        let mut packets = spec.trace(3_000, 7).unwrap();
        packets.extend(headers_for_rules(&initial, 3_000, 8).unwrap());
        let flip = |a: Action| if a == Action::Accept { Action::Drop } else { Action::Accept };
        let flipped: Vec<_> =
            initial.rules.iter().map(|r| crate::rules::Rule { action: flip(r.action), ..*r }).collect();
        let flipped = RuleSet::new(flipped, initial.default_action);
        let shorter = RuleSet::new(flipped.rules[40..].to_vec(), initial.default_action);
        let other =
            SyntheticSpec { rules: 45, depth: 3, flows_per_rule: 2, catch_all_fraction: 0.0 }.rule_set().unwrap();
        let updates = vec![
            (1_500, flipped, "flip".to_string()),
            (3_000, shorter, "delete 1..40".to_string()),
            (4_500, other, "replace".to_string()),
        ];
        (RuleAwarePlanner::new(Arc::new(Snapshot::new(initial))), packets, updates)
    }

    fn run(algo: &str, fault: Fault) -> UpdateReport {
        let (planner, packets, updates) = scenario();
        run_updates_with(&planner, &packets, algo, "rss", 4, 1, &updates, true, 3, fault).unwrap()
    }

    #[test]
    fn every_classifier_follows_updates_exactly() {
        for entry in classifier::REGISTRY {
            let r = run(entry.name, Fault::None);
            assert_eq!((r.packets, r.updates_applied, r.mismatches), (6_000, 3, 0), "{}: {:?}", entry.name, r);
            assert_eq!(r.generations.iter().map(|g| g.packets).collect::<Vec<_>>(), [1_500, 1_500, 1_500, 1_500]);
        }
    }

    /// A worker that keeps the initial rules but claims the generation in force is caught on
    /// exactly the packets whose rule or verdict differs between the two rule sets.
    #[test]
    fn the_check_catches_a_stale_worker() {
        let (planner, packets, updates) = scenario();
        let initial = &planner.snapshot().rules;
        let mut expected = 0;
        for (i, p) in packets.iter().enumerate() {
            let Some(in_force) = updates.iter().rev().find(|(at, _, _)| *at <= i).map(|(_, set, _)| set) else {
                continue;
            };
            expected += u64::from(initial.decide(p) != in_force.decide(p));
        }
        assert!(expected > 2_000, "the updates must change many first matches ({expected})");
        assert_eq!(run("mrf", Fault::None).changed_by_updates, expected);
        // The stale fault applies to rebuilt workers: every entry that does not follow updates.
        let rebuilt: Vec<&str> = classifier::REGISTRY.iter().filter(|e| e.follow.is_none()).map(|e| e.name).collect();
        assert!(!rebuilt.is_empty());
        for algo in rebuilt {
            let r = run(algo, Fault::Stale);
            assert_eq!((r.mismatches, r.changed_by_updates), (expected, expected), "{algo}");
            assert!(r.first_mismatch.unwrap().starts_with("packet 1500 "), "{algo}");
        }
    }

    /// One flipped verdict is one mismatch, named by its packet, whatever the classifier.
    #[test]
    fn the_check_catches_one_wrong_verdict() {
        for entry in classifier::REGISTRY {
            for at in [0, 2_999, 5_999] {
                let r = run(entry.name, Fault::Flip(at));
                assert_eq!(r.mismatches, 1, "{} at {at}", entry.name);
                assert!(r.first_mismatch.unwrap().starts_with(&format!("packet {at} ")), "{}", entry.name);
            }
        }
    }
}
