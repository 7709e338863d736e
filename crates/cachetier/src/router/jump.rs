//! Key-hash routing with jump consistent hashing (Lamping & Veach, "A Fast, Minimal Memory,
//! Consistent Hash Algorithm", 2014): every key has one home replica, so each replica serves
//! only about m/k keys and its hit rate grows with k (paper App. B, Eq. 3). Growing the tier
//! from n to n+1 replicas moves only the ~1/(n+1) of keys whose new home is the new replica; no
//! key moves between old replicas.

use super::{Router, View};
use superlinear_core::hash::fmix64;

/// Jump consistent hash: the bucket in `0..n` of a 64-bit key (the paper's Fig. 1 code).
pub fn jump_hash(mut key: u64, n: usize) -> usize {
    let (mut b, mut j) = (-1i64, 0i64);
    while j < n as i64 {
        b = j;
        key = key.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(1);
        j = (((b + 1) as f64) * ((1u64 << 31) as f64 / (((key >> 33) + 1) as f64))) as i64;
    }
    b.max(0) as usize
}

/// Jump-hash routing over `n` replicas.
pub struct JumpHashRouter {
    n: usize,
    salt: u64,
}

impl JumpHashRouter {
    /// Jump-hash routing over `n` replicas; the seed picks the hash function.
    pub fn new(n: usize, seed: u64) -> Self {
        Self { n, salt: fmix64(seed ^ 0x6a09_e667_f3bc_c908) }
    }

    /// The home replica of a key hash.
    pub fn home(&self, hash: u64) -> usize {
        jump_hash(fmix64(hash ^ self.salt), self.n)
    }
}

impl Router for JumpHashRouter {
    fn name(&self) -> &'static str {
        "hash"
    }

    fn replicas(&self) -> usize {
        self.n
    }

    fn copies(&self, hash: u64) -> Vec<usize> {
        vec![self.home(hash)]
    }

    fn route(&self, hash: u64, view: &mut View<'_>) -> Option<usize> {
        let home = self.home(hash);
        (view.up)(home).then_some(home)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jump_hash_is_balanced_and_moves_few_keys() {
        let keys: Vec<u64> = (0..100_000u64).map(fmix64).collect();
        let mut counts = [0u32; 10];
        for &k in &keys {
            counts[jump_hash(k, 10)] += 1;
        }
        assert!(counts.iter().all(|&c| (9_000..11_000).contains(&c)), "{counts:?}");
        // From 10 to 11 buckets, only keys landing in the new bucket move (about 1/11).
        let moved = keys.iter().filter(|&&k| jump_hash(k, 10) != jump_hash(k, 11)).count();
        assert!(keys.iter().all(|&k| jump_hash(k, 10) == jump_hash(k, 11) || jump_hash(k, 11) == 10));
        assert!((7_000..11_500).contains(&moved), "moved {moved}");
    }
}
