//! LRU-MAD (thesis §2.5.2): rank = estimated aggregate delay (Algorithm 1) / estimated time to
//! next access, with LRU's estimate of the latter, the time since the last access; evict the
//! lowest rank over the whole cache, always admit. The ranking is `superlinear_core::mad`, the
//! same code as the engine's `lru-mad` worker.

use super::mad_table::MadTable;
use super::members::Members;
use crate::policy::{EvictionPolicy, Outcome, PolicyContext};

/// LRU with MINIMUM-AGGREGATE-DELAY ranking.
pub struct LruMad {
    table: MadTable,
    cached: Members,
}

impl LruMad {
    /// An empty cache.
    pub fn new(ctx: &PolicyContext<'_>) -> Self {
        Self { table: MadTable::new(ctx.objects, ctx.z), cached: Members::new(ctx.objects) }
    }
}

impl EvictionPolicy for LruMad {
    fn on_request(&mut self, object: u32, now: u64, _outcome: Outcome) {
        self.table.on_request(object, now);
    }

    fn on_fill(&mut self, object: u32, now: u64, full: bool, evict: &mut Vec<u32>) -> bool {
        if full {
            let table = &self.table;
            let v = self.cached.as_slice().iter().copied().min_by_key(|&o| table.get(o).eviction_order(now));
            let v = v.expect("a full cache has members");
            self.cached.remove(v);
            evict.push(v);
        }
        self.cached.insert(object);
        true
    }
}
