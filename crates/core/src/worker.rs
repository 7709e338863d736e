//! The one trait every worker implements: a data structure that serves its own request stream
//! and counts the abstract work each request cost (the "work" kind of the honesty contract).

/// A worker: one instance of a data structure serving its own stream on one thread.
///
/// `serve` returns the exact, machine-independent work units of the request (list positions
/// visited, tree comparisons, cache accesses plus ρ per miss). Timings are taken outside, by the
/// runner, so a worker never reads a clock.
pub trait Worker<R = u64>: Send {
    /// Serves one request and returns its work units.
    fn serve(&mut self, request: &R) -> u64;

    /// Serves a batch and returns the summed work units. The provided body is monomorphised per
    /// implementation, so a runner pays one virtual call per batch, not per request.
    fn serve_batch(&mut self, requests: &[R]) -> u64 {
        requests.iter().map(|r| self.serve(r)).sum()
    }

    /// Hits so far, for workers that are caches; `None` for everything else.
    fn hits(&self) -> Option<u64> {
        None
    }

    /// The second work counter so far, for self-adjusting workers that count their upkeep
    /// apart from `serve`'s work (the MRF classifier: list entries moved and dependency-list
    /// entries walked, `superlinear_classify::classifier::Lookup::moved`); `None` for
    /// everything else. Cumulative, like [`Worker::hits`]: runners take the difference over
    /// the counted requests.
    fn entries_moved(&self) -> Option<u64> {
        None
    }
}

/// Parameters shared by the worker constructors; each worker reads the ones it needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkerParams {
    /// Cache capacity in items (LRU); `None` means the worker is not a cache.
    pub capacity: Option<usize>,
    /// Extra cycles burnt per key comparison in search trees (the paper's `w`).
    pub compare_cycles: u64,
    /// Cycles burnt per cache miss (the paper's `ρ`).
    pub miss_cycles: u64,
}
