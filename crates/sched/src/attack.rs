//! The optimal adversary of thesis §3.4 and the analytic bounds on its displacement factor.
//!
//! * FCFS and FQ: minimum-size packets carrying maximum-size jobs (§3.4.1, §3.4.2).
//! * SJF: minimum-size packets with the job size J_A solving Eq. 3.8 (Lemma 2),
//!   `r_I/E[P] · ∫_0^{J_A} j f_J(j) dj + r_A/P_min · J_A = 1`, or J_max when that has no
//!   solution below J_max.
//! * WSJF (and WSJF-Inorder): minimum-size packets with the job-per-bit ratio Z_A solving
//!   Eq. 3.9 (Lemma 3), `r_I/E[P] · ∬_{j ≤ p·Z_A} j f_{P,J}(p, j) + r_A · Z_A = 1`, or
//!   J_max / P_min.
//!
//! Both left-hand sides are non-decreasing in the unknown, so bisection finds the root. The
//! integrals are taken over samples of the innocent traffic (exact for a trace): the partial
//! expectation `E[J · 1{J ≤ x}]` (resp. `1{J/P ≤ z}`) is a prefix sum over samples sorted by
//! job size (resp. ratio), evaluated by binary search.

use crate::schedulers::{lookup, ServesFirst};
use crate::traffic::InnocentStats;
use superlinear_core::Error;

/// Bisection steps: the bracket shrinks by 2⁻⁸⁰, far below any meaningful job size.
const STEPS: usize = 80;

/// The partial expectation `x ↦ E[J · 1{key ≤ x}]` over samples.
struct PartialMean {
    keys: Vec<f64>,
    prefix: Vec<f64>,
}

impl PartialMean {
    fn new(mut pairs: Vec<(f64, f64)>) -> Self {
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let n = pairs.len().max(1) as f64;
        let mut prefix = Vec::with_capacity(pairs.len() + 1);
        prefix.push(0.0);
        let mut acc = 0.0;
        for &(_, j) in &pairs {
            acc += j / n;
            prefix.push(acc);
        }
        Self { keys: pairs.into_iter().map(|p| p.0).collect(), prefix }
    }

    fn at(&self, x: f64) -> f64 {
        self.prefix[self.keys.partition_point(|&k| k <= x)]
    }
}

/// The largest `x` in `[0, hi]` with `f(x) ≤ 0` for a non-decreasing `f`, or `hi` when
/// `f(hi) ≤ 0` (no root below `hi`).
fn bisect(f: impl Fn(f64) -> f64, hi: f64) -> f64 {
    if f(hi) <= 0.0 {
        return hi;
    }
    let (mut lo, mut hi) = (0.0, hi);
    for _ in 0..STEPS {
        let mid = 0.5 * (lo + hi);
        if f(mid) <= 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The adversary's packet size (bits) and job size (µs) against a policy.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct AttackParams {
    /// P_A in bits (always P_min: every policy here favours small attack packets).
    pub bits: u32,
    /// J_A in µs.
    #[serde(rename = "job_us")]
    pub job: f64,
}

/// Eq. 3.8: the SJF-optimal attack job size for rates `r_i`, `r_a` (bits/µs).
pub fn sjf_job_size(stats: &InnocentStats, r_i: f64, r_a: f64, bits_min: u32, job_max: f64) -> f64 {
    let pm = PartialMean::new(stats.samples.iter().map(|&(_, j)| (j, j)).collect());
    let lhs = |x: f64| r_i / stats.mean_bits * pm.at(x) + r_a / bits_min as f64 * x - 1.0;
    bisect(lhs, job_max)
}

/// Eq. 3.9: the WSJF-optimal attack job-per-bit ratio Z_A (µs per bit).
pub fn wsjf_ratio(stats: &InnocentStats, r_i: f64, r_a: f64, bits_min: u32, job_max: f64) -> f64 {
    let pm = PartialMean::new(stats.samples.iter().map(|&(p, j)| (j / p, j)).collect());
    let lhs = |z: f64| r_i / stats.mean_bits * pm.at(z) + r_a * z - 1.0;
    bisect(lhs, job_max / bits_min as f64)
}

/// The optimal attack against `policy` (a registry name) at innocent rate `r_i` and attack rate `r_a`.
pub fn optimal_attack(
    policy: &str,
    stats: &InnocentStats,
    r_i: f64,
    r_a: f64,
    bits_min: u32,
    job_max: f64,
) -> Result<AttackParams, Error> {
    let job = match lookup(policy)?.serves_first {
        ServesFirst::SmallestJob => sjf_job_size(stats, r_i, r_a, bits_min, job_max),
        ServesFirst::SmallestJobPerBit => wsjf_ratio(stats, r_i, r_a, bits_min, job_max) * bits_min as f64,
        // Blind to job sizes: the most expensive job in the smallest packet.
        ServesFirst::Oldest | ServesFirst::FairShare => job_max,
    };
    // A zero-size job displaces nothing and would stall a simulation: keep it positive.
    Ok(AttackParams { bits: bits_min, job: job.max(job_max * 1e-9) })
}

/// Analytic bound on a policy's displacement factor, with its direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound {
    /// The value.
    pub value: f64,
    /// `true`: the DF is at least this (FCFS, FQ); `false`: at most (SJF, WSJF).
    pub lower: bool,
}

/// The thesis's bound for `policy` (a registry name): Eq. 3.4 (FCFS, lower), Eq. 3.7 (FQ with
/// `flows` innocent flows, lower), Theorem 2 (SJF, upper: E[P]/P_min · ρ), Theorem 3 (WSJF,
/// upper: ρ).
pub fn bound(
    policy: &str,
    stats: &InnocentStats,
    r_i: f64,
    bits_min: u32,
    job_max: f64,
    flows: u32,
) -> Result<Bound, Error> {
    let r_max = stats.r_max();
    let m = r_i.min(r_max);
    let rho = m / r_max;
    let jp = job_max / bits_min as f64;
    Ok(match lookup(policy)?.serves_first {
        ServesFirst::Oldest => Bound { value: jp * m / (2.0 * r_i * (2.0 / m - 1.0 / r_max)), lower: true },
        ServesFirst::FairShare => {
            Bound { value: jp * m / (2.0 * flows as f64 * r_max * (2.0 / m - 1.0 / r_max)), lower: true }
        }
        ServesFirst::SmallestJob => Bound { value: stats.mean_bits / bits_min as f64 * rho, lower: false },
        ServesFirst::SmallestJobPerBit => Bound { value: rho, lower: false },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(samples: Vec<(f64, f64)>) -> InnocentStats {
        let n = samples.len() as f64;
        InnocentStats {
            mean_bits: samples.iter().map(|s| s.0).sum::<f64>() / n,
            mean_job: samples.iter().map(|s| s.1).sum::<f64>() / n,
            samples,
        }
    }

    #[test]
    fn sjf_root_solves_eq_3_8() {
        // Jobs uniform on {1, ..., 10} µs, packets 8000 bits: E[J] = 5.5.
        let s = stats((1..=10).map(|j| (8000.0, j as f64)).collect());
        let (r_i, r_a) = (0.5 * s.r_max(), 50.0);
        let j = sjf_job_size(&s, r_i, r_a, 512, 20.0);
        // Left-hand side crosses 1 at j: innocent load of jobs ≤ j plus attack load.
        let innocent: f64 = (1..=10).filter(|&x| x as f64 <= j).map(|x| x as f64 / 10.0).sum();
        let load = r_i / 8000.0 * innocent + r_a / 512.0 * j;
        assert!(load <= 1.0 + 1e-9, "{j} {load}");
        let above = (1..=10).filter(|&x| x as f64 <= j + 1e-6).map(|x| x as f64 / 10.0).sum::<f64>();
        assert!(r_i / 8000.0 * above + r_a / 512.0 * (j + 1e-6) > 1.0 - 1e-6);
    }

    #[test]
    fn weak_attacks_fall_back_to_the_largest_job() {
        let s = stats(vec![(8000.0, 1.0); 10]);
        assert_eq!(sjf_job_size(&s, 100.0, 1e-6, 512, 10.0), 10.0);
        assert_eq!(wsjf_ratio(&s, 100.0, 1e-6, 512, 10.0), 10.0 / 512.0);
        let a = optimal_attack("fcfs", &s, 100.0, 1.0, 512, 10.0).unwrap();
        assert_eq!(a, AttackParams { bits: 512, job: 10.0 });
    }

    #[test]
    fn wsjf_ratio_solves_eq_3_9() {
        let s = stats((1..=100).map(|i| (800.0 + 80.0 * (i % 7) as f64, 0.1 * i as f64)).collect());
        let (r_i, r_a) = (0.9 * s.r_max(), 0.05 * s.r_max());
        let z = wsjf_ratio(&s, r_i, r_a, 512, 50.0);
        let partial: f64 = s.samples.iter().filter(|(p, j)| j / p <= z).map(|x| x.1).sum::<f64>() / 100.0;
        let load = r_i / s.mean_bits * partial + r_a * z;
        assert!((load - 1.0).abs() < 0.02, "{z} {load}");
    }

    #[test]
    fn bounds_have_the_papers_shape() {
        let s = stats(vec![(8000.0, 1.0); 4]);
        let r_i = 0.8 * s.r_max();
        let f1 = bound("fcfs", &s, r_i, 512, 10.0, 1).unwrap();
        let f2 = bound("fcfs", &s, r_i, 512, 100.0, 1).unwrap();
        assert!(f1.lower && (f2.value / f1.value - 10.0).abs() < 1e-9);
        assert!((bound("wsjf", &s, r_i, 512, 10.0, 1).unwrap().value - 0.8).abs() < 1e-12);
        assert!((bound("sjf", &s, r_i, 512, 10.0, 1).unwrap().value - 0.8 * 8000.0 / 512.0).abs() < 1e-9);
    }
}
