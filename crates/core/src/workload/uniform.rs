//! Uniform keys over 0..m: the worst case for a single self-adjusting worker (paper §3.3).

use super::KeySampler;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Draws keys uniformly from 0..m.
pub struct UniformKeys {
    m: u64,
    rng: Pcg64Mcg,
}

impl UniformKeys {
    /// Uniform over `m` items with a seed.
    pub fn new(m: usize, seed: u64) -> Self {
        Self { m: m as u64, rng: Pcg64Mcg::seed_from_u64(seed) }
    }
}

impl KeySampler for UniformKeys {
    #[inline]
    fn next_key(&mut self) -> u64 {
        self.rng.gen_range(0..self.m)
    }
}
