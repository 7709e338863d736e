//! Model tests of the workers: each one against a simple reference under random operation
//! sequences (proptest, fixed seed), plus the splay-vs-balanced comparison behind Fig. 5e.
//!
//! Every busy loop is built with 0 cycles (or a small `ρ` only counted, never timed), so the
//! whole file runs in well under a second.

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use std::collections::VecDeque;
use superlinear_core::workers::{BalancedSearchTree, LruCache, MoveToFrontList, SplayTree, StaticList};
use superlinear_core::Worker;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        rng_seed: RngSeed::Fixed(0x5eed_1985),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn sorted_distinct(items: &[u64]) -> Vec<u64> {
    let mut v = items.to_vec();
    v.sort_unstable();
    v.dedup();
    v
}

/// `floor(log2(n))`, the height of a perfectly balanced tree of `n ≥ 1` nodes.
fn floor_log2(n: usize) -> usize {
    n.ilog2() as usize
}

/// Reference LRU: a deque, most recent first.
struct RefLru {
    capacity: usize,
    keys: VecDeque<u64>,
}

impl RefLru {
    /// Returns whether the access hit.
    fn access(&mut self, key: u64) -> bool {
        if let Some(pos) = self.keys.iter().position(|&k| k == key) {
            self.keys.remove(pos);
            self.keys.push_front(key);
            true
        } else {
            if self.keys.len() == self.capacity {
                self.keys.pop_back();
            }
            self.keys.push_front(key);
            false
        }
    }
}

/// Reference splay tree: a plain transcription of Sleator's `top-down-splay.c` (simplified
/// top-down splay, Sleator & Tarjan 1985 §4) with `Option` links, built recursively from the
/// sorted keys. Used to check the worker's shape after every access.
struct RefSplay {
    key: Vec<u64>,
    left: Vec<Option<usize>>,
    right: Vec<Option<usize>>,
    root: Option<usize>,
}

impl RefSplay {
    fn new(items: &[u64]) -> Self {
        fn build(t: &mut RefSplay, lo: usize, hi: usize) -> Option<usize> {
            if lo >= hi {
                return None;
            }
            let mid = lo + (hi - lo) / 2;
            t.left[mid] = build(t, lo, mid);
            t.right[mid] = build(t, mid + 1, hi);
            Some(mid)
        }
        let mut key = sorted_distinct(items);
        let n = key.len();
        key.push(0); // header node N at index n
        let mut t = RefSplay { key, left: vec![None; n + 1], right: vec![None; n + 1], root: None };
        t.root = build(&mut t, 0, n);
        t
    }

    fn header(&self) -> usize {
        self.key.len() - 1
    }

    /// Depth of `key`, or `None`.
    fn depth_of(&self, key: u64) -> Option<usize> {
        let mut cur = self.root;
        let mut d = 0;
        while let Some(c) = cur {
            if key == self.key[c] {
                return Some(d);
            }
            cur = if key < self.key[c] { self.left[c] } else { self.right[c] };
            d += 1;
        }
        None
    }

    /// Nodes on the search path of `key`.
    fn path_len(&self, key: u64) -> usize {
        let mut cur = self.root;
        let mut len = 0;
        while let Some(c) = cur {
            len += 1;
            if key == self.key[c] {
                break;
            }
            cur = if key < self.key[c] { self.left[c] } else { self.right[c] };
        }
        len
    }

    fn splay(&mut self, i: u64) {
        let Some(mut t) = self.root else { return };
        let n = self.header();
        self.left[n] = None;
        self.right[n] = None;
        let (mut l, mut r) = (n, n);
        loop {
            if i < self.key[t] {
                let Some(y) = self.left[t] else { break };
                if i < self.key[y] {
                    self.left[t] = self.right[y];
                    self.right[y] = Some(t);
                    t = y;
                    if self.left[t].is_none() {
                        break;
                    }
                }
                self.left[r] = Some(t);
                r = t;
                t = self.left[t].unwrap();
            } else if i > self.key[t] {
                let Some(y) = self.right[t] else { break };
                if i > self.key[y] {
                    self.right[t] = self.left[y];
                    self.left[y] = Some(t);
                    t = y;
                    if self.right[t].is_none() {
                        break;
                    }
                }
                self.right[l] = Some(t);
                l = t;
                t = self.right[t].unwrap();
            } else {
                break;
            }
        }
        self.right[l] = self.left[t];
        self.left[r] = self.right[t];
        self.left[t] = self.right[n];
        self.right[t] = self.left[n];
        self.root = Some(t);
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn lru_matches_reference(
        capacity in 1usize..8,
        rho in prop_oneof![Just(0u64), Just(5u64)],
        requests in prop::collection::vec(0u64..16, 0..200),
    ) {
        let mut lru = LruCache::new(capacity, rho);
        let mut reference = RefLru { capacity, keys: VecDeque::new() };
        prop_assert!(lru.is_empty());
        let (mut hits, mut misses) = (0, 0);
        for &key in &requests {
            let was_cached = lru.contains(key);
            let work = lru.serve(&key);
            let hit = reference.access(key);
            prop_assert_eq!(was_cached, hit);
            prop_assert_eq!(work, if hit { 1 } else { 1 + rho });
            if hit { hits += 1 } else { misses += 1 }
            prop_assert_eq!(lru.recency_order(), reference.keys.iter().copied().collect::<Vec<_>>());
            prop_assert_eq!(lru.len(), reference.keys.len());
            prop_assert!(lru.len() <= capacity);
            for k in 0..16 {
                prop_assert_eq!(lru.contains(k), reference.keys.contains(&k));
            }
        }
        prop_assert_eq!(lru.hits(), Some(hits));
        prop_assert_eq!(lru.misses(), misses);
    }

    #[test]
    fn splay_matches_reference(
        items in prop::collection::vec(0u64..64, 0..40),
        requests in prop::collection::vec(0u64..70, 0..120),
    ) {
        let sorted = sorted_distinct(&items);
        let mut splay = SplayTree::new(&items, 0);
        let mut reference = RefSplay::new(&items);
        // Same initial shape as the balanced tree.
        let balanced = BalancedSearchTree::new(&items, 0);
        for &k in &sorted {
            prop_assert_eq!(splay.depth_of(k), balanced.depth_of(k));
        }
        for &key in &requests {
            let depth_before = splay.depth_of(key);
            let path = reference.path_len(key);
            let work = splay.serve(&key);
            reference.splay(key);
            // One comparison per node on the search path before the splay.
            prop_assert_eq!(work, path as u64);
            if let Some(d) = depth_before {
                prop_assert_eq!(work, d as u64 + 1);
            }
            if sorted.is_empty() {
                prop_assert_eq!(work, 0);
                prop_assert_eq!(splay.root_key(), None);
                continue;
            }
            prop_assert!(work >= 1);
            let root = splay.root_key().unwrap();
            if depth_before.is_some() {
                prop_assert_eq!(root, key);
                prop_assert_eq!(splay.depth_of(key), Some(0));
            } else {
                // Absent: the root is the key's predecessor or successor.
                let pred = sorted.iter().copied().filter(|&k| k < key).max();
                let succ = sorted.iter().copied().filter(|&k| k > key).min();
                prop_assert!(Some(root) == pred || Some(root) == succ, "root {} for absent {}", root, key);
                prop_assert_eq!(splay.depth_of(key), None);
            }
            prop_assert_eq!(splay.in_order(), sorted.clone());
            // Same shape as the reference after every access.
            for &k in &sorted {
                prop_assert_eq!(splay.depth_of(k), reference.depth_of(k), "key {}", k);
            }
        }
    }

    #[test]
    fn balanced_tree_is_static_and_logarithmic(
        items in prop::collection::vec(0u64..200, 0..100),
        requests in prop::collection::vec(0u64..210, 0..100),
    ) {
        let sorted = sorted_distinct(&items);
        let mut tree = BalancedSearchTree::new(&items, 0);
        // Input order does not matter.
        let mut reversed = items.clone();
        reversed.reverse();
        let other = BalancedSearchTree::new(&reversed, 0);
        let shape: Vec<_> = sorted.iter().map(|&k| tree.depth_of(k)).collect();
        prop_assert_eq!(&shape, &sorted.iter().map(|&k| other.depth_of(k)).collect::<Vec<_>>());
        prop_assert_eq!(tree.in_order(), sorted.clone());
        if sorted.is_empty() {
            for &key in &requests {
                prop_assert_eq!(tree.serve(&key), 0);
            }
            return Ok(());
        }
        let h = floor_log2(sorted.len());
        // Perfectly balanced: height exactly floor(log2 n).
        prop_assert_eq!(shape.iter().map(|d| d.unwrap()).max(), Some(h));
        for &key in &requests {
            let depth = tree.depth_of(key);
            let work = tree.serve(&key) as usize;
            match depth {
                Some(d) => prop_assert_eq!(work, d + 1),
                // Every missing child of a perfectly balanced tree hangs at depth h or h + 1.
                None => prop_assert!(work == h || work == h + 1, "work {} h {}", work, h),
            }
            prop_assert!(work <= h + 1);
        }
        prop_assert_eq!(shape, sorted.iter().map(|&k| tree.depth_of(k)).collect::<Vec<_>>());
    }

    #[test]
    fn lists_match_reference(
        items in prop::collection::vec(0u64..30, 0..25),
        requests in prop::collection::vec(0u64..35, 0..100),
    ) {
        let mut mtf = MoveToFrontList::new(&items);
        let mut stat = StaticList::new(&items);
        let mut reference = items.clone();
        for &key in &requests {
            let mtf_work = mtf.serve(&key);
            let static_work = stat.serve(&key);
            let static_expected = match items.iter().position(|&k| k == key) {
                Some(p) => p as u64 + 1,
                None => items.len() as u64,
            };
            prop_assert_eq!(static_work, static_expected);
            match reference.iter().position(|&k| k == key) {
                Some(p) => {
                    prop_assert_eq!(mtf_work, p as u64 + 1);
                    let k = reference.remove(p);
                    reference.insert(0, k);
                }
                None => prop_assert_eq!(mtf_work, reference.len() as u64),
            }
            prop_assert_eq!(mtf.order(), &reference[..]);
        }
    }
}

/// SplitMix64 (Steele, Lea & Flood 2014): a tiny deterministic generator for the test below.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        ((self.next() as u128 * n as u128) >> 64) as usize
    }
}

/// Mean work per access of a splay tree and of the balanced tree over the same request stream.
fn mean_work(items: &[u64], requests: &[u64]) -> (f64, f64) {
    let mut splay = SplayTree::new(items, 0);
    let mut tree = BalancedSearchTree::new(items, 0);
    let s: u64 = requests.iter().map(|r| splay.serve(r)).sum();
    let b: u64 = requests.iter().map(|r| tree.serve(r)).sum();
    (s as f64 / requests.len() as f64, b as f64 / requests.len() as f64)
}

/// Fig. 5e in miniature: with 500 items split over 36 workers, each worker sees about 14 of
/// them, and its splay tree gathers those near the root; over all 500 uniformly, splaying does
/// not pay (its amortised bound is only a constant factor from the balanced tree).
#[test]
fn splay_wins_on_a_small_working_set_only() {
    let mut rng = SplitMix64(2024);
    let items: Vec<u64> = (0..500).map(|_| rng.next()).collect();
    assert_eq!(sorted_distinct(&items).len(), 500);
    let mut hot = Vec::new();
    while hot.len() < 14 {
        let k = items[rng.below(items.len())];
        if !hot.contains(&k) {
            hot.push(k);
        }
    }
    let n = 20_000;
    let local: Vec<u64> = (0..n).map(|_| hot[rng.below(hot.len())]).collect();
    let global: Vec<u64> = (0..n).map(|_| items[rng.below(items.len())]).collect();

    let (splay_local, tree_local) = mean_work(&items, &local);
    let (splay_global, tree_global) = mean_work(&items, &global);
    eprintln!("14 hot items: splay {splay_local:.2} vs balanced {tree_local:.2} comparisons per access");
    eprintln!("all 500 items: splay {splay_global:.2} vs balanced {tree_global:.2} comparisons per access");
    assert!(splay_local < 0.7 * tree_local, "splay {splay_local} vs balanced {tree_local}");
    assert!(splay_global >= 0.8 * tree_global, "splay {splay_global} vs balanced {tree_global}");
}
