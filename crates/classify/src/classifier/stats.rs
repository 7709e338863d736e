//! Per-worker statistics (paper §4.2–4.3 read these to explain scaling): matches per rule, the
//! active rule set (distinct rules matched) per window of packets, the distribution of lookup
//! positions, and the dependency-chain levels MRF touched.
//!
//! Recording is a handful of counter updates per packet; experiments that time workers run
//! without statistics.

use super::Lookup;
use std::sync::{Arc, Mutex};

/// Buckets of the position histogram: bucket b holds positions in [2^(b-1), 2^b) (bucket 0:
/// position 0).
pub const POSITION_BUCKETS: usize = 33;
/// Chain levels counted one by one; the last bucket holds this many or more.
pub const CHAIN_BUCKETS: usize = 17;
/// Default active-set window in packets.
pub const DEFAULT_WINDOW: usize = 10_000;

/// One worker's statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerStats {
    /// Packets classified.
    pub packets: u64,
    /// Rules compared.
    pub work: u64,
    /// Entries moved (the second work counter, [`Lookup::moved`]).
    pub moved: u64,
    /// Packets per first-match rule.
    pub matches: Vec<u64>,
    /// Packets no rule matched (default policy).
    pub default_hits: u64,
    /// Lookup positions, log2 buckets.
    pub position_hist: [u64; POSITION_BUCKETS],
    /// Sum of positions (mean = sum / packets).
    pub position_sum: u64,
    /// Chain levels touched per lookup (0 for static lists and misses).
    pub chain_hist: [u64; CHAIN_BUCKETS],
    /// Sum of chain levels.
    pub chain_sum: u64,
    /// Window length in packets.
    pub window: usize,
    /// Completed windows.
    pub windows: u64,
    /// Sum of active-set sizes over completed windows.
    pub active_sum: u64,
    /// Largest active set in a window.
    pub active_max: u32,
    seen: Vec<u32>,
    window_id: u32,
    in_window: usize,
    active: u32,
}

impl WorkerStats {
    /// Bytes the statistics of `rules` rules hold ([`Self::new`]: a count and a window mark per rule).
    pub fn bytes(rules: usize) -> u64 {
        (std::mem::size_of::<Self>() + rules * (std::mem::size_of::<u64>() + std::mem::size_of::<u32>())) as u64
    }

    /// Empty statistics for `rules` rules and a window of `window` packets (0: the default).
    pub fn new(rules: usize, window: usize) -> Self {
        Self {
            packets: 0,
            work: 0,
            moved: 0,
            matches: vec![0; rules],
            default_hits: 0,
            position_hist: [0; POSITION_BUCKETS],
            position_sum: 0,
            chain_hist: [0; CHAIN_BUCKETS],
            chain_sum: 0,
            window: if window == 0 { DEFAULT_WINDOW } else { window },
            windows: 0,
            active_sum: 0,
            active_max: 0,
            seen: vec![0; rules],
            window_id: 1,
            in_window: 0,
            active: 0,
        }
    }

    /// Starts over for a new rule set (rule updates).
    pub fn resize(&mut self, rules: usize, window: usize) {
        *self = Self::new(rules, window);
    }

    /// Records one lookup.
    #[inline]
    pub fn record(&mut self, l: &Lookup) {
        self.packets += 1;
        self.work += l.work;
        self.moved += l.moved;
        match l.rule {
            Some(r) => {
                let r = r as usize;
                self.matches[r] += 1;
                if self.seen[r] != self.window_id {
                    self.seen[r] = self.window_id;
                    self.active += 1;
                }
            }
            None => self.default_hits += 1,
        }
        let b = if l.position == 0 { 0 } else { 32 - l.position.leading_zeros() as usize };
        self.position_hist[b] += 1;
        self.position_sum += l.position as u64;
        self.chain_hist[(l.chain as usize).min(CHAIN_BUCKETS - 1)] += 1;
        self.chain_sum += l.chain as u64;
        self.in_window += 1;
        if self.in_window == self.window {
            self.close_window();
        }
    }

    fn close_window(&mut self) {
        self.windows += 1;
        self.active_sum += self.active as u64;
        self.active_max = self.active_max.max(self.active);
        self.active = 0;
        self.in_window = 0;
        self.window_id += 1;
    }

    /// Mean active rules per window (a partial window counts when no window completed).
    pub fn mean_active(&self) -> f64 {
        if self.windows > 0 {
            self.active_sum as f64 / self.windows as f64
        } else {
            self.active as f64
        }
    }

    /// Largest active set in a window (the partial window counts when no window completed).
    pub fn max_active(&self) -> u32 {
        if self.windows > 0 {
            self.active_max
        } else {
            self.active
        }
    }

    /// Mean lookup position.
    pub fn mean_position(&self) -> f64 {
        self.position_sum as f64 / self.packets.max(1) as f64
    }

    /// Mean chain levels per lookup.
    pub fn mean_chain(&self) -> f64 {
        self.chain_sum as f64 / self.packets.max(1) as f64
    }

    /// Distinct rules matched over the whole run.
    pub fn distinct_rules(&self) -> usize {
        self.matches.iter().filter(|&&c| c > 0).count()
    }
}

/// Where workers deliver their statistics when they are dropped (the core runner owns and
/// drops workers inside its threads).
#[derive(Clone, Default)]
pub struct StatsSink(Arc<Mutex<Vec<Option<WorkerStats>>>>);

impl StatsSink {
    /// A sink for `k` workers.
    pub fn new(k: usize) -> Self {
        Self(Arc::new(Mutex::new(vec![None; k])))
    }

    /// Stores worker `i`'s statistics (a later delivery replaces an earlier one).
    pub fn deliver(&self, i: usize, stats: WorkerStats) {
        let mut v = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if i < v.len() {
            v[i] = Some(stats);
        }
    }

    /// The delivered statistics, per worker.
    pub fn take(&self) -> Vec<Option<WorkerStats>> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// A worker's statistics and the sink they go to when the worker is dropped (the one place
/// every classifier keeps them); records nothing when no sink was asked for.
pub struct StatsRecorder {
    stats: Option<WorkerStats>,
    sink: Option<(StatsSink, usize)>,
    window: usize,
}

impl StatsRecorder {
    /// Statistics over `rules` rules with an active-rule window of `window` packets, delivered
    /// to `sink` (worker index included) on drop; none without a sink.
    pub fn new(sink: Option<(StatsSink, usize)>, rules: usize, window: usize) -> Self {
        let stats = sink.as_ref().map(|_| WorkerStats::new(rules, window));
        Self { stats, sink, window }
    }

    /// Records one lookup.
    #[inline]
    pub fn record(&mut self, lookup: &Lookup) {
        if let Some(s) = self.stats.as_mut() {
            s.record(lookup);
        }
    }

    /// Follows a new rule set of `rules` rules (per-rule counts start again).
    pub fn resize(&mut self, rules: usize) {
        if let Some(s) = self.stats.as_mut() {
            s.resize(rules, self.window);
        }
    }
}

impl Drop for StatsRecorder {
    fn drop(&mut self) {
        if let (Some((sink, i)), Some(stats)) = (self.sink.take(), self.stats.take()) {
            sink.deliver(i, stats);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Action;

    #[test]
    fn windows_and_histograms() {
        let mut s = WorkerStats::new(4, 3);
        let l = |rule: Option<u32>, position: u32, chain: u32| Lookup {
            rule,
            action: Action::Accept,
            work: 1,
            position,
            chain,
            moved: 2,
        };
        for x in
            [l(Some(0), 0, 1), l(Some(1), 1, 1), l(Some(0), 0, 1), l(Some(2), 5, 3), l(None, 4, 0), l(Some(2), 0, 1)]
        {
            s.record(&x);
        }
        assert_eq!((s.windows, s.active_sum, s.active_max), (2, 3, 2));
        assert_eq!(s.mean_active(), 1.5);
        assert_eq!(s.position_hist[0], 3);
        assert_eq!(s.position_hist[3], 2, "positions 4 and 5");
        assert_eq!(s.default_hits, 1);
        assert_eq!(s.moved, 12);
        assert_eq!(s.distinct_rules(), 3);
        let sink = StatsSink::new(2);
        sink.deliver(1, s.clone());
        assert_eq!(sink.take()[1].as_ref(), Some(&s));
    }
}
