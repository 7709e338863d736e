//! ℓ(k), q(k) and S(k) from per-worker work (paper, Appendix A.3–A.5).
//!
//! * 1/ℓ(k) = Σ_t g(|W_t(x) ∩ U_f(x)|) / Σ_t g(|W_t(x)|): total work on k workers over the
//!   single worker's total, T(1).
//! * q(k) = Σ_t g(|W_t(x) ∩ U_f(x)|) / max_i Σ_{t: f(σ_t)=i} g(…): the reduced total work over
//!   the completion time of the last machine (Definition A.2). The paper typesets this fraction
//!   as 1/q(k), which would make q ≤ 1; its text (q ≤ k, "uniform input achieves q = k") and
//!   Definition A.2 fix the orientation used here.
//! * q(k)·ℓ(k) = T(1) / max_i T_i(k): the work speedup, exactly the engine's `speedup_work`.
//! * S(k) = 1 / (s + (1 − s)/(q(k)·ℓ(k))) for a serial fraction s (Theorem A.3).

/// What one worker's stream cost, in the engine's work units.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerStats {
    /// Requests served.
    pub requests: u64,
    /// Work units (Σ g over its requests).
    pub work: u64,
    /// Requests that were an item's first on this worker (cold starts).
    pub first_accesses: u64,
    /// Requests to keys outside the item set (lists only).
    pub absent: u64,
    /// Σ |W| over the re-accesses (for the mean working-set size).
    pub working_set_sum: u64,
    /// Cache hits (caches only).
    pub hits: Option<u64>,
}

impl WorkerStats {
    /// Mean |W| over re-accesses, `None` when there were none.
    pub fn mean_working_set(&self) -> Option<f64> {
        let repeats = self.requests - self.first_accesses - self.absent;
        (repeats > 0).then(|| self.working_set_sum as f64 / repeats as f64)
    }
}

/// The law at one k: the single-worker baseline and the k workers' stats.
#[derive(Clone, Debug, PartialEq)]
pub struct LawPoint {
    /// Workers.
    pub k: usize,
    /// T(1): the work of one worker serving the whole stream.
    pub baseline_work: u64,
    /// Each worker's stats.
    pub workers: Vec<WorkerStats>,
}

impl LawPoint {
    /// Σ_i T_i(k): the total work of the distributed system.
    pub fn total_work(&self) -> u64 {
        self.workers.iter().map(|w| w.work).sum()
    }

    /// max_i T_i(k): the completion time of the last machine, in work units.
    pub fn span(&self) -> u64 {
        self.workers.iter().map(|w| w.work).max().unwrap_or(0)
    }

    /// ℓ(k): work reduction by the dispatcher's isolation of working sets.
    pub fn ell(&self) -> f64 {
        ratio(self.baseline_work, self.total_work())
    }

    /// q(k): parallelizability of the reduced work (≤ k).
    pub fn q(&self) -> f64 {
        ratio(self.total_work(), self.span())
    }

    /// q(k)·ℓ(k) = T(1)/max_i T_i(k): the work speedup.
    pub fn work_speedup(&self) -> f64 {
        ratio(self.baseline_work, self.span())
    }

    /// S(k) of the general law with serial fraction `s` (Theorem A.3).
    pub fn law_speedup(&self, s: f64) -> f64 {
        general_law(s, self.q() * self.ell())
    }

    /// Largest over mean requests per worker (1.0 = balanced).
    pub fn load_imbalance(&self) -> f64 {
        let total: u64 = self.workers.iter().map(|w| w.requests).sum();
        let max = self.workers.iter().map(|w| w.requests).max().unwrap_or(0);
        if total == 0 {
            1.0
        } else {
            max as f64 * self.k as f64 / total as f64
        }
    }

    /// Cache hit rate over all workers (caches only).
    pub fn hit_rate(&self) -> Option<f64> {
        let hits: Option<u64> = self.workers.iter().map(|w| w.hits).sum();
        let total: u64 = self.workers.iter().map(|w| w.requests).sum();
        hits.map(|h| h as f64 / total.max(1) as f64)
    }
}

/// S = 1 / (s + (1 − s)/(q·ℓ)).
/// A worker's stats as results carry them (`working_set_sum` as its mean).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct WorkerStatsRecord {
    pub requests: u64,
    pub work: u64,
    pub first_accesses: u64,
    pub absent: u64,
    pub mean_working_set: Option<f64>,
    pub hits: Option<u64>,
}

impl WorkerStats {
    /// The record of these stats.
    pub fn record(&self) -> WorkerStatsRecord {
        WorkerStatsRecord {
            requests: self.requests,
            work: self.work,
            first_accesses: self.first_accesses,
            absent: self.absent,
            mean_working_set: self.mean_working_set(),
            hits: self.hits,
        }
    }
}

/// A point of the law at serial fraction `s` as results carry it, every figure derived.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LawPointRecord {
    pub k: usize,
    pub baseline_work: u64,
    pub work_total: u64,
    pub work_span: u64,
    pub ell: f64,
    pub q: f64,
    pub work_speedup: f64,
    pub s: f64,
    pub law_speedup: f64,
    pub load_imbalance: f64,
    pub hit_rate: Option<f64>,
    pub workers: Vec<WorkerStatsRecord>,
}

impl LawPoint {
    /// The record of this point at serial fraction `s`.
    pub fn record(&self, s: f64) -> LawPointRecord {
        LawPointRecord {
            k: self.k,
            baseline_work: self.baseline_work,
            work_total: self.total_work(),
            work_span: self.span(),
            ell: self.ell(),
            q: self.q(),
            work_speedup: self.work_speedup(),
            s,
            law_speedup: self.law_speedup(s),
            load_imbalance: self.load_imbalance(),
            hit_rate: self.hit_rate(),
            workers: self.workers.iter().map(WorkerStats::record).collect(),
        }
    }
}

pub fn general_law(s: f64, q_times_ell: f64) -> f64 {
    1.0 / (s + (1.0 - s) / q_times_ell)
}

fn ratio(a: u64, b: u64) -> f64 {
    a as f64 / b.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(requests: u64, work: u64) -> WorkerStats {
        WorkerStats { requests, work, ..Default::default() }
    }

    #[test]
    fn ell_q_and_the_law() {
        // T(1) = 1000; two workers with 100 and 150: ℓ = 4, q = 250/150, qℓ = 1000/150.
        let p = LawPoint { k: 2, baseline_work: 1000, workers: vec![worker(10, 100), worker(30, 150)] };
        assert!((p.ell() - 4.0).abs() < 1e-12);
        assert!((p.q() - 250.0 / 150.0).abs() < 1e-12);
        assert!((p.work_speedup() - p.q() * p.ell()).abs() < 1e-12);
        assert!((p.law_speedup(0.0) - p.work_speedup()).abs() < 1e-12);
        assert!((p.law_speedup(1.0) - 1.0).abs() < 1e-12);
        assert!((p.load_imbalance() - 1.5).abs() < 1e-12);
        assert_eq!(p.hit_rate(), None);
        let w = WorkerStats { requests: 5, first_accesses: 1, working_set_sum: 8, ..Default::default() };
        assert_eq!(w.mean_working_set(), Some(2.0));
    }
}
