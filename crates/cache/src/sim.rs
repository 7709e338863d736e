//! The delayed-hits simulator (thesis §2.3.2): discrete time, one request per step. A miss
//! costs Z and starts a fetch that fills Z steps later; a request t steps after an outstanding
//! miss on the same object costs Z − t (a delayed hit); a true hit costs 0. Fills arrive at the
//! start of their step, before that step's request; an object is admitted only when its fill
//! arrives, and evicted then or, for policies that ask, at the start of any step (Eq. 2.6).
//!
//! [`Timing::Classical`] is the textbook model the thesis contrasts it with: a fill completes
//! before the next request, so there are no delayed hits and latency is Z per miss. Its miss rate
//! gives the AMAT estimate of Eq. 2.1 that the true latency is compared against (§2.2.1).

use crate::policy::{EvictionPolicy, Outcome};
use crate::trace::MissLatency;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// When a fill arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// Z steps after the miss: delayed hits happen.
    Delayed,
    /// At the next step: the classical model without delayed hits.
    Classical,
}

/// Counts and summed latency of one simulation (kind: simulated).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SimReport {
    /// Requests simulated.
    pub requests: u64,
    /// True hits (latency 0).
    pub hits: u64,
    /// Delayed hits (latency between 0 and Z).
    pub delayed_hits: u64,
    /// Misses (latency Z).
    pub misses: u64,
    /// Summed latency in request-times.
    pub latency: u64,
}

impl SimReport {
    fn rate(&self, n: u64) -> f64 {
        n as f64 / self.requests.max(1) as f64
    }

    /// Mean latency per request, in request-times.
    pub fn mean_latency(&self) -> f64 {
        self.rate(self.latency)
    }

    /// True hits per request.
    pub fn hit_rate(&self) -> f64 {
        self.rate(self.hits)
    }

    /// Delayed hits per request.
    pub fn delayed_hit_rate(&self) -> f64 {
        self.rate(self.delayed_hits)
    }

    /// Misses per request.
    pub fn miss_rate(&self) -> f64 {
        self.rate(self.misses)
    }
}

const NO_FILL: u64 = u64::MAX;

/// Fills in flight, earliest first (ties by object id, so runs are deterministic).
enum Fills {
    /// Every fill takes the same time: they complete in the order they started.
    Fifo(VecDeque<(u64, u32)>),
    /// Per-object Z: fills complete out of order.
    Heap(BinaryHeap<Reverse<(u64, u32)>>),
}

impl Fills {
    fn push(&mut self, at: u64, object: u32) {
        match self {
            Fills::Fifo(q) => q.push_back((at, object)),
            Fills::Heap(h) => h.push(Reverse((at, object))),
        }
    }

    #[inline]
    fn pop_due(&mut self, now: u64) -> Option<u32> {
        match self {
            Fills::Fifo(q) => match q.front() {
                Some(&(at, o)) if at <= now => {
                    q.pop_front();
                    Some(o)
                }
                _ => None,
            },
            Fills::Heap(h) => match h.peek() {
                Some(&Reverse((at, o))) if at <= now => {
                    h.pop();
                    Some(o)
                }
                _ => None,
            },
        }
    }
}

/// Runs `policy` over `requests` with a cache of `capacity` objects. A run that Ctrl-C stops
/// (`superlinear_core::cancel`) ends early with `requests` counting the requests it simulated.
///
/// # Panics
/// If `capacity` is 0 or the policy breaks the model (evicts an object that is not cached,
/// overfills the cache): both are programming errors, not input errors.
pub fn simulate<P: EvictionPolicy + ?Sized>(
    requests: &[u32],
    objects: usize,
    z: &MissLatency,
    capacity: usize,
    policy: &mut P,
    timing: Timing,
) -> SimReport {
    assert!(capacity >= 1, "cache capacity must be at least 1");
    let mut cached = vec![false; objects];
    let mut fill_at = vec![NO_FILL; objects];
    let mut fills = if timing == Timing::Classical || z.is_uniform() {
        Fills::Fifo(VecDeque::new())
    } else {
        Fills::Heap(BinaryHeap::new())
    };
    let mut len = 0usize;
    let mut evict = Vec::new();
    let any_time = policy.evicts_any_time();
    let mut r = SimReport { requests: requests.len() as u64, ..SimReport::default() };
    for (t, &object) in requests.iter().enumerate() {
        // Ctrl-C: the report then counts the requests simulated, and the callers that hand it on
        // return `interrupted` instead.
        if t % 65_536 == 0 && superlinear_core::cancel::requested() {
            r.requests = t as u64;
            break;
        }
        let now = t as u64;
        if any_time {
            evict.clear();
            policy.on_step(now, &mut evict);
            for &v in &evict {
                assert!(cached[v as usize], "policy evicted object {v}, which is not cached");
                cached[v as usize] = false;
                len -= 1;
            }
        }
        while let Some(f) = fills.pop_due(now) {
            fill_at[f as usize] = NO_FILL;
            evict.clear();
            let admit = policy.on_fill(f, now, len == capacity, &mut evict);
            for &v in &evict {
                assert!(v != f && cached[v as usize], "policy evicted object {v}, which is not cached");
                cached[v as usize] = false;
                len -= 1;
            }
            if admit {
                assert!(len < capacity, "policy admitted object {f} into a full cache");
                cached[f as usize] = true;
                len += 1;
            }
        }
        let o = object as usize;
        let outcome = if cached[o] {
            r.hits += 1;
            Outcome::Hit
        } else if fill_at[o] != NO_FILL {
            r.delayed_hits += 1;
            r.latency += fill_at[o] - now;
            Outcome::DelayedHit
        } else {
            let zo = z.of(object);
            r.misses += 1;
            r.latency += zo;
            let at = now + if timing == Timing::Delayed { zo } else { 1 };
            fill_at[o] = at;
            fills.push(at, object);
            Outcome::Miss
        };
        policy.on_request(object, now, outcome);
    }
    r
}
