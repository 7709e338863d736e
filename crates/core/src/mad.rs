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

    /// The reciprocal of the estimate, `NumWindows / CumulativeDelay` (infinite before the
    /// first request): what [`recency_victim`] scans.
    #[inline]
    pub fn inverse_delay(&self) -> f64 {
        if self.delay.cumulative == 0 {
            f64::INFINITY
        } else {
            self.delay.windows as f64 / self.delay.cumulative as f64
        }
    }
}

/// Recency-based MAD's victim (LRU-MAD, ARC-MAD): of candidates given as parallel arrays of
/// last access times and [inverse delays](MadRecord::inverse_delay), the one with the lowest
/// rank, i.e. the largest `(now - last) * inverse_delay`; ties go to the older last access
/// (distinct for distinct objects), so the victim never depends on the order of the arrays.
///
/// Eviction scans the whole cache, as the thesis' prototype scans a cache set (§2.6.2); the scan
/// runs in eight independent lanes over plain `f64` arrays so the compiler vectorises it.
pub fn recency_victim(now: u64, last: &[f64], inverse_delay: &[f64]) -> Option<usize> {
    const LANES: usize = 8;
    let n = last.len().min(inverse_delay.len());
    if n == 0 {
        return None;
    }
    let now = now as f64;
    let key = |i: usize| (now - last[i]) * inverse_delay[i];
    // Pass 1: the largest key, lane by lane (a plain max the compiler turns into vector code).
    let mut lanes = [f64::NEG_INFINITY; LANES];
    let full = n - n % LANES;
    for (l, v) in last[..full].chunks_exact(LANES).zip(inverse_delay[..full].chunks_exact(LANES)) {
        for j in 0..LANES {
            let k = (now - l[j]) * v[j];
            lanes[j] = if k > lanes[j] { k } else { lanes[j] };
        }
    }
    let mut best = lanes.iter().copied().fold(f64::NEG_INFINITY, |a, b| if b > a { b } else { a });
    for i in full..n {
        let k = key(i);
        best = if k > best { k } else { best };
    }
    // Pass 2: of the entries with that key, the oldest.
    let mut at = usize::MAX;
    for (i, (&l, &v)) in last[..n].iter().zip(&inverse_delay[..n]).enumerate() {
        if (now - l) * v == best && (at == usize::MAX || l < last[at]) {
            at = i;
        }
    }
    (at != usize::MAX).then_some(at)
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
        assert!((r.inverse_delay() - 1.0 / 7.0).abs() < 1e-15);
        assert_eq!(MadRecord::default().inverse_delay(), f64::INFINITY);
    }

    #[test]
    fn victim_scan_lowest_rank_then_oldest() {
        let record = |accesses: &[u64]| {
            let mut r = MadRecord::default();
            for &t in accesses {
                r.on_access(t, 4);
            }
            r
        };
        let now = 25;
        // old: 4 / 24 = 1/6 (lowest); young: 7 / 21 = 1/3; twin: 4 / 12 = 1/3 but younger.
        let (old, young, twin) = (record(&[1]), record(&[3, 4]), record(&[13]));
        assert_eq!(twin.recency_rank(now), young.recency_rank(now));
        let scan = |rs: &[MadRecord]| {
            let last: Vec<f64> = rs.iter().map(|r| r.last_access as f64).collect();
            let inv: Vec<f64> = rs.iter().map(MadRecord::inverse_delay).collect();
            recency_victim(now, &last, &inv)
        };
        assert_eq!(scan(&[young, old, twin]), Some(1));
        assert_eq!(scan(&[twin, young]), Some(1)); // equal ranks: the older one
        assert_eq!(scan(&[young, twin]), Some(0));
        assert_eq!(scan(&[]), None);
        // More than one lane's worth, the victim in the tail and in the middle.
        let mut many: Vec<MadRecord> = (0..19).map(|i| record(&[i + 5, i + 6])).collect();
        assert_eq!(scan(&many), Some(0)); // all 7 / (25 - last): the oldest has the lowest rank
        many.push(old);
        assert_eq!(scan(&many), Some(19));
        many.swap(7, 19);
        assert_eq!(scan(&many), Some(7));
    }
}
