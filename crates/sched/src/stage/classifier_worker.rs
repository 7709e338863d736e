//! A packet classifier as a stage worker: any of the classify crate's list classifiers (those
//! whose [`PacketClassifier`] answers `position_of` and `cost_now`: MRF, the static list) plus
//! the cheap pre-match SurgeProtector needs to predict a packet's job size before serving it
//! (thesis §3.5.2: Pigasus predicts Full Matching's cost from candidate rules its fast matcher
//! finds in constant time).
//!
//! The pre-match is a flow cache, the fast path software classifiers put in front of their rule
//! list (nftables flowtables, Open vSwitch's exact-match cache): per worker, a direct-mapped
//! table from a 5-tuple to the rule its flow's last packet matched, one hash and one compare.
//! On a hit the rule is known, and the job size is predicted from this worker's *current* state
//! ([`Prediction`]):
//!
//! * `position` (default): the rule's position in this worker's current MRF order plus one, the
//!   rules a scan compares before reaching it. MRF never moves a rule ahead of a dependency
//!   (paper §4.1), so a rule at the end of a chain of d dependencies never costs less than
//!   d + 1, however often it is hit: exactly what the attack exploits, and what the prediction
//!   sees.
//! * `learned`: the work the rule's packets really cost, learned per rule (the thesis's z_k).
//! * `oracle`: the exact work now, by a scan that does not reorder: the true job size the
//!   simulator assumes (§3.6.2). Not an estimator a system could afford (the scan costs what
//!   the job costs), but the reference the others are measured against.
//!
//! A miss (a flow's first packet, or one evicted) gets no prediction here: the stage's estimator
//! falls back to the largest work it has seen, so an attacker gains nothing by spoofing fresh
//! flows (see [`super::classifier_attack`]).

use super::estimators::LearnMode;
use super::CostOracle;
use std::sync::{Arc, LazyLock};
use superlinear_classify::classifier::{ClassifierOptions, Lookup, PacketClassifier, REGISTRY};
use superlinear_classify::{Error, Packet, Snapshot};
use superlinear_core::hash::fmix64;
use superlinear_core::Worker;

/// Flow-cache slots per worker (a power of two).
pub const FLOW_CACHE_SLOTS: usize = 1 << 16;

/// Classifiers the stage can protect: the registry's first-match lists (those that answer
/// [`PacketClassifier::position_of`] and `cost_now`), in registry order.
pub static CLASSIFIER_ALGOS: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| REGISTRY.iter().filter(|e| e.first_match_list).map(|e| e.name).collect());

/// How a worker predicts the job size of a packet whose flow it has seen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Prediction {
    /// Current position of the flow's rule in the worker's order, plus one.
    Position,
    /// Work learned per rule.
    Learned(LearnMode),
    /// The exact work now (a scan without reordering; the true job size).
    Oracle,
}

impl Prediction {
    /// Parses `position`, `learned` (with `learn` for how) or `oracle`.
    pub fn parse(name: &str, learn: LearnMode) -> Result<Self, Error> {
        match name.trim() {
            "position" => Ok(Prediction::Position),
            "learned" => Ok(Prediction::Learned(learn)),
            "oracle" => Ok(Prediction::Oracle),
            other => Err(Error::config(format!("unknown estimator '{other}' (known: position, learned, oracle)"))),
        }
    }
}

/// Direct-mapped 5-tuple → rule cache (rule id, or the rule count for the default policy).
struct FlowCache {
    slots: Vec<(Packet, u32)>,
}

const EMPTY: u32 = u32::MAX;

impl FlowCache {
    fn new() -> Self {
        Self { slots: vec![(Packet::default(), EMPTY); FLOW_CACHE_SLOTS] }
    }

    #[inline]
    fn slot(p: &Packet) -> usize {
        let a = ((p.src as u64) << 32) | p.dst as u64;
        let b = ((p.sport as u64) << 24) | ((p.dport as u64) << 8) | p.proto as u64;
        (fmix64(a ^ fmix64(b)) as usize) & (FLOW_CACHE_SLOTS - 1)
    }

    #[inline]
    fn get(&self, p: &Packet) -> Option<u32> {
        let (k, v) = self.slots[Self::slot(p)];
        (v != EMPTY && k == *p).then_some(v)
    }

    #[inline]
    fn put(&mut self, p: &Packet, rule: u32) {
        self.slots[Self::slot(p)] = (*p, rule);
    }
}

/// One classifier worker with its flow cache and per-rule costs.
pub struct ClassifierWorker {
    classifier: Box<dyn PacketClassifier>,
    snap: Arc<Snapshot>,
    cache: FlowCache,
    /// Learned work per rule, the default policy last; negative: never seen.
    learned: Vec<f64>,
    prediction: Prediction,
}

impl ClassifierWorker {
    /// A fresh worker of a list classifier ([`CLASSIFIER_ALGOS`]) over `snap`, in priority
    /// order.
    pub fn new(snap: Arc<Snapshot>, algo: &str, prediction: Prediction) -> Result<Self, Error> {
        let name = algo.trim();
        let classifier = REGISTRY
            .iter()
            .find(|e| e.name == name && e.first_match_list)
            .map(|e| (e.build)(Arc::clone(&snap), ClassifierOptions::default()))
            .ok_or_else(|| {
                Error::config(format!("unknown classifier '{name}' (known: {})", CLASSIFIER_ALGOS.join(", ")))
            })?;
        let learned = vec![-1.0; snap.len() + 1];
        Ok(Self { classifier, snap, cache: FlowCache::new(), learned, prediction })
    }

    /// Classifies `p` (self-adjusting) and remembers its flow's rule.
    pub fn classify(&mut self, p: &Packet) -> Lookup {
        let lookup = self.classifier.classify(p);
        let code = lookup.rule.unwrap_or(self.snap.len() as u32);
        self.cache.put(p, code);
        if let Prediction::Learned(mode) = self.prediction {
            let w = lookup.work as f64;
            let v = &mut self.learned[code as usize];
            *v = if *v < 0.0 {
                w
            } else {
                match mode {
                    LearnMode::Max => v.max(w),
                    LearnMode::Last => w,
                    LearnMode::Ewma(a) => a * w + (1.0 - a) * *v,
                }
            };
        }
        lookup
    }

    /// Where `rule` stands in this worker's order now (0 = front); a static list never moves.
    pub fn position_of(&self, rule: u32) -> usize {
        self.classifier.position_of(rule).expect("a list classifier (checked when built)")
    }

    /// The exact work `p` would cost now, without reordering.
    pub fn cost_now(&self, p: &Packet) -> u64 {
        self.classifier.cost_now(p).expect("a list classifier (checked when built)")
    }
}

impl Worker<Packet> for ClassifierWorker {
    #[inline]
    fn serve(&mut self, p: &Packet) -> u64 {
        self.classify(p).work
    }
}

impl CostOracle<Packet> for ClassifierWorker {
    fn current_cost(&self, p: &Packet) -> Option<u64> {
        match self.prediction {
            Prediction::Oracle => Some(self.cost_now(p)),
            Prediction::Position => {
                let code = self.cache.get(p)?;
                // The default policy is reached by a full scan and never moves.
                let n = self.snap.len() as u32;
                Some(if code == n { n as u64 } else { self.position_of(code) as u64 + 1 })
            }
            Prediction::Learned(_) => {
                let v = self.learned[self.cache.get(p)? as usize];
                (v >= 0.0).then(|| v.round() as u64)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use superlinear_classify::generate::{SyntheticSpec, DST, SRC};
    use superlinear_classify::packet::proto;

    /// 20 chains of 4 rules (head /32 accept, then wider prefixes, alternating actions) and a
    /// catch-all drop rule (80).
    fn chains() -> (Arc<Snapshot>, SyntheticSpec) {
        let spec = SyntheticSpec { rules: 20, depth: 3, flows_per_rule: 2, catch_all_fraction: 0.1 };
        (Arc::new(Snapshot::new(spec.rule_set().unwrap())), spec)
    }

    fn head(chain: u16, sport: u16) -> Packet {
        Packet::new(SRC, DST, sport, chain + 1, proto::UDP)
    }

    #[test]
    fn predicts_from_the_flows_rule_after_the_first_packet() {
        let (snap, spec) = chains();
        let mut w = ClassifierWorker::new(Arc::clone(&snap), "mrf", Prediction::Position).unwrap();
        // Chain 10's head is rule 40: a miss first, 41 rules compared, then moved to the front.
        let h = head(10, 1024);
        assert_eq!(w.current_cost(&h), None);
        assert_eq!(w.serve(&h), 41);
        assert_eq!((w.position_of(40), w.current_cost(&h)), (0, Some(1)));
        assert_eq!(w.serve(&h), 1);
        // Another flow of the same rule is a miss until seen.
        assert_eq!(w.current_cost(&head(10, 1025)), None);
        // The chain's tail (43) sits right behind its dependency 42, which sits behind 41: MRF
        // cannot move it, so it costs its priority position every time.
        let t = spec.packet(10, 0);
        assert_eq!(w.serve(&t), 44);
        assert_eq!((w.position_of(43), w.current_cost(&t)), (43, Some(44)));
        assert_eq!(w.serve(&t), 44);
        // The catch-all (80) depends on every accept rule: it stays behind the last of them.
        let c = spec.catch_all_packet(0);
        assert_eq!(w.serve(&c), 81);
        assert_eq!(w.current_cost(&c), Some(w.position_of(80) as u64 + 1));
        assert!(w.position_of(80) > 60, "the catch-all stays behind its dependencies");
    }

    #[test]
    fn learned_oracle_and_static() {
        let (snap, _) = chains();
        let p = head(5, 1024);
        let mut l = ClassifierWorker::new(Arc::clone(&snap), "mrf", Prediction::Learned(LearnMode::Max)).unwrap();
        assert_eq!((l.serve(&p), l.serve(&p)), (21, 1));
        assert_eq!(l.current_cost(&p), Some(21), "the max of 21 and 1");
        let mut o = ClassifierWorker::new(Arc::clone(&snap), "mrf", Prediction::Oracle).unwrap();
        assert_eq!(o.current_cost(&p), Some(21));
        o.serve(&p);
        assert_eq!(o.current_cost(&p), Some(1));
        let mut s = ClassifierWorker::new(Arc::clone(&snap), "static", Prediction::Position).unwrap();
        s.serve(&p);
        assert_eq!((s.current_cost(&p), s.serve(&p)), (Some(21), 21));
        assert!(ClassifierWorker::new(Arc::clone(&snap), "tcam", Prediction::Oracle).is_err());
        let e = ClassifierWorker::new(snap, "tuple-merge", Prediction::Oracle).err().unwrap().to_string();
        assert!(e.contains("unknown classifier 'tuple-merge' (known: static, mrf, mrf-swap)"), "{e}");
        assert!(Prediction::parse("psychic", LearnMode::Last).is_err());
    }
}
