//! A plain hash map over all items: what a distributed MTF list degrades to at k = m
//! (paper §3.3), and the constant-cost reference for the list panels.

use crate::hash::Fmix64Build;
use crate::worker::Worker;
use std::collections::HashMap;

/// Each lookup costs one unit of work whether or not the key is stored.
pub struct HashMapWorker {
    items: HashMap<u64, u32, Fmix64Build>,
}

impl HashMapWorker {
    /// A map holding every item.
    pub fn new(items: &[u64]) -> Self {
        let mut map = HashMap::with_capacity_and_hasher(items.len(), Fmix64Build);
        for (i, &k) in items.iter().enumerate() {
            map.insert(k, i as u32);
        }
        Self { items: map }
    }
}

impl Worker for HashMapWorker {
    #[inline]
    fn serve(&mut self, key: &u64) -> u64 {
        std::hint::black_box(self.items.get(key));
        1
    }
}
