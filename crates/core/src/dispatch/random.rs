//! Uniform random dispatch: balanced in expectation, no locality.

use super::{Dispatcher, WorkerLoads};
use crate::hash::{fmix64, reduce};

/// Sends each request to a worker drawn uniformly at random (a seeded counter-based generator,
/// so a run is reproducible).
pub struct RandomDispatcher {
    k: usize,
    state: u64,
}

impl RandomDispatcher {
    /// Random dispatch over `k` workers.
    pub fn new(k: usize, seed: u64) -> Self {
        Self { k: k.max(1), state: fmix64(seed ^ 0x5eed) }
    }
}

impl<R> Dispatcher<R> for RandomDispatcher {
    #[inline]
    fn route(&mut self, _request: &R, _loads: &WorkerLoads<'_>) -> usize {
        // SplitMix64 step: a full-period counter through a strong mixer.
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        reduce(fmix64(self.state), self.k)
    }
}
