//! The rule-aware dispatcher's first step, from the rules alone: every field choice (whole
//! fields and leading-bit masks) scored by how many rules it pins to one hash input, and the
//! shortlist of those the law then scores on traffic.

use crate::dispatch::rss::FieldMask;
use crate::rules::Rule;
use std::collections::HashMap;
use superlinear_core::hash::{fmix64, Fmix64Build};

const ADDR_BITS: [u8; 5] = [0, 8, 16, 24, 32];
const PORT_BITS: [u8; 3] = [0, 8, 16];
/// Masked candidates (not whole-field subsets) carried to the law per k.
const MASKED_SHORTLIST: usize = 8;
/// Candidates, best by the law first, re-scored by simulating the MRF workers.
pub const SIMULATED_SHORTLIST: usize = 12;
/// Packets of a calibration sample generated from the rules when no traffic is given.
pub const GENERATED_SAMPLE: usize = 20_000;
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
    /// The estimated busiest-worker cost at k workers (see the `rule_aware` module docs).
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

    /// The candidates the law scores at k: all whole-field subsets and the best masked ones.
    pub fn shortlist(&self, k: usize) -> Vec<FieldMask> {
        let whole = |m: &FieldMask| {
            [(m.src, 32), (m.dst, 32), (m.sport, 16), (m.dport, 16), (m.proto, 8)]
                .iter()
                .all(|&(b, w)| b == 0 || b == w)
        };
        let mut out: Vec<FieldMask> = self.candidates.iter().map(|c| c.mask).filter(whole).collect();
        let mut masked: Vec<&CandidateScore> = self.candidates.iter().filter(|c| !whole(&c.mask)).collect();
        let k = k.max(1);
        masked.sort_by(|a, b| {
            a.cost(self.rules, k).partial_cmp(&b.cost(self.rules, k)).unwrap_or(std::cmp::Ordering::Equal)
        });
        out.extend(masked.into_iter().take(MASKED_SHORTLIST).map(|c| c.mask));
        out
    }
}
