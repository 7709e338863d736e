//! LRU cache of capacity `c` in front of a slow backend that costs `ρ` cycles per miss: the
//! self-adjusting worker of the paper's cache panel (Fig. 5d). Each worker's cache starts cold.
//!
//! A hash map from key to slot plus the preallocated [`RecencyList`] of the cached keys: a
//! request allocates nothing, and both a hit and an eviction are O(1).

use super::recency_list::RecencyList;
use crate::busy::BusyLoop;
use crate::hash::Fmix64Build;
use crate::worker::Worker;
use std::collections::HashMap;

/// A least-recently-used cache.
///
/// Work of a request: 1 for the cache access, plus `ρ = miss_cycles` on a miss (the backend
/// fetch, which also burns `ρ` cycles). A miss inserts the key as most recent, evicting the least
/// recent entry when the cache is full.
pub struct LruCache {
    map: HashMap<u64, u32, Fmix64Build>,
    /// The cached keys.
    slots: RecencyList<u64>,
    capacity: usize,
    miss: BusyLoop,
    miss_cycles: u64,
    hits: u64,
    misses: u64,
}

impl LruCache {
    /// An empty cache of `capacity` items whose misses cost `miss_cycles`.
    ///
    /// # Panics
    /// If `capacity` is 0 or does not fit the `u32` slot indices.
    pub fn new(capacity: usize, miss_cycles: u64) -> Self {
        assert!(capacity >= 1, "an LRU cache needs a capacity of at least 1");
        assert!(capacity < u32::MAX as usize, "LRU capacity {capacity} too large");
        // Twice the capacity so that the map's clean-up of deleted entries (one per eviction)
        // always rehashes in place and never reallocates during a run.
        let map = HashMap::with_capacity_and_hasher(2 * capacity, Fmix64Build);
        Self {
            map,
            slots: RecencyList::with_capacity(capacity),
            capacity,
            miss: BusyLoop::new(miss_cycles),
            miss_cycles,
            hits: 0,
            misses: 0,
        }
    }

    /// Items cached now.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether nothing is cached (as at the start).
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The capacity `c`.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Whether `key` is cached. Changes neither recency nor counters.
    pub fn contains(&self, key: u64) -> bool {
        self.map.contains_key(&key)
    }

    /// Misses so far.
    pub fn misses(&self) -> u64 {
        self.misses
    }

    /// The cached keys from most to least recently used. For tests (allocates).
    pub fn recency_order(&self) -> Vec<u64> {
        self.slots.iter().copied().collect()
    }
}

impl Worker for LruCache {
    #[inline]
    fn serve(&mut self, key: &u64) -> u64 {
        let key = *key;
        if let Some(&i) = self.map.get(&key) {
            self.hits += 1;
            self.slots.touch(i);
            return 1;
        }
        self.misses += 1;
        self.miss.burn();
        let i = if self.slots.len() < self.capacity {
            // Within the preallocated capacity: no reallocation.
            self.slots.push(key)
        } else {
            // Full: reuse the least recently used slot for the new key.
            let victim = self.slots.least_recent().expect("a full cache has slots");
            let old = self.slots.replace(victim, key);
            self.map.remove(&old);
            victim
        };
        self.map.insert(key, i);
        1 + self.miss_cycles
    }

    fn hits(&self) -> Option<u64> {
        Some(self.hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_misses_and_eviction() {
        let mut c = LruCache::new(2, 5);
        assert!(c.is_empty());
        assert_eq!(c.serve(&1), 6);
        assert_eq!(c.serve(&2), 6);
        assert_eq!(c.serve(&1), 1);
        assert_eq!(c.recency_order(), vec![1, 2]);
        // 2 is least recent: evicted by 3.
        assert_eq!(c.serve(&3), 6);
        assert!(!c.contains(2) && c.contains(1) && c.contains(3));
        assert_eq!(c.recency_order(), vec![3, 1]);
        assert_eq!(c.len(), 2);
        assert_eq!((c.hits(), c.misses()), (Some(1), 3));
    }

    #[test]
    fn capacity_one_and_free_misses() {
        let mut c = LruCache::new(1, 0);
        assert_eq!(c.serve(&7), 1);
        assert_eq!(c.serve(&7), 1);
        assert_eq!(c.serve(&8), 1);
        assert_eq!(c.recency_order(), vec![8]);
        assert_eq!((c.hits(), c.misses()), (Some(1), 2));
    }
}
