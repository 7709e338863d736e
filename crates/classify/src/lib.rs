//! `superlinear-classify`: a self-adjusting packet classifier and its scaling study (paper §4,
//! Figs. 8–9).
//!
//! * [`rules`]: the rule model (IPv4 prefixes or ranges, port ranges, protocol value/mask, an
//!   action; first match wins, a default policy when nothing matches), readers for ClassBench
//!   filters, a native text format and the `nft list ruleset` subset, and an nftables writer;
//! * [`packet`] and [`trace`]: the 5-tuple packet and traces (ClassBench headers, pcap, pcapng,
//!   a compact binary form);
//! * [`generate`]: the paper's synthetic rule sets and traces (rule size, dependency depth,
//!   flow diversity, catch-all traffic);
//! * [`table`] and [`deps`]: the compact, shared, immutable rule table and the dependency graph
//!   (§4.1);
//! * [`classifier`]: the static first-match list, MRF with precomputed dependencies and the
//!   paper's iterative swap variant, per-worker statistics, and atomic rule updates;
//! * [`dispatch`]: RSS (Toeplitz hash over configurable fields, indirection table) and the
//!   rule-aware dispatcher;
//! * [`run`]: runs any classifier behind any dispatcher through the core runner, and the
//!   brute-force check.

pub mod classifier;
pub mod config;
pub mod deps;
pub mod dispatch;
pub mod generate;
pub mod packet;
pub mod record;
pub mod rules;
pub mod run;
pub mod table;
pub mod trace;

pub use classifier::{Lookup, MrfClassifier, MrfVariant, StaticClassifier};
pub use deps::DependencyGraph;
pub use packet::Packet;
pub use rules::{Action, Rule, RuleSet};
pub use superlinear_core::Error;
pub use table::{CompactRule, Snapshot};
