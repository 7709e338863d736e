//! The generic attack experiment: one worker behind each scheduling policy, innocent packets at
//! a given load, an adversary at increasing rates, real work (work-clocked time); innocent
//! goodput and the displacement factor (Eq. 3.1) per policy. Generic over the request type:
//! a kind of worker joins by implementing [`AttackTarget`] (fresh workers, its estimator, its
//! adversary). Key workers do ([`super::run_key_attack`]); a packet classifier will the same way.
//!
//! The worker's capacity is measured, not assumed: the innocent packets are served once, in
//! order, by a fresh worker, giving the mean work per innocent packet W̄ and hence
//! r_max = E[P] / (W̄ · cost per work unit); the innocent rate is `load · r_max`. Attack rates
//! are fractions of the innocent rate.

use super::runner::{run_stage, StageOutcome, StageRequest, StageSpec};
use super::{CostOracle, JobEstimator, StageWorker};
use crate::dist::Dist;
use crate::job::Class;
use crate::schedulers::SchedulerConfig;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use superlinear_core::cputime::thread_cpu_ns;
use superlinear_core::error::number_text;
use superlinear_core::{Error, Worker};

/// Checks the attack packets' size: 1 to 1500 bytes.
pub(crate) fn check_attack_bytes(bytes: u32) -> Result<(), Error> {
    if !(1..=1500).contains(&bytes) {
        return Err(Error::config(format!("attack packets must be 1 to 1500 bytes, got {bytes}")));
    }
    Ok(())
}

/// The innocent packets, in order: what `each` makes of a request (the worker's request and its
/// flow), with a size drawn from `sizes` in bytes (truncated to 64..1500; seeded).
pub(crate) fn innocent_requests<T, R>(
    requests: &[T],
    sizes: &Dist,
    seed: u64,
    each: impl Fn(&T) -> (R, u32),
) -> Vec<StageRequest<R>> {
    let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
    requests
        .iter()
        .map(|r| {
            let bytes = sizes.sample(&mut rng).round().clamp(64.0, 1500.0) as u32;
            let (request, flow) = each(r);
            StageRequest { request, bits: bytes * 8, flow, class: Class::Innocent }
        })
        .collect()
}

/// A kind of worker under attack.
pub trait AttackTarget<R>: Sync {
    /// A fresh worker in its initial state (every run starts from the same state).
    fn worker(&self) -> Box<dyn StageWorker<R>>;
    /// A fresh job-size estimator; `initial` is the mean innocent work, for requests it knows
    /// nothing about yet.
    fn estimator(&self, initial: f64) -> Box<dyn JobEstimator<R>>;
    /// The n-th attack packet.
    fn attack(&self, n: u64) -> StageRequest<R>;
    /// The most work one request can cost (a full scan): the top of the job-size scale.
    fn max_work(&self) -> u64;
}

impl<R> Worker<R> for Box<dyn StageWorker<R>> {
    fn serve(&mut self, request: &R) -> u64 {
        (**self).serve(request)
    }
}

impl<R> CostOracle<R> for Box<dyn StageWorker<R>> {
    fn current_cost(&self, request: &R) -> Option<u64> {
        (**self).current_cost(request)
    }
}

/// How the experiment runs.
#[derive(Clone, Debug)]
pub struct AttackSpec {
    /// Innocent load ρ = r_I / r_max.
    pub load: f64,
    /// Attack rates as fractions of the innocent rate.
    pub attack_fractions: Vec<f64>,
    /// Policies to compare (`fcfs`: unprotected; `wsjf`: SurgeProtector).
    pub policies: Vec<String>,
    /// Buffer in packets.
    pub buffer: usize,
    /// Smallest packet in bits (the attack packets), for the WSJF ratio scale.
    pub bits_min: u32,
    /// Largest packet in bits.
    pub bits_max: u32,
    /// µs per work unit; `None`: calibrate on this machine.
    pub us_per_work: Option<f64>,
    /// Warm-up fraction.
    pub warmup: f64,
    /// Runs at once.
    pub threads: usize,
}

/// One (policy, attack rate) run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AttackRow {
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
    /// Whether enough attack packets arrived in the window for `df` to mean a rate
    /// ([`crate::sweep::MIN_ATTACK_PACKETS`]).
    pub resolved: bool,
}

/// The whole experiment.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AttackSummary {
    /// Every run, baselines (fraction 0) included.
    pub rows: Vec<AttackRow>,
    /// Mean work per innocent packet served alone in order (W̄).
    pub mean_work: f64,
    /// Largest work of one request.
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

impl AttackSummary {
    /// The displacement factor of a policy: the largest value over the resolved rates.
    pub fn displacement_factor(&self, policy: &str) -> f64 {
        self.rows.iter().filter(|r| r.policy == policy && r.resolved).map(|r| r.df).fold(0.0, f64::max)
    }
}

/// Runs the experiment on `target` with the `innocent` packets.
pub fn run_attack<R: Clone + Sync>(
    target: &dyn AttackTarget<R>,
    innocent: &[StageRequest<R>],
    spec: &AttackSpec,
) -> Result<AttackSummary, Error> {
    if !(spec.load > 0.0 && spec.load.is_finite()) {
        return Err(Error::config(format!("innocent load must be positive, got {}", number_text(spec.load))));
    }
    if spec.attack_fractions.iter().any(|f| !(f.is_finite() && *f > 0.0)) {
        return Err(Error::config("attack rates must be positive fractions of the innocent rate"));
    }
    if innocent.is_empty() {
        return Err(Error::config("the experiment needs at least one innocent packet"));
    }
    for p in &spec.policies {
        crate::schedulers::lookup(p)?;
    }
    let mean_bits = innocent.iter().map(|r| r.bits as f64).sum::<f64>() / innocent.len() as f64;

    // Capacity: the innocent stream served alone, in order (also the calibration).
    let mut alone = target.worker();
    let t0 = thread_cpu_ns();
    let total_work: u64 = innocent.iter().map(|r| alone.serve(&r.request)).sum();
    let cpu = thread_cpu_ns() - t0;
    let mean_work = (total_work as f64 / innocent.len() as f64).max(1e-9);
    let (us_per_work, calibrated) = match spec.us_per_work {
        Some(u) if u > 0.0 && u.is_finite() => (u, false),
        Some(u) => return Err(Error::config(format!("cost per work unit must be positive, got {}", number_text(u)))),
        None => ((cpu as f64 / 1e3 / total_work.max(1) as f64).max(1e-6), true),
    };
    let r_max = mean_bits / (mean_work * us_per_work);
    let innocent_rate = spec.load * r_max;
    let max_work = target.max_work().max(2);
    let sched = SchedulerConfig::new(spec.buffer, 1.0, max_work as f64, spec.bits_min, spec.bits_max);
    sched.validate()?;

    let tasks: Vec<(String, f64)> = spec
        .policies
        .iter()
        .flat_map(|p| std::iter::once(0.0).chain(spec.attack_fractions.iter().copied()).map(move |f| (p.clone(), f)))
        .collect();
    let run = |(policy, fraction): &(String, f64)| -> Result<StageOutcome, Error> {
        let mut worker = target.worker();
        let mut estimator = target.estimator(mean_work);
        let stage = StageSpec {
            policy: policy.clone(),
            sched: sched.clone(),
            us_per_work,
            innocent_rate,
            attack_rate: fraction * innocent_rate,
            warmup: spec.warmup,
        };
        run_stage(&mut worker, estimator.as_mut(), innocent, &mut |n| target.attack(n), &stage)
    };
    let outcomes = parallel(&tasks, spec.threads, run)?;

    let mut rows: Vec<AttackRow> = Vec::new();
    for ((policy, fraction), outcome) in tasks.iter().zip(outcomes) {
        let attack_rate = fraction * innocent_rate;
        let base = rows.iter().find(|r| &r.policy == policy && r.attack_fraction == 0.0).map(|r| r.outcome.goodput);
        let displaced = base.map_or(0.0, |b| b - outcome.goodput);
        let df = if attack_rate > 0.0 { displaced / attack_rate } else { 0.0 };
        let resolved = attack_rate * outcome.window / spec.bits_min as f64 >= crate::sweep::MIN_ATTACK_PACKETS;
        rows.push(AttackRow {
            policy: policy.clone(),
            attack_fraction: *fraction,
            attack_rate,
            outcome,
            displaced,
            df,
            resolved,
        });
    }
    Ok(AttackSummary { rows, mean_work, max_work, us_per_work, calibrated, mean_bits, r_max, innocent_rate })
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
