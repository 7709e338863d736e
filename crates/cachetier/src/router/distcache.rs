//! DistCache routing (Liu et al., "DistCache: Provable Load Balancing for Large-Scale Storage
//! Systems with Distributed Caching", FAST 2019).
//!
//! The replicas form two layers (the first ⌈n/2⌉ and the rest). Each layer partitions the keys
//! with its own, independent hash function (§3.1 "cache allocation with independent hash
//! functions"), so a key has one candidate per layer and is cached at most once per layer. A read
//! goes to the less-loaded of the two candidates (§3.1 "query routing with the
//! power-of-two-choices"), using the loads this client keeps from replies (§4.2's telemetry,
//! with aging). Hot keys that pile up on one node of a layer are spread by the other layer's
//! independent hash; §3.2 proves the resulting load is balanced for any query distribution as long
//! as no single key exceeds half a node's throughput. With one replica there is one layer.

use super::jump::jump_hash;
use super::{Router, View};
use superlinear_core::hash::fmix64;

/// Two-layer power-of-two-choices routing over `n` replicas.
pub struct DistCacheRouter {
    n: usize,
    upper: usize,
    salts: [u64; 2],
}

impl DistCacheRouter {
    /// DistCache routing over `n` replicas (layers of ⌈n/2⌉ and ⌊n/2⌋).
    pub fn new(n: usize, seed: u64) -> Self {
        let salts = [fmix64(seed ^ 0x3c6e_f372_fe94_f82b), fmix64(seed ^ 0xa54f_f53a_5f1d_36f1)];
        Self { n, upper: n.div_ceil(2), salts }
    }

    /// The candidate in each layer (the same replica twice when there is one layer).
    pub fn candidates(&self, hash: u64) -> [usize; 2] {
        let a = jump_hash(fmix64(hash ^ self.salts[0]), self.upper);
        let lower = self.n - self.upper;
        if lower == 0 {
            return [a, a];
        }
        [a, self.upper + jump_hash(fmix64(hash ^ self.salts[1]), lower)]
    }
}

impl Router for DistCacheRouter {
    fn name(&self) -> &'static str {
        "distcache"
    }

    fn replicas(&self) -> usize {
        self.n
    }

    fn copies(&self, hash: u64) -> Vec<usize> {
        let [a, b] = self.candidates(hash);
        if a == b {
            vec![a]
        } else {
            vec![a, b]
        }
    }

    fn route(&self, hash: u64, view: &mut View<'_>) -> Option<usize> {
        let [a, b] = self.candidates(hash);
        match ((view.up)(a), (view.up)(b)) {
            (true, true) => {
                let (la, lb) = (view.loads.recent(a), view.loads.recent(b));
                Some(if la < lb || (la == lb && view.draw(2) == 0) { a } else { b })
            }
            (true, false) => Some(a),
            (false, true) => Some(b),
            (false, false) => None,
        }
    }

    fn load_aware(&self) -> bool {
        true
    }
}
