//! `tuple-merge`, `rule-cache` and `flow-cache` against the static list, rule by rule: the same first-match
//! rule index for every packet (so per-rule counters are identical), on random rule sets with
//! heavy overlap, on the paper's deep dependency chains with a catch-all, and on rule sets that
//! force bucket splits; and the rule cache's cover-set invariant after every lookup, through
//! evictions. Seeded and deterministic; no timing.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::sync::Arc;
use superlinear_classify::classifier::{
    FlowCacheClassifier, RuleCacheClassifier, StaticClassifier, TupleMergeClassifier, TupleSpace,
};
use superlinear_classify::generate::{headers_for_rules, SyntheticSpec};
use superlinear_classify::rules::{Action, AddrRange, PortRange, ProtoMatch, Rule, RuleSet};
use superlinear_classify::{Packet, Snapshot};

/// Heavy overlap: prefixes of every length around three bases (and non-prefix ranges), port
/// ranges and exact ports around a few values, mixed protocols and actions.
fn overlapping_rules(rng: &mut Pcg64Mcg, n: usize) -> RuleSet {
    let bases = [0x0a00_0000u32, 0x0a01_0000, 0xc0a8_0000];
    let addr = |rng: &mut Pcg64Mcg| match rng.gen_range(0..10) {
        0 | 1 => AddrRange::ANY,
        2 => {
            let lo = bases[rng.gen_range(0..3)] | rng.gen_range(0..8u32);
            AddrRange { lo, hi: lo + rng.gen_range(0..20u32) }
        }
        _ => AddrRange::prefix(bases[rng.gen_range(0..3)] | rng.gen_range(0..8u32), rng.gen_range(0..=32u8)),
    };
    let port = |rng: &mut Pcg64Mcg| match rng.gen_range(0..3) {
        0 => PortRange::ANY,
        1 => PortRange::single(rng.gen_range(0..40u16)),
        _ => {
            let lo = rng.gen_range(0..40u16);
            PortRange { lo, hi: lo + rng.gen_range(0..30u16) }
        }
    };
    let mut rules = Vec::with_capacity(n);
    for _ in 0..n {
        let two = rng.gen_bool(0.7);
        rules.push(Rule {
            src: addr(rng),
            dst: addr(rng),
            sport: port(rng),
            dport: port(rng),
            proto: match rng.gen_range(0..4) {
                0 => ProtoMatch::exact(6),
                1 => ProtoMatch::exact(17),
                2 => ProtoMatch { value: 0x10, mask: 0xf0 },
                _ => ProtoMatch::ANY,
            },
            action: Action::ALL[rng.gen_range(0..if two { 2 } else { 4 })],
        });
    }
    RuleSet::new(rules, Action::Drop)
}

/// Half of the packets generated inside random rules, half near the bases (many unmatched).
fn packets(rng: &mut Pcg64Mcg, set: &RuleSet, n: usize, seed: u64) -> Vec<Packet> {
    let mut out = headers_for_rules(set, n / 2, seed).unwrap();
    while out.len() < n {
        let near = |rng: &mut Pcg64Mcg| {
            [0x0a00_0000u32, 0x0a01_0000, 0xc0a8_0000][rng.gen_range(0..3)] | rng.gen_range(0..40u32)
        };
        out.push(Packet::new(
            near(rng),
            near(rng),
            rng.gen_range(0..70),
            rng.gen_range(0..70),
            [6u8, 17, 0x13, 1][rng.gen_range(0..4)],
        ));
    }
    // Skewed replay, so that the rule cache sees hits and misses alike.
    (0..n).map(|_| out[(rng.gen::<f64>().powi(3) * out.len() as f64) as usize]).collect()
}

/// Classifies `packets` with the static list and the classifiers under test; asserts the same
/// rule and verdict for every packet and, for rule caches, the invariant after every lookup.
fn agree(set: &RuleSet, packets: &[Packet], label: &str) -> u64 {
    let snap = Arc::new(Snapshot::new(set.clone()));
    let mut reference = StaticClassifier::new(snap.clone());
    let mut tm = TupleMergeClassifier::new(snap.clone());
    let mut caches: Vec<RuleCacheClassifier> = [(1, 0), (2, 0), (4, 0), (8, 0), (32, 0), (4, 16), (64, 4096)]
        .iter()
        .map(|&(front, flow)| RuleCacheClassifier::new(snap.clone(), front, flow))
        .collect();
    // Small caches, so that slots are overwritten and the cache turns itself off and on.
    let mut flows: Vec<FlowCacheClassifier> =
        [2, 64, 4096].iter().map(|&n| FlowCacheClassifier::new(snap.clone(), n)).collect();
    let mut front_hits = 0;
    for (i, p) in packets.iter().enumerate() {
        let want = reference.classify(p);
        let got = tm.classify(p);
        assert_eq!((got.rule, got.action), (want.rule, want.action), "tuple-merge, {label}, packet {i} {p}");
        for c in &mut flows {
            let got = c.classify(p);
            assert_eq!((got.rule, got.action), (want.rule, want.action), "flow-cache, {label}, packet {i} {p}");
        }
        for c in &mut caches {
            let before = c.front().len() as u32;
            let got = c.classify(p);
            assert_eq!((got.rule, got.action), (want.rule, want.action), "rule-cache, {label}, packet {i} {p}");
            front_hits += u64::from(got.position < before);
            assert!(c.invariant_holds(), "rule-cache cover sets, {label}, after packet {i}");
        }
    }
    front_hits
}

#[test]
fn random_overlapping_rule_sets() {
    let mut hits = 0;
    for seed in 0..24u64 {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let set = overlapping_rules(&mut rng, [3usize, 20, 80, 300][seed as usize % 4]);
        let pk = packets(&mut rng, &set, 2_000, seed);
        hits += agree(&set, &pk, &format!("seed {seed}"));
    }
    assert!(hits > 10_000, "the front answered {hits} lookups");
}

/// Long enough for the flow cache to turn itself off (too few hits in a window) and on again
/// (a trial window): every answer stays the static list's through both.
#[test]
fn flow_cache_through_its_off_and_trial_windows() {
    let mut rng = Pcg64Mcg::seed_from_u64(11);
    let set = overlapping_rules(&mut rng, 300);
    let snap = Arc::new(Snapshot::new(set.clone()));
    let mut reference = StaticClassifier::new(snap.clone());
    let mut caches: Vec<FlowCacheClassifier> =
        [2, 1024].iter().map(|&n| FlowCacheClassifier::new(snap.clone(), n)).collect();
    let (mut off_seen, mut on_again) = (false, false);
    for (i, p) in packets(&mut rng, &set, 90_000, 11).iter().enumerate() {
        let want = reference.classify(p);
        for c in &mut caches {
            let got = c.classify(p);
            assert_eq!((got.rule, got.action), (want.rule, want.action), "flow-cache, packet {i} {p}");
        }
        off_seen |= !caches[0].is_on();
        on_again |= off_seen && caches[0].is_on();
    }
    assert!(off_seen && on_again, "the two-slot cache went off ({off_seen}) and tried again ({on_again})");
}

#[test]
fn deep_dependency_chains_with_a_catch_all() {
    for (depth, catch_all) in [(1usize, 0.0), (4, 0.1), (16, 0.2), (32, 0.05)] {
        let spec = SyntheticSpec { rules: 40, depth, flows_per_rule: 3, catch_all_fraction: catch_all };
        let set = spec.rule_set().unwrap();
        let mut trace = spec.trace(3_000, depth as u64).unwrap();
        trace.extend(headers_for_rules(&set, 1_000, 7).unwrap());
        agree(&set, &trace, &format!("depth {depth}"));
    }
}

#[test]
fn many_hosts_in_one_prefix_split_buckets() {
    // One /16 drop, then 400 host rules inside it with alternating actions and exact ports:
    // they collide in the /16 table's one bucket until the collision limit splits them off.
    let mut rules = vec![Rule { src: AddrRange::prefix(0x0a00_0000, 16), ..Rule::any(Action::Drop) }];
    for i in 0..400u32 {
        rules.push(Rule {
            src: AddrRange::single(0x0a00_0000 + i / 2),
            dport: PortRange::single(80 + (i % 3) as u16),
            proto: ProtoMatch::exact(6),
            ..Rule::any(if i % 2 == 0 { Action::Accept } else { Action::Reject })
        });
    }
    rules.push(Rule::any(Action::Accept));
    let set = RuleSet::new(rules, Action::Drop);
    let snap = Snapshot::new(set.clone());
    let space = TupleSpace::build(&snap);
    assert!(space.largest_bucket() <= superlinear_classify::classifier::tuple_merge::COLLISION_LIMIT + 1);
    let mut rng = Pcg64Mcg::seed_from_u64(5);
    let pk = packets(&mut rng, &set, 3_000, 5);
    agree(&set, &pk, "hosts");
}

#[test]
fn eviction_keeps_cover_sets() {
    // Capacity 4 against a stream over 300 overlapping rules: evictions on most misses, and
    // the invariant (checked inside `agree` after every lookup) holds throughout.
    let mut rng = Pcg64Mcg::seed_from_u64(99);
    let set = overlapping_rules(&mut rng, 300);
    let snap = Arc::new(Snapshot::new(set.clone()));
    let mut c = RuleCacheClassifier::new(snap, 4, 0);
    let mut distinct_fronts = std::collections::BTreeSet::new();
    for p in packets(&mut rng, &set, 3_000, 99) {
        c.classify(&p);
        assert!(c.invariant_holds() && c.front().len() <= 4);
        distinct_fronts.insert(c.front().to_vec());
    }
    assert!(distinct_fronts.len() > 50, "the front changed {} times", distinct_fronts.len());
}
