//! Bélády's offline algorithm, hit-rate optimal without delayed hits (§2.2.2): of the cached
//! objects and the arriving one, the one requested farthest in the future does not stay (the
//! arriving one is then not admitted). A lazy max-heap keyed by next request: an entry is stale
//! once its object was evicted or requested again.

use crate::future::{Future, NextRequests};
use crate::policy::{EvictionPolicy, Outcome, PolicyContext};
use std::collections::BinaryHeap;

/// Bélády (MIN / OPT) with bypass.
pub struct Belady {
    future: Future,
    next: NextRequests,
    cached: Vec<bool>,
    heap: BinaryHeap<(u64, u32)>,
}

impl Belady {
    /// Reads the whole future of the trace.
    pub fn new(ctx: &PolicyContext<'_>) -> Self {
        let future = Future::new(ctx.requests, ctx.objects, ctx.z);
        let next = NextRequests::new(&future, ctx.objects);
        Self { future, next, cached: vec![false; ctx.objects], heap: BinaryHeap::new() }
    }

    /// The cached object requested farthest in the future, with that time.
    fn farthest(&mut self) -> (u64, u32) {
        loop {
            let &(n, o) = self.heap.peek().expect("a full cache has entries");
            if self.cached[o as usize] && self.next.of(o) == n {
                return (n, o);
            }
            self.heap.pop();
        }
    }

    fn admit(&mut self, object: u32) {
        self.cached[object as usize] = true;
        self.heap.push((self.next.of(object), object));
    }
}

impl EvictionPolicy for Belady {
    fn on_request(&mut self, object: u32, now: u64, outcome: Outcome) {
        self.next.advance(&self.future, object, now);
        if outcome == Outcome::Hit {
            self.heap.push((self.next.of(object), object));
        }
    }

    fn on_fill(&mut self, object: u32, _now: u64, full: bool, evict: &mut Vec<u32>) -> bool {
        if full {
            let (n, victim) = self.farthest();
            if self.next.of(object) >= n {
                return false;
            }
            self.heap.pop();
            self.cached[victim as usize] = false;
            evict.push(victim);
        }
        self.admit(object);
        true
    }
}
