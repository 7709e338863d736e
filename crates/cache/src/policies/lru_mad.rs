//! LRU-MAD (thesis §2.5.2): rank = estimated aggregate delay (Algorithm 1) / estimated time to
//! next access, with LRU's estimate of the latter, the time since the last access; evict the
//! lowest rank over the whole cache, always admit. The ranking and the victim scan are
//! `superlinear_core::mad`, the same code as the engine's `lru-mad` worker.

use super::mad_table::MadTable;
use crate::policy::{EvictionPolicy, Outcome, PolicyContext};
use superlinear_core::mad::recency_victim;

const ABSENT: u32 = u32::MAX;

/// LRU with MINIMUM-AGGREGATE-DELAY ranking.
pub struct LruMad {
    table: MadTable,
    /// Cached objects and, in parallel, their last access and inverse delay (scan arrays).
    cached: Vec<u32>,
    last: Vec<f64>,
    inverse_delay: Vec<f64>,
    /// Position of each object in the arrays, or [`ABSENT`].
    position: Vec<u32>,
}

impl LruMad {
    /// An empty cache.
    pub fn new(ctx: &PolicyContext<'_>) -> Self {
        Self {
            table: MadTable::new(ctx.objects, ctx.z),
            cached: Vec::with_capacity(ctx.capacity),
            last: Vec::with_capacity(ctx.capacity),
            inverse_delay: Vec::with_capacity(ctx.capacity),
            position: vec![ABSENT; ctx.objects],
        }
    }

    fn mirror(&mut self, object: u32) {
        let p = self.position[object as usize] as usize;
        let r = self.table.get(object);
        self.last[p] = r.last_access as f64;
        self.inverse_delay[p] = r.inverse_delay();
    }
}

impl EvictionPolicy for LruMad {
    fn on_request(&mut self, object: u32, now: u64, outcome: Outcome) {
        self.table.on_request(object, now);
        if outcome == Outcome::Hit {
            self.mirror(object);
        }
    }

    fn on_fill(&mut self, object: u32, now: u64, full: bool, evict: &mut Vec<u32>) -> bool {
        if full {
            let p = recency_victim(now, &self.last, &self.inverse_delay).expect("a full cache has members");
            let v = self.cached[p];
            // The arriving object takes the victim's place in the arrays.
            self.position[v as usize] = ABSENT;
            self.cached[p] = object;
            self.position[object as usize] = p as u32;
            evict.push(v);
        } else {
            self.position[object as usize] = self.cached.len() as u32;
            self.cached.push(object);
            self.last.push(0.0);
            self.inverse_delay.push(0.0);
        }
        self.mirror(object);
        true
    }
}
