//! `superlinear-classify`: a self-adjusting packet classifier and its scaling study (paper §4,
//! Figs. 8–9).
//!
//! The modules form layers, each using only those below it (`tests/module_layers.rs` checks
//! this, so the module graph has no cycle), from the bottom up:
//!
//! 1. [`packet`]: the 5-tuple packet.
//! 2. [`rules`]: the rule model (IPv4 prefixes or ranges, port ranges, protocol value/mask, an
//!    action; first match wins, a default policy when nothing matches), readers for ClassBench
//!    filters, a native text format and the `nft list ruleset` subset, and an nftables writer.
//!    Beside it, [`trace`]: packet traces (ClassBench headers, pcap, pcapng, a compact binary
//!    form).
//! 3. [`generate`]: the paper's synthetic rule sets and traces (rule size, dependency depth,
//!    flow diversity, catch-all traffic).
//! 4. [`table`]: the compact rule table the matching loops scan.
//! 5. [`deps`]: the dependency graph over it (§4.1).
//! 6. [`snapshot`]: one generation of a rule set, shared read-only by every worker: rules,
//!    compact table and dependencies. It knows nothing of classifiers or dispatchers.
//! 7. [`classifier`]: the static first-match list, MRF with precomputed dependencies and the
//!    paper's iterative swap variant, per-worker statistics, and atomic rule updates.
//! 8. [`dispatch`]: RSS (Toeplitz hash over configurable fields, indirection table) and the
//!    rule-aware dispatcher, whose [`RuleAwarePlanner`] holds a snapshot and caches its
//!    calibrated field choices (it simulates classifiers to choose).
//! 9. [`run`]: runs any classifier behind any dispatcher through the core runner, and the
//!    brute-force check.
//! 10. [`predict`]: a run's work predicted from a sample of its traffic by simulating the run's
//!     classifier behind the run's dispatcher exactly (what `advise --rules` reports).
//! 11. [`config`] and [`record`]: the boundary. Configs as Python spells them (serde, one
//!     default each, unknown fields rejected) and the results as Python reads them.

pub mod classifier;
pub mod config;
pub mod deps;
pub mod dispatch;
pub mod footprint;
pub mod generate;
pub mod packet;
pub mod predict;
pub mod record;
pub mod rules;
pub mod run;
pub mod snapshot;
pub mod table;
pub mod trace;

pub use classifier::{Lookup, MrfClassifier, MrfVariant, StaticClassifier};
pub use deps::DependencyGraph;
pub use dispatch::RuleAwarePlanner;
pub use packet::Packet;
pub use rules::{Action, Rule, RuleSet};
pub use snapshot::Snapshot;
pub use superlinear_core::Error;
pub use table::CompactRule;
