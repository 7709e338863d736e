//! Dispatch candidates: ways of splitting a request stream over k workers that the law (and the
//! locality advisor) evaluates against one item sequence.
//!
//! A candidate only says which worker serves each request; which item each request asks for is
//! the separate [`super::ItemSequence`]. For key workloads the candidates are the engine's key
//! dispatchers ([`key_candidates`]). Any other [`Dispatcher<R>`] over any request type plugs in
//! through [`DispatcherCandidate::new`]: packet dispatchers that hash a subset of the 5-tuple
//! (src IP, dst IP, ports, proto) take the packets as `R`, while the item sequence holds the
//! matched rule of each packet (paper, Fig. 9d).

use crate::dispatch::{self, Dispatcher};
use crate::error::Error;

/// A way to assign each request of a stream to one of k workers.
pub trait Candidate: Sync {
    /// Name in tables and result rows (e.g. `hash`, `rss:dst-port`).
    fn name(&self) -> String;
    /// Number of requests it assigns (must equal the item sequence's length).
    fn requests(&self) -> usize;
    /// Fills `out` with the worker (in `0..k`) of every request, in request order.
    fn assign(&self, k: usize, out: &mut Vec<u32>);
}

pub use crate::run_config::{engine_dispatcher, ENGINE_DISPATCH_SALT};

/// Builds a fresh dispatcher for k workers.
pub type DispatcherBuilder<'a, R> = dyn Fn(usize) -> Box<dyn Dispatcher<R>> + Send + Sync + 'a;

/// A candidate that routes requests of type `R` through a [`Dispatcher<R>`], exactly as the
/// engine's runner does (chunked `route_chunk`, loads counted), so assignments match a run.
pub struct DispatcherCandidate<'a, R> {
    name: String,
    requests: &'a [R],
    build: Box<DispatcherBuilder<'a, R>>,
}

impl<'a, R: Sync> DispatcherCandidate<'a, R> {
    /// A candidate named `name` over `requests`, building its dispatcher for k with `build`.
    pub fn new(
        name: impl Into<String>,
        requests: &'a [R],
        build: impl Fn(usize) -> Box<dyn Dispatcher<R>> + Send + Sync + 'a,
    ) -> Self {
        Self { name: name.into(), requests, build: Box::new(build) }
    }
}

/// Requests routed per `route_chunk` call (as the runner does).
const CHUNK: usize = 1024;

impl<R: Sync> Candidate for DispatcherCandidate<'_, R> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn requests(&self) -> usize {
        self.requests.len()
    }

    fn assign(&self, k: usize, out: &mut Vec<u32>) {
        let mut dispatcher = (self.build)(k);
        let mut dispatched = vec![0u64; k.max(1)];
        out.clear();
        out.resize(self.requests.len(), 0);
        for (chunk, slots) in self.requests.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
            dispatcher.route_chunk(chunk, &mut dispatched, slots);
        }
    }
}

/// The engine's key dispatcher `name` over `keys`, seeded as an engine run with seed `seed`.
pub fn key_candidate<'a>(name: &str, keys: &'a [u64], seed: u64) -> Result<DispatcherCandidate<'a, u64>, Error> {
    let entry = dispatch::lookup(name)?;
    Ok(DispatcherCandidate::new(entry.name, keys, move |k| (entry.build)(k, seed ^ ENGINE_DISPATCH_SALT)))
}

/// Every key dispatcher of the registry (hash, round-robin, random) as a candidate.
pub fn key_candidates(keys: &[u64], seed: u64) -> Vec<DispatcherCandidate<'_, u64>> {
    dispatch::REGISTRY.iter().map(|e| key_candidate(e.name, keys, seed).expect("registry names resolve")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_candidates_cover_every_dispatcher() {
        let keys: Vec<u64> = (0..100).collect();
        let names: Vec<String> = key_candidates(&keys, 1).iter().map(|c| c.name()).collect();
        assert_eq!(names, vec!["rr", "random", "hash"]);
        let mut out = Vec::new();
        key_candidate("round-robin", &keys, 1).unwrap().assign(3, &mut out);
        assert_eq!(&out[..5], &[0, 1, 2, 0, 1]);
        assert!(key_candidate("nope", &keys, 1).is_err());
        // Hash dispatch is key-affine: equal keys, equal workers.
        let rep: Vec<u64> = [5u64, 9, 5, 9, 5].to_vec();
        key_candidate("hash", &rep, 1).unwrap().assign(8, &mut out);
        assert_eq!((out[0], out[1]), (out[2], out[3]));
        assert_eq!(out[0], out[4]);
    }
}
