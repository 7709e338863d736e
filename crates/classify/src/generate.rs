//! The paper's synthetic workloads (§4.3) and a generic header generator.
//!
//! * Rule size (Fig. 8d): n independent rules, one source and destination address, UDP, the
//!   destination port numbering the rule; sizes are primes close to 2k, 5k, 10k.
//! * Dependency depth (Fig. 9b): every base rule becomes a chain of d + 1 rules whose source
//!   prefix widens from /32 (highest priority) to /0 with alternating actions, so each depends
//!   on the one before; traffic hits the /0 tail of each chain.
//! * Flow diversity (Fig. 9c, 9d): f flows per rule (different source ports), uniformly mixed.
//! * Catch-all: a final match-everything rule with the other action, which depends on every
//!   rule and so never moves; a share of the traffic goes to it.
//!
//! Packets are a function of (rule, flow), never a flow table: memory stays that of the trace,
//! whatever the number of flows (up to millions).

use crate::packet::{proto, Packet};
use crate::rules::{Action, AddrRange, PortRange, ProtoMatch, Rule, RuleSet};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use superlinear_core::Error;

/// The source address of every synthetic rule (TEST-NET-1).
pub const SRC: u32 = 0xc000_0201;
/// The destination address of every synthetic rule (TEST-NET-2).
pub const DST: u32 = 0xc633_6401;
/// First source port of the flows of a rule.
pub const FLOW_PORT_BASE: u16 = 1024;
/// Most base rules (destination ports 1..=65535).
pub const MAX_BASE_RULES: usize = 65_535;

/// The largest prime ≤ n (n ≥ 2), the paper's "close prime" rule-set sizes.
pub fn prime_at_most(n: usize) -> usize {
    let is_prime = |x: usize| x >= 2 && (2..).take_while(|d| d * d <= x).all(|d| !x.is_multiple_of(d));
    (2..=n.max(2)).rev().find(|&x| is_prime(x)).unwrap_or(2)
}

/// A synthetic workload description.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SyntheticSpec {
    /// Base rules (each matching exactly one destination port).
    pub rules: usize,
    /// Extra overlapping rules per base rule (dependency depth d; 0: independent rules).
    pub depth: usize,
    /// Flows per base rule in the trace.
    pub flows_per_rule: usize,
    /// Share of packets sent to a final catch-all rule (0: no catch-all rule).
    pub catch_all_fraction: f64,
}

impl SyntheticSpec {
    /// Independent rules, one flow each (Fig. 8d).
    pub fn rule_size(rules: usize) -> Self {
        Self { rules, depth: 0, flows_per_rule: 1, catch_all_fraction: 0.0 }
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), Error> {
        if self.rules == 0 || self.rules > MAX_BASE_RULES {
            return Err(Error::config(format!("synthetic rules must be 1..={MAX_BASE_RULES}, got {}", self.rules)));
        }
        if self.depth > 32 {
            return Err(Error::config(format!("dependency depth must be 0..=32 (prefix lengths), got {}", self.depth)));
        }
        if self.flows_per_rule == 0 || self.flows_per_rule > (u16::MAX - FLOW_PORT_BASE) as usize {
            return Err(Error::config(format!("flows per rule must be 1..={}", u16::MAX - FLOW_PORT_BASE)));
        }
        if !(0.0..=1.0).contains(&self.catch_all_fraction) {
            return Err(Error::config("catch-all fraction must be in [0, 1]"));
        }
        Ok(())
    }

    /// The rule set.
    pub fn rule_set(&self) -> Result<RuleSet, Error> {
        self.validate()?;
        let d = self.depth;
        let mut rules = Vec::with_capacity(self.rules * (d + 1) + 1);
        for i in 0..self.rules {
            for j in 0..=d {
                let len = 32usize.checked_sub(j * 32 / d.max(1)).map_or(0, |l| if d == 0 { 32 } else { l }) as u8;
                rules.push(Rule {
                    src: AddrRange::prefix(SRC, len),
                    dst: AddrRange::single(DST),
                    sport: PortRange::ANY,
                    dport: PortRange::single(i as u16 + 1),
                    proto: ProtoMatch::exact(proto::UDP),
                    action: if j % 2 == 0 { Action::Accept } else { Action::Drop },
                });
            }
        }
        if self.catch_all_fraction > 0.0 {
            rules.push(Rule::any(Action::Drop));
        }
        Ok(RuleSet::new(rules, Action::Drop))
    }

    /// Total flows in the trace.
    pub fn flows(&self) -> usize {
        self.rules * self.flows_per_rule + usize::from(self.catch_all_fraction > 0.0)
    }

    /// Packet of flow `j` of base rule `i` (it matches the tail rule of chain i first).
    pub fn packet(&self, i: usize, j: usize) -> Packet {
        // Outside every prefix of length ≥ 1 around SRC when there are chains, so the /0 tail
        // is the first match; SRC itself otherwise.
        let src = if self.depth > 0 { SRC ^ 0x8000_0000 } else { SRC };
        Packet::new(src, DST, FLOW_PORT_BASE + j as u16, i as u16 + 1, proto::UDP)
    }

    /// A packet only the catch-all rule matches.
    pub fn catch_all_packet(&self, j: usize) -> Packet {
        Packet::new(SRC, DST, FLOW_PORT_BASE + (j % 1000) as u16, 0, proto::UDP)
    }

    /// `n` packets, flows uniformly at random (the paper's worst case for self-adjustment).
    pub fn trace(&self, n: usize, seed: u64) -> Result<Vec<Packet>, Error> {
        self.validate()?;
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let flows = (self.rules * self.flows_per_rule) as u64;
        Ok((0..n)
            .map(|_| {
                if self.catch_all_fraction > 0.0 && rng.gen::<f64>() < self.catch_all_fraction {
                    self.catch_all_packet(rng.gen_range(0..1000))
                } else {
                    let f = rng.gen_range(0..flows) as usize;
                    self.packet(f / self.flows_per_rule, f % self.flows_per_rule)
                }
            })
            .collect())
    }
}

/// Independent rules of the rule-size workload (Fig. 8d).
pub fn rule_size_set(n: usize) -> RuleSet {
    SyntheticSpec::rule_size(n.clamp(1, MAX_BASE_RULES)).rule_set().expect("valid")
}

/// `n` headers for any rule set, ClassBench style: a rule uniformly at random, then a header
/// uniformly inside its ranges (protocol: the rule's, or TCP/UDP for wildcards). The header is
/// generated from that rule; its first match may be a higher-priority one.
pub fn headers_for_rules(set: &RuleSet, n: usize, seed: u64) -> Result<Vec<Packet>, Error> {
    if set.is_empty() {
        return Err(Error::config("cannot generate headers for an empty rule set"));
    }
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    Ok((0..n)
        .map(|_| {
            let r = &set.rules[rng.gen_range(0..set.len())];
            header_inside(r, &mut rng)
        })
        .collect())
}

/// A header uniformly inside a rule's ranges (protocol: the rule's, or TCP/UDP for a
/// wildcard); a higher-priority rule may match it first.
pub fn header_inside<R: Rng + ?Sized>(r: &Rule, rng: &mut R) -> Packet {
    let proto = if r.proto.mask == 0 {
        if rng.gen() {
            proto::TCP
        } else {
            proto::UDP
        }
    } else {
        (r.proto.value & r.proto.mask) | (rng.gen::<u8>() & !r.proto.mask)
    };
    Packet::new(
        rng.gen_range(r.src.lo..=r.src.hi),
        rng.gen_range(r.dst.lo..=r.dst.hi),
        rng.gen_range(r.sport.lo..=r.sport.hi),
        rng.gen_range(r.dport.lo..=r.dport.hi),
        proto,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primes_and_sizes() {
        assert_eq!((prime_at_most(2000), prime_at_most(5000), prime_at_most(10_000)), (1999, 4999, 9973));
        assert_eq!(rule_size_set(1999).len(), 1999);
    }

    #[test]
    fn dependency_chains_and_tail_traffic() {
        for d in [1usize, 2, 4, 8] {
            let spec = SyntheticSpec { rules: 50, depth: d, flows_per_rule: 3, catch_all_fraction: 0.0 };
            let set = spec.rule_set().unwrap();
            assert_eq!(set.len(), 50 * (d + 1));
            // The chain depth itself is checked with the dependency graph (`deps` tests).
            for p in spec.trace(200, 3).unwrap() {
                let m = set.first_match(&p).unwrap();
                assert_eq!(m % (d + 1), d, "the /0 tail matches first");
            }
        }
    }

    #[test]
    fn catch_all_and_flows() {
        let spec = SyntheticSpec { rules: 100, depth: 0, flows_per_rule: 500, catch_all_fraction: 0.1 };
        let set = spec.rule_set().unwrap();
        let trace = spec.trace(20_000, 1).unwrap();
        let to_catch_all = trace.iter().filter(|p| set.first_match(p) == Some(100)).count();
        assert!((1_500..2_500).contains(&to_catch_all), "{to_catch_all}");
        assert_eq!(spec.flows(), 50_001);
        let big = SyntheticSpec { rules: 10_000, depth: 0, flows_per_rule: 100, catch_all_fraction: 0.0 };
        assert_eq!(big.flows(), 1_000_000);
        assert!(SyntheticSpec { rules: 0, ..big }.validate().is_err());
    }

    #[test]
    fn generic_headers_come_from_their_rule() {
        let set = rule_size_set(20);
        let ps = headers_for_rules(&set, 100, 5).unwrap();
        assert!(ps.iter().all(|p| set.first_match(p).is_some()));
    }
}
