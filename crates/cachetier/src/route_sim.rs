//! Routing without servers: which replica a router sends each key of a distribution to, counted
//! with the client's load counters. Shows a router's balance and key affinity in isolation; and,
//! with an LRU of a given number of items per replica, the hit rate each replica would reach
//! ([`lru_hit_rates`]: what `superlinear advise --cache` predicts the tier from).

use crate::error::{Error, Result};
use crate::keys::{KeyDist, KeyStream};
use crate::loads::LoadCounters;
use crate::router::{self, key_hash, View};
use crate::store;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// Hashes a row id with one `fmix64` (ids are dense integers; SipHash would dominate the LRU).
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = superlinear_core::hash::fmix64(self.0 ^ u64::from(b));
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = superlinear_core::hash::fmix64(v);
    }
}
use std::time::Duration;

/// Routes `requests` keys of `dist` over `rows` rows with `router` over `n` replicas (all up)
/// and returns the reads per replica. Deterministic for a seed.
pub fn route_loads(router: &str, n: usize, dist: &str, rows: u64, requests: u64, seed: u64) -> Result<Vec<u64>> {
    let r = router::build(router, n, seed)?;
    let mut keys = KeyStream::new(KeyDist::parse(dist)?, rows, seed, seed + 1)?;
    // One window over the whole simulation: load-aware routers see every read so far.
    let loads = LoadCounters::new(n, Duration::from_secs(3600));
    let up = |_: usize| true;
    let mut rng = seed;
    for _ in 0..requests {
        let h = key_hash(&store::key(keys.next_id()));
        if let Some(i) = r.route(h, &mut View { up: &up, loads: &loads, rng: &mut rng }) {
            loads.record(i);
        }
    }
    Ok(loads.totals())
}

/// An exact LRU of `capacity` items: a last-use stamp per key and a queue of (key, stamp) that
/// is cleaned lazily (an entry whose stamp is no longer the key's is skipped at eviction).
struct Lru {
    capacity: usize,
    stamps: HashMap<u64, u64, BuildHasherDefault<IdHasher>>,
    queue: VecDeque<(u64, u64)>,
    now: u64,
}

impl Lru {
    fn new(capacity: usize) -> Self {
        Self { capacity, stamps: HashMap::default(), queue: VecDeque::new(), now: 0 }
    }

    /// Reads `key`; a miss fills it. Returns whether it hit.
    fn access(&mut self, key: u64) -> bool {
        self.now += 1;
        let hit = self.stamps.insert(key, self.now).is_some();
        self.queue.push_back((key, self.now));
        while self.stamps.len() > self.capacity {
            let Some((k, t)) = self.queue.pop_front() else { break };
            if self.stamps.get(&k) == Some(&t) {
                self.stamps.remove(&k);
            }
        }
        if self.queue.len() > 4 * self.capacity.max(1024) {
            let stamps = &self.stamps;
            self.queue.retain(|(k, t)| stamps.get(k) == Some(t));
        }
        hit
    }
}

/// Hits and reads of each replica when `router` spreads `requests` reads of `dist` over `n`
/// replicas, each an LRU of `capacity` items that is filled on every miss (cache-aside). As the
/// real tier is pre-filled (`bench::prefill`), every row the distribution can ask for is first
/// offered once to the replica the router picks (coldest rank first), then `warmup` reads run
/// uncounted. Deterministic for a seed.
#[allow(clippy::too_many_arguments)]
pub fn lru_hit_rates(
    router: &str,
    n: usize,
    dist: &str,
    rows: u64,
    capacity: usize,
    requests: u64,
    warmup: u64,
    seed: u64,
) -> Result<Vec<(u64, u64)>> {
    let dist = KeyDist::parse(dist)?;
    let mut keys = KeyStream::new(dist, rows, seed, seed + 1)?;
    let support = dist.support(rows);
    let prefill: Vec<u64> = (0..support).rev().map(|rank| keys.row_of(rank)).collect();
    let reads = std::iter::repeat_with(|| keys.next_id()).take((warmup + requests) as usize);
    replay(router, n, capacity, seed, prefill, reads, warmup)
}

/// [`lru_hit_rates`] for a key trace (row ids, one read each): the trace is played once
/// uncounted (a warm-up that leaves every replica in the state the trace itself builds, as a
/// tier that has served this traffic before), then once counted.
pub fn lru_hit_rates_of_trace(
    router: &str,
    n: usize,
    ids: &[u64],
    capacity: usize,
    seed: u64,
) -> Result<Vec<(u64, u64)>> {
    if ids.is_empty() {
        return Err(Error::config("the key trace holds no reads"));
    }
    let reads = ids.iter().chain(ids).copied();
    replay(router, n, capacity, seed, Vec::new(), reads, ids.len() as u64)
}

/// The LRU replicas behind `router`: `prefill` offered once each, then `reads`, of which the
/// first `uncounted` are not counted.
fn replay(
    router: &str,
    n: usize,
    capacity: usize,
    seed: u64,
    prefill: Vec<u64>,
    reads: impl Iterator<Item = u64>,
    uncounted: u64,
) -> Result<Vec<(u64, u64)>> {
    if n == 0 {
        return Err(Error::config("the simulation needs at least one replica"));
    }
    let r = router::build(router, n, seed)?;
    let loads = LoadCounters::new(n, Duration::from_secs(3600));
    let up = |_: usize| true;
    let mut rng = seed;
    let mut caches: Vec<Lru> = (0..n).map(|_| Lru::new(capacity)).collect();
    for id in prefill {
        let h = key_hash(&store::key(id));
        if let Some(j) = r.route(h, &mut View { up: &up, loads: &loads, rng: &mut rng }) {
            caches[j].access(id);
        }
    }
    let loads = LoadCounters::new(n, Duration::from_secs(3600));
    let mut out = vec![(0u64, 0u64); n];
    for (i, id) in reads.enumerate() {
        let h = key_hash(&store::key(id));
        let Some(j) = r.route(h, &mut View { up: &up, loads: &loads, rng: &mut rng }) else { continue };
        loads.record(j);
        let hit = caches[j].access(id);
        if i as u64 >= uncounted {
            out[j].0 += u64::from(hit);
            out[j].1 += 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_hit_rates_follow_the_key_share() {
        let rate = |router: &str, n: usize| {
            let v = lru_hit_rates(router, n, "hot:4000", 100_000, 500, 40_000, 4_000, 1).unwrap();
            v.iter().map(|x| x.0).sum::<u64>() as f64 / v.iter().map(|x| x.1).sum::<u64>() as f64
        };
        let (h1, h4, h10) = (rate("hash", 1), rate("hash", 4), rate("hash", 10));
        assert!((h1 - 0.125).abs() < 0.02, "{h1}");
        assert!((h4 - 0.5).abs() < 0.05, "{h4}");
        assert!(h10 > 0.95, "{h10}");
        assert!((rate("random", 10) - 0.125).abs() < 0.02);
        // A key trace of 8 keys read in a loop, after its uncounted first pass.
        let ids: Vec<u64> = (0..8).cycle().take(800).collect();
        let one = lru_hit_rates_of_trace("hash", 1, &ids, 8, 1).unwrap();
        assert_eq!(one, vec![(800, 800)]);
        let tight = lru_hit_rates_of_trace("hash", 1, &ids, 7, 1).unwrap();
        assert_eq!(tight, vec![(0, 800)]); // LRU on a loop one larger than the cache never hits
        assert!(lru_hit_rates_of_trace("hash", 1, &[], 8, 1).is_err());
        let mut lru = Lru::new(2);
        assert!(!lru.access(1) && !lru.access(2) && lru.access(1) && !lru.access(3) && !lru.access(2));
        assert!(lru.access(3) && !lru.access(1));
    }

    #[test]
    fn every_read_lands_once_and_runs_repeat() {
        let a = route_loads("hash", 4, "uniform", 1000, 5000, 3).unwrap();
        assert_eq!(a.len(), 4);
        assert_eq!(a.iter().sum::<u64>(), 5000);
        assert!(a.iter().all(|&x| x > 0));
        assert_eq!(a, route_loads("hash", 4, "uniform", 1000, 5000, 3).unwrap());
        assert!(route_loads("nonesuch", 4, "uniform", 1000, 10, 1).is_err());
        assert!(route_loads("hash", 4, "pareto", 1000, 10, 1).is_err());
    }
}
