//! Zipf(α) keys over m items (paper Fig. 5b uses α = 1.01).
//!
//! Sampling uses rejection-inversion (Hörmann & Derflinger 1996, as implemented by `rand_distr`):
//! O(1) expected time and no table, so m may be huge. Rank r is mapped to an item through a
//! seeded random permutation: otherwise the most popular items would also be the first ones of
//! every list's initial order, handing the static list an unfair head start.

use super::KeySampler;
use crate::error::Error;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_distr::{Distribution, Zipf};
use rand_pcg::Pcg64Mcg;

/// Draws keys with P(rank r) ∝ 1/r^α.
pub struct ZipfKeys {
    dist: Zipf<f64>,
    rank_to_item: Vec<u64>,
    rng: Pcg64Mcg,
}

impl ZipfKeys {
    /// Zipf(α) over `m` items with a seed.
    pub fn new(m: usize, alpha: f64, seed: u64) -> Result<Self, Error> {
        let dist = Zipf::new(m as u64, alpha).map_err(|e| Error::config(format!("zipf(m={m}, alpha={alpha}): {e}")))?;
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let mut rank_to_item: Vec<u64> = (0..m as u64).collect();
        rank_to_item.shuffle(&mut rng);
        Ok(Self { dist, rank_to_item, rng })
    }
}

impl KeySampler for ZipfKeys {
    #[inline]
    fn next_key(&mut self) -> u64 {
        let rank = self.dist.sample(&mut self.rng) as usize; // 1..=m
        self.rank_to_item[rank.clamp(1, self.rank_to_item.len()) - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn most_popular_item_gets_its_share() {
        // With α = 1.01 and m = 1000 the top rank has probability ≈ 1/H(1000, 1.01) ≈ 0.135.
        let mut z = ZipfKeys::new(1000, 1.01, 3).unwrap();
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            counts[z.next_key() as usize] += 1;
        }
        let top = *counts.iter().max().unwrap() as f64 / 100_000.0;
        assert!((0.11..0.16).contains(&top), "top share {top}");
    }
}
