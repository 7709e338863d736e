//! Bélády-AggregateDelay (§2.5.1), the offline proxy for latency-optimal caching: rank each
//! object by the aggregate delay its next request would cost as a miss (Eq. 2.13) over the time
//! until that request (Eq. 2.45); of the cached objects and the arriving one, the lowest rank
//! does not stay. Objects never requested again rank 0. Ranks change with time, so the victim is
//! found by a scan over the cache.

use super::members::Members;
use crate::future::{Future, NextRequests, NEVER};
use crate::policy::{EvictionPolicy, Outcome, PolicyContext};
use std::cmp::Reverse;
use superlinear_core::mad::Rank;

/// Bélády-AD with bypass.
pub struct BeladyAd {
    future: Future,
    next: NextRequests,
    cached: Members,
}

impl BeladyAd {
    /// Reads the whole future of the trace.
    pub fn new(ctx: &PolicyContext<'_>) -> Self {
        let future = Future::new(ctx.requests, ctx.objects, ctx.z);
        let next = NextRequests::new(&future, ctx.objects);
        Self { future, next, cached: Members::new(ctx.objects) }
    }

    /// Eq. 2.45 for `object` at `now`: AggregateDelay(next request) / TTNA.
    pub fn rank(&self, object: u32, now: u64) -> Rank {
        match self.next.of(object) {
            NEVER => Rank::ZERO,
            j => Rank::new(self.future.aggregate_delay(j), j - now),
        }
    }

    /// Lowest rank first; among equals the later next request, then the lower id.
    fn order(&self, object: u32, now: u64) -> (Rank, Reverse<u64>, u32) {
        (self.rank(object, now), Reverse(self.next.of(object)), object)
    }
}

impl EvictionPolicy for BeladyAd {
    fn on_request(&mut self, object: u32, now: u64, _outcome: Outcome) {
        self.next.advance(&self.future, object, now);
    }

    fn on_fill(&mut self, object: u32, now: u64, full: bool, evict: &mut Vec<u32>) -> bool {
        if !full {
            self.cached.insert(object);
            return true;
        }
        let victim = self
            .cached
            .as_slice()
            .iter()
            .copied()
            .chain(std::iter::once(object))
            .min_by_key(|&o| self.order(o, now))
            .expect("candidates include the arriving object");
        if victim == object {
            return false;
        }
        self.cached.remove(victim);
        self.cached.insert(object);
        evict.push(victim);
        true
    }
}
