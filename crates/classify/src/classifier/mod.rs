//! Classifiers: the static first-match list (what nftables does), the self-adjusting MRF
//! list in two variants, the TupleMerge tuple-space index and, in front of it, a self-adjusting
//! rule cache and an exact-match flow cache, each a [`PacketClassifier`] (a
//! `superlinear_core::Worker<Packet>` whose work units are the rules compared, plus hash slots
//! probed for the tuple-space ones). Every worker of a run shares one immutable [`Snapshot`]; a
//! self-adjusting worker keeps its own order as an array of rule indices into it (paper §4.1).
//!
//! Adding a classifier means one new file here (its type and its `PacketClassifier` impl) and
//! one line in [`REGISTRY`]: every caller (runs, the check, runs with updates, footprints, the
//! attack stage) asks the trait, never the name.

mod flow_cache;
mod mrf;
pub mod prefilter;
mod rule_cache;
mod static_list;
pub mod stats;
pub mod tuple_merge;
pub mod updates;

pub use flow_cache::{FlowCacheClassifier, DEFAULT_FLOW_CACHE_ENTRIES, FLOW_ENTRY_BYTES};
pub use mrf::{MrfClassifier, MrfVariant};
pub use rule_cache::{RuleCacheClassifier, DEFAULT_FLOW_ENTRIES, DEFAULT_FRONT};
pub use static_list::StaticClassifier;
pub use stats::{StatsSink, WorkerStats};
pub use tuple_merge::{TupleMergeClassifier, TupleParams, TupleSpace};
pub use updates::RuleUpdates;

use crate::packet::Packet;
use crate::rules::Action;
use crate::snapshot::Snapshot;
use std::sync::Arc;
use superlinear_core::{Error, Worker};

/// The outcome of one lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lookup {
    /// The first-match rule in priority order (`None`: the default policy applied).
    pub rule: Option<u32>,
    /// The verdict.
    pub action: Action,
    /// Rules compared (the work units; tuple-space classifiers add hash slots probed).
    pub work: u64,
    /// Position in the worker's current order where the scan stopped (0 = front).
    pub position: u32,
    /// Dependency-chain levels the self-adjustment touched (0 for static lists).
    pub chain: u32,
    /// The second work counter, the self-adjustment's upkeep that `work` leaves out (0 for
    /// static lists): positions rewritten in the worker's order by the moves, plus entries of
    /// the dependency and same-action lists read, plus rules tested by a backward dependency
    /// scan. See `mrf.rs` for exactly what each variant counts.
    pub moved: u64,
}

/// Options every classifier constructor takes.
#[derive(Clone, Default)]
pub struct ClassifierOptions {
    /// Where to deliver this worker's statistics when it is dropped (`None`: keep none).
    pub stats: Option<(StatsSink, usize)>,
    /// Active-rule window in packets for the statistics.
    pub window: usize,
    /// Front capacity of `rule-cache` in rules (0: [`DEFAULT_FRONT`]); others ignore it.
    pub front: usize,
}

/// How a worker's hot bytes are counted from its own stream ([`crate::footprint`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HotCount {
    /// The table up to the deepest first match of its stream × item bytes (every scan reads
    /// the table from the top; a packet no rule matches reads all of it).
    TablePrefix,
    /// Its distinct first-match rules × item bytes (in steady state its active rules lead its
    /// order); every rule where a packet of its stream hits the default policy (a full scan).
    ActiveRules,
    /// Its distinct flows × item bytes (flow-cache entries).
    Flows,
    /// Its whole own structure, own bytes (an upper bound, the same at every k).
    Own,
}

impl HotCount {
    /// The item stream the working-set law models the hot state over (`rules`, `flows`), or
    /// `None` where the hot state is not a working set of items (a table prefix, a whole
    /// structure).
    pub fn law_items(self) -> Option<&'static str> {
        match self {
            HotCount::ActiveRules => Some("rules"),
            HotCount::Flows => Some("flows"),
            HotCount::TablePrefix | HotCount::Own => None,
        }
    }
}

/// What one worker's memory footprint is made of besides its own bytes ([`crate::footprint`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FootprintModel {
    /// Bytes of the snapshot's read-only structures its lookups read.
    pub shared_bytes: usize,
    /// What its hot bytes count, in words.
    pub hot: &'static str,
    /// Bytes per hot item (rule or flow; 0 where the hot state is a whole structure).
    pub item_bytes: usize,
    /// How its hot bytes are counted from its stream.
    pub count: HotCount,
}

/// A packet classifier: one per worker, serving packets (its work units as
/// [`Worker::serve`] returns them) and answering what the callers beyond a plain run need:
/// the lookup itself (the check compares its rule and verdict with brute force), its memory
/// (the footprint), and, for list classifiers, where a rule stands and what a packet would
/// cost now (the attack stage's job-size prediction). Each classifier implements it in its own
/// file; how it follows rule updates is its [`ClassifierEntry::follow`].
pub trait PacketClassifier: Worker<Packet> + Send {
    /// Classifies one packet (and self-adjusts, where the classifier does).
    fn classify(&mut self, p: &Packet) -> Lookup;

    /// The rule set it classifies against now (a following worker's changes with the
    /// published generation).
    fn snapshot(&self) -> &Arc<Snapshot>;

    /// Bytes this worker allocates for itself (not the snapshot's shared structures).
    fn own_bytes(&self) -> usize;

    /// Flow-cache entries of this worker (0: none).
    fn flow_entries(&self) -> usize {
        0
    }

    /// Its footprint model: shared bytes, hot state and how the hot bytes are counted.
    fn footprint_model(&self) -> FootprintModel;

    /// Where `rule` stands in its scan order now (0 = front; the list's length for a rule not
    /// in it): `Some` for every rule where the classifier is a first-match list, `None` where
    /// it is not.
    fn position_of(&self, _rule: u32) -> Option<usize> {
        None
    }

    /// The exact work `p` would cost now, without self-adjusting: `Some` where the classifier
    /// is a first-match list, `None` where it is not.
    fn cost_now(&self, _p: &Packet) -> Option<u64> {
        None
    }
}

/// Builds a classifier worker over a snapshot.
pub type ClassifierConstructor = fn(Arc<Snapshot>, ClassifierOptions) -> Box<dyn PacketClassifier>;

/// Builds a classifier worker that follows published rule updates itself: before each lookup it
/// checks for a new generation and switches to it in place.
pub type FollowingConstructor = fn(Arc<RuleUpdates>, ClassifierOptions) -> Box<dyn PacketClassifier>;

/// One registry entry.
pub struct ClassifierEntry {
    /// Name on the command line and in result rows.
    pub name: &'static str,
    /// Whether it reorders itself.
    pub self_adjusting: bool,
    /// Whether it is a first-match list, one that answers [`PacketClassifier::position_of`]
    /// and [`PacketClassifier::cost_now`] (the attack stage predicts job sizes only from these).
    pub first_match_list: bool,
    /// One line for `--help`.
    pub summary: &'static str,
    /// The constructor.
    pub build: ClassifierConstructor,
    /// A worker that follows [`RuleUpdates`] in place; `None`: a run with updates rebuilds it
    /// with `build` on every new snapshot.
    pub follow: Option<FollowingConstructor>,
}

/// Every classifier.
pub const REGISTRY: &[ClassifierEntry] = &[
    ClassifierEntry {
        name: "static",
        self_adjusting: false,
        first_match_list: true,
        summary: "static first-match list in priority order (nftables)",
        build: |s, o| Box::new(StaticClassifier::with_options(s, o)),
        follow: None,
    },
    ClassifierEntry {
        name: "mrf",
        self_adjusting: true,
        first_match_list: true,
        summary: "Move-Recursively-Forward with precomputed dependencies (paper Alg. 1)",
        build: |s, o| Box::new(MrfClassifier::with_options(s, MrfVariant::Precomputed, o)),
        follow: Some(|u, o| Box::new(MrfClassifier::following_with_options(u, MrfVariant::Precomputed, o))),
    },
    ClassifierEntry {
        name: "mrf-swap",
        self_adjusting: true,
        first_match_list: true,
        summary: "MRF, the paper's iterative variant: swap backwards, overlap test per step",
        build: |s, o| Box::new(MrfClassifier::with_options(s, MrfVariant::Swap, o)),
        follow: Some(|u, o| Box::new(MrfClassifier::following_with_options(u, MrfVariant::Swap, o))),
    },
    ClassifierEntry {
        name: "tuple-merge",
        self_adjusting: false,
        first_match_list: false,
        summary: "TupleMerge tuple-space search (Daly, Liu, Torng, ToN 2019)",
        build: |s, o| Box::new(TupleMergeClassifier::with_options(s, o)),
        follow: None,
    },
    ClassifierEntry {
        name: "rule-cache",
        self_adjusting: true,
        first_match_list: false,
        summary: "MRF front of recent rules with their cover sets, falling through to tuple-merge",
        build: |s, o| {
            let front = if o.front == 0 { DEFAULT_FRONT } else { o.front };
            Box::new(RuleCacheClassifier::with_options(s, front, 0, o))
        },
        follow: None,
    },
    ClassifierEntry {
        name: "flow-cache",
        self_adjusting: true,
        first_match_list: false,
        summary: "direct-mapped exact-match flow cache (5-tuple -> rule) in front of tuple-merge",
        build: |s, o| Box::new(FlowCacheClassifier::with_options(s, DEFAULT_FLOW_CACHE_ENTRIES, o)),
        follow: None,
    },
    ClassifierEntry {
        name: "rule-cache-flow",
        self_adjusting: true,
        first_match_list: false,
        summary: "rule-cache behind a direct-mapped exact-match flow cache (5-tuple -> rule)",
        build: |s, o| {
            let front = if o.front == 0 { DEFAULT_FRONT } else { o.front };
            Box::new(RuleCacheClassifier::with_options(s, front, DEFAULT_FLOW_ENTRIES, o))
        },
        follow: None,
    },
];

/// Looks up a classifier by name.
pub fn lookup(name: &str) -> Result<&'static ClassifierEntry, Error> {
    let name = name.trim();
    REGISTRY.iter().find(|e| e.name == name).ok_or_else(|| {
        let known: Vec<&str> = REGISTRY.iter().map(|e| e.name).collect();
        Error::config(format!("unknown classifier '{name}' (known: {})", known.join(", ")))
    })
}

#[cfg(test)]
mod tests {
    //! Every registry entry answers what the callers need, checked entry by entry from the
    //! registry itself, so that a new entry is covered without editing the test.

    use super::*;
    use crate::generate::{headers_for_rules, SyntheticSpec};
    use crate::rules::RuleSet;

    /// Chains of dependencies ending in a catch-all rule, traffic to the rules (the catch-all
    /// included), headers inside them and packets only the catch-all matches.
    fn workload(rules: usize, depth: usize, seed: u64) -> (RuleSet, Vec<Packet>) {
        let spec = SyntheticSpec { rules, depth, flows_per_rule: 3, catch_all_fraction: 0.1 };
        let set = spec.rule_set().unwrap();
        let mut packets = spec.trace(2_000, seed).unwrap();
        packets.extend(headers_for_rules(&set, 1_000, seed + 1).unwrap());
        packets.extend((0..50).map(|i| Packet::new(0x0102_0304 + i, 0x0506_0708, 9, 1 + i as u16, 47)));
        // Replayed, so that self-adjusting and caching workers serve from their adjusted state.
        packets.extend(packets.clone());
        (set, packets)
    }

    /// Classifies every packet with `c`, comparing rule and verdict with brute force, and the
    /// work with `cost_now` just before (where it answers and the rule set did not change).
    fn agrees_with_brute_force(name: &str, c: &mut dyn PacketClassifier, set: &RuleSet, packets: &[Packet]) {
        for (i, p) in packets.iter().enumerate() {
            let (cost, generation) = (c.cost_now(p), c.snapshot().generation);
            let got = c.classify(p);
            let (first, verdict) = set.decide(p);
            assert_eq!((got.rule, got.action), (first.map(|r| r as u32), verdict), "{name}: packet {i} ({p})");
            assert!(got.work > 0, "{name}: packet {i} cost nothing");
            if let Some(cost) = cost.filter(|_| c.snapshot().generation == generation) {
                assert_eq!(cost, got.work, "{name}: cost_now of packet {i}");
            }
        }
    }

    #[test]
    fn every_entry_answers_what_the_callers_need() {
        let (with_catch_all, packets) = workload(40, 3, 7);
        // The same rules without the catch-all: its packets get the default policy.
        let n = with_catch_all.len();
        let without = RuleSet::new(with_catch_all.rules[..n - 1].to_vec(), Action::Accept);
        assert!(packets.iter().any(|p| without.first_match(p).is_none()), "some packets hit the default policy");
        let empty = Arc::new(Snapshot::new(RuleSet::new(Vec::new(), Action::Drop)));
        for (set, entry) in [with_catch_all, without].iter().flat_map(|s| REGISTRY.iter().map(move |e| (s, e))) {
            let snap = Arc::new(Snapshot::new(set.clone()));
            let name = entry.name;
            assert_eq!(REGISTRY.iter().filter(|e| e.name == name).count(), 1, "{name}: one entry per name");
            assert_eq!(lookup(name).unwrap().name, name);
            assert!(!entry.summary.is_empty(), "{name}");
            // Builds, and classifies exactly as brute force (before and after self-adjusting).
            let mut c = (entry.build)(snap.clone(), ClassifierOptions::default());
            assert!(Arc::ptr_eq(c.snapshot(), &snap), "{name}: classifies against the snapshot it was given");
            agrees_with_brute_force(name, c.as_mut(), set, &packets);
            // `serve` is the lookup's work, also behind the plain worker a run holds.
            let mut lookups = (entry.build)(snap.clone(), ClassifierOptions::default());
            let mut served: Box<dyn Worker<Packet>> = (entry.build)(snap.clone(), ClassifierOptions::default());
            for p in &packets {
                assert_eq!(served.serve(p), lookups.classify(p).work, "{name}: serve and classify");
            }
            // A list answers both questions of the attack stage, for every rule; others neither.
            let list = entry.first_match_list;
            assert_eq!(c.cost_now(&packets[0]).is_some(), list, "{name}: position_of and cost_now");
            for r in 0..snap.len() as u32 {
                assert_eq!(c.position_of(r).is_some_and(|i| i < snap.len()), list, "{name}: position of rule {r}");
            }
            // The footprint model.
            let m = c.footprint_model();
            assert!(!m.hot.is_empty(), "{name}: hot state in words");
            assert_eq!(m.item_bytes == 0, m.count == HotCount::Own, "{name}: item bytes where items are counted");
            assert_eq!(c.flow_entries() > 0, m.count == HotCount::Flows, "{name}: flow entries and flow items");
            if m.count == HotCount::Own {
                assert!(c.own_bytes() > 0, "{name}: a whole own structure of no bytes");
            }
            if m.count == HotCount::ActiveRules || m.count == HotCount::TablePrefix {
                assert!(m.shared_bytes > 0, "{name}: rules read from the snapshot");
            }
            assert_eq!(m.count.law_items().is_some(), matches!(m.count, HotCount::ActiveRules | HotCount::Flows));
            // Over an empty rule set every packet gets the default policy.
            let mut e = (entry.build)(empty.clone(), ClassifierOptions::default());
            let l = e.classify(&packets[0]);
            assert_eq!((l.rule, l.action), (None, Action::Drop), "{name}: empty rule set");
        }
    }

    /// An entry that follows updates switches to every published generation before its next
    /// packet and classifies exactly against it; the others are rebuilt and are checked above.
    #[test]
    fn following_entries_switch_generations() {
        let (first, packets) = workload(30, 2, 3);
        let (second, more) = workload(25, 4, 5);
        for entry in REGISTRY {
            let Some(follow) = entry.follow else { continue };
            let updates = RuleUpdates::new(first.clone());
            let mut c = follow(updates.clone(), ClassifierOptions::default());
            agrees_with_brute_force(entry.name, c.as_mut(), &first, &packets[..500]);
            assert_eq!(c.snapshot().generation, 0);
            assert_eq!(updates.publish(second.clone()), 1);
            agrees_with_brute_force(entry.name, c.as_mut(), &second, &more);
            assert_eq!(c.snapshot().generation, 1, "{}", entry.name);
        }
    }
}
