//! Routers: which memcached replica a read goes to, and which replicas may hold a copy of a key
//! (the ones a write must invalidate). One trait; each scheme in its own file and one line in
//! [`REGISTRY`].
//!
//! Every key has a fixed candidate set (`copies`): one replica for key hashing, two (one per
//! layer) for DistCache, all of them for random routing. A read goes to one live candidate; when
//! none is up the client reads the database directly and caches nothing, so no copy is ever made
//! outside the candidate set and the coherence protocol always knows where copies can be.

mod distcache;
mod jump;
mod random;

pub use distcache::DistCacheRouter;
pub use jump::{jump_hash, JumpHashRouter};
pub use random::RandomRouter;

use crate::error::{Error, Result};
use crate::loads::LoadCounters;
use superlinear_core::hash::fmix64;

/// A 64-bit hash of a key's bytes (8-byte words folded through MurmurHash3's finaliser).
pub fn key_hash(key: &[u8]) -> u64 {
    let mut h = 0x243f_6a88_85a3_08d3u64 ^ key.len() as u64;
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        h = fmix64(h ^ u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        h = fmix64(h ^ u64::from_le_bytes(last) ^ 0x9e37_79b9_7f4a_7c15);
    }
    h
}

/// What a router may look at when it picks a replica.
pub struct View<'a> {
    /// Whether replica i is up.
    pub up: &'a dyn Fn(usize) -> bool,
    /// Recent load per replica, as this client has seen it in replies.
    pub loads: &'a LoadCounters,
    /// Per-thread random state (splitmix64), for routers that draw.
    pub rng: &'a mut u64,
}

impl View<'_> {
    /// A uniform draw in 0..n.
    pub fn draw(&mut self, n: usize) -> usize {
        *self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        superlinear_core::hash::reduce(fmix64(*self.rng), n)
    }
}

/// A routing scheme over `n` replicas.
pub trait Router: Send + Sync {
    /// Registry name.
    fn name(&self) -> &'static str;

    /// Number of replicas.
    fn replicas(&self) -> usize;

    /// The replicas that may hold a copy of the key with this hash, in a fixed order.
    fn copies(&self, hash: u64) -> Vec<usize>;

    /// The replica a read goes to, among the live members of `copies`; `None` when none is up.
    fn route(&self, hash: u64, view: &mut View<'_>) -> Option<usize>;

    /// Whether `route` reads the loads (so the client keeps them current).
    fn load_aware(&self) -> bool {
        false
    }

    /// Whether, in the steady state of a read workload, a key tends to be cached at every one
    /// of its `copies` (key hash: its one home; DistCache: one copy per layer) rather than at
    /// one of them at random (random routing, where `copies` is every replica). Pre-filling
    /// follows it.
    fn caches_every_copy(&self) -> bool {
        true
    }
}

/// One registry entry.
pub struct RouterEntry {
    /// Name on the command line and in result rows.
    pub name: &'static str,
    /// Other accepted spellings.
    pub aliases: &'static [&'static str],
    /// One line for `--help`.
    pub summary: &'static str,
    /// Whether a key always reads from the same replica while it is up (locality-boosting).
    pub key_affine: bool,
    /// Builds the router for `n` replicas with a seed.
    pub build: fn(n: usize, seed: u64) -> Box<dyn Router>,
}

/// Every router.
pub const REGISTRY: &[RouterEntry] = &[
    RouterEntry {
        name: "random",
        aliases: &[],
        summary: "a uniformly random live replica per read (paper App. B baseline)",
        key_affine: false,
        build: |n, _| Box::new(RandomRouter::new(n)),
    },
    RouterEntry {
        name: "hash",
        aliases: &["key-hash", "jump"],
        summary: "jump consistent hash of the key (Lamping & Veach 2014): one home replica per key",
        key_affine: true,
        build: |n, s| Box::new(JumpHashRouter::new(n, s)),
    },
    RouterEntry {
        name: "distcache",
        aliases: &[],
        summary: "DistCache: two layers, independent hashes, power-of-two-choices on load (§3.1-3.3)",
        key_affine: false,
        build: |n, s| Box::new(DistCacheRouter::new(n, s)),
    },
];

/// Builds a router by name for `n` replicas.
pub fn build(name: &str, n: usize, seed: u64) -> Result<Box<dyn Router>> {
    if n == 0 {
        return Err(Error::config("routing needs at least one replica"));
    }
    let name = name.trim();
    REGISTRY.iter().find(|e| e.name == name || e.aliases.contains(&name)).map(|e| (e.build)(n, seed)).ok_or_else(|| {
        let known: Vec<&str> = REGISTRY.iter().map(|e| e.name).collect();
        Error::config(format!("unknown router '{name}' (known: {})", known.join(", ")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_hash_spreads_similar_keys() {
        let a = key_hash(b"k000000000000001");
        let b = key_hash(b"k000000000000002");
        assert_ne!(a, b);
        assert!((a ^ b).count_ones() > 16);
        assert_ne!(key_hash(b"abc"), key_hash(b"abd"));
    }

    #[test]
    fn registry_builds_everything() {
        for e in REGISTRY {
            let r = build(e.name, 4, 1).unwrap();
            assert_eq!(r.replicas(), 4);
        }
        assert!(build("nope", 4, 1).is_err());
        assert!(build("hash", 0, 1).is_err());
    }
}
