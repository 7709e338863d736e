//! Fast, well-mixing 64-bit hashing for dispatchers and hash tables.
//!
//! The mixer is the `fmix64` finaliser of MurmurHash3 (full avalanche: every input bit flips each
//! output bit with probability about 1/2), seeded by xoring a seed-derived constant first. Key
//! dispatch maps the hash to a worker with Lemire's multiply-shift, which is unbiased for any k
//! and avoids the division of `% k`.

use std::hash::{BuildHasher, Hasher};

/// MurmurHash3's 64-bit finaliser.
#[inline]
pub fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^= x >> 33;
    x
}

/// A seeded 64-bit hash of `key`.
#[inline]
pub fn hash64(key: u64, seed: u64) -> u64 {
    salted_hash64(key, salt(seed))
}

/// The per-seed salt of [`hash64`]; hot loops compute it once and call [`salted_hash64`].
#[inline]
pub fn salt(seed: u64) -> u64 {
    fmix64(seed.wrapping_add(0x9e37_79b9_7f4a_7c15))
}

/// [`hash64`] with a precomputed [`salt`].
#[inline]
pub fn salted_hash64(key: u64, salt: u64) -> u64 {
    fmix64(key ^ salt)
}

/// Maps a 64-bit hash uniformly onto `0..n` (Lemire's multiply-shift reduction).
#[inline]
pub fn reduce(hash: u64, n: usize) -> usize {
    ((hash as u128 * n as u128) >> 64) as usize
}

/// Maps a 64-bit hash onto `0..n` by its high 32 bits (multiply-shift on 32-bit halves): biased by
/// at most n / 2³² and, unlike [`reduce`], vectorisable (AVX2 multiplies 32-bit lanes into 64-bit
/// products), which halves the cost of hashing a chunk of keys to workers.
#[inline]
pub fn reduce32(hash: u64, n: u32) -> u32 {
    (((hash >> 32) * n as u64) >> 32) as u32
}

/// A `BuildHasher` for `u64` keys using [`fmix64`]; much faster than SipHash and good enough for
/// keys chosen by a workload, not by an adversary.
#[derive(Clone, Copy, Default, Debug)]
pub struct Fmix64Build;

/// The hasher built by [`Fmix64Build`].
#[derive(Default)]
pub struct Fmix64Hasher(u64);

impl Hasher for Fmix64Hasher {
    fn finish(&self) -> u64 {
        fmix64(self.0)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 ^= i;
    }
}

impl BuildHasher for Fmix64Build {
    type Hasher = Fmix64Hasher;
    fn build_hasher(&self) -> Fmix64Hasher {
        Fmix64Hasher(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_stays_in_range_and_spreads() {
        let n = 48;
        let mut counts = vec![0u32; n];
        for key in 0..48_000u64 {
            let w = reduce(hash64(key, 7), n);
            counts[w] += 1;
        }
        // 1000 expected per bucket; a good hash stays well within ±20 %.
        assert!(counts.iter().all(|&c| (800..1200).contains(&c)), "{counts:?}");
    }

    #[test]
    fn seeds_give_different_hashes() {
        assert_ne!(hash64(1, 1), hash64(1, 2));
    }
}
