//! Random routing: every read goes to a uniformly random live replica (the paper's App. B
//! baseline). Each replica sees the whole key space, so adding replicas does not raise anyone's
//! hit rate: the tier scales at best linearly. Any replica may hold any key, so writes invalidate
//! all of them.

use super::{Router, View};

/// Uniform random routing over `n` replicas.
pub struct RandomRouter {
    n: usize,
}

impl RandomRouter {
    /// Random routing over `n` replicas.
    pub fn new(n: usize) -> Self {
        Self { n }
    }
}

impl Router for RandomRouter {
    fn name(&self) -> &'static str {
        "random"
    }

    fn replicas(&self) -> usize {
        self.n
    }

    fn caches_every_copy(&self) -> bool {
        false
    }

    fn copies(&self, _hash: u64) -> Vec<usize> {
        (0..self.n).collect()
    }

    fn route(&self, _hash: u64, view: &mut View<'_>) -> Option<usize> {
        let first = view.draw(self.n);
        if (view.up)(first) {
            return Some(first);
        }
        // Route around dead replicas: a random live one (scan from a random start).
        let start = view.draw(self.n);
        (0..self.n).map(|i| (start + i) % self.n).find(|&r| (view.up)(r))
    }
}
