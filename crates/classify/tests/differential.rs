//! Differential tests: every classifier against brute-force first match, on random rule sets
//! with heavy overlap (few distinct field values, wide ranges, mixed actions), random and
//! adversarial packets (range boundaries and one past them), and interleaved rule updates.
//! Zero mismatches is the only acceptable result.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::sync::Arc;
use superlinear_classify::classifier::{MrfClassifier, MrfVariant, RuleUpdates, StaticClassifier};
use superlinear_classify::rules::{Action, AddrRange, PortRange, ProtoMatch, Rule, RuleSet};
use superlinear_classify::{Packet, Snapshot};

/// Heavy overlap: addresses from a few /8../32 prefixes around two bases, small port ranges
/// around a few values, mostly wildcard protocols, four actions.
fn random_rules(rng: &mut Pcg64Mcg, n: usize) -> RuleSet {
    let bases = [0x0a00_0000u32, 0x0a01_0000, 0xc0a8_0000];
    let mut rules = Vec::with_capacity(n);
    for _ in 0..n {
        let addr = |rng: &mut Pcg64Mcg| {
            if rng.gen_bool(0.2) {
                AddrRange::ANY
            } else {
                let b = bases[rng.gen_range(0..bases.len())] | rng.gen_range(0..4u32);
                let len = [8u8, 16, 24, 30, 32][rng.gen_range(0..5)];
                AddrRange::prefix(b, len)
            }
        };
        let port = |rng: &mut Pcg64Mcg| {
            if rng.gen_bool(0.4) {
                PortRange::ANY
            } else {
                let lo = rng.gen_range(0..6u16) * 10;
                PortRange { lo, hi: lo + rng.gen_range(0..25u16) }
            }
        };
        let actions = if rng.gen_bool(0.8) { 2 } else { 4 };
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
            action: Action::ALL[rng.gen_range(0..actions)],
        });
    }
    RuleSet::new(rules, Action::ALL[rng.gen_range(0..4)])
}

/// Random packets near the rules' values, and adversarial ones on and just past every rule
/// boundary.
fn packets(rng: &mut Pcg64Mcg, set: &RuleSet, n: usize) -> Vec<Packet> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        if rng.gen_bool(0.5) || set.is_empty() {
            let near = |rng: &mut Pcg64Mcg| {
                [0x0a00_0000u32, 0x0a01_0000, 0xc0a8_0000][rng.gen_range(0..3)] | rng.gen_range(0..6u32)
            };
            out.push(Packet::new(
                near(rng),
                near(rng),
                rng.gen_range(0..80),
                rng.gen_range(0..80),
                [6u8, 17, 1, 0x13][rng.gen_range(0..4)],
            ));
        } else {
            let r = &set.rules[rng.gen_range(0..set.len())];
            let pick32 = |rng: &mut Pcg64Mcg, a: AddrRange| match rng.gen_range(0..4) {
                0 => a.lo,
                1 => a.hi,
                2 => a.lo.wrapping_sub(1),
                _ => a.hi.wrapping_add(1),
            };
            let pick16 = |rng: &mut Pcg64Mcg, a: PortRange| match rng.gen_range(0..4) {
                0 => a.lo,
                1 => a.hi,
                2 => a.lo.wrapping_sub(1),
                _ => a.hi.wrapping_add(1),
            };
            let proto = if rng.gen_bool(0.8) { r.proto.value } else { rng.gen() };
            out.push(Packet::new(
                pick32(rng, r.src),
                pick32(rng, r.dst),
                pick16(rng, r.sport),
                pick16(rng, r.dport),
                proto,
            ));
        }
    }
    out
}

#[test]
fn every_classifier_agrees_with_brute_force() {
    let mut checked = 0u64;
    for seed in 0..40u64 {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let n = [1usize, 5, 40, 150][seed as usize % 4];
        let set = random_rules(&mut rng, n);
        let snap = Arc::new(Snapshot::new(set.clone()));
        let mut st = StaticClassifier::new(snap.clone());
        let mut pre = MrfClassifier::new(snap.clone(), MrfVariant::Precomputed);
        let mut swap = MrfClassifier::new(snap.clone(), MrfVariant::Swap);
        for p in packets(&mut rng, &set, 3_000) {
            let want = set.first_match(&p).map(|i| i as u32);
            let verdict = set.verdict(&p);
            for (name, got) in [("static", st.classify(&p)), ("mrf", pre.classify(&p)), ("mrf-swap", swap.classify(&p))]
            {
                assert_eq!((got.rule, got.action), (want, verdict), "{name}, seed {seed}, packet {p}");
            }
            // Both MRF variants keep the same order and do the same work.
            assert_eq!(pre.order(), swap.order(), "seed {seed}");
            checked += 1;
        }
        // The order invariant: every rule behind all of its dependencies.
        for u in 0..snap.len() as u32 {
            for &v in snap.deps.deps(u) {
                assert!(pre.position_of(v) < pre.position_of(u));
            }
        }
    }
    assert_eq!(checked, 120_000);
}

#[test]
fn cost_oracle_matches_the_next_lookup() {
    let mut rng = Pcg64Mcg::seed_from_u64(77);
    let set = random_rules(&mut rng, 120);
    let snap = Arc::new(Snapshot::new(set.clone()));
    let mut c = MrfClassifier::new(snap, MrfVariant::Precomputed);
    for p in packets(&mut rng, &set, 2_000) {
        let predicted = c.cost_now(&p);
        assert_eq!(c.classify(&p).work, predicted);
    }
}

#[test]
fn interleaved_updates_single_thread() {
    let mut rng = Pcg64Mcg::seed_from_u64(5);
    let mut sets = vec![random_rules(&mut rng, 60)];
    let updates = RuleUpdates::new(sets[0].clone());
    let mut workers: Vec<MrfClassifier> = (0..3)
        .map(|i| {
            MrfClassifier::following(updates.clone(), if i == 0 { MrfVariant::Swap } else { MrfVariant::Precomputed })
        })
        .collect();
    for round in 0..30 {
        // Add or delete a few rules, then publish.
        let mut next = sets.last().unwrap().clone();
        if round % 2 == 0 || next.len() < 5 {
            let extra = random_rules(&mut rng, 8);
            for r in extra.rules {
                let at = rng.gen_range(0..=next.len());
                next.rules.insert(at, r);
            }
        } else {
            for _ in 0..6 {
                let at = rng.gen_range(0..next.len());
                next.rules.remove(at);
            }
        }
        let ps = packets(&mut rng, sets.last().unwrap(), 600);
        for (i, p) in ps.iter().enumerate() {
            if i == 300 {
                assert_eq!(updates.publish(next.clone()), round as u64 + 1);
                sets.push(next.clone());
            }
            let w = &mut workers[i % 3];
            let got = w.classify(p);
            let set = &sets[w.snapshot().generation as usize];
            assert_eq!((got.rule, got.action), (set.first_match(p).map(|r| r as u32), set.verdict(p)));
            if i > 300 {
                assert_eq!(w.snapshot().generation, round as u64 + 1, "switched at its next packet");
            }
        }
    }
}

#[test]
fn interleaved_updates_while_threads_classify() {
    let mut rng = Pcg64Mcg::seed_from_u64(11);
    let sets: Vec<RuleSet> = (0..12).map(|_| random_rules(&mut rng, 80)).collect();
    let traffic: Vec<Packet> = sets.iter().flat_map(|s| packets(&mut rng, s, 300)).collect();
    let updates = RuleUpdates::new(sets[0].clone());
    let (checked, mismatches) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|t| {
                let (updates, traffic, sets) = (updates.clone(), &traffic, &sets);
                s.spawn(move || {
                    let mut c = MrfClassifier::following(updates.clone(), MrfVariant::Precomputed);
                    let (mut checked, mut bad) = (0u64, 0u64);
                    for round in 0..40 {
                        for p in traffic.iter().skip((t + round) % 7).step_by(3) {
                            let got = c.classify(p);
                            let set = &sets[c.snapshot().generation as usize];
                            checked += 1;
                            if (got.rule, got.action) != (set.first_match(p).map(|r| r as u32), set.verdict(p)) {
                                bad += 1;
                            }
                        }
                        if updates.version() as usize == sets.len() - 1 {
                            break;
                        }
                    }
                    (checked, bad)
                })
            })
            .collect();
        for set in &sets[1..] {
            std::thread::sleep(std::time::Duration::from_millis(2));
            updates.publish(set.clone());
        }
        handles.into_iter().map(|h| h.join().unwrap()).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    });
    assert!(checked > 0);
    assert_eq!(mismatches, 0);
}
