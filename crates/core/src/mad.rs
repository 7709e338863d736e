//! MINIMUM-AGGREGATE-DELAY (MAD) ranking: the one copy of the thesis' delayed-hits estimator
//! (ch. 2, Algorithm 1) and of its rank (Eq. 2.45), shared by the engine's `lru-mad` worker and
//! by the eviction policies of `superlinear-cache`.
//!
//! With a fetch latency of Z request-times, a miss on an object delays every request for it that
//! arrives in the next Z steps (delayed hits). The *aggregate delay* of a miss is the delay of the
//! miss plus that of its delayed hits (Eq. 2.13). MAD keeps an object when its aggregate delay per
//! unit of cache time, `AggregateDelay / TTNA`, is high, and evicts the lowest rank.

use std::cmp::Ordering;

/// Algorithm 1: an online estimate of an object's aggregate delay, assuming every past request
/// that opened a new Z-window was a miss and averaging the delay over those windows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AggregateDelay {
    windows: u64,
    cumulative: u64,
    window_start: u64,
}

impl AggregateDelay {
    /// No request seen yet (`NumWindows = 0`, `WindowStartIdx = -inf`).
    pub const fn new() -> Self {
        Self { windows: 0, cumulative: 0, window_start: 0 }
    }

    /// ONACCESS(now, X): a request `TSSW` steps after the start of the current window costs
    /// `Z - TSSW` if it falls inside it, or opens a new window (a presumed miss) costing Z.
    #[inline]
    pub fn on_access(&mut self, now: u64, z: u64) {
        let since_window = now.wrapping_sub(self.window_start);
        if self.windows == 0 || since_window >= z {
            self.windows += 1;
            self.cumulative += z;
            self.window_start = now;
        } else {
            self.cumulative += z - since_window;
        }
    }

    /// Windows opened so far (`NumWindows`).
    pub fn windows(&self) -> u64 {
        self.windows
    }

    /// Summed delay over all windows (`CumulativeDelay`).
    pub fn cumulative(&self) -> u64 {
        self.cumulative
    }

    /// ESTIMATEAGGREGATEDELAY: mean delay per window; `None` before the first request.
    pub fn estimate(&self) -> Option<f64> {
        (self.windows > 0).then(|| self.cumulative as f64 / self.windows as f64)
    }

    /// Eq. 2.45 with the estimate: `(CumulativeDelay / NumWindows) / ttna`, exactly.
    #[inline]
    pub fn rank(&self, ttna: u64) -> Rank {
        if self.windows == 0 {
            return Rank::ZERO;
        }
        Rank::ratio(self.cumulative as u128, self.windows as u128 * ttna as u128)
    }
}

/// A MAD rank `delay / time` held as an exact fraction, so that equal ranks compare equal and
/// the eviction order never depends on rounding. `time = 0` is an infinite rank (an object
/// requested right now is never the victim).
#[derive(Clone, Copy, Debug)]
pub struct Rank {
    delay: u128,
    time: u128,
}

impl Rank {
    /// The rank of an object with no delay to save (never requested again): evicted first.
    pub const ZERO: Rank = Rank { delay: 0, time: 1 };

    /// Eq. 2.45: `aggregate_delay / ttna`.
    pub fn new(aggregate_delay: u64, ttna: u64) -> Self {
        Self::ratio(aggregate_delay as u128, ttna as u128)
    }

    /// `delay / time` for any scaled numerator and denominator.
    pub fn ratio(delay: u128, time: u128) -> Self {
        Self { delay, time }
    }

    /// The rank as a number (infinite for `time = 0`); for reports, not for ordering.
    pub fn value(&self) -> f64 {
        match self.class() {
            0 => 0.0,
            2 => f64::INFINITY,
            _ => self.delay as f64 / self.time as f64,
        }
    }
}

impl PartialEq for Rank {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Rank {}

impl PartialOrd for Rank {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Rank {
    /// a/b against c/d as a·d against c·b; products beyond u128 (far outside any trace this
    /// project reads) fall back to floating point.
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.class(), other.class()) {
            (1, 1) => match (self.delay.checked_mul(other.time), other.delay.checked_mul(self.time)) {
                (Some(a), Some(b)) => a.cmp(&b),
                _ => self.value().total_cmp(&other.value()),
            },
            (a, b) => a.cmp(&b),
        }
    }
}

impl Rank {
    /// 0: no delay (zero rank), 1: finite and positive, 2: infinite.
    fn class(&self) -> u8 {
        match (self.delay, self.time) {
            (0, _) => 0,
            (_, 0) => 2,
            _ => 1,
        }
    }
}

/// Per-object state of recency-based MAD (LRU-MAD, ARC-MAD): the last request and the
/// aggregate-delay estimate. LRU's estimate of the time to next access is the time since the
/// last one, as in the thesis' LRU-MAD (§2.5.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MadRecord {
    /// Time of the last request.
    pub last_access: u64,
    /// Algorithm 1's estimator.
    pub delay: AggregateDelay,
}

impl MadRecord {
    /// Records a request at `now` for an object whose fetches take `z` steps.
    #[inline]
    pub fn on_access(&mut self, now: u64, z: u64) {
        self.delay.on_access(now, z);
        self.last_access = now;
    }

    /// Eq. 2.45 with recency as the TTNA estimate: `estimate / (now - last_access)`.
    #[inline]
    pub fn recency_rank(&self, now: u64) -> Rank {
        self.delay.rank(now.saturating_sub(self.last_access))
    }

    /// The eviction order of recency-based MAD, lowest first: the rank, then the older last
    /// access (distinct for distinct objects), so the victim never depends on scan order.
    #[inline]
    pub fn eviction_order(&self, now: u64) -> (Rank, u64) {
        (self.recency_rank(now), self.last_access)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algorithm_1_windows_and_cumulative_delay() {
        // Z = 10: requests at 3, 5 and 11 fall into one window (3 + 10 > 11): 10 + 8 + 2.
        let mut d = AggregateDelay::new();
        for t in [3, 5, 11] {
            d.on_access(t, 10);
        }
        assert_eq!((d.windows(), d.cumulative()), (1, 20));
        // 13 is exactly Z after the window start: a new window.
        d.on_access(13, 10);
        assert_eq!((d.windows(), d.cumulative()), (2, 30));
        assert_eq!(d.estimate(), Some(15.0));
        // With Z = 1 every request opens its own window: the estimate is 1.
        let mut one = AggregateDelay::new();
        for t in [0, 1, 2, 7] {
            one.on_access(t, 1);
        }
        assert_eq!(one.estimate(), Some(1.0));
        assert_eq!(AggregateDelay::new().estimate(), None);
    }

    #[test]
    fn first_request_at_time_zero_opens_a_window() {
        let mut d = AggregateDelay::new();
        d.on_access(0, 5);
        d.on_access(1, 5);
        assert_eq!((d.windows(), d.cumulative()), (1, 9));
    }

    #[test]
    fn figure_2_15_ranks() {
        // A: aggregate delay 6, next access in 100 steps; B: 5 in 10 steps. B ranks higher.
        let a = Rank::new(6, 100);
        let b = Rank::new(5, 10);
        assert!((a.value() - 0.06).abs() < 1e-12 && (b.value() - 0.5).abs() < 1e-12);
        assert!(a < b);
    }

    #[test]
    fn exact_ordering_and_infinities() {
        assert_eq!(Rank::new(1, 3), Rank::ratio(2, 6));
        assert!(Rank::new(1, 3) > Rank::ratio(333_333, 1_000_000));
        let now = Rank::new(4, 0);
        assert!(now > Rank::new(u64::MAX, 1));
        assert_eq!(now, Rank::new(9, 0));
        assert!(Rank::ZERO < Rank::new(1, u64::MAX));
        assert!(Rank::new(1, u64::MAX) < now);
        assert_eq!(Rank::ZERO, Rank::new(0, 5));
        assert!(Rank::ZERO < now);
    }

    #[test]
    fn recency_rank_divides_by_time_since_last_access() {
        let mut r = MadRecord::default();
        r.on_access(10, 4);
        r.on_access(11, 4); // same window: 4 + 3
        assert_eq!(r.recency_rank(21), Rank::new(7, 10));
        // Equal ranks: the older object goes first.
        let mut old = MadRecord::default();
        old.on_access(1, 4);
        let mut young = MadRecord::default();
        young.on_access(3, 4);
        young.on_access(4, 4); // 4 + 3 = 7 over one window, rank 7 / (now - 4)
        let now = 25; // old: 4 / 24 = 1/6; young: 7 / 21 = 1/3
        assert!(old.eviction_order(now) < young.eviction_order(now));
        let mut twin = MadRecord::default();
        twin.on_access(13, 4); // 4 / 12 = 1/3 as well, but accessed after young
        assert_eq!(twin.recency_rank(now), young.recency_rank(now));
        assert!(young.eviction_order(now) < twin.eviction_order(now));
    }
}
