//! The attack experiment on a key worker (`superlinear attack worker`): a worker from the core
//! registry (move-to-front or static list, splay tree, ...) serves innocent key requests; the
//! key adversary ([`super::KeyAdversary`]) attacks it; SurgeProtector estimates job sizes
//! with costs learned per key ([`super::LearnedEstimator`], keys the worker does not hold
//! forming one class, its "catch-all"). Runs through the generic [`super::run_attack`].

use super::estimators::{LearnMode, LearnedEstimator, NO_CLASS};
use super::experiment::{check_attack_bytes, innocent_requests, run_attack, AttackSpec, AttackSummary, AttackTarget};
use super::key_adversary::KeyAdversary;
use super::runner::StageRequest;
use super::{Blind, JobEstimator, StageWorker};
use crate::dist::Dist;
use std::collections::HashSet;
use std::sync::Arc;
use superlinear_core::workers::AlgoSpec;
use superlinear_core::workload::WorkloadSpec;
use superlinear_core::{Error, WorkerParams};

/// The experiment.
#[derive(Clone, Debug)]
pub struct KeyAttackSpec {
    /// Worker algorithm (core registry name: mtf, static, splay, ...).
    pub algo: String,
    /// Innocent keys.
    pub workload: WorkloadSpec,
    /// Innocent packets.
    pub requests: usize,
    /// Innocent packet sizes in bytes (truncated to 64..1500).
    pub packet_bytes: Dist,
    /// Attack packet size in bytes (the minimum packet).
    pub attack_bytes: u32,
    /// Adversary (`deep`, `rotate[:N]`, `absent`).
    pub adversary: String,
    /// Innocent load ρ = r_I / r_max.
    pub load: f64,
    /// Attack rates as fractions of the innocent rate.
    pub attack_fractions: Vec<f64>,
    /// Policies to compare.
    pub policies: Vec<String>,
    /// Buffer in packets.
    pub buffer: usize,
    /// How learned costs follow observations (`last`, `max`, `ewma`).
    pub learn: LearnMode,
    /// µs per work unit; `None`: calibrate on this machine.
    pub us_per_work: Option<f64>,
    /// Warm-up fraction.
    pub warmup: f64,
    /// Seed.
    pub seed: u64,
    /// Runs at once.
    pub threads: usize,
}

/// A key worker under attack.
struct KeyTarget {
    algo: AlgoSpec,
    items: Vec<u64>,
    held: Arc<HashSet<u64>>,
    adversary: KeyAdversary,
    learn: LearnMode,
}

impl AttackTarget<u64> for KeyTarget {
    fn worker(&self) -> Box<dyn StageWorker<u64>> {
        Box::new(Blind(self.algo.build(&self.items, &WorkerParams::default())))
    }

    fn estimator(&self, initial: f64) -> Box<dyn JobEstimator<u64>> {
        let held = Arc::clone(&self.held);
        Box::new(LearnedEstimator::new(
            move |k: &u64| if held.contains(k) { *k } else { NO_CLASS },
            self.learn,
            initial,
        ))
    }

    fn attack(&self, n: u64) -> StageRequest<u64> {
        self.adversary.request(n)
    }

    fn max_work(&self) -> u64 {
        self.items.len() as u64 + 1
    }
}

/// Runs the experiment; also returns the number of items the worker holds.
pub fn run_key_attack(spec: &KeyAttackSpec) -> Result<(AttackSummary, usize), Error> {
    if spec.requests == 0 {
        return Err(Error::config("the experiment needs at least one innocent request"));
    }
    check_attack_bytes(spec.attack_bytes)?;
    let algo = AlgoSpec::parse(&spec.algo)?;
    let workload = spec.workload.generate(spec.requests, spec.seed)?;
    let adversary = KeyAdversary::new(&spec.adversary, &workload.items, &workload.requests, spec.attack_bytes * 8)?;
    // Innocent packets: key, size, flow (one flow per key: a flow's packets ask for one item).
    let innocent =
        innocent_requests(&workload.requests, &spec.packet_bytes, spec.seed, |&k| (k, (k as u32) & 0x7fff_ffff));
    let items = workload.items;
    let n_items = items.len();
    let target =
        KeyTarget { algo, held: Arc::new(items.iter().copied().collect()), items, adversary, learn: spec.learn };
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
    Ok((run_attack(&target, &innocent, &run)?, n_items))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(algo: &str, adversary: &str) -> KeyAttackSpec {
        KeyAttackSpec {
            algo: algo.into(),
            workload: WorkloadSpec::Zipf { m: 2000, alpha: 1.2 },
            requests: 20_000,
            packet_bytes: Dist::Normal(1250.0, 300.0),
            attack_bytes: 64,
            adversary: adversary.into(),
            load: 0.8,
            attack_fractions: vec![0.001, 0.01, 0.05],
            policies: vec!["fcfs".into(), "wsjf".into()],
            buffer: 256,
            learn: LearnMode::Last,
            us_per_work: Some(0.001),
            warmup: 0.2,
            seed: 3,
            threads: 2,
        }
    }

    #[test]
    fn surgeprotector_bounds_the_rotation_attack_on_mtf() {
        let (s, items) = run_key_attack(&spec("mtf", "rotate")).unwrap();
        assert_eq!(items, 2000);
        let (fcfs, wsjf) = (s.displacement_factor("fcfs"), s.displacement_factor("wsjf"));
        assert!(fcfs > 10.0, "fcfs DF {fcfs}");
        assert!(wsjf < 1.5, "wsjf DF {wsjf}");
        assert!(!s.calibrated);
    }
}
