//! Displacement-factor sweeps (thesis §3.3.3, §3.6.2): for one policy, simulate the innocent
//! traffic alone and under the optimal attack at each attack rate, and report the goodput and
//!
//! `α(r_I) = sup_{r_A} (o_I(r_I, 0) − o_I(r_I, r_A)) / r_A`   (Eq. 3.1)
//!
//! taken over the swept rates. The innocent traffic is the same in every run (common random
//! numbers), so differences in goodput come from the attack alone. Optionally the adversary
//! also probes a grid of other job sizes at each rate and keeps the most harmful one, an
//! empirical check that the equations' attack is the worst.
//!
//! Eq. 3.1 is a long-run rate. A run in which the adversary sends only a handful of packets
//! measures a transient (one maximal job at an idle server delays a burst of innocent packets
//! past the end of the window), and dividing that by a tiny r_A gives a meaningless ratio; so a
//! rate counts towards the supremum only when at least [`MIN_ATTACK_PACKETS`] attack packets
//! arrive inside the measurement window ("resolved").

use crate::attack::{optimal_attack, AttackParams};
use crate::schedulers::SchedulerConfig;
use crate::sim::{simulate, Attack, SimOutcome, SimSpec};
use crate::traffic::{InnocentStats, InnocentTraffic};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use superlinear_core::Error;

/// Attack packets a measurement window must receive for its rate to count.
pub const MIN_ATTACK_PACKETS: f64 = 100.0;

/// One policy's sweep.
#[derive(Clone, Debug)]
pub struct SweepSpec {
    /// Scheduling policy.
    pub policy: String,
    /// r_I in bits/µs.
    pub innocent_rate: f64,
    /// r_A values in bits/µs.
    pub attack_rates: Vec<f64>,
    /// Buffer and queue shape (its job and packet ranges are filled in from the traffic).
    pub buffer: usize,
    /// HFFS bitmap width and levels.
    pub width: u32,
    /// HFFS levels.
    pub levels: u32,
    /// Innocent packets per simulation.
    pub packets: usize,
    /// Warm-up fraction.
    pub warmup: f64,
    /// Seed.
    pub seed: u64,
    /// Extra attack job sizes probed per rate (log-spaced up to J_max); 0: the optimal only.
    pub probe_jobs: usize,
    /// Simulations run at once.
    pub threads: usize,
}

/// One attack rate of a sweep.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SweepPoint {
    /// r_A in bits/µs.
    pub attack_rate: f64,
    /// The attack the equations prescribe.
    pub optimal: AttackParams,
    /// The attack reported (the optimal one, or a probed one that displaced more).
    pub used: AttackParams,
    /// Outcome under `used`.
    pub outcome: SimOutcome,
    /// o_I(r_I, 0) − o_I(r_I, r_A) in bits/µs.
    pub displaced: f64,
    /// displaced / r_A.
    pub df: f64,
    /// Whether enough attack packets arrived in the window for `df` to mean a rate.
    pub resolved: bool,
}

/// A policy's sweep: the attack-free baseline and every point.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// Goodput without attack, o_I(r_I, 0).
    pub baseline: SimOutcome,
    /// One per attack rate, in the given order.
    pub points: Vec<SweepPoint>,
}

impl Sweep {
    /// The displacement factor: the largest per-rate value over the resolved rates (Eq. 3.1's
    /// supremum over the sweep).
    pub fn displacement_factor(&self) -> f64 {
        self.points.iter().filter(|p| p.resolved).map(|p| p.df).fold(0.0, f64::max)
    }
}

/// The scheduler configuration for a traffic (sizes from the traffic's limits).
pub fn scheduler_config(traffic: &InnocentTraffic, buffer: usize, width: u32, levels: u32) -> SchedulerConfig {
    let mut c =
        SchedulerConfig::new(buffer, traffic.job_max * 1e-4, traffic.job_max, traffic.bits_min, traffic.bits_max);
    c.width = width;
    c.levels = levels;
    c
}

/// Runs `f` over `0..n` on up to `threads` threads, results in order.
fn parallel_map<T: Send>(n: usize, threads: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, n.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = f(i);
                out.lock().expect("no panics while holding the lock")[i] = Some(r);
            });
        }
    });
    out.into_inner().expect("threads joined").into_iter().map(|r| r.expect("every index ran")).collect()
}

/// Runs one policy's sweep. `stats` are the innocent traffic's statistics (E[P] and samples
/// for the solvers).
pub fn run_sweep(traffic: &InnocentTraffic, stats: &InnocentStats, spec: &SweepSpec) -> Result<Sweep, Error> {
    if spec.attack_rates.iter().any(|r| !(r.is_finite() && *r > 0.0)) {
        return Err(Error::config("attack rates must be positive numbers"));
    }
    if spec.packets == 0 {
        return Err(Error::config("a simulation needs at least one innocent packet"));
    }
    let sched = scheduler_config(traffic, spec.buffer, spec.width, spec.levels);
    sched.validate()?;
    crate::schedulers::lookup(&spec.policy)?;
    let base_spec = SimSpec {
        policy: spec.policy.clone(),
        sched,
        innocent_rate: spec.innocent_rate,
        packets: spec.packets,
        warmup: spec.warmup,
        attack: None,
        seed: spec.seed,
    };
    // Every (rate, attack) to simulate: the optimal attack first, then the probes.
    let mut tasks: Vec<(usize, AttackParams)> = Vec::new();
    let mut optimal = Vec::new();
    for (i, &r_a) in spec.attack_rates.iter().enumerate() {
        let opt = optimal_attack(&spec.policy, stats, spec.innocent_rate, r_a, traffic.bits_min, traffic.job_max)?;
        optimal.push(opt);
        tasks.push((i, opt));
        for k in 0..spec.probe_jobs {
            // Log-spaced from J_max / 1000 to J_max.
            let f = if spec.probe_jobs == 1 { 1.0 } else { k as f64 / (spec.probe_jobs - 1) as f64 };
            let job = traffic.job_max * 10f64.powf(-3.0 * (1.0 - f));
            tasks.push((i, AttackParams { bits: traffic.bits_min, job }));
        }
    }
    let runs = parallel_map(tasks.len() + 1, spec.threads, |t| {
        let mut s = base_spec.clone();
        if t > 0 {
            let (i, a) = tasks[t - 1];
            s.attack = Some(Attack { rate: spec.attack_rates[i], bits: a.bits, job: a.job });
        }
        simulate(traffic, stats.mean_bits, &s)
    });
    let mut runs = runs.into_iter().collect::<Result<Vec<_>, _>>()?.into_iter();
    let baseline = runs.next().expect("baseline ran");
    let mut points: Vec<Option<SweepPoint>> = vec![None; spec.attack_rates.len()];
    for ((i, used), outcome) in tasks.into_iter().zip(runs) {
        let r_a = spec.attack_rates[i];
        let displaced = baseline.goodput - outcome.goodput;
        let resolved = r_a * outcome.window / used.bits as f64 >= MIN_ATTACK_PACKETS;
        let point = SweepPoint {
            attack_rate: r_a,
            optimal: optimal[i],
            used,
            outcome,
            displaced,
            df: displaced / r_a,
            resolved,
        };
        let better = match &points[i] {
            None => true,
            Some(p) => point.displaced > p.displaced,
        };
        if better {
            points[i] = Some(point);
        }
    }
    Ok(Sweep { baseline, points: points.into_iter().map(|p| p.expect("every rate ran")).collect() })
}
