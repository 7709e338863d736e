//! Classifiers: the static first-match list (what nftables does), the self-adjusting MRF
//! list in two variants, the TupleMerge tuple-space index and, in front of it, a self-adjusting
//! rule cache and an exact-match flow cache, each a `superlinear_core::Worker<Packet>` whose work units are the rules
//! compared (plus hash slots probed for the tuple-space ones). Every worker of a run shares one immutable [`Snapshot`]; a self-adjusting
//! worker keeps its own order as an array of rule indices into it (paper §4.1).
//!
//! Adding a classifier means one new file here and one line in [`REGISTRY`].

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

/// Builds a classifier worker over a snapshot.
pub type ClassifierConstructor = fn(Arc<Snapshot>, ClassifierOptions) -> Box<dyn Worker<Packet>>;

/// One registry entry.
pub struct ClassifierEntry {
    /// Name on the command line and in result rows.
    pub name: &'static str,
    /// Whether it reorders itself.
    pub self_adjusting: bool,
    /// One line for `--help`.
    pub summary: &'static str,
    /// The constructor.
    pub build: ClassifierConstructor,
}

/// Every classifier.
pub const REGISTRY: &[ClassifierEntry] = &[
    ClassifierEntry {
        name: "static",
        self_adjusting: false,
        summary: "static first-match list in priority order (nftables)",
        build: |s, o| Box::new(StaticClassifier::with_options(s, o)),
    },
    ClassifierEntry {
        name: "mrf",
        self_adjusting: true,
        summary: "Move-Recursively-Forward with precomputed dependencies (paper Alg. 1)",
        build: |s, o| Box::new(MrfClassifier::with_options(s, MrfVariant::Precomputed, o)),
    },
    ClassifierEntry {
        name: "mrf-swap",
        self_adjusting: true,
        summary: "MRF, the paper's iterative variant: swap backwards, overlap test per step",
        build: |s, o| Box::new(MrfClassifier::with_options(s, MrfVariant::Swap, o)),
    },
    ClassifierEntry {
        name: "tuple-merge",
        self_adjusting: false,
        summary: "TupleMerge tuple-space search (Daly, Liu, Torng, ToN 2019)",
        build: |s, o| Box::new(TupleMergeClassifier::with_options(s, o)),
    },
    ClassifierEntry {
        name: "rule-cache",
        self_adjusting: true,
        summary: "MRF front of recent rules with their cover sets, falling through to tuple-merge",
        build: |s, o| {
            let front = if o.front == 0 { DEFAULT_FRONT } else { o.front };
            Box::new(RuleCacheClassifier::with_options(s, front, 0, o))
        },
    },
    ClassifierEntry {
        name: "flow-cache",
        self_adjusting: true,
        summary: "direct-mapped exact-match flow cache (5-tuple -> rule) in front of tuple-merge",
        build: |s, o| Box::new(FlowCacheClassifier::with_options(s, DEFAULT_FLOW_CACHE_ENTRIES, o)),
    },
    ClassifierEntry {
        name: "rule-cache-flow",
        self_adjusting: true,
        summary: "rule-cache behind a direct-mapped exact-match flow cache (5-tuple -> rule)",
        build: |s, o| {
            let front = if o.front == 0 { DEFAULT_FRONT } else { o.front };
            Box::new(RuleCacheClassifier::with_options(s, front, DEFAULT_FLOW_ENTRIES, o))
        },
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
