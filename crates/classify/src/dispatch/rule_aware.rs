//! The rule-aware dispatcher: RSS over the header bits that keep each rule's packets on one
//! worker, chosen for the rule set and k by the working-set law (paper App. A; the locality
//! advisor, applied at configuration time).
//!
//! A 5-tuple hash splits the packets of one wildcard rule over every worker, so every worker
//! keeps that rule (and its dependencies) active (paper §4.2, Fig. 7); hashing fewer fields
//! keeps a rule's packets together but may pile many rules, or one heavy flow, onto one worker.
//! The right trade-off depends on the rules and the traffic, so this dispatcher decides by
//! prediction rather than by a fixed rule:
//!
//! 1. *Candidates*: every non-empty subset of {sip, dip, sport, dport, proto}, plus masked
//!    variants found from the rules alone: per field a number of leading bits (addresses 8, 16,
//!    24; ports 8) such that many rules' ranges fall in one block of those bits ("pinned"
//!    rules: all their packets carry the same hash input). The masked candidates kept are the
//!    best few by an estimate of the busiest worker's work (see [`CandidateScore::cost`]).
//! 2. *Shortlist by the law*: on a calibration sample of packets (a prefix of the traffic, or
//!    headers generated inside the rules when no traffic is given), the item of a packet is its
//!    first-match rule and each candidate's assignment is scored with the working-set law:
//!    q(k)·ℓ(k), the predicted work speedup of move-to-front workers, in steady state (the
//!    sample served twice, the second pass counted). Fast, and exact for independent rules,
//!    where MRF is MTF.
//! 3. *Decide by simulation*: dependencies make MRF differ from MTF (on ClassBench acl1 the law
//!    ranked sip,dport above sip,dip, which does 4 % less work per busiest worker), so the
//!    [`SIMULATED_SHORTLIST`] best by the law are re-scored exactly: k MRF classifiers serve the
//!    sample as the candidate routes it, in the same steady state, and the score is one
//!    worker's work over the busiest worker's. The highest wins; exact ties go to fewer bits.
//!
//! At dispatch time it is plain RSS (Toeplitz over the masked fields, indirection table): as
//! cheap as 5-tuple RSS and implementable by NICs that hash selected fields; no flow table and
//! no classification in the dispatcher (which would be serial work). Because the plain RSS
//! field sets are among the candidates, it is at least as good on the calibration sample as
//! the best of them that the law shortlists. On the paper's flow-diversity workload it picks
//! the destination port (Fig. 9d).

use super::descriptor::{Descriptor, RouteDescriptors};
use super::rss::{FieldMask, RssToeplitzDispatcher};
use crate::classifier::{MrfClassifier, MrfVariant};
use crate::packet::Packet;
use crate::rules::Rule;
use crate::table::Snapshot;
use std::collections::HashMap;
use std::sync::Arc;
use superlinear_core::dispatch::{Dispatcher, WorkerLoads};
use superlinear_core::hash::{fmix64, Fmix64Build};
use superlinear_core::law::{DispatcherCandidate, Evaluator, ItemSequence, MtfCost};

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

fn hashed_bits(m: &FieldMask) -> u32 {
    m.src as u32 + m.dst as u32 + m.sport as u32 + m.dport as u32 + m.proto as u32
}

/// One candidate's score on a calibration sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FieldScore {
    /// The hashed bits.
    pub mask: FieldMask,
    /// Steady-state work speedup over one worker: q(k)·ℓ(k) predicted by the law for
    /// move-to-front workers ([`score_with_law`]), or exact for MRF workers ([`score_with_mrf`]).
    pub work_speedup: f64,
}

/// Best first; exact ties go to fewer hashed bits. (A wider "tie" band, meant for candidates
/// that only add a constant field, also swallowed fields that are not constant: on fw1 it chose
/// a candidate 10 % worse in steady state.)
fn sort_best_first(scores: &mut [FieldScore]) {
    scores.sort_by(|a, b| {
        b.work_speedup
            .partial_cmp(&a.work_speedup)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(hashed_bits(&a.mask).cmp(&hashed_bits(&b.mask)))
    });
}

/// Scores the shortlist at k with the working-set law on `sample` (first-match rules as
/// items) and returns every score, best first.
///
/// The score is the steady state: the sample is served twice and only the second pass counts.
/// A classifier serves traffic that keeps repeating its flows for far longer than a sample, so
/// what decides is the working sets the workers settle into, not how fast they first pull their
/// rules forward; on a short sample those cold-start costs would dominate the score.
pub fn score_with_law(snap: &Snapshot, sample: &[Packet], k: usize) -> Vec<FieldScore> {
    let once = crate::run::first_match_ids(snap, sample);
    let twice: Vec<u32> = once.iter().chain(&once).copied().collect();
    let doubled: Vec<Packet> = sample.iter().chain(sample).copied().collect();
    let law = |ids: Vec<u32>| {
        Evaluator::new(ItemSequence::new(ids, snap.len() + 1).expect("rule ids fit the law"), Box::new(MtfCost))
    };
    let (mut first_pass, mut both_passes) = (law(once), law(twice));
    let mut scores: Vec<FieldScore> = snap
        .rule_aware_plan()
        .shortlist(k)
        .into_iter()
        .map(|mask| {
            let build = move |k| Box::new(RssToeplitzDispatcher::new(mask, k)) as Box<dyn Dispatcher<Packet>>;
            let first = first_pass.candidate(&DispatcherCandidate::new(mask.name(), sample, build), k.max(1));
            let both = both_passes.candidate(&DispatcherCandidate::new(mask.name(), &doubled, build), k.max(1));
            let work_speedup = match (first, both) {
                (Ok(a), Ok(b)) => {
                    let span = b.workers.iter().zip(&a.workers).map(|(b, a)| b.work - a.work).max().unwrap_or(0);
                    (b.baseline_work - a.baseline_work) as f64 / span.max(1) as f64
                }
                _ => 0.0,
            };
            FieldScore { mask, work_speedup }
        })
        .collect();
    sort_best_first(&mut scores);
    scores
}

/// Scores `masks` at k exactly: each worker is an MRF classifier (precomputed dependencies)
/// serving the sample packets the candidate routes to it, twice, the second pass counted (the
/// steady state, as in [`score_with_law`]); the score is one worker's counted work over the
/// busiest worker's. Returns every score, best first.
pub fn score_with_mrf(snap: &Arc<Snapshot>, sample: &[Packet], k: usize, masks: &[FieldMask]) -> Vec<FieldScore> {
    let steady_work = |packets: &[Packet]| -> u64 {
        let mut worker = MrfClassifier::new(snap.clone(), MrfVariant::Precomputed);
        for p in packets {
            worker.classify(p);
        }
        packets.iter().map(|p| worker.classify(p).work).sum()
    };
    let baseline = steady_work(sample);
    let k = k.max(1);
    let mut scores: Vec<FieldScore> = masks
        .iter()
        .map(|&mask| {
            let rss = RssToeplitzDispatcher::new(mask, k);
            let mut queues: Vec<Vec<Packet>> = vec![Vec::new(); k];
            for p in sample {
                queues[rss.home(p).expect("RSS is key-affine")].push(*p);
            }
            let span = queues.iter().map(|q| steady_work(q)).max().unwrap_or(0);
            FieldScore { mask, work_speedup: baseline as f64 / span.max(1) as f64 }
        })
        .collect();
    sort_best_first(&mut scores);
    scores
}

/// RSS over the fields a [`RuleAwarePlan`] chose for k workers.
pub struct RuleAwareDispatcher {
    inner: RssToeplitzDispatcher,
}

impl RuleAwareDispatcher {
    /// The dispatcher for `k` workers over the fields the rule set's calibration chose
    /// (see [`Snapshot::rule_aware_fields`]).
    pub fn new(snap: &Arc<Snapshot>, k: usize) -> Self {
        Self { inner: RssToeplitzDispatcher::new(snap.rule_aware_fields(k), k) }
    }

    /// The hashed fields it chose.
    pub fn fields(&self) -> FieldMask {
        self.inner.fields()
    }
}

impl RouteDescriptors for RuleAwareDispatcher {
    #[inline]
    fn route_descriptors(&mut self, packets: &[Packet], descriptors: &[Descriptor], workers: &mut [u32]) {
        self.inner.route_descriptors(packets, descriptors, workers)
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
        let spec = generate::SyntheticSpec { rules: 997, depth: 0, flows_per_rule: 50, catch_all_fraction: 0.0 };
        let snap = Arc::new(Snapshot::new(spec.rule_set().unwrap()));
        let sample = spec.trace(20_000, 9).unwrap();
        let scores = score_with_law(&snap, &sample, 16);
        // Hashing the destination port (alone or with constant fields) pins every rule.
        let pins = |m: FieldMask| m.dport == 16 && m.sport == 0;
        assert!(pins(scores[0].mask), "{:?}", &scores[..3]);
        let five = scores.iter().find(|s| s.mask == FieldMask::FIVE_TUPLE).unwrap();
        assert!(scores[0].work_speedup > 3.0 * five.work_speedup, "{scores:?}");
        // Without traffic, headers generated from the rules lead to the same choice.
        assert!(pins(snap.rule_aware_fields(16)));
    }

    #[test]
    fn exact_rescoring_equals_the_law_where_mrf_is_mtf() {
        // Independent rules: MRF is move-to-front, so the simulated score is the law's exactly.
        let spec = generate::SyntheticSpec { rules: 499, depth: 0, flows_per_rule: 50, catch_all_fraction: 0.0 };
        let snap = Arc::new(Snapshot::new(spec.rule_set().unwrap()));
        let sample = spec.trace(10_000, 3).unwrap();
        let law = score_with_law(&snap, &sample, 8);
        let masks: Vec<FieldMask> = law.iter().map(|s| s.mask).collect();
        let exact = score_with_mrf(&snap, &sample, 8, &masks);
        assert_eq!(exact.len(), law.len());
        for e in &exact {
            let l = law.iter().find(|l| l.mask == e.mask).unwrap();
            assert!((e.work_speedup - l.work_speedup).abs() < 1e-9 * l.work_speedup, "{e:?} vs {l:?}");
        }
        assert_eq!(exact[0].mask, law[0].mask);
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
