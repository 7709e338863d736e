//! Memory per worker, counted exactly: what one worker of a run holds and what its own stream
//! touches (issue 17, the million-flow study, `reproduce million-flows`).
//!
//! Every number here is an exact count of bytes of the classifiers' own data structures
//! (allocated lengths × element sizes, `std::mem::size_of`), not a measurement of the process:
//!
//! * **own bytes**: what one worker allocates for itself (MRF: its order and order labels;
//!   tuple-merge: its index; rule-cache: its index, front, per-rule arrays and flow cache). In
//!   the replicated model every worker holds this much, at every k.
//! * **shared bytes**: the snapshot's read-only structures its lookups read (static: the
//!   compact rule table; MRF: the table and the dependency and same-action lists). One copy
//!   in memory, but every worker's cache holds the lines it reads.
//! * **hot bytes** (per worker): the part of those structures its own stream touches, from
//!   the exact distinct first-match rules and distinct flows (5-tuples) of its stream:
//!   - `static`: the table up to the deepest first match of its stream (every scan reads the
//!     table from the top; a packet no rule matches reads all of it);
//!   - `mrf`, `mrf-swap`: its distinct rules × (compact rule + order entry + label): in steady
//!     state a worker's active rules lead its order (a default hit scans every rule);
//!   - `tuple-merge`, `rule-cache`: their whole own structures (the search probes every table
//!     not cut off by priority, so a bound from the stream would need the probe sequence: an
//!     upper bound, the same at every k);
//!   - `rule-cache-flow`, `flow-cache`: its distinct flows × flow-cache entry bytes (the flow
//!     state a cache holding every flow of its stream needs; the real cache has a fixed number
//!     of entries, [`crate::classifier::DEFAULT_FLOW_ENTRIES`] and
//!     [`crate::classifier::DEFAULT_FLOW_CACHE_ENTRIES`], reported as own bytes).
//!
//! Distinct counts come from the same routing as a run ([`crate::run::assign`]).

use crate::classifier::{HotCount, PacketClassifier};
use crate::dispatch::RuleAwarePlanner;
use crate::packet::Packet;
use crate::run;
use crate::snapshot::Snapshot;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;
use superlinear_core::Error;

/// One worker's stream and the bytes it touches.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WorkerFootprint {
    /// Packets routed to it.
    pub packets: u64,
    /// Distinct first-match rules of its packets (the default policy counted as one more).
    pub rules: u64,
    /// Distinct flows (5-tuples) of its packets.
    pub flows: u64,
    /// Hot bytes (module doc).
    pub hot_bytes: u64,
}

/// Memory of one worker of `algo` behind a dispatcher at k.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Footprint {
    /// Classifier.
    pub algo: String,
    /// Workers.
    pub k: usize,
    /// Bytes one worker allocates for itself (the same for every worker).
    pub own_bytes: u64,
    /// Bytes of the snapshot's read-only structures its lookups read.
    pub shared_bytes: u64,
    /// What `hot_bytes` counts, in words.
    pub hot: String,
    /// Bytes per hot item (rule or flow; 0 where the hot state is a whole structure).
    pub item_bytes: u64,
    /// Flow-cache entries of one worker (0: none).
    pub flow_entries: u64,
    /// The item stream the working-set law models the hot state over (`rules`, `flows`; `None`
    /// where the hot state is a table prefix or a whole structure).
    pub law_items: Option<String>,
    /// Per worker.
    pub workers: Vec<WorkerFootprint>,
}

/// Every packet's flow: distinct 5-tuples numbered in order of first appearance.
pub fn flow_ids(packets: &[Packet]) -> Vec<u32> {
    let mut ids: HashMap<Packet, u32> = HashMap::new();
    packets
        .iter()
        .map(|p| {
            let next = ids.len() as u32;
            *ids.entry(*p).or_insert(next)
        })
        .collect()
}

/// Distinct ids per worker: `ids[t]` of packet t, routed to `workers[t]`.
fn distinct_per_worker(ids: &[u32], workers: &[u32], k: usize) -> Vec<u64> {
    let mut pairs: Vec<u64> = ids.iter().zip(workers).map(|(&id, &w)| (u64::from(w) << 32) | u64::from(id)).collect();
    pairs.sort_unstable();
    pairs.dedup();
    let mut out = vec![0; k];
    for p in pairs {
        out[(p >> 32) as usize] += 1;
    }
    out
}

/// Bytes one worker of `algo` (a registry name) allocates for itself over `snap`, and its
/// flow-cache entries (0: none); `front` as a run's (0: the default).
pub fn own_bytes(snap: &Arc<Snapshot>, algo: &str, front: usize) -> Result<(u64, u64), Error> {
    let c = run::build(algo, snap.clone(), front)?;
    Ok(own_of(c.as_ref()))
}

fn own_of(c: &dyn PacketClassifier) -> (u64, u64) {
    (c.own_bytes() as u64, c.flow_entries() as u64)
}

/// The footprint of `algo` behind `dispatch` at k (seed and front as a run's), given every
/// packet's first-match rule (`rule_ids`, `rules.len()` for the default) and flow (`flow_ids`).
#[allow(clippy::too_many_arguments)]
pub fn footprint(
    planner: &RuleAwarePlanner,
    packets: &[Packet],
    rule_ids: &[u32],
    flow_ids: &[u32],
    algo: &str,
    dispatch: &str,
    k: usize,
    seed: u64,
    front: usize,
) -> Result<Footprint, Error> {
    if rule_ids.len() != packets.len() || flow_ids.len() != packets.len() {
        return Err(Error::config("footprint: one rule id and one flow id per packet"));
    }
    let snap = planner.snapshot();
    let c = run::build(algo, snap.clone(), front)?;
    let name = crate::classifier::lookup(algo)?.name;
    let k = k.max(1);
    let n = snap.len() as u64;
    let (own, entries) = own_of(c.as_ref());
    let model = c.footprint_model();
    drop(c);
    let assignment = run::assign(planner, packets, dispatch, k, seed)?;
    let rules = distinct_per_worker(rule_ids, &assignment, k);
    let flows = distinct_per_worker(flow_ids, &assignment, k);
    let mut workers: Vec<WorkerFootprint> =
        (0..k).map(|i| WorkerFootprint { rules: rules[i], flows: flows[i], ..Default::default() }).collect();
    let mut deepest = vec![0u64; k];
    let mut default_hit = vec![false; k];
    for (&r, &w) in rule_ids.iter().zip(&assignment) {
        let w = w as usize;
        workers[w].packets += 1;
        deepest[w] = deepest[w].max(u64::from(r) + 1).min(n);
        default_hit[w] |= u64::from(r) >= n;
    }
    let item = model.item_bytes as u64;
    for (i, wf) in workers.iter_mut().enumerate() {
        wf.hot_bytes = match model.count {
            HotCount::TablePrefix => deepest[i] * item,
            HotCount::ActiveRules if default_hit[i] => n * item,
            HotCount::ActiveRules => wf.rules * item,
            HotCount::Flows => wf.flows * item,
            HotCount::Own => own,
        };
    }
    Ok(Footprint {
        algo: name.to_string(),
        k,
        own_bytes: own,
        shared_bytes: model.shared_bytes as u64,
        hot: model.hot.to_string(),
        item_bytes: item,
        flow_entries: entries,
        law_items: model.count.law_items().map(str::to_string),
        workers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classifier::{DEFAULT_FLOW_ENTRIES, FLOW_ENTRY_BYTES};
    use crate::generate::SyntheticSpec;
    use crate::snapshot::Snapshot;
    use crate::table::CompactRule;
    use std::sync::Arc;

    #[test]
    fn exact_counts_on_a_generated_set() {
        // 50 independent rules, 20 flows each, every flow sent (a permutation, then again).
        let spec = SyntheticSpec { rules: 50, depth: 0, flows_per_rule: 20, catch_all_fraction: 0.0 };
        let planner = RuleAwarePlanner::new(Arc::new(Snapshot::new(spec.rule_set().unwrap())));
        let mut packets: Vec<Packet> = (0..50).flat_map(|i| (0..20).map(move |j| spec.packet(i, j))).collect();
        packets.extend(packets.clone());
        let rules = planner.snapshot().first_match_ids(&packets);
        let flows = flow_ids(&packets);
        assert_eq!(flows.iter().max(), Some(&999));
        let rule_bytes = std::mem::size_of::<CompactRule>() as u64;
        for k in [1, 4, 16] {
            let f = footprint(&planner, &packets, &rules, &flows, "rule-cache-flow", "rss", k, 1, 0).unwrap();
            assert_eq!(f.workers.iter().map(|w| w.packets).sum::<u64>(), 2_000);
            assert_eq!(f.workers.iter().map(|w| w.flows).sum::<u64>(), 1_000, "every flow on one worker");
            assert!(f.workers.iter().all(|w| w.hot_bytes == w.flows * FLOW_ENTRY_BYTES as u64));
            assert_eq!(f.flow_entries, DEFAULT_FLOW_ENTRIES as u64);
            // The destination port numbers the rule: hashing it alone keeps each rule's flows
            // on one worker, so an MRF worker's active rules are its share of the 50.
            let m = footprint(&planner, &packets, &rules, &flows, "mrf", "rss:dport", k, 1, 0).unwrap();
            assert_eq!(m.workers.iter().map(|w| w.rules).sum::<u64>(), 50);
            assert_eq!(m.own_bytes, 50 * 20);
            assert!(m.workers.iter().all(|w| w.hot_bytes == w.rules * (rule_bytes + 20)));
            let s = footprint(&planner, &packets, &rules, &flows, "static", "rss", k, 1, 0).unwrap();
            assert_eq!((s.own_bytes, s.shared_bytes), (0, 50 * rule_bytes));
            let t = footprint(&planner, &packets, &rules, &flows, "tuple-merge", "rss", k, 1, 0).unwrap();
            assert!(t.own_bytes > 50 * rule_bytes && t.workers.iter().all(|w| w.hot_bytes == t.own_bytes));
        }
        let one = footprint(&planner, &packets, &rules, &flows, "static", "rss", 1, 1, 0).unwrap();
        assert_eq!(one.workers[0].hot_bytes, 50 * rule_bytes);
    }
}
