//! ARC-MAD: ARC decides which list gives up an entry (its adaptation untouched); within that
//! list the lowest MAD rank leaves (aggregate-delay estimate over time since the last access),
//! as in the thesis' ARC-MAD (§2.6.3).

use super::arc::{ArcCache, ListVictim};
use super::lists::Lists;
use super::mad_table::MadTable;
use crate::policy::PolicyContext;
use superlinear_core::mad::recency_victim;

/// The lowest MAD rank of a list.
pub struct LowestRank {
    table: MadTable,
}

impl ListVictim for LowestRank {
    fn on_request(&mut self, object: u32, now: u64) {
        self.table.on_request(object, now);
    }

    fn pick(&self, lists: &Lists<4>, list: usize, now: u64) -> u32 {
        let members: Vec<u32> = lists.iter(list).collect();
        let last: Vec<f64> = members.iter().map(|&o| self.table.get(o).last_access as f64).collect();
        let inverse: Vec<f64> = members.iter().map(|&o| self.table.get(o).inverse_delay()).collect();
        members[recency_victim(now, &last, &inverse).expect("REPLACE picks from a non-empty list")]
    }
}

/// ARC with MINIMUM-AGGREGATE-DELAY ranking inside its lists.
pub type ArcMad = ArcCache<LowestRank>;

/// An empty ARC-MAD cache.
pub fn arc_mad(ctx: &PolicyContext<'_>) -> ArcMad {
    ArcCache::with_victim(ctx, LowestRank { table: MadTable::new(ctx.objects, ctx.z) })
}
