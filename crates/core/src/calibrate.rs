//! The projected worker time that noise cannot swing: each worker's CPU time, calibrated against
//! the cost per unit of work of all workers of the same run (docs/design.md, "The calibrated
//! projection").
//!
//! The projected completion time is set by the slowest worker. Taken raw, that is the maximum of
//! k noisy CPU times, so it follows the noise tail of the worst worker, and the tail grows with
//! k: on a shared or virtual machine a worker is only ever slowed down by interference, never sped
//! up, and one burst of stolen time in one of 48 workers moves the maximum. The workers of one run
//! do the same kind of work under the same conditions, so their cost per unit of work (CPU time ÷
//! exact work count) agrees closely; the median over them is a robust calibration. Then:
//!
//! * a worker whose cost per unit lies above the median by more than [`BAND`] is a *suspect*: its
//!   stream is served again (interleaved with the other suspects, not back to back) and the least
//!   time is kept, up to [`MAX_RERUNS`] times;
//! * a worker still above the band after its re-runs is reproducibly slower: its own least time
//!   stands;
//! * every other worker's time is its work times the calibrated cost, or its own time where that
//!   is less (noise never speeds a worker up, so a time below the model is not noise).
//!
//! With fewer than [`MIN_WORKERS`] workers with work there is nothing to calibrate against, and
//! each worker's own least time stands (the runner then serves every stream in more passes).

/// Relative excess over the calibrated cost per unit of work above which a worker is re-run.
pub const BAND: f64 = 0.10;
/// Most extra runs of one suspect worker's stream.
pub const MAX_RERUNS: usize = 4;
/// Fewest workers with work for a calibration.
pub const MIN_WORKERS: usize = 4;

/// The calibrated cost per unit of work: the median over workers with work of CPU time ÷ work,
/// or `None` with fewer than [`MIN_WORKERS`] such workers.
pub fn cost_per_work(cpu_ns: &[u64], work: &[u64]) -> Option<f64> {
    let mut costs: Vec<f64> =
        cpu_ns.iter().zip(work).filter(|(_, &w)| w > 0).map(|(&c, &w)| c as f64 / w as f64).collect();
    if costs.len() < MIN_WORKERS {
        return None;
    }
    costs.sort_by(f64::total_cmp);
    let n = costs.len();
    Some(if n % 2 == 1 { costs[n / 2] } else { (costs[n / 2 - 1] + costs[n / 2]) / 2.0 })
}

/// Workers whose time lies above the band around `cost × work`.
pub fn suspects(cpu_ns: &[u64], work: &[u64], cost: f64) -> Vec<usize> {
    (0..cpu_ns.len()).filter(|&i| above_band(cpu_ns[i], work[i], cost)).collect()
}

fn above_band(cpu_ns: u64, work: u64, cost: f64) -> bool {
    work > 0 && cpu_ns as f64 > cost * work as f64 * (1.0 + BAND)
}

/// Each worker's projected time: its own least time where it is reproducibly above the band (or
/// there is no calibration), else the least of its own time and `cost × work`.
pub fn estimates(cpu_ns: &[u64], work: &[u64], cost: Option<f64>) -> Vec<u64> {
    let Some(cost) = cost else { return cpu_ns.to_vec() };
    cpu_ns
        .iter()
        .zip(work)
        .map(|(&c, &w)| if w == 0 || above_band(c, w, cost) { c } else { c.min((cost * w as f64).round() as u64) })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_cost_calibrates_and_a_burst_is_a_suspect() {
        // Eight equal workers (10 ns per unit of work); one hit by a burst of stolen time.
        let work = vec![1_000u64; 8];
        let mut cpu = vec![10_000u64; 8];
        cpu[3] = 25_000;
        let cost = cost_per_work(&cpu, &work).unwrap();
        assert!((cost - 10.0).abs() < 1e-12);
        assert_eq!(suspects(&cpu, &work, cost), vec![3]);
        // Re-run, the burst gone: the slowest worker is back to its work times the cost.
        cpu[3] = 10_400;
        assert!(suspects(&cpu, &work, cost).is_empty());
        assert_eq!(*estimates(&cpu, &work, Some(cost)).iter().max().unwrap(), 10_000);
    }

    #[test]
    fn a_reproducibly_slower_worker_keeps_its_own_time() {
        // The worker with the most work is also costlier per unit (a genuinely larger state).
        let work = vec![1_000, 1_000, 1_000, 1_000, 2_000];
        let cpu = vec![10_000, 10_000, 10_000, 10_000, 30_000];
        let cost = cost_per_work(&cpu, &work).unwrap();
        assert_eq!(estimates(&cpu, &work, Some(cost)), vec![10_000, 10_000, 10_000, 10_000, 30_000]);
    }

    #[test]
    fn within_the_band_time_follows_work_and_below_it_the_worker_own_time() {
        let work = vec![1_000, 1_000, 1_000, 1_000, 1_100];
        let cpu = vec![10_000, 9_000, 10_000, 10_000, 11_900];
        let cost = cost_per_work(&cpu, &work).unwrap();
        assert!((cost - 10.0).abs() < 1e-12);
        // 11,900 is 8 % above 1,100 × 10: inside the band, taken as 11,000; 9,000 stays 9,000.
        assert_eq!(estimates(&cpu, &work, Some(cost)), vec![10_000, 9_000, 10_000, 10_000, 11_000]);
    }

    #[test]
    fn too_few_workers_are_not_calibrated() {
        assert_eq!(cost_per_work(&[10, 20, 30], &[1, 1, 1]), None);
        assert_eq!(cost_per_work(&[10, 20, 30, 40, 50], &[1, 1, 0, 0, 0]), None);
        assert_eq!(estimates(&[10, 20], &[1, 1], None), vec![10, 20]);
    }
}
