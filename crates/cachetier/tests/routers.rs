//! Router properties without servers: key movement of consistent hashing, random routing's
//! spread, and DistCache's load balance on skewed keys (DistCache §3.2) against key hashing.

use std::time::Duration;
use superlinear_cachetier::keys::{KeyDist, KeyStream};
use superlinear_cachetier::loads::LoadCounters;
use superlinear_cachetier::router::{self, key_hash, View};
use superlinear_cachetier::store;

fn home(router: &str, n: usize, hash: u64) -> usize {
    let r = router::build(router, n, 7).unwrap();
    let up = |_: usize| true;
    let loads = LoadCounters::new(n, Duration::from_secs(1));
    let mut rng = 1;
    r.route(hash, &mut View { up: &up, loads: &loads, rng: &mut rng }).unwrap()
}

#[test]
fn key_hash_moves_few_keys_when_the_tier_grows() {
    let hashes: Vec<u64> = (0..50_000).map(|i| key_hash(&store::key(i))).collect();
    for n in [1usize, 4, 9, 14] {
        let moved = hashes.iter().filter(|&&h| home("hash", n, h) != home("hash", n + 1, h)).count();
        let expected = hashes.len() / (n + 1);
        // Only keys whose new home is the new replica move: about 1/(n+1) of them.
        assert!(
            moved * 10 <= expected * 13 && moved * 10 >= expected * 7,
            "n={n}: moved {moved}, expected ~{expected}"
        );
        assert!(hashes.iter().all(|&h| home("hash", n, h) == home("hash", n + 1, h) || home("hash", n + 1, h) == n));
    }
}

#[test]
fn lost_replica_moves_only_its_keys() {
    let r = router::build("hash", 8, 7).unwrap();
    let loads = LoadCounters::new(8, Duration::from_secs(1));
    let (mut rng, all_up, three_down) = (1u64, |_: usize| true, |i: usize| i != 3);
    for i in 0..20_000 {
        let h = key_hash(&store::key(i));
        let a = r.route(h, &mut View { up: &all_up, loads: &loads, rng: &mut rng });
        let b = r.route(h, &mut View { up: &three_down, loads: &loads, rng: &mut rng });
        // Keys of other replicas stay; the lost replica's keys go to the database (None).
        if a == Some(3) {
            assert_eq!(b, None);
        } else {
            assert_eq!(a, b);
        }
    }
}

fn max_over_mean(router: &str, n: usize, dist: KeyDist, requests: u64) -> f64 {
    let r = router::build(router, n, 3).unwrap();
    let mut keys = KeyStream::new(dist, 1_000_000, 3, 4).unwrap();
    let loads = LoadCounters::new(n, Duration::from_secs(3600));
    let up = |_: usize| true;
    let mut rng = 9;
    for _ in 0..requests {
        let h = key_hash(&store::key(keys.next_id()));
        loads.record(r.route(h, &mut View { up: &up, loads: &loads, rng: &mut rng }).unwrap());
    }
    let t = loads.totals();
    *t.iter().max().unwrap() as f64 * n as f64 / t.iter().sum::<u64>() as f64
}

#[test]
fn distcache_balances_skewed_load_where_key_hash_does_not() {
    for alpha in [0.9, 0.99] {
        let hash = max_over_mean("hash", 16, KeyDist::Zipf(alpha), 400_000);
        let dc = max_over_mean("distcache", 16, KeyDist::Zipf(alpha), 400_000);
        assert!(dc <= 1.2, "zipf {alpha}: distcache max/mean {dc}");
        assert!(hash >= 1.3, "zipf {alpha}: key hash max/mean {hash}");
    }
    assert!(max_over_mean("random", 16, KeyDist::Zipf(0.99), 200_000) < 1.1);
}

#[test]
fn distcache_candidates_are_one_per_layer() {
    let r = router::DistCacheRouter::new(10, 1);
    for i in 0..1000 {
        let [a, b] = r.candidates(key_hash(&store::key(i)));
        assert!(a < 5 && (5..10).contains(&b));
    }
    let single = router::DistCacheRouter::new(1, 1);
    assert_eq!(single.candidates(42), [0, 0]);
}
