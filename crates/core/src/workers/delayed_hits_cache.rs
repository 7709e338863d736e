//! A cache whose misses take time to fill, serving the worker's own stream: `lru-mad:C` evicts
//! by MINIMUM-AGGREGATE-DELAY (thesis ch. 2, Algorithm 1 and Eq. 2.45, [`crate::mad`]) and
//! `lru-dh:C` by recency, its LRU baseline under the same latency model.
//!
//! Miss latency model: a miss's fill arrives Z = max(ρ, 1) of this worker's own requests later
//! (its stream brings one request per hit time and a fetch lasts ρ hit times); requests for the
//! key in between are delayed hits, admission and eviction happen when the fill arrives, and a
//! request's work (and busy time) is 1, plus ρ for a miss and the remaining wait for a delayed
//! hit, so work sums latency; with ρ ≤ 1 both workers are exactly `lru:C`.
//!
//! Cached keys sit in the preallocated slots of a [`RecencyList`]; MAD's victim
//! is the lowest-ranked slot, found by a scan of the C slots per eviction, as in the thesis'
//! prototype (§2.6.2). Aggregate-delay estimates persist for keys that are not cached.

use super::recency_list::RecencyList;
use crate::busy::{iterations_per_cycle, spin_iterations, BusyLoop};
use crate::hash::Fmix64Build;
use crate::mad::{recency_victim, MadRecord};
use crate::worker::Worker;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};

/// Which cached key makes room for a fill.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eviction {
    /// The least recently used key (`lru-dh`).
    Recency,
    /// The lowest MAD rank, aggregate delay over time since the last access (`lru-mad`).
    Mad,
}

/// Where a key stands, with its MAD record when it is not in a slot.
#[derive(Clone, Copy, Debug)]
enum KeyState {
    Cached(u32),
    Pending { fill_at: u64, record: MadRecord },
    Idle(MadRecord),
}

/// A cached key and its MAD record.
#[derive(Clone, Copy, Debug)]
struct Slot {
    key: u64,
    record: MadRecord,
}

/// A non-blocking cache with delayed hits (see the module documentation for the model).
pub struct DelayedHitsCache {
    eviction: Eviction,
    capacity: usize,
    z: u64,
    miss: BusyLoop,
    miss_cycles: u64,
    /// Requests served so far: the worker's own clock.
    now: u64,
    keys: HashMap<u64, KeyState, Fmix64Build>,
    slots: RecencyList<Slot>,
    /// Per slot, the last access and inverse delay of its record, for [`recency_victim`].
    last: Vec<f64>,
    inverse_delay: Vec<f64>,
    /// Outstanding fills in arrival order (every fill takes the same Z).
    fills: VecDeque<(u64, u64)>,
    hits: u64,
    delayed_hits: u64,
    misses: u64,
    latency: u64,
}

impl DelayedHitsCache {
    /// An empty cache of `capacity` keys whose misses cost `miss_cycles` (ρ) and fill
    /// `max(ρ, 1)` requests later.
    ///
    /// # Panics
    /// If `capacity` is 0 or does not fit the `u32` slot indices.
    pub fn new(capacity: usize, miss_cycles: u64, eviction: Eviction) -> Self {
        assert!(capacity >= 1, "a cache needs a capacity of at least 1");
        assert!(capacity < u32::MAX as usize, "capacity {capacity} too large");
        Self {
            eviction,
            capacity,
            z: miss_cycles.max(1),
            miss: BusyLoop::new(miss_cycles),
            miss_cycles,
            now: 0,
            keys: HashMap::with_capacity_and_hasher(4 * capacity, Fmix64Build),
            slots: RecencyList::with_capacity(capacity),
            last: Vec::with_capacity(capacity),
            inverse_delay: Vec::with_capacity(capacity),
            fills: VecDeque::new(),
            hits: 0,
            delayed_hits: 0,
            misses: 0,
            latency: 0,
        }
    }

    /// Z: the requests a fill takes.
    pub fn fill_latency(&self) -> u64 {
        self.z
    }

    /// True hits, delayed hits and misses so far.
    pub fn outcomes(&self) -> (u64, u64, u64) {
        (self.hits, self.delayed_hits, self.misses)
    }

    /// Summed latency in request-times (Z per miss, the remaining wait per delayed hit).
    pub fn total_latency(&self) -> u64 {
        self.latency
    }

    /// Whether `key` is cached now.
    pub fn contains(&self, key: u64) -> bool {
        matches!(self.keys.get(&key), Some(KeyState::Cached(_)))
    }

    /// The slot that makes room at time `now` (the cache is full).
    fn victim(&self, now: u64) -> u32 {
        match self.eviction {
            Eviction::Recency => self.slots.least_recent().expect("a full cache has slots"),
            Eviction::Mad => {
                recency_victim(now, &self.last, &self.inverse_delay).expect("a full cache has slots") as u32
            }
        }
    }

    /// The fill of `key` arrives at `now`: admit it, evicting a victim when full.
    fn fill(&mut self, key: u64, now: u64) {
        let record = match self.keys.get(&key) {
            Some(KeyState::Pending { record, .. }) => *record,
            other => unreachable!("a fill arrives only for a pending key, found {other:?}"),
        };
        let slot = if self.slots.len() < self.capacity {
            self.last.push(0.0);
            self.inverse_delay.push(0.0);
            self.slots.push(Slot { key, record })
        } else {
            let v = self.victim(now);
            let old = self.slots.replace(v, Slot { key, record });
            self.keys.insert(old.key, KeyState::Idle(old.record));
            v
        };
        self.mirror(slot);
        self.keys.insert(key, KeyState::Cached(slot));
    }

    /// Copies a slot's record into the scan arrays.
    fn mirror(&mut self, slot: u32) {
        let r = &self.slots.get(slot).record;
        self.last[slot as usize] = r.last_access as f64;
        self.inverse_delay[slot as usize] = r.inverse_delay();
    }

    fn burn_wait(&self, wait: u64) {
        if self.miss_cycles > 0 {
            spin_iterations((wait as f64 * iterations_per_cycle()).round() as u64);
        }
    }
}

impl Worker for DelayedHitsCache {
    fn serve(&mut self, key: &u64) -> u64 {
        let (key, now, z) = (*key, self.now, self.z);
        self.now += 1;
        while let Some(&(at, k)) = self.fills.front() {
            if at > now {
                break;
            }
            self.fills.pop_front();
            self.fill(k, now);
        }
        let mut record = MadRecord::default();
        let state = match self.keys.entry(key) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(KeyState::Idle(record)),
        };
        match state {
            KeyState::Cached(slot) => {
                let slot = *slot;
                self.slots.get_mut(slot).record.on_access(now, z);
                self.mirror(slot);
                self.hits += 1;
                self.slots.touch(slot);
                1
            }
            KeyState::Pending { fill_at, record } => {
                record.on_access(now, z);
                let wait = *fill_at - now;
                self.delayed_hits += 1;
                self.latency += wait;
                self.burn_wait(wait);
                1 + wait
            }
            KeyState::Idle(r) => {
                record = *r;
                record.on_access(now, z);
                *state = KeyState::Pending { fill_at: now + z, record };
                self.fills.push_back((now + z, key));
                self.misses += 1;
                self.latency += z;
                self.miss.burn();
                1 + self.miss_cycles
            }
        }
    }

    fn hits(&self) -> Option<u64> {
        Some(self.hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workers::LruCache;
    use proptest::prelude::*;

    /// The thesis' worked example (§2.1): Z = 10, a miss at T = 3, requests at 5 and 11.
    #[test]
    fn delayed_hits_cost_the_remaining_wait() {
        let mut c = DelayedHitsCache::new(4, 10, Eviction::Mad);
        let x = 99;
        let mut work = Vec::new();
        for t in 0..14u64 {
            let key = if [3, 5, 11, 13].contains(&t) { x } else { 1000 + t };
            work.push(c.serve(&key));
        }
        assert_eq!(c.fill_latency(), 10);
        assert_eq!((work[3], work[5], work[11]), (11, 9, 3));
        // The fill arrived at T = 13 and was admitted before the request at 13: a hit.
        assert_eq!(work[13], 1);
        assert_eq!(c.outcomes(), (1, 2, 11));
        assert_eq!(c.total_latency(), 11 * 10 + 8 + 2);
    }

    #[test]
    fn mad_beats_recency_on_bursty_keys() {
        // 8 bursty keys requested in trains of 6 consecutive requests, interleaved with 60 keys
        // requested one at a time, uniformly. MAD keeps the bursty keys, whose windows gather
        // five delayed hits each; recency cannot tell them apart. Deterministic (an LCG).
        let mut state = 12345u64;
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            state >> 33
        };
        let mut trace = Vec::new();
        while trace.len() < 20_000 {
            if next() % 4 == 0 {
                let key = next() % 8;
                trace.extend([key; 6]);
            } else {
                trace.push(100 + next() % 60);
            }
        }
        let latency = |eviction| {
            let mut c = DelayedHitsCache::new(8, 20, eviction);
            for k in &trace {
                c.serve(k);
            }
            c.total_latency()
        };
        let (lru, mad) = (latency(Eviction::Recency), latency(Eviction::Mad));
        assert!((mad as f64) < 0.8 * lru as f64, "MAD {mad} vs LRU {lru}");
    }

    proptest! {
        /// With ρ ≤ 1 (Z = 1) there are no delayed hits and both evictions are exactly LRU.
        #[test]
        fn z_one_is_exactly_lru(keys in prop::collection::vec(0u64..12, 1..400), cap in 1usize..6, rho in 0u64..2) {
            let mut lru = LruCache::new(cap, rho);
            let mut dh = DelayedHitsCache::new(cap, rho, Eviction::Recency);
            let mut mad = DelayedHitsCache::new(cap, rho, Eviction::Mad);
            for k in &keys {
                let w = lru.serve(k);
                prop_assert_eq!(dh.serve(k), w);
                prop_assert_eq!(mad.serve(k), w);
            }
            prop_assert_eq!(dh.hits(), lru.hits());
            prop_assert_eq!(mad.hits(), lru.hits());
            prop_assert_eq!(dh.outcomes().1, 0);
        }

        /// Work is one per request plus the latency; outcomes add up; the cache never overflows.
        #[test]
        fn work_is_requests_plus_latency(keys in prop::collection::vec(0u64..20, 1..400), cap in 1usize..8, rho in 2u64..30) {
            for eviction in [Eviction::Recency, Eviction::Mad] {
                let mut c = DelayedHitsCache::new(cap, rho, eviction);
                let work: u64 = keys.iter().map(|k| c.serve(k)).sum();
                let (h, d, m) = c.outcomes();
                prop_assert_eq!(h + d + m, keys.len() as u64);
                prop_assert_eq!(work, keys.len() as u64 + c.total_latency());
                prop_assert!(c.slots.len() <= cap);
            }
        }
    }
}
