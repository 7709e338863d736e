//! LFU-MAD: MAD's rank (Eq. 2.45) with LFU's estimate of the time to next access, which is
//! inversely proportional to the request count: rank = estimated aggregate delay × count.
//! Evict the lowest rank (the least recently requested among equals); always admit.

use super::mad_table::MadTable;
use crate::policy::{EvictionPolicy, Outcome, PolicyContext};
use std::collections::BTreeSet;
use superlinear_core::mad::Rank;

/// LFU with MINIMUM-AGGREGATE-DELAY ranking.
pub struct LfuMad {
    table: MadTable,
    count: Vec<u64>,
    /// Cached objects by (rank, last request, id), lowest first.
    order: BTreeSet<(Rank, u64, u32)>,
}

impl LfuMad {
    /// An empty cache.
    pub fn new(ctx: &PolicyContext<'_>) -> Self {
        Self { table: MadTable::new(ctx.objects, ctx.z), count: vec![0; ctx.objects], order: BTreeSet::new() }
    }

    fn key(&self, object: u32) -> (Rank, u64, u32) {
        let r = self.table.get(object);
        let rank =
            Rank::ratio(r.delay.cumulative() as u128 * self.count[object as usize] as u128, r.delay.windows() as u128);
        (rank, r.last_access, object)
    }
}

impl EvictionPolicy for LfuMad {
    fn on_request(&mut self, object: u32, now: u64, outcome: Outcome) {
        let cached = outcome == Outcome::Hit && self.order.remove(&self.key(object));
        self.count[object as usize] += 1;
        self.table.on_request(object, now);
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
