//! Key-hash dispatch: the locality-boosting dispatcher of the paper (§3.3). Each worker sees
//! only about m/k of the items, so its self-adjusting structure can concentrate on them.

use super::{Dispatcher, WorkerLoads};
use crate::hash::{reduce32, salt, salted_hash64};

/// Sends a key to worker `reduce32(hash64(key, seed), k)`: a full-avalanche 64-bit hash, not the
/// raw key modulo k (which would map structured keys, e.g. multiples of k, to one worker).
pub struct KeyHashDispatcher {
    k: u32,
    salt: u64,
}

impl KeyHashDispatcher {
    /// Key-hash dispatch over `k` workers.
    pub fn new(k: usize, seed: u64) -> Self {
        Self { k: k.clamp(1, u32::MAX as usize) as u32, salt: salt(seed) }
    }

    #[inline]
    fn worker_of(&self, key: u64) -> u32 {
        reduce32(salted_hash64(key, self.salt), self.k)
    }
}

impl Dispatcher for KeyHashDispatcher {
    #[inline]
    fn route(&mut self, key: &u64, _loads: &WorkerLoads<'_>) -> usize {
        self.worker_of(*key) as usize
    }

    /// One branch-free loop over the chunk, which the compiler vectorises; the 32-bit reduction
    /// keeps the lanes narrow.
    fn assign_chunk(&mut self, keys: &[u64], workers: &mut [u32]) {
        for (&key, slot) in keys.iter().zip(workers.iter_mut()) {
            *slot = self.worker_of(key);
        }
    }

    fn home(&self, key: &u64) -> Option<usize> {
        Some(self.worker_of(*key) as usize)
    }
}
