//! The attack experiment on a key worker (`superlinear attack worker`): one self-adjusting (or
//! static) worker from the core registry serves innocent key requests at a given load; an
//! adversary adds minimum-size packets at increasing rates; each scheduling policy (FCFS: the
//! unprotected worker; WSJF: SurgeProtector) is run with real work, and the innocent goodput
//! and displacement factor (Eq. 3.1) are reported.
//!
//! The worker's capacity is measured, not assumed: the innocent requests are served once, in
//! order, by a fresh worker, giving the mean work per innocent packet W̄ and hence
//! r_max = E[P] / (W̄ · cost per work unit); the innocent rate is `load · r_max`. Attack rates
//! are fractions of the innocent rate.

use super::estimators::{LearnMode, LearnedEstimator, NO_CLASS};
use super::key_adversary::KeyAdversary;
use super::runner::{run_stage, StageOutcome, StageRequest, StageSpec};
use super::Blind;
use crate::dist::Dist;
use crate::job::Class;
use crate::schedulers::SchedulerConfig;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use superlinear_core::cputime::thread_cpu_ns;
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

/// One (policy, attack rate) run.
#[derive(Clone, Debug)]
pub struct KeyAttackRow {
    /// Policy.
    pub policy: String,
    /// Attack rate as a fraction of the innocent rate (0: no attack).
    pub attack_fraction: f64,
    /// r_A in bits/µs.
    pub attack_rate: f64,
    /// What the run measured.
    pub outcome: StageOutcome,
    /// o_I(r_I, 0) − o_I(r_I, r_A), bits/µs.
    pub displaced: f64,
    /// displaced / r_A (0 without attack).
    pub df: f64,
}

/// The whole experiment.
#[derive(Clone, Debug)]
pub struct KeyAttackSummary {
    /// Every run, baselines (fraction 0) included.
    pub rows: Vec<KeyAttackRow>,
    /// Items the worker holds.
    pub items: usize,
    /// Mean work per innocent packet served alone in order (W̄).
    pub mean_work: f64,
    /// Largest work of one request (a full scan).
    pub max_work: u64,
    /// µs per work unit used.
    pub us_per_work: f64,
    /// Whether `us_per_work` was calibrated here (thread CPU time of the in-order pass).
    pub calibrated: bool,
    /// E[P] of innocent packets in bits.
    pub mean_bits: f64,
    /// r_max in bits/µs.
    pub r_max: f64,
    /// r_I in bits/µs.
    pub innocent_rate: f64,
}

impl KeyAttackSummary {
    /// The displacement factor of a policy: the largest per-rate value.
    pub fn displacement_factor(&self, policy: &str) -> f64 {
        self.rows.iter().filter(|r| r.policy == policy).map(|r| r.df).fold(0.0, f64::max)
    }
}

/// Runs the experiment.
pub fn run_key_attack(spec: &KeyAttackSpec) -> Result<KeyAttackSummary, Error> {
    if !(spec.load > 0.0 && spec.load.is_finite()) {
        return Err(Error::config(format!("innocent load must be positive, got {}", spec.load)));
    }
    if spec.attack_fractions.iter().any(|f| !(f.is_finite() && *f > 0.0)) {
        return Err(Error::config("attack rates must be positive fractions of the innocent rate"));
    }
    if spec.requests == 0 {
        return Err(Error::config("the experiment needs at least one innocent request"));
    }
    if !(1..=1500).contains(&spec.attack_bytes) {
        return Err(Error::config(format!("attack packets must be 1 to 1500 bytes, got {}", spec.attack_bytes)));
    }
    let algo = AlgoSpec::parse(&spec.algo)?;
    for p in &spec.policies {
        crate::schedulers::lookup(p)?;
    }
    let workload = spec.workload.generate(spec.requests, spec.seed)?;
    let items = workload.items;
    let params = WorkerParams::default();
    let adversary = KeyAdversary::new(&spec.adversary, &items, &workload.requests, spec.attack_bytes * 8)?;

    // Innocent packets: key, size, flow (one flow per key: a flow's packets ask for one item).
    let mut rng = Pcg64Mcg::seed_from_u64(spec.seed ^ 0x9e37_79b9_7f4a_7c15);
    let innocent: Vec<StageRequest<u64>> = workload
        .requests
        .iter()
        .map(|&k| {
            let bytes = spec.packet_bytes.sample(&mut rng).round().clamp(64.0, 1500.0) as u32;
            StageRequest { request: k, bits: bytes * 8, flow: (k as u32) & 0x7fff_ffff, class: Class::Innocent }
        })
        .collect();
    let mean_bits = innocent.iter().map(|r| r.bits as f64).sum::<f64>() / innocent.len() as f64;

    // Capacity: the innocent stream served alone, in order (also the calibration).
    let mut alone = algo.build(&items, &params);
    let t0 = thread_cpu_ns();
    let total_work: u64 = innocent.iter().map(|r| alone.serve(&r.request)).sum();
    let cpu = thread_cpu_ns() - t0;
    let max_work = items.len() as u64 + 1;
    let mean_work = (total_work as f64 / innocent.len() as f64).max(1e-9);
    let (us_per_work, calibrated) = match spec.us_per_work {
        Some(u) if u > 0.0 && u.is_finite() => (u, false),
        Some(u) => return Err(Error::config(format!("cost per work unit must be positive, got {u}"))),
        None => ((cpu as f64 / 1e3 / total_work.max(1) as f64).max(1e-6), true),
    };
    let r_max = mean_bits / (mean_work * us_per_work);
    let innocent_rate = spec.load * r_max;

    let mut sched = SchedulerConfig::new(spec.buffer, 1.0, max_work as f64, spec.attack_bytes * 8, 1500 * 8);
    sched.width = 64;
    sched.levels = 2;
    sched.validate()?;
    let item_set: HashSet<u64> = items.iter().copied().collect();

    let tasks: Vec<(String, f64)> = spec
        .policies
        .iter()
        .flat_map(|p| std::iter::once(0.0).chain(spec.attack_fractions.iter().copied()).map(move |f| (p.clone(), f)))
        .collect();
    let run = |(policy, fraction): &(String, f64)| -> Result<StageOutcome, Error> {
        let mut worker = Blind(algo.build(&items, &params));
        let set = item_set.clone();
        let mut estimator =
            LearnedEstimator::new(move |k: &u64| if set.contains(k) { *k } else { NO_CLASS }, spec.learn, mean_work);
        let stage = StageSpec {
            policy: policy.clone(),
            sched: sched.clone(),
            us_per_work,
            innocent_rate,
            attack_rate: fraction * innocent_rate,
            warmup: spec.warmup,
        };
        run_stage(&mut worker, &mut estimator, &innocent, &mut |n| adversary.request(n), &stage)
    };
    let outcomes = parallel(&tasks, spec.threads, run)?;

    let mut rows: Vec<KeyAttackRow> = Vec::new();
    for ((policy, fraction), outcome) in tasks.iter().zip(outcomes) {
        let attack_rate = fraction * innocent_rate;
        let base = rows.iter().find(|r| &r.policy == policy && r.attack_fraction == 0.0).map(|r| r.outcome.goodput);
        let displaced = base.map_or(0.0, |b| b - outcome.goodput);
        let df = if attack_rate > 0.0 { displaced / attack_rate } else { 0.0 };
        rows.push(KeyAttackRow {
            policy: policy.clone(),
            attack_fraction: *fraction,
            attack_rate,
            outcome,
            displaced,
            df,
        });
    }
    Ok(KeyAttackSummary {
        rows,
        items: items.len(),
        mean_work,
        max_work,
        us_per_work,
        calibrated,
        mean_bits,
        r_max,
        innocent_rate,
    })
}

/// Runs `f` on every task on up to `threads` threads; results in task order.
fn parallel<T: Sync, O: Send>(
    tasks: &[T],
    threads: usize,
    f: impl Fn(&T) -> Result<O, Error> + Sync,
) -> Result<Vec<O>, Error> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<Result<O, Error>>>> = Mutex::new((0..tasks.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, tasks.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= tasks.len() {
                    break;
                }
                let r = f(&tasks[i]);
                out.lock().expect("no panics while holding the lock")[i] = Some(r);
            });
        }
    });
    out.into_inner().expect("threads joined").into_iter().map(|r| r.expect("every task ran")).collect()
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
        let s = run_key_attack(&spec("mtf", "rotate")).unwrap();
        let (fcfs, wsjf) = (s.displacement_factor("fcfs"), s.displacement_factor("wsjf"));
        assert!(fcfs > 10.0, "fcfs DF {fcfs}");
        assert!(wsjf < 1.5, "wsjf DF {wsjf}");
        assert!(!s.calibrated);
    }
}
