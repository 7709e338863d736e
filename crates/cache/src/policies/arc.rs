//! ARC (Megiddo and Modha, FAST 2003): two recency lists, T1 (seen once) and T2 (seen at least
//! twice), with ghost lists B1 and B2 of recently evicted ids that steer the target size p of T1.
//!
//! In the delayed-hits model an object enters the cache only when its fill arrives, so ARC's
//! miss handling (ghost hits, adapting p, REPLACE) runs at the fill; a fill whose window saw
//! more than one request (miss plus delayed hits) enters T2, like the thesis' simulator. Which
//! entry of the chosen list leaves is a [`ListVictim`]: the least recent for ARC, the lowest MAD
//! rank for ARC-MAD.

use super::lists::Lists;
use crate::policy::{EvictionPolicy, Outcome, PolicyContext};

const T1: usize = 0;
const T2: usize = 1;
const B1: usize = 2;
const B2: usize = 3;

/// Chooses the entry of list T1 or T2 that REPLACE evicts.
pub trait ListVictim {
    /// Sees every request (for estimators).
    fn on_request(&mut self, object: u32, now: u64);
    /// The victim among the entries of list `list` (not empty).
    fn pick(&self, lists: &Lists<4>, list: usize, now: u64) -> u32;
}

/// ARC's own choice: the least recent entry.
pub struct LeastRecent;

impl ListVictim for LeastRecent {
    fn on_request(&mut self, _object: u32, _now: u64) {}

    fn pick(&self, lists: &Lists<4>, list: usize, _now: u64) -> u32 {
        lists.back(list).expect("REPLACE picks from a non-empty list")
    }
}

/// Adaptive replacement cache with a pluggable in-list victim.
pub struct ArcCache<V: ListVictim> {
    lists: Lists<4>,
    capacity: usize,
    /// Target size of T1.
    p: usize,
    /// Requests (miss plus delayed hits) of each object since its fetch started.
    window_requests: Vec<u32>,
    victim: V,
}

/// Plain ARC.
pub type Arc = ArcCache<LeastRecent>;

impl Arc {
    /// An empty cache.
    pub fn new(ctx: &PolicyContext<'_>) -> Self {
        ArcCache::with_victim(ctx, LeastRecent)
    }
}

impl<V: ListVictim> ArcCache<V> {
    /// An empty cache evicting within a list by `victim`.
    pub fn with_victim(ctx: &PolicyContext<'_>, victim: V) -> Self {
        Self {
            lists: Lists::new(ctx.objects),
            capacity: ctx.capacity,
            p: 0,
            window_requests: vec![0; ctx.objects],
            victim,
        }
    }

    /// REPLACE(x, p): moves a victim from T1 or T2 to its ghost list; returns it.
    fn replace(&mut self, in_b2: bool, now: u64) -> u32 {
        let t1 = self.lists.len(T1);
        let (from, ghost) = if t1 >= 1 && (t1 > self.p || (in_b2 && t1 == self.p)) { (T1, B1) } else { (T2, B2) };
        let v = self.victim.pick(&self.lists, from, now);
        self.lists.push_front(ghost, v);
        v
    }

    fn cached(&self) -> usize {
        self.lists.len(T1) + self.lists.len(T2)
    }
}

impl<V: ListVictim> EvictionPolicy for ArcCache<V> {
    fn on_request(&mut self, object: u32, now: u64, outcome: Outcome) {
        self.victim.on_request(object, now);
        if outcome == Outcome::Hit {
            self.lists.push_front(T2, object);
        } else {
            self.window_requests[object as usize] += 1;
        }
    }

    fn on_fill(&mut self, object: u32, now: u64, full: bool, evict: &mut Vec<u32>) -> bool {
        let requests = std::mem::take(&mut self.window_requests[object as usize]);
        let c = self.capacity;
        let (b1, b2) = (self.lists.len(B1), self.lists.len(B2));
        let mut evicted = None;
        let target = match self.lists.list_of(object) {
            Some(B1) => {
                let delta = if b1 >= b2 { 1 } else { (b2 as f64 / b1 as f64).round() as usize };
                self.p = (self.p + delta).min(c);
                evicted = Some(self.replace(false, now));
                T2
            }
            Some(B2) => {
                let delta = if b2 >= b1 { 1 } else { (b1 as f64 / b2 as f64).round() as usize };
                self.p = self.p.saturating_sub(delta);
                evicted = Some(self.replace(true, now));
                T2
            }
            _ => {
                let t1 = self.lists.len(T1);
                if t1 + b1 == c {
                    if t1 < c {
                        let old = self.lists.back(B1).expect("|B1| = c - |T1| > 0");
                        self.lists.remove(old);
                        evicted = Some(self.replace(false, now));
                    } else {
                        let v = self.victim.pick(&self.lists, T1, now);
                        self.lists.remove(v);
                        evicted = Some(v);
                    }
                } else if self.cached() + b1 + b2 >= c {
                    if self.cached() + b1 + b2 == 2 * c {
                        let old = self.lists.back(B2).expect("the directory is full, so B2 is not empty");
                        self.lists.remove(old);
                    }
                    evicted = Some(self.replace(false, now));
                }
                if requests > 1 {
                    T2
                } else {
                    T1
                }
            }
        };
        // ARC evicts exactly when the cache is full (its directory invariants guarantee it).
        debug_assert_eq!(evicted.is_some(), full, "ARC's REPLACE and the cache disagree on fullness");
        self.lists.push_front(target, object);
        evict.extend(evicted);
        true
    }
}
