//! The rule-aware dispatcher: RSS over the header bits the rule set actually discriminates on.
//!
//! A 5-tuple hash splits the packets of one wildcard rule over every worker, so every worker
//! keeps that rule (and its dependencies) active (paper §4.2, Fig. 7); hashing a field the
//! rules leave open is what destroys locality. This dispatcher looks only at the rules, once
//! per rule set, and picks per field how many leading bits to hash (addresses: 0, 8, 16, 24
//! or 32; ports: 0, 8 or 16; protocol: 0 or 8). A rule is *pinned* by a choice when, for every
//! hashed field, its range lies inside one block of that many leading bits: then all of its
//! packets carry the same hash input and reach the same worker. Among all choices it takes
//! the one minimising an estimate of the busiest worker's work: with P pinned rules in D
//! distinct blocks (the largest holding G rules) and U unpinned rules spread everywhere, a
//! worker receives about R = max(P / min(k, D), G) + U / k rules' traffic and keeps
//! A = max(P / min(k, D), G) + U rules active, and a move-to-front list costs it ∝ R · A.
//! Ties go to fewer hashed bits.
//!
//! At dispatch time it is plain RSS (Toeplitz, indirection table) over the masked fields: as
//! cheap as 5-tuple RSS, and implementable by NICs that hash selected fields. It needs no
//! traffic, no flow table and no classification in the dispatcher (which would be serial
//! work). On the paper's flow-diversity workload it finds the destination port (Fig. 9d).

use super::rss::{FieldMask, RssToeplitzDispatcher};
use crate::packet::Packet;
use crate::rules::Rule;
use std::collections::HashMap;
use superlinear_core::dispatch::{Dispatcher, WorkerLoads};
use superlinear_core::hash::{fmix64, Fmix64Build};

const ADDR_BITS: [u8; 5] = [0, 8, 16, 24, 32];
const PORT_BITS: [u8; 3] = [0, 8, 16];
const PROTO_BITS: [u8; 2] = [0, 8];

/// What one field choice does to a rule set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CandidateScore {
    /// The hashed bits.
    pub mask: FieldMask,
    /// Rules pinned to one hash input.
    pub pinned: usize,
    /// Distinct hash inputs among pinned rules.
    pub blocks: usize,
    /// Rules in the largest block.
    pub largest_block: usize,
}

impl CandidateScore {
    /// The estimated busiest-worker cost at k workers (see the module docs).
    pub fn cost(&self, rules: usize, k: usize) -> f64 {
        let (p, u) = (self.pinned as f64, (rules - self.pinned) as f64);
        let per =
            if self.pinned == 0 { 0.0 } else { (p / k.min(self.blocks).max(1) as f64).max(self.largest_block as f64) };
        (per + u / k as f64) * (per + u)
    }
}

/// Every field choice scored on one rule set; choosing for a k is then instant.
#[derive(Clone, Debug)]
pub struct RuleAwarePlan {
    rules: usize,
    candidates: Vec<CandidateScore>,
}

fn block(lo: u32, hi: u32, width: u32, bits: u8) -> Option<u32> {
    if bits == 0 {
        return Some(0);
    }
    let shift = width - bits as u32;
    (lo >> shift == hi >> shift).then_some(lo >> shift)
}

impl RuleAwarePlan {
    /// Scores every choice on `rules`.
    pub fn new(rules: &[Rule]) -> Self {
        let mut candidates = Vec::new();
        let mut groups: HashMap<u64, u32, Fmix64Build> = HashMap::with_hasher(Fmix64Build);
        for &s in &ADDR_BITS {
            for &d in &ADDR_BITS {
                for &sp in &PORT_BITS {
                    for &dp in &PORT_BITS {
                        for &pr in &PROTO_BITS {
                            let mask = FieldMask { src: s, dst: d, sport: sp, dport: dp, proto: pr };
                            if mask == FieldMask::default() {
                                continue;
                            }
                            groups.clear();
                            let mut pinned = 0;
                            for r in rules {
                                let proto = if pr == 0 {
                                    Some(0)
                                } else {
                                    (r.proto.mask == 0xff).then_some(r.proto.value as u32)
                                };
                                let key = (|| {
                                    let a = block(r.src.lo, r.src.hi, 32, s)?;
                                    let b = block(r.dst.lo, r.dst.hi, 32, d)?;
                                    let c = block(r.sport.lo as u32, r.sport.hi as u32, 16, sp)?;
                                    let e = block(r.dport.lo as u32, r.dport.hi as u32, 16, dp)?;
                                    let f = proto?;
                                    Some(
                                        fmix64(((a as u64) << 32) | b as u64)
                                            ^ (((c as u64) << 24) | ((e as u64) << 8) | f as u64),
                                    )
                                })();
                                if let Some(key) = key {
                                    pinned += 1;
                                    *groups.entry(key).or_insert(0) += 1;
                                }
                            }
                            let largest_block = groups.values().copied().max().unwrap_or(0) as usize;
                            candidates.push(CandidateScore { mask, pinned, blocks: groups.len(), largest_block });
                        }
                    }
                }
            }
        }
        Self { rules: rules.len(), candidates }
    }

    /// The best choice for k workers.
    pub fn choose(&self, k: usize) -> CandidateScore {
        let bits = |m: &FieldMask| m.src as u32 + m.dst as u32 + m.sport as u32 + m.dport as u32 + m.proto as u32;
        let k = k.max(1);
        *self
            .candidates
            .iter()
            .min_by(|a, b| {
                a.cost(self.rules, k)
                    .partial_cmp(&b.cost(self.rules, k))
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then(bits(&a.mask).cmp(&bits(&b.mask)))
            })
            .expect("at least one candidate")
    }

    /// Every scored choice.
    pub fn candidates(&self) -> &[CandidateScore] {
        &self.candidates
    }
}

/// RSS over the fields a [`RuleAwarePlan`] chose for k workers.
pub struct RuleAwareDispatcher {
    inner: RssToeplitzDispatcher,
}

impl RuleAwareDispatcher {
    /// The dispatcher the plan picks for `k` workers.
    pub fn new(plan: &RuleAwarePlan, k: usize) -> Self {
        Self { inner: RssToeplitzDispatcher::new(plan.choose(k).mask, k) }
    }

    /// The hashed fields it chose.
    pub fn fields(&self) -> FieldMask {
        self.inner.fields()
    }
}

impl Dispatcher<Packet> for RuleAwareDispatcher {
    #[inline]
    fn route(&mut self, p: &Packet, loads: &WorkerLoads<'_>) -> usize {
        self.inner.route(p, loads)
    }

    fn home(&self, p: &Packet) -> Option<usize> {
        self.inner.home(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate;

    #[test]
    fn finds_the_destination_port_on_the_flow_diversity_rules() {
        let set = generate::rule_size_set(997);
        let plan = RuleAwarePlan::new(&set.rules);
        let c = plan.choose(32);
        assert_eq!(c.mask.name(), "dport");
        assert_eq!((c.pinned, c.blocks, c.largest_block), (997, 997, 1));
    }

    #[test]
    fn prefers_the_field_that_pins_wildcard_rules() {
        // Rules exact on the destination /24 only: hashing dip/24 pins all of them.
        let rules: Vec<Rule> = (0..200u32)
            .map(|i| {
                let mut r = Rule::any(crate::rules::Action::Accept);
                r.dst = crate::rules::AddrRange::prefix(0x0a00_0000 | (i << 8), 24);
                r
            })
            .collect();
        let c = RuleAwarePlan::new(&rules).choose(8);
        assert_eq!(c.mask.name(), "dip/24");
    }
}
