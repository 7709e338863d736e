//! The adversary against a self-adjusting packet classifier: minimum-size packets whose first
//! match is a rule the MRF list cannot bring forward cheaply, each from its own spoofed flow
//! (thesis §3.4: against FCFS and FQ the optimal attack is the smallest packet with the largest
//! job). Paper §4.3 names the weak spots: rules with many dependencies stay behind them, and the
//! final catch-all rule depends on every rule with another action, so traffic to it "degrades the
//! self-adjusting classifier into a static list".
//!
//! * `deep`: the lowest-priority rule with the longest dependency chain. MRF brings its chain
//!   forward (one level per hit, paper Alg. 1) until it costs about its chain length: the attack
//!   self-adjustment defeats, kept as the baseline.
//! * `rotate[:N]`: round robin over the N rules innocent traffic uses least, longest dependency
//!   chains and lowest priority first (default: half the rules). Each hit moves rules of one
//!   chain forward, pushing the other N − 1 targets back, so every target is found deep again
//!   when its turn comes: the adversary that keeps defeating move-forward (Sleator and Tarjan's
//!   adversary for self-adjusting lists, with chains).
//! * `catch-all`: packets only the final match-everything rule matches (or, without one, no rule:
//!   the default policy). A full scan every time; MRF can never move the rule past its
//!   dependencies.
//!
//! Every target needs packets whose first match it is. They are found by sampling headers
//! inside the rule's ranges (uniformly over all headers for the catch-all and the default
//! policy) and keeping those the static first-match scan assigns to it; rules no sample reaches
//! (shadowed by higher-priority rules) are skipped. Each target keeps a few such packets, so the
//! attack spreads over several 5-tuples per rule.

use super::runner::StageRequest;
use crate::job::Class;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use superlinear_classify::generate::header_inside;
use superlinear_classify::packet::proto;
use superlinear_classify::{Error, Packet, Rule, Snapshot};

/// Adversaries: name and one-line description.
pub const CLASSIFIER_ADVERSARIES: &[(&str, &str)] = &[
    ("deep", "the lowest-priority rule with the longest dependency chain (MRF brings its chain forward)"),
    ("rotate", "round robin over the N least-used rules, longest chains first, rotate[:N] (defeats move-forward)"),
    ("catch-all", "packets only the final catch-all rule (or the default policy) matches: a full scan every time"),
];

/// Distinct packets kept per target rule.
const PACKETS_PER_TARGET: usize = 8;
/// Samples tried per target rule before it counts as unreachable.
const TRIES_PER_RULE: usize = 64;
/// Uniform samples tried for the catch-all rule or the default policy.
const TRIES_CATCH_ALL: usize = 200_000;

/// One attacked rule (`None`: the default policy) and packets that reach it first.
#[derive(Clone, Debug)]
struct Target {
    rule: Option<u32>,
    packets: Vec<Packet>,
}

/// A configured classifier adversary.
#[derive(Clone, Debug)]
pub struct ClassifierAdversary {
    name: String,
    targets: Vec<Target>,
    bits: u32,
}

impl ClassifierAdversary {
    /// Parses `deep`, `rotate[:N]` or `catch-all` against the rules of `snap`, choosing targets
    /// away from what the `innocent` packets use; attack packets have `bits` bits.
    pub fn new(spec: &str, snap: &Snapshot, innocent: &[Packet], bits: u32, seed: u64) -> Result<Self, Error> {
        if snap.is_empty() {
            return Err(Error::config("the adversary needs a rule set with at least one rule"));
        }
        let (name, arg) = match spec.trim().split_once(':') {
            Some((n, a)) => (n.trim(), Some(a.trim())),
            None => (spec.trim(), None),
        };
        let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0xad7e_5a17);
        let n = snap.len();
        // The last rule is the catch-all when it matches everything; it is its own adversary.
        let catch_all = is_match_all(&snap.rules.rules[n - 1]).then_some(n as u32 - 1);
        let ordinary = (0..n as u32).filter(|&r| Some(r) != catch_all);
        let depth = |r: u32| snap.deps.depth(r);
        let targets = match (name, arg) {
            ("deep", None) => {
                let mut order: Vec<u32> = ordinary.collect();
                order.sort_unstable_by_key(|&r| std::cmp::Reverse((depth(r), r)));
                reachable(snap, &order, 1, &mut rng)
            }
            ("rotate", _) => {
                let candidates = n - usize::from(catch_all.is_some());
                let want = match arg {
                    None => (candidates / 2).max(1),
                    Some(a) => a.parse::<usize>().ok().filter(|&k| k >= 1 && k <= candidates).ok_or_else(|| {
                        Error::config(format!("rotate:N needs 1 <= N <= {candidates} rules, got '{a}'"))
                    })?,
                };
                let mut uses = vec![0u64; n + 1];
                for p in innocent {
                    uses[snap.first_match(p).map_or(n, |r| r as usize)] += 1;
                }
                let mut order: Vec<u32> = ordinary.collect();
                order.sort_unstable_by_key(|&r| (uses[r as usize], std::cmp::Reverse((depth(r), r))));
                reachable(snap, &order, want, &mut rng)
            }
            ("catch-all", None) => {
                let packets = sample_uniform(snap, catch_all, &mut rng);
                if packets.is_empty() {
                    return Err(Error::config(format!(
                        "catch-all: none of {TRIES_CATCH_ALL} random headers reaches {} (every header \
                         matches an earlier rule)",
                        catch_all.map_or("the default policy".to_string(), |r| format!("the final rule {r}"))
                    )));
                }
                vec![Target { rule: catch_all, packets }]
            }
            _ => {
                let known: Vec<&str> = CLASSIFIER_ADVERSARIES.iter().map(|a| a.0).collect();
                return Err(Error::config(format!("unknown adversary '{spec}' (known: {})", known.join(", "))));
            }
        };
        if targets.is_empty() {
            return Err(Error::config(format!("{name}: no rule in the set is reachable by any sampled packet")));
        }
        Ok(Self { name: name.to_string(), targets, bits })
    }

    /// The adversary's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The attacked rules in rotation order (`None`: the default policy).
    pub fn target_rules(&self) -> Vec<Option<u32>> {
        self.targets.iter().map(|t| t.rule).collect()
    }

    /// The n-th attack packet: one minimum-size packet from its own spoofed flow, for the next
    /// target in the rotation, cycling through that target's packets.
    pub fn request(&self, n: u64) -> StageRequest<Packet> {
        let k = self.targets.len() as u64;
        let t = &self.targets[(n % k) as usize];
        let p = t.packets[((n / k) % t.packets.len() as u64) as usize];
        StageRequest { request: p, bits: self.bits, flow: (1 << 31) | (n as u32 & 0x7fff_ffff), class: Class::Attack }
    }
}

/// Whether a rule matches every packet.
fn is_match_all(r: &Rule) -> bool {
    r.src.lo == 0
        && r.src.hi == u32::MAX
        && r.dst.lo == 0
        && r.dst.hi == u32::MAX
        && r.sport.is_any()
        && r.dport.is_any()
        && r.proto.mask == 0
}

/// The first `want` rules of `order` that sampled packets reach, with their packets.
fn reachable(snap: &Snapshot, order: &[u32], want: usize, rng: &mut Pcg64Mcg) -> Vec<Target> {
    let mut out = Vec::with_capacity(want);
    for &rule in order {
        if out.len() == want {
            break;
        }
        let packets = sample_inside(snap, rule, rng);
        if !packets.is_empty() {
            out.push(Target { rule: Some(rule), packets });
        }
    }
    out
}

/// Packets drawn inside `rule`'s ranges whose first match is `rule`.
fn sample_inside(snap: &Snapshot, rule: u32, rng: &mut Pcg64Mcg) -> Vec<Packet> {
    let r = &snap.rules.rules[rule as usize];
    let mut found = Vec::new();
    for _ in 0..TRIES_PER_RULE {
        let p = header_inside(r, rng);
        if snap.first_match(&p) == Some(rule) && !found.contains(&p) {
            found.push(p);
            if found.len() == PACKETS_PER_TARGET {
                break;
            }
        }
    }
    found
}

/// Uniformly random TCP, UDP or other headers whose first match is `target`.
fn sample_uniform(snap: &Snapshot, target: Option<u32>, rng: &mut Pcg64Mcg) -> Vec<Packet> {
    let mut found = Vec::new();
    for _ in 0..TRIES_CATCH_ALL {
        let proto = match rng.gen_range(0..3) {
            0 => proto::TCP,
            1 => proto::UDP,
            _ => rng.gen(),
        };
        let p = Packet::new(rng.gen(), rng.gen(), rng.gen(), rng.gen(), proto);
        if snap.first_match(&p) == target && !found.contains(&p) {
            found.push(p);
            if found.len() == PACKETS_PER_TARGET {
                break;
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use superlinear_classify::generate::SyntheticSpec;

    fn snap(catch_all: f64) -> (Snapshot, SyntheticSpec) {
        let spec = SyntheticSpec { rules: 30, depth: 3, flows_per_rule: 1, catch_all_fraction: catch_all };
        (Snapshot::new(spec.rule_set().unwrap()), spec)
    }

    #[test]
    fn chooses_deep_chains_unused_rules_and_the_catch_all() {
        let (s, spec) = snap(0.1);
        // Innocent traffic uses chains 25..30 only.
        let innocent: Vec<Packet> = (25..30).map(|i| spec.packet(i, 0)).collect();
        // The deepest chain is 3 long: the lowest-priority tail with depth 3 is chain 29's (119).
        let deep = ClassifierAdversary::new("deep", &s, &innocent, 512, 1).unwrap();
        assert_eq!(deep.target_rules(), vec![Some(119)]);
        // Rotation: unused tails first (chains 24, 23, ...), never the catch-all (120).
        let rot = ClassifierAdversary::new("rotate:3", &s, &innocent, 512, 1).unwrap();
        assert_eq!(rot.target_rules(), vec![Some(99), Some(95), Some(91)]);
        let got: Vec<Option<usize>> =
            (0..4).map(|n| s.first_match(&rot.request(n).request).map(|r| r as usize)).collect();
        assert_eq!(got, vec![Some(99), Some(95), Some(91), Some(99)]);
        let all = ClassifierAdversary::new("catch-all", &s, &innocent, 512, 1).unwrap();
        assert_eq!(all.target_rules(), vec![Some(120)]);
        let r = all.request(7);
        assert_eq!((s.first_match(&r.request), r.bits, r.class), (Some(120), 512, Class::Attack));
        assert_ne!(all.request(0).flow, all.request(1).flow, "one spoofed flow per packet");
    }

    #[test]
    fn attack_packets_cost_what_mrf_cannot_shorten() {
        use crate::stage::{ClassifierWorker, Prediction};
        use std::sync::Arc;
        use superlinear_core::Worker;
        let (s, spec) = snap(0.1);
        let s = Arc::new(s);
        let mut w = ClassifierWorker::new(Arc::clone(&s), "mrf", Prediction::Position).unwrap();
        let rot = ClassifierAdversary::new("rotate:3", &s, &[], 512, 1).unwrap();
        // Tails 119, 115, 111 on a fresh list. A hit moves only the chain's head (to the front)
        // the first time, since every other level sits right behind its dependency; the next
        // hit pulls one more level forward, and each move pushes the other targets back: exact
        // work 120, 117, 114, then 120, 118, 116.
        let work: Vec<u64> = (0..6).map(|n| w.serve(&rot.request(n).request)).collect();
        assert_eq!(work, vec![120, 117, 114, 120, 118, 116]);
        // An innocent packet for a head costs 1 once its rule is at the front.
        let head = Packet::new(superlinear_classify::generate::SRC, spec.packet(7, 0).dst, 1, 8, proto::UDP);
        w.serve(&head);
        assert_eq!(w.serve(&head), 1);
        // The catch-all (120): every time a scan past all its dependencies.
        let all = ClassifierAdversary::new("catch-all", &s, &[], 512, 1).unwrap();
        let work: Vec<u64> = (0..3).map(|n| w.serve(&all.request(n).request)).collect();
        assert!(work.iter().all(|&x| x > 100), "{work:?}");
    }

    #[test]
    fn default_policy_and_bad_specs() {
        let (s, _) = snap(0.0);
        let none = ClassifierAdversary::new("catch-all", &s, &[], 512, 1).unwrap();
        assert_eq!(none.target_rules(), vec![None]);
        assert_eq!(s.first_match(&none.request(3).request), None);
        assert!(ClassifierAdversary::new("rotate:0", &s, &[], 512, 1).is_err());
        assert!(ClassifierAdversary::new("rotate:121", &s, &[], 512, 1).is_err());
        assert!(ClassifierAdversary::new("syn-flood", &s, &[], 512, 1).is_err());
        // A match-all rule ahead of the final one shadows it: nothing reaches the catch-all.
        use superlinear_classify::{Action, RuleSet};
        let set = RuleSet::new(vec![Rule::any(Action::Accept), Rule::any(Action::Drop)], Action::Drop);
        let e = ClassifierAdversary::new("catch-all", &Snapshot::new(set), &[], 512, 1).unwrap_err();
        assert!(e.to_string().contains("final rule 1"), "{e}");
    }
}
