//! The scaling law of distributed self-adjusting systems, computed exactly from a request stream
//! (paper, Appendix A): working-set sizes per request, the cost function g of the worker's
//! structure, and from them ℓ(k) (work reduction), q(k) (parallelizability) and the predicted
//! speedup S(k) = 1 / (s + (1 − s)/(q(k)·ℓ(k))).
//!
//! Parts, one file each:
//! * [`fenwick`]: the Fenwick tree behind the O(n log n) working-set pass;
//! * [`items`]: the item sequence (what each request asks for), separate from dispatch;
//! * [`working_set`]: |W_t(x)| per request, plus exact first-access list positions;
//! * [`cost`]: the cost functions g (MTF, LRU), in the engine's work units;
//! * [`speedup`]: ℓ, q and S from per-worker work;
//! * [`candidate`]: dispatch candidates (the engine's key dispatchers, or any `Dispatcher<R>`);
//! * [`evaluate`]: the driver tying them together;
//! * [`simulate`]: the model for workers without a cost function g (splay trees): the engine's
//!   own worker simulated on each worker's dispatched stream.
//!
//! The prediction is exact for the engine's work counts (replicated state, every worker starting
//! from the same initial order): predicted per-worker work equals a run's `worker_work`.

pub mod candidate;
pub mod cost;
pub mod evaluate;
pub mod fenwick;
pub mod items;
pub mod simulate;
pub mod speedup;
pub mod working_set;

#[cfg(test)]
mod engine_match_tests;

pub use candidate::{engine_dispatcher, key_candidate, key_candidates, Candidate, DispatcherCandidate};
pub use cost::{cost_function, CostFunction, LruCost, MtfCost};
pub use evaluate::Evaluator;
pub use items::ItemSequence;
pub use simulate::{simulated_record, Simulator};
pub use speedup::{general_law, LawPoint, LawPointRecord, WorkerStats, WorkerStatsRecord};
pub use working_set::Access;

use crate::error::Error;
use crate::workload::WorkloadSpec;

/// A key workload as an engine run with the same spec, request count and seed sees it.
#[derive(Clone, Debug)]
pub struct KeyWorkload {
    /// The key of each request (what key dispatchers route on).
    pub keys: Vec<u64>,
    /// The item of each request, as a position in the initial order (ascending keys).
    pub items: ItemSequence,
    /// The items' keys in the initial order (what a simulated worker is built from).
    pub item_keys: Vec<u64>,
}

/// Generates (or reads) `requests` requests of `spec` with `seed` exactly as the engine does;
/// for traces, `requests` = 0 takes the whole trace.
pub fn key_workload(spec: &WorkloadSpec, requests: usize, seed: u64) -> Result<KeyWorkload, Error> {
    let w = spec.generate(requests, seed)?;
    let items = ItemSequence::from_keys(&w.items, &w.requests)?;
    Ok(KeyWorkload { keys: w.requests, items, item_keys: w.items })
}
