//! Routing without servers: which replica a router sends each key of a distribution to, counted
//! with the client's load counters. Shows a router's balance and key affinity in isolation.

use crate::error::Result;
use crate::keys::{KeyDist, KeyStream};
use crate::loads::LoadCounters;
use crate::router::{self, key_hash, View};
use crate::store;
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

#[cfg(test)]
mod tests {
    use super::*;

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
