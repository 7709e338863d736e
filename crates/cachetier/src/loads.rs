//! Per-replica load counters kept by the client from replies (DistCache §4.2: each reply carries
//! the cache node's load; "a simple aging mechanism" keeps stale loads from lingering). Here the
//! client counts the replies it received from each replica; every `window` the recent counts are
//! halved, so the routing decision weighs the last few windows. Totals are kept separately for
//! the statistics (requests served per replica).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Shared, lock-free load counters.
pub struct LoadCounters {
    recent: Vec<AtomicU64>,
    total: Vec<AtomicU64>,
    fills: Vec<AtomicU64>,
    start: Instant,
    window_ns: u64,
    next_decay_ns: AtomicU64,
}

impl LoadCounters {
    /// Counters for `n` replicas, aged every `window`.
    pub fn new(n: usize, window: Duration) -> Self {
        let window_ns = window.as_nanos().max(1) as u64;
        Self {
            recent: (0..n).map(|_| AtomicU64::new(0)).collect(),
            total: (0..n).map(|_| AtomicU64::new(0)).collect(),
            fills: (0..n).map(|_| AtomicU64::new(0)).collect(),
            start: Instant::now(),
            window_ns,
            next_decay_ns: AtomicU64::new(window_ns),
        }
    }

    /// Counts one reply from replica `r`.
    #[inline]
    pub fn record(&self, r: usize) {
        self.recent[r].fetch_add(1, Ordering::Relaxed);
        self.total[r].fetch_add(1, Ordering::Relaxed);
    }

    /// The aged load of replica `r`.
    #[inline]
    pub fn recent(&self, r: usize) -> u64 {
        self.recent[r].load(Ordering::Relaxed)
    }

    /// Requests replica `r` served since the counters were made (or last reset).
    pub fn total(&self, r: usize) -> u64 {
        self.total[r].load(Ordering::Relaxed)
    }

    /// Totals of every replica.
    pub fn totals(&self) -> Vec<u64> {
        (0..self.total.len()).map(|r| self.total(r)).collect()
    }

    /// Counts one fill (a set after a miss) sent to replica `r`: the second operation a miss
    /// costs the replica, counted for the work accounting.
    #[inline]
    pub fn record_fill(&self, r: usize) {
        self.fills[r].fetch_add(1, Ordering::Relaxed);
    }

    /// Fills sent to every replica.
    pub fn fill_totals(&self) -> Vec<u64> {
        self.fills.iter().map(|f| f.load(Ordering::Relaxed)).collect()
    }

    /// Zeroes the totals (the start of a measured phase).
    pub fn reset_totals(&self) {
        for t in self.total.iter().chain(&self.fills) {
            t.store(0, Ordering::Relaxed);
        }
    }

    /// Ages the recent loads if a window has passed; the first caller to notice does it.
    pub fn maybe_decay(&self) {
        let now = self.start.elapsed().as_nanos() as u64;
        let due = self.next_decay_ns.load(Ordering::Relaxed);
        if now < due {
            return;
        }
        if self.next_decay_ns.compare_exchange(due, now + self.window_ns, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
            for c in &self.recent {
                let v = c.load(Ordering::Relaxed);
                // A concurrent increment may be lost in the halving: harmless for a load estimate.
                c.store(v / 2, Ordering::Relaxed);
            }
        }
    }
}
