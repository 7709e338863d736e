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
//! 3. *Decide by simulation*: dependencies make MRF differ from MTF, so the law can misrank
//!    candidates where rules depend on each other; the [`SIMULATED_SHORTLIST`] best by the law
//!    are re-scored exactly: k MRF classifiers serve the sample as the candidate routes it, in
//!    the same steady state, and the score is one worker's work over the busiest worker's. The
//!    highest wins; exact ties go to fewer bits.
//!
//! At dispatch time it is plain RSS (Toeplitz over the masked fields, indirection table): as
//! cheap as 5-tuple RSS and implementable by NICs that hash selected fields; no flow table and
//! no classification in the dispatcher (which would be serial work). Because the plain RSS
//! field sets are among the candidates, it is at least as good on the calibration sample as
//! the best of them that the law shortlists. On the paper's flow-diversity workload it picks
//! the destination port (Fig. 9d).

mod plan;
mod planner;
mod score;

pub use plan::{CandidateScore, RuleAwarePlan, GENERATED_SAMPLE, SIMULATED_SHORTLIST};
pub use planner::RuleAwarePlanner;
pub use score::{score_with_law, score_with_mrf, FieldScore};

use super::descriptor::{Descriptor, RouteDescriptors};
use super::rss::{FieldMask, RssToeplitzDispatcher};
use crate::packet::Packet;
use superlinear_core::dispatch::{Dispatcher, WorkerLoads};

/// RSS over the fields a [`RuleAwarePlan`] chose for k workers.
pub struct RuleAwareDispatcher {
    inner: RssToeplitzDispatcher,
}

impl RuleAwareDispatcher {
    /// The dispatcher for `k` workers over the fields the planner chose for its rule set
    /// (see [`RuleAwarePlanner::fields`]).
    pub fn new(planner: &RuleAwarePlanner, k: usize) -> Self {
        Self { inner: RssToeplitzDispatcher::new(planner.fields(k), k) }
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
    use crate::rules::Rule;
    use crate::snapshot::Snapshot;
    use std::sync::Arc;

    #[test]
    fn finds_the_destination_port_on_the_flow_diversity_rules() {
        let set = generate::rule_size_set(997);
        let plan = RuleAwarePlan::new(&set.rules);
        let c = plan.choose(32);
        assert_eq!(c.mask.name(), "dport");
        assert_eq!((c.pinned, c.blocks, c.largest_block), (997, 997, 1));
        let spec = generate::SyntheticSpec { rules: 997, depth: 0, flows_per_rule: 50, catch_all_fraction: 0.0 };
        let planner = RuleAwarePlanner::new(Arc::new(Snapshot::new(spec.rule_set().unwrap())));
        let sample = spec.trace(20_000, 9).unwrap();
        let scores = score_with_law(planner.snapshot(), planner.plan(), &sample, 16);
        // Hashing the destination port (alone or with constant fields) pins every rule.
        let pins = |m: FieldMask| m.dport == 16 && m.sport == 0;
        assert!(pins(scores[0].mask), "{:?}", &scores[..3]);
        let five = scores.iter().find(|s| s.mask == FieldMask::FIVE_TUPLE).unwrap();
        assert!(scores[0].work_speedup > 3.0 * five.work_speedup, "{scores:?}");
        // Without traffic, headers generated from the rules lead to the same choice.
        assert!(pins(planner.fields(16)));
    }

    #[test]
    fn exact_rescoring_equals_the_law_where_mrf_is_mtf() {
        // Independent rules: MRF is move-to-front, so the simulated score is the law's exactly.
        let spec = generate::SyntheticSpec { rules: 499, depth: 0, flows_per_rule: 50, catch_all_fraction: 0.0 };
        let snap = Arc::new(Snapshot::new(spec.rule_set().unwrap()));
        let sample = spec.trace(10_000, 3).unwrap();
        let law = score_with_law(&snap, &RuleAwarePlan::new(&snap.rules.rules), &sample, 8);
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
