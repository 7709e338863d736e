//! LRU: evict the least recently used object; always admit.

use super::lists::Lists;
use crate::policy::{EvictionPolicy, Outcome, PolicyContext};

/// Least recently used.
pub struct Lru {
    order: Lists<1>,
}

impl Lru {
    /// An empty cache.
    pub fn new(ctx: &PolicyContext<'_>) -> Self {
        Self { order: Lists::new(ctx.objects) }
    }
}

impl EvictionPolicy for Lru {
    fn on_request(&mut self, object: u32, _now: u64, outcome: Outcome) {
        if outcome == Outcome::Hit {
            self.order.push_front(0, object);
        }
    }

    fn on_fill(&mut self, object: u32, _now: u64, full: bool, evict: &mut Vec<u32>) -> bool {
        if let Some(v) = self.order.back(0).filter(|_| full) {
            self.order.remove(v);
            evict.push(v);
        }
        self.order.push_front(0, object);
        true
    }
}
