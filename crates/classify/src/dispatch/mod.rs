//! Packet dispatchers (`superlinear_core::dispatch::Dispatcher<Packet>`): RSS with the
//! Toeplitz hash over configurable fields, two-choice flow pinning over the same fields, RSS
//! with heavy flows sprayed, the rule-aware dispatcher, and the core's round-robin and random dispatchers (which are generic
//! over the request type).
//!
//! A dispatcher is named by a spec: `rss:FIELDS` (e.g. `rss:sip,dip,sport,dport,proto`,
//! `rss:dport`), `two-choice:FIELDS`, `spray:FIELDS`, `rule`, `rr`, `random`. Adding one means a new file and a line in [`REGISTRY`].

pub mod descriptor;
pub mod rss;
pub mod rule_aware;
pub mod spray;
pub mod toeplitz;
pub mod toeplitz_gfni;
pub mod two_choice;

pub use rss::{FieldMask, RssToeplitzDispatcher};
pub use rule_aware::{
    score_with_law, score_with_mrf, FieldScore, RuleAwareDispatcher, RuleAwarePlan, RuleAwarePlanner,
};
pub use spray::HeavyFlowSprayDispatcher;
pub use two_choice::TwoChoiceDispatcher;

use crate::packet::Packet;
use descriptor::Descriptor;
use std::sync::Arc;
use superlinear_core::dispatch::{Dispatcher, RandomDispatcher, RoundRobinDispatcher};
use superlinear_core::Error;

/// Builds a packet dispatcher for k workers: (argument after `:`, k, seed, the rules with the
/// rule-aware choices cached for them).
pub type PacketDispatcherConstructor =
    fn(&str, usize, u64, &RuleAwarePlanner) -> Result<Box<dyn Dispatcher<Packet>>, Error>;

/// Builds the same dispatcher over descriptors into `packets` (what runs use).
pub type DescriptorDispatcherConstructor =
    fn(&str, usize, u64, &RuleAwarePlanner, Arc<[Packet]>) -> Result<Box<dyn Dispatcher<Descriptor>>, Error>;

/// The canonical spec of a dispatcher (argument after `:`, k, the rules' planner).
pub type Describer = fn(&str, usize, &RuleAwarePlanner) -> Result<String, Error>;

/// One registry entry.
pub struct PacketDispatcherEntry {
    /// Name (before any `:` argument).
    pub name: &'static str,
    /// What may follow `name:` (`FIELDS`), with its help; `None`: the spec is the name alone.
    pub argument: Option<(&'static str, &'static str)>,
    /// Whether its assignment draws on the run's seed.
    pub seeded: bool,
    /// Whether packets of one flow always reach the same worker.
    pub flow_affine: bool,
    /// One line for `--help`.
    pub summary: &'static str,
    /// The constructor.
    pub build: PacketDispatcherConstructor,
    /// The constructor over descriptors.
    pub descriptors: DescriptorDispatcherConstructor,
    /// Its canonical spec in result rows (`rss` → `rss:sip,dip,sport,dport,proto`).
    pub describe: Describer,
}

/// The fields of `rss:FIELDS`, `two-choice:FIELDS` and `spray:FIELDS` (the 5-tuple without an argument).
fn fields(arg: &str) -> Result<FieldMask, Error> {
    if arg.is_empty() {
        Ok(FieldMask::FIVE_TUPLE)
    } else {
        FieldMask::parse(arg)
    }
}

fn rss(arg: &str, k: usize) -> Result<RssToeplitzDispatcher, Error> {
    Ok(RssToeplitzDispatcher::new(fields(arg)?, k))
}

fn two_choice(arg: &str, k: usize, seed: u64) -> Result<TwoChoiceDispatcher, Error> {
    Ok(TwoChoiceDispatcher::new(fields(arg)?, k, seed))
}

/// The argument of the `rss`-like dispatchers.
const FIELDS: Option<(&str, &str)> = Some(("FIELDS", "sip,dip,sport,dport,proto; dip/24 for a prefix"));

/// `name:FIELDS` with the fields spelled out.
fn with_fields(name: &str, arg: &str) -> Result<String, Error> {
    Ok(format!("{name}:{}", fields(arg)?.name()))
}

/// Every packet dispatcher.
pub const REGISTRY: &[PacketDispatcherEntry] = &[
    PacketDispatcherEntry {
        name: "rss",
        argument: FIELDS,
        seeded: false,
        flow_affine: true,
        summary: "RSS: Toeplitz hash (Microsoft key) over rss:FIELDS (sip,dip,sport,dport,proto; default 5-tuple), indirection table",
        build: |arg, k, _, _| Ok(Box::new(rss(arg, k)?)),
        descriptors: |arg, k, _, _, p| Ok(descriptor::boxed(rss(arg, k)?, p)),
        describe: |arg, _, _| with_fields("rss", arg),
    },
    PacketDispatcherEntry {
        name: "two-choice",
        argument: FIELDS,
        seeded: true,
        flow_affine: true,
        summary: "two-choice flow pinning over two-choice:FIELDS (as rss; default 5-tuple): a flow's first packet picks the less loaded of two hashed workers, the rest follow (spreads heavy flows)",
        build: |arg, k, seed, _| Ok(Box::new(two_choice(arg, k, seed)?)),
        descriptors: |arg, k, seed, _, p| Ok(descriptor::boxed(two_choice(arg, k, seed)?, p)),
        describe: |arg, _, _| with_fields("two-choice", arg),
    },
    PacketDispatcherEntry {
        name: "spray",
        argument: FIELDS,
        seeded: false,
        flow_affine: false,
        summary: "RSS over spray:FIELDS (as rss; default 5-tuple), except heavy flows (at least 1/k of recent packets), sprayed round-robin over all workers (their packets may be classified out of order: for stateless workers)",
        build: |arg, k, _, _| Ok(Box::new(HeavyFlowSprayDispatcher::new(fields(arg)?, k))),
        descriptors: |arg, k, _, _, p| Ok(descriptor::boxed(HeavyFlowSprayDispatcher::new(fields(arg)?, k), p)),
        describe: |arg, _, _| with_fields("spray", arg),
    },
    PacketDispatcherEntry {
        name: "rule",
        argument: None,
        seeded: false,
        flow_affine: true,
        summary: "rule-aware RSS: the header fields (or leading bits) whose split gives MRF workers the least busiest-worker work on a calibration sample",
        build: |_, k, _, planner| Ok(Box::new(RuleAwareDispatcher::new(planner, k))),
        descriptors: |_, k, _, planner, p| Ok(descriptor::boxed(RuleAwareDispatcher::new(planner, k), p)),
        describe: |_, k, planner| Ok(format!("rule({})", planner.fields(k.max(1)).name())),
    },
    PacketDispatcherEntry {
        name: "rr",
        argument: None,
        seeded: false,
        flow_affine: false,
        summary: "round-robin over packets",
        build: |_, k, _, _| Ok(Box::new(RoundRobinDispatcher::new(k))),
        descriptors: |_, k, _, _, _| Ok(Box::new(RoundRobinDispatcher::new(k))),
        describe: |_, _, _| Ok("rr".into()),
    },
    PacketDispatcherEntry {
        name: "random",
        argument: None,
        seeded: true,
        flow_affine: false,
        summary: "uniformly random worker per packet",
        build: |_, k, seed, _| Ok(Box::new(RandomDispatcher::new(k, seed))),
        descriptors: |_, k, seed, _, _| Ok(Box::new(RandomDispatcher::new(k, seed))),
        describe: |_, _, _| Ok("random".into()),
    },
];

/// Splits `name[:arg]` and finds the entry. A colon with nothing after it (`rss:`) is refused:
/// it would silently mean the default (the 5-tuple for RSS).
pub fn lookup(spec: &str) -> Result<(&'static PacketDispatcherEntry, &str), Error> {
    let spec = spec.trim();
    let (name, arg) = spec.split_once(':').unwrap_or((spec, ""));
    if spec.contains(':') && arg.trim().is_empty() {
        return Err(Error::config(format!(
            "packet dispatcher '{spec}': nothing after ':' (e.g. rss:sip,dip; plain {name} for its default)"
        )));
    }
    let entry = REGISTRY.iter().find(|e| e.name == name).ok_or_else(|| {
        let known: Vec<&str> = REGISTRY.iter().map(|e| e.name).collect();
        Error::config(format!("unknown packet dispatcher '{name}' (known: {}; e.g. rss:dport)", known.join(", ")))
    })?;
    if entry.argument.is_none() && !arg.is_empty() {
        return Err(Error::config(format!("dispatcher '{name}' takes no ':' argument")));
    }
    Ok((entry, arg))
}

/// Builds the dispatcher `spec` for k workers over the planner's rules.
pub fn build(
    spec: &str,
    k: usize,
    seed: u64,
    planner: &RuleAwarePlanner,
) -> Result<Box<dyn Dispatcher<Packet>>, Error> {
    let (entry, arg) = lookup(spec)?;
    (entry.build)(arg, k.max(1), seed, planner)
}

/// Builds the dispatcher `spec` over descriptors into `packets` (routes exactly as [`build`]).
pub fn build_descriptors(
    spec: &str,
    k: usize,
    seed: u64,
    planner: &RuleAwarePlanner,
    packets: Arc<[Packet]>,
) -> Result<Box<dyn Dispatcher<Descriptor>>, Error> {
    let (entry, arg) = lookup(spec)?;
    (entry.descriptors)(arg, k.max(1), seed, planner, packets)
}

/// The canonical name of a spec (`rss` → `rss:sip,dip,sport,dport,proto`; `rule` →
/// `rule(dport)` with the fields it picks for k).
pub fn describe(spec: &str, k: usize, planner: &RuleAwarePlanner) -> Result<String, Error> {
    let (entry, arg) = lookup(spec)?;
    (entry.describe)(arg, k, planner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_colon_without_an_argument_is_refused() {
        for spec in ["rss:", "rss: ", "rr:", "rule:"] {
            assert!(lookup(spec).is_err(), "{spec}");
        }
        assert_eq!(lookup("rss").unwrap().0.name, "rss");
        assert_eq!(lookup("rss:dport").unwrap().1, "dport");
        assert!(lookup("two-choice:").is_err());
        assert_eq!(lookup("two-choice:sip,dip").unwrap().0.name, "two-choice");
    }

    #[test]
    fn two_choice_is_named_and_built_like_rss() {
        let planner = RuleAwarePlanner::new(Arc::new(crate::Snapshot::new(
            crate::rules::native::parse("accept dport 80\n", "t", &Default::default()).unwrap(),
        )));
        assert_eq!(describe("two-choice", 4, &planner).unwrap(), "two-choice:sip,dip,sport,dport,proto");
        assert_eq!(describe("two-choice:dport,sip", 4, &planner).unwrap(), "two-choice:sip,dport");
        assert!(build("two-choice:mac", 4, 1, &planner).is_err());
        assert!(build("two-choice:dip/24", 4, 1, &planner).is_ok());
    }
}
