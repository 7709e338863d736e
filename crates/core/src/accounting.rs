//! Per-run accounting and the three kinds of speedup of the honesty contract (DESIGN.md):
//! measured (wall clock, real threads, k ≤ cores), projected (serial dispatcher CPU time + the
//! slowest worker's own CPU time, calibrated against the run's cost per unit of work:
//! [`crate::calibrate`]) and work (exact operation counts).

/// What one run of the pipeline cost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Accounting {
    /// Number of workers.
    pub k: usize,
    /// Requests counted (warm-up excluded when it was excluded).
    pub requests: u64,
    /// Wall-clock time from the first counted request to the last worker finishing; only for
    /// runs with real concurrent threads.
    pub wall_ns: Option<u64>,
    /// CPU time of the dispatcher over the counted requests; with several dispatchers
    /// ([`Self::dispatchers`]), the slowest one's (what the projection adds).
    pub dispatcher_cpu_ns: u64,
    /// Dispatcher threads the projection models: 1 is DESIGN.md's serial dispatcher; more, each
    /// routing its own contiguous share of the requests ([`crate::runner::run_projected_dispatchers`]).
    pub dispatchers: usize,
    /// CPU time of all dispatchers together (equal to `dispatcher_cpu_ns` with one).
    pub dispatcher_cpu_total_ns: u64,
    /// Each worker's own thread CPU time over its counted requests (the least of its runs). In a
    /// real-thread run it runs from the worker's Start to its Stop, so it holds its waits where
    /// it spins on a core of its own; where worker 0's thread routes, worker 0's is its serving's
    /// share of that thread's CPU time ([`crate::runner`]).
    pub worker_cpu_ns: Vec<u64>,
    /// Each worker's projected time: its CPU time calibrated against the run's cost per unit of
    /// work ([`crate::calibrate::estimates`]); equal to `worker_cpu_ns` for real-thread runs.
    pub worker_estimate_ns: Vec<u64>,
    /// Times each worker's stream was served and timed (projected runs: passes, copies that
    /// filled idle cores, and calibration re-runs).
    pub worker_runs: Vec<u32>,
    /// Workers re-run as calibration suspects (projected runs).
    pub workers_rerun: usize,
    /// The calibrated cost per unit of work (median over workers), when there was one.
    pub cost_per_work_ns: Option<f64>,
    /// Each worker's work units over its counted requests.
    pub worker_work: Vec<u64>,
    /// Requests each worker served (counted ones).
    pub worker_requests: Vec<u64>,
    /// Cache hits per worker over the counted requests (caches only).
    pub worker_hits: Vec<Option<u64>>,
    /// The second work counter per worker over the counted requests, for workers that count
    /// their self-adjustment upkeep apart from `worker_work` (`Worker::entries_moved`: the MRF
    /// classifier's list entries moved and dependency-list entries walked); `None` otherwise.
    pub worker_entries_moved: Vec<Option<u64>>,
    /// Real-thread runs only: each worker's wall-clock time inside `serve_batch` over the counted
    /// requests (the rest of the run's wall clock it waited on an empty ring); empty otherwise.
    /// With [`Self::dispatcher_blocked_ns`] it says where a measured run's time went: workers
    /// computing slower than projected, or waiting for a dispatcher that waited for them.
    pub worker_serve_wall_ns: Vec<u64>,
    /// Real-thread runs only: the dispatcher's wall-clock time blocked on full worker rings over
    /// the counted requests.
    pub dispatcher_blocked_ns: Option<u64>,
    /// Real-thread runs only: whether the dispatch had no CPU of its own and shared one with a
    /// worker (at k = cores it routes inside worker 0's thread); `None` otherwise. Recorded by
    /// the runner from the CPUs it placed threads on, so a row's label says what ran.
    pub dispatcher_shares_core: Option<bool>,
}

impl Accounting {
    /// Projected completion time on k ideal cores: dispatcher + slowest worker (DESIGN.md), each
    /// worker's time calibrated ([`crate::calibrate`]).
    pub fn projected_ns(&self) -> u64 {
        self.dispatcher_cpu_ns + self.worker_estimate_ns.iter().copied().max().unwrap_or(0)
    }

    /// The earlier estimator, kept for comparison: dispatcher + the largest measured worker CPU
    /// time, uncalibrated (it follows the noise tail of the worst of k workers).
    pub fn projected_max_cpu_ns(&self) -> u64 {
        self.dispatcher_cpu_ns + self.worker_cpu_ns.iter().copied().max().unwrap_or(0)
    }

    /// Work of the slowest worker: the work-unit completion "time" on k workers.
    pub fn work_span(&self) -> u64 {
        self.worker_work.iter().copied().max().unwrap_or(0)
    }

    /// Work summed over all workers.
    pub fn work_total(&self) -> u64 {
        self.worker_work.iter().sum()
    }

    /// Hit rate over all workers, for caches.
    pub fn hit_rate(&self) -> Option<f64> {
        let hits: Option<u64> = self.worker_hits.iter().copied().sum();
        hits.map(|h| h as f64 / self.requests.max(1) as f64)
    }

    /// Largest over mean requests per worker (1.0 = perfectly balanced).
    pub fn load_imbalance(&self) -> f64 {
        let max = self.worker_requests.iter().copied().max().unwrap_or(0) as f64;
        let mean = self.requests as f64 / self.k.max(1) as f64;
        if mean > 0.0 {
            max / mean
        } else {
            1.0
        }
    }

    /// Largest over mean work per worker (1.0 = perfectly balanced): the busiest worker's work
    /// sets the projected and the work speedup, so this is what the imbalance costs them.
    pub fn work_imbalance(&self) -> f64 {
        max_over_mean(&self.worker_work, self.k)
    }

    /// The second work counter summed over workers (`None` unless every worker counts it).
    pub fn entries_moved_total(&self) -> Option<u64> {
        if self.worker_entries_moved.is_empty() {
            return None;
        }
        self.worker_entries_moved.iter().copied().sum()
    }

    /// Each worker's work plus its entries moved (`None` unless every worker counts them):
    /// closer to a self-adjusting worker's real cost than the rules compared alone.
    pub fn worker_work_with_moves(&self) -> Option<Vec<u64>> {
        if self.worker_entries_moved.is_empty() || self.worker_entries_moved.len() != self.worker_work.len() {
            return None;
        }
        self.worker_work.iter().zip(&self.worker_entries_moved).map(|(&w, m)| m.map(|m| w + m)).collect()
    }

    /// The busiest worker's work plus entries moved (the combined work's span).
    pub fn work_with_moves_span(&self) -> Option<u64> {
        self.worker_work_with_moves().map(|v| v.into_iter().max().unwrap_or(0))
    }
}

/// Largest over mean of per-worker counts spread over k workers (1.0 when there is nothing).
fn max_over_mean(per_worker: &[u64], k: usize) -> f64 {
    let max = per_worker.iter().copied().max().unwrap_or(0) as f64;
    let mean = per_worker.iter().sum::<u64>() as f64 / k.max(1) as f64;
    if mean > 0.0 {
        max / mean
    } else {
        1.0
    }
}

/// An [`Accounting`] with its derived figures: the one record of a run's cost that results
/// carry (the Python side declares it once as the `Accounting` TypedDict).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct AccountingRecord<'a> {
    pub k: usize,
    pub requests: u64,
    pub wall_ns: Option<u64>,
    pub dispatcher_cpu_ns: u64,
    pub dispatchers: usize,
    pub dispatcher_cpu_total_ns: u64,
    pub worker_cpu_ns: &'a [u64],
    pub worker_estimate_ns: &'a [u64],
    pub worker_runs: &'a [u32],
    pub worker_work: &'a [u64],
    pub worker_requests: &'a [u64],
    pub cost_per_work_ns: Option<f64>,
    pub projected_ns: u64,
    pub projected_max_cpu_ns: u64,
    pub workers_rerun: usize,
    pub work_span: u64,
    pub work_total: u64,
    pub hit_rate: Option<f64>,
    /// Busiest worker's requests over the mean.
    pub load_imbalance: f64,
    /// Busiest worker's work over the mean.
    pub work_imbalance: f64,
    /// The second work counter per worker (`Worker::entries_moved`), where counted.
    pub worker_entries_moved: &'a [Option<u64>],
    /// Its sum, when every worker counts it.
    pub entries_moved_total: Option<u64>,
    /// The busiest worker's work plus entries moved, when counted.
    pub work_with_moves_span: Option<u64>,
    pub worker_serve_wall_ns: &'a [u64],
    pub dispatcher_blocked_ns: Option<u64>,
    pub dispatcher_shares_core: Option<bool>,
}

impl Accounting {
    /// The record of this run, derived figures included.
    pub fn record(&self) -> AccountingRecord<'_> {
        AccountingRecord {
            k: self.k,
            requests: self.requests,
            wall_ns: self.wall_ns,
            dispatcher_cpu_ns: self.dispatcher_cpu_ns,
            dispatchers: self.dispatchers,
            dispatcher_cpu_total_ns: self.dispatcher_cpu_total_ns,
            worker_cpu_ns: &self.worker_cpu_ns,
            worker_estimate_ns: &self.worker_estimate_ns,
            worker_runs: &self.worker_runs,
            worker_work: &self.worker_work,
            worker_requests: &self.worker_requests,
            cost_per_work_ns: self.cost_per_work_ns,
            projected_ns: self.projected_ns(),
            projected_max_cpu_ns: self.projected_max_cpu_ns(),
            workers_rerun: self.workers_rerun,
            work_span: self.work_span(),
            work_total: self.work_total(),
            hit_rate: self.hit_rate(),
            load_imbalance: self.load_imbalance(),
            work_imbalance: self.work_imbalance(),
            worker_entries_moved: &self.worker_entries_moved,
            entries_moved_total: self.entries_moved_total(),
            work_with_moves_span: self.work_with_moves_span(),
            worker_serve_wall_ns: &self.worker_serve_wall_ns,
            dispatcher_blocked_ns: self.dispatcher_blocked_ns,
            dispatcher_shares_core: self.dispatcher_shares_core,
        }
    }
}

/// T(1)/T(k) with projected times.
pub fn projected_speedup(baseline: &Accounting, run: &Accounting) -> f64 {
    ratio(baseline.projected_ns(), run.projected_ns())
}

/// Work(1)/Work_span(k): exact and machine-independent.
pub fn work_speedup(baseline: &Accounting, run: &Accounting) -> f64 {
    ratio(baseline.work_span(), run.work_span())
}

/// T(1)/T(k) with wall-clock times; `None` unless both runs were measured with real threads.
pub fn measured_speedup(baseline: &Accounting, run: &Accounting) -> Option<f64> {
    Some(ratio(baseline.wall_ns?, run.wall_ns?))
}

fn ratio(a: u64, b: u64) -> f64 {
    a as f64 / (b.max(1)) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projected_is_dispatcher_plus_slowest_worker() {
        let a = Accounting {
            k: 2,
            requests: 10,
            dispatcher_cpu_ns: 5,
            dispatchers: 1,
            dispatcher_cpu_total_ns: 5,
            worker_cpu_ns: vec![30, 50],
            worker_estimate_ns: vec![30, 45],
            worker_runs: vec![1, 2],
            workers_rerun: 1,
            cost_per_work_ns: None,
            worker_work: vec![3, 4],
            worker_requests: vec![4, 6],
            worker_hits: vec![Some(1), Some(2)],
            worker_entries_moved: vec![Some(10), Some(1)],
            wall_ns: None,
            worker_serve_wall_ns: Vec::new(),
            dispatcher_blocked_ns: None,
            dispatcher_shares_core: None,
        };
        assert_eq!(a.projected_ns(), 50);
        assert_eq!(a.projected_max_cpu_ns(), 55);
        assert_eq!(a.work_span(), 4);
        assert_eq!(a.hit_rate(), Some(0.3));
        assert!((a.load_imbalance() - 1.2).abs() < 1e-12);
        assert!((a.work_imbalance() - 8.0 / 7.0).abs() < 1e-12);
        assert_eq!(a.entries_moved_total(), Some(11));
        assert_eq!(a.work_with_moves_span(), Some(13), "worker 0: 3 compared + 10 moved");
        let uncounted = Accounting { worker_entries_moved: vec![None, None], ..a.clone() };
        assert_eq!((uncounted.entries_moved_total(), uncounted.work_with_moves_span()), (None, None));
        let base = Accounting {
            k: 1,
            dispatcher_cpu_ns: 10,
            worker_estimate_ns: vec![490],
            worker_work: vec![40],
            ..a.clone()
        };
        assert!((projected_speedup(&base, &a) - 10.0).abs() < 1e-12);
        assert!((work_speedup(&base, &a) - 10.0).abs() < 1e-12);
        assert_eq!(measured_speedup(&base, &a), None);
    }
}
