//! LFU: evict the cached object requested least often so far (every request counts, cached or
//! not), the least recently requested among equals; always admit.

use crate::policy::{EvictionPolicy, Outcome, PolicyContext};
use std::collections::BTreeSet;

/// Least frequently used.
pub struct Lfu {
    count: Vec<u64>,
    last: Vec<u64>,
    /// Cached objects by (count, last request, id), lowest first.
    order: BTreeSet<(u64, u64, u32)>,
}

impl Lfu {
    /// An empty cache.
    pub fn new(ctx: &PolicyContext<'_>) -> Self {
        Self { count: vec![0; ctx.objects], last: vec![0; ctx.objects], order: BTreeSet::new() }
    }

    fn key(&self, object: u32) -> (u64, u64, u32) {
        (self.count[object as usize], self.last[object as usize], object)
    }
}

impl EvictionPolicy for Lfu {
    fn on_request(&mut self, object: u32, now: u64, outcome: Outcome) {
        let cached = outcome == Outcome::Hit && self.order.remove(&self.key(object));
        self.count[object as usize] += 1;
        self.last[object as usize] = now;
        if cached {
            self.order.insert(self.key(object));
        }
    }

    fn on_fill(&mut self, object: u32, _now: u64, full: bool, evict: &mut Vec<u32>) -> bool {
        if full {
            let (_, _, v) = self.order.pop_first().expect("a full cache has members");
            evict.push(v);
        }
        self.order.insert(self.key(object));
        true
    }
}
