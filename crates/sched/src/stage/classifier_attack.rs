//! The attack experiment on a packet classifier (`superlinear attack classifier`): one MRF
//! classifier worker ([`super::ClassifierWorker`]) classifies innocent packets for real; the
//! classifier adversary ([`super::ClassifierAdversary`]) adds minimum-size packets for rules MRF
//! cannot bring forward; SurgeProtector schedules WSJF on the HFFS queue with drop-max, its job
//! sizes predicted from the flow's rule and that rule's current position in the worker's order
//! (thesis §3.5.2). Runs through the generic [`super::run_attack`]: work-clocked time, innocent
//! goodput and the displacement factor (Eq. 3.1) per policy.
//!
//! Packets the worker cannot predict (flow-cache misses) are estimated at the largest work seen
//! so far (a [`super::LearnedEstimator`] with one class and [`super::LearnMode::Max`]): spoofing
//! fresh flows then buys the attacker nothing, while an innocent first packet, estimated as
//! high, still comes before any attack packet in WSJF's order because it carries many more bits
//! (thesis §3.4: WSJF ranks by job per bit).
//!
//! Besides the timed runs, an exact work probe: one fresh worker serves the innocent packets in
//! order with one attack packet after every [`PROBE_INNOCENT_PER_ATTACK`] of them, and reports
//! the mean work per innocent and per attack packet (the **work** kind: exact counts, no clock).

use super::classifier_adversary::ClassifierAdversary;
use super::classifier_worker::{ClassifierWorker, Prediction};
use super::estimators::{LearnMode, LearnedEstimator, OracleEstimator, NO_CLASS};
use super::experiment::{check_attack_bytes, innocent_requests, run_attack, AttackSpec, AttackSummary, AttackTarget};
use super::runner::StageRequest;
use super::{JobEstimator, StageWorker};
use crate::dist::Dist;
use std::sync::Arc;
use superlinear_classify::{Error, Packet, Snapshot};
use superlinear_core::hash::fmix64;
use superlinear_core::Worker;

/// Innocent packets per attack packet in the work probe.
pub const PROBE_INNOCENT_PER_ATTACK: usize = 10;

/// The experiment.
#[derive(Clone, Debug)]
pub struct ClassifierAttackSpec {
    /// Classifier (`mrf`, `mrf-swap`, `static`).
    pub algo: String,
    /// How a worker predicts job sizes of flows it has seen.
    pub prediction: Prediction,
    /// Adversary (`deep`, `rotate[:N]`, `catch-all`).
    pub adversary: String,
    /// Innocent packet sizes in bytes (truncated to 64..1500).
    pub packet_bytes: Dist,
    /// Attack packet size in bytes (the minimum packet).
    pub attack_bytes: u32,
    /// Innocent load ρ = r_I / r_max.
    pub load: f64,
    /// Attack rates as fractions of the innocent rate.
    pub attack_fractions: Vec<f64>,
    /// Policies to compare (`fcfs`: unprotected; `wsjf`: SurgeProtector).
    pub policies: Vec<String>,
    /// Buffer in packets.
    pub buffer: usize,
    /// µs per work unit; `None`: calibrate on this machine.
    pub us_per_work: Option<f64>,
    /// Warm-up fraction.
    pub warmup: f64,
    /// Seed (packet sizes, adversary's packet search).
    pub seed: u64,
    /// Runs at once.
    pub threads: usize,
}

/// What the experiment found.
#[derive(Clone, Debug)]
pub struct ClassifierAttackReport {
    /// The timed runs.
    pub summary: AttackSummary,
    /// The attacked rules in rotation order (`None`: the default policy).
    pub targets: Vec<Option<u32>>,
    /// Work probe: mean work per innocent packet, mixed with the attack.
    pub probe_innocent_work: f64,
    /// Work probe: mean work per attack packet.
    pub probe_attack_work: f64,
    /// Work probe: attack packets served.
    pub probe_attack_packets: u64,
}

/// A classifier worker under attack.
struct ClassifierTarget {
    snap: Arc<Snapshot>,
    algo: String,
    prediction: Prediction,
    adversary: ClassifierAdversary,
    max_work: u64,
}

impl AttackTarget<Packet> for ClassifierTarget {
    fn worker(&self) -> Box<dyn StageWorker<Packet>> {
        Box::new(ClassifierWorker::new(Arc::clone(&self.snap), &self.algo, self.prediction).expect("checked"))
    }

    fn estimator(&self, initial: f64) -> Box<dyn JobEstimator<Packet>> {
        Box::new(OracleEstimator::new(LearnedEstimator::new(|_: &Packet| NO_CLASS, LearnMode::Max, initial)))
    }

    fn attack(&self, n: u64) -> StageRequest<Packet> {
        self.adversary.request(n)
    }

    fn max_work(&self) -> u64 {
        self.max_work
    }
}

/// The flow id of a packet (for fair queueing and WSJF-Inorder): a hash of its 5-tuple.
pub fn flow_of(p: &Packet) -> u32 {
    let a = ((p.src as u64) << 32) | p.dst as u64;
    let b = ((p.sport as u64) << 24) | ((p.dport as u64) << 8) | p.proto as u64;
    (fmix64(a.rotate_left(7) ^ fmix64(b)) as u32) & 0x7fff_ffff
}

/// Runs the experiment on the rules of `snap` with the `packets` as innocent traffic.
pub fn run_classifier_attack(
    snap: &Arc<Snapshot>,
    packets: &[Packet],
    spec: &ClassifierAttackSpec,
) -> Result<ClassifierAttackReport, Error> {
    if packets.is_empty() {
        return Err(Error::config("the experiment needs at least one innocent packet"));
    }
    check_attack_bytes(spec.attack_bytes)?;
    ClassifierWorker::new(Arc::clone(snap), &spec.algo, spec.prediction)?;
    let adversary = ClassifierAdversary::new(&spec.adversary, snap, packets, spec.attack_bytes * 8, spec.seed)?;
    let innocent = innocent_requests(packets, &spec.packet_bytes, spec.seed, |p| (*p, flow_of(p)));
    // The most one lookup can cost: a full scan plus the same-action checks of one rule.
    let same_action = (0..snap.len() as u32).map(|u| snap.deps.same_action(u).len()).max().unwrap_or(0);
    let max_work = (snap.len() + same_action) as u64;
    let target = ClassifierTarget {
        snap: Arc::clone(snap),
        algo: spec.algo.clone(),
        prediction: spec.prediction,
        adversary,
        max_work,
    };
    let run = AttackSpec {
        load: spec.load,
        attack_fractions: spec.attack_fractions.clone(),
        policies: spec.policies.clone(),
        buffer: spec.buffer,
        bits_min: spec.attack_bytes * 8,
        bits_max: 1500 * 8,
        us_per_work: spec.us_per_work,
        warmup: spec.warmup,
        threads: spec.threads,
    };
    let summary = run_attack(&target, &innocent, &run)?;
    let (probe_innocent_work, probe_attack_work, probe_attack_packets) = probe(&target, packets);
    Ok(ClassifierAttackReport {
        summary,
        targets: target.adversary.target_rules(),
        probe_innocent_work,
        probe_attack_work,
        probe_attack_packets,
    })
}

/// Exact work of innocent and attack packets served in order by one worker, one attack packet
/// after every [`PROBE_INNOCENT_PER_ATTACK`] innocent ones: (innocent mean, attack mean, attack
/// packets).
fn probe(target: &ClassifierTarget, packets: &[Packet]) -> (f64, f64, u64) {
    let mut worker = target.worker();
    let (mut innocent, mut attack, mut attacks) = (0u64, 0u64, 0u64);
    for (i, p) in packets.iter().enumerate() {
        innocent += worker.serve(p);
        if (i + 1) % PROBE_INNOCENT_PER_ATTACK == 0 {
            attack += worker.serve(&target.attack(attacks).request);
            attacks += 1;
        }
    }
    (innocent as f64 / packets.len() as f64, attack as f64 / attacks.max(1) as f64, attacks)
}

#[cfg(test)]
mod tests {
    use super::super::classifier_workload::ClassifierWorkload;
    use super::*;

    fn workload() -> (Arc<Snapshot>, Vec<Packet>) {
        ClassifierWorkload::Synthetic { chains: 100, depth: 4, flows_per_chain: 4, alpha: 1.1, catch_all: 0.002 }
            .load(Some(20_000), 3)
            .unwrap()
    }

    fn spec(adversary: &str) -> ClassifierAttackSpec {
        ClassifierAttackSpec {
            algo: "mrf".into(),
            prediction: Prediction::Position,
            adversary: adversary.into(),
            packet_bytes: Dist::Normal(1250.0, 300.0),
            attack_bytes: 64,
            load: 0.8,
            attack_fractions: vec![0.001, 0.01, 0.05],
            policies: vec!["fcfs".into(), "wsjf".into()],
            buffer: 256,
            us_per_work: Some(0.001),
            warmup: 0.2,
            seed: 3,
            threads: 2,
        }
    }

    #[test]
    fn surgeprotector_bounds_the_rotation_and_catch_all_attacks_on_mrf() {
        let (snap, packets) = workload();
        assert_eq!(snap.len(), 501);
        for adversary in ["rotate", "catch-all"] {
            let r = run_classifier_attack(&snap, &packets, &spec(adversary)).unwrap();
            let s = &r.summary;
            let (fcfs, wsjf) = (s.displacement_factor("fcfs"), s.displacement_factor("wsjf"));
            assert!(fcfs > 10.0, "{adversary}: fcfs DF {fcfs}");
            assert!(wsjf < 0.5, "{adversary}: wsjf DF {wsjf}");
            assert!(fcfs > 50.0 * wsjf.max(0.01), "{adversary}: fcfs {fcfs} vs wsjf {wsjf}");
            assert!(r.probe_attack_work > 10.0 * r.probe_innocent_work, "{adversary}: {r:?}");
        }
    }
}
