//! Classifiers: the static first-match list (what nftables does) and the self-adjusting MRF
//! list in two variants, each a `superlinear_core::Worker<Packet>` whose work units are the
//! rules compared. Every worker of a run shares one immutable [`Snapshot`]; a self-adjusting
//! worker keeps its own order as an array of rule indices into it (paper §4.1).
//!
//! Adding a classifier means one new file here and one line in [`REGISTRY`].

mod mrf;
mod static_list;
pub mod stats;
pub mod updates;

pub use mrf::{MrfClassifier, MrfVariant};
pub use static_list::StaticClassifier;
pub use stats::{StatsSink, WorkerStats};
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
    /// Rules compared (the work units).
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
];

/// Looks up a classifier by name.
pub fn lookup(name: &str) -> Result<&'static ClassifierEntry, Error> {
    let name = name.trim();
    REGISTRY.iter().find(|e| e.name == name).ok_or_else(|| {
        let known: Vec<&str> = REGISTRY.iter().map(|e| e.name).collect();
        Error::config(format!("unknown classifier '{name}' (known: {})", known.join(", ")))
    })
}
