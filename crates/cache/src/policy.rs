//! The one eviction-policy interface of the delayed-hits simulator.
//!
//! The simulator classifies every request (true hit, delayed hit, miss) and tells the policy;
//! when a fill arrives it asks the policy what to do: an object enters the cache only when its
//! fill arrives (thesis Eq. 2.5), and then the policy may evict cached objects (usually one, to
//! make room) and admit or bypass the arriving one. The thesis' model also allows evictions at
//! any step (Eq. 2.6); online policies never need them, but a latency-optimal schedule does
//! (it may forgo a hit so that a miss starts a fetch early, §2.3.1), so a policy may ask for a
//! call at every step. A policy keeps whatever order it needs; the simulator checks its answers
//! against the cache contents and the capacity.

use crate::trace::MissLatency;

/// How a request was served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The object was cached: latency 0.
    Hit,
    /// A fetch for the object was outstanding: latency is the rest of its wait.
    DelayedHit,
    /// Neither: a fetch starts, latency Z.
    Miss,
}

/// What a policy may know when it is built: the capacity, the objects and their Z, and (for
/// offline policies only) the whole request sequence.
#[derive(Clone, Copy, Debug)]
pub struct PolicyContext<'a> {
    /// The request sequence (offline policies read the future from it).
    pub requests: &'a [u32],
    /// Number of objects (dense ids).
    pub objects: usize,
    /// Each object's miss latency.
    pub z: &'a MissLatency,
    /// Cache capacity in objects.
    pub capacity: usize,
}

/// An eviction policy.
pub trait EvictionPolicy {
    /// Called for every request at time `now`, after the simulator classified it.
    fn on_request(&mut self, object: u32, now: u64, outcome: Outcome);

    /// The fill of `object` arrived at `now` (before the request of step `now`); `full` when the
    /// cache holds `capacity` objects. Push the cached objects to evict onto `evict` (empty on
    /// entry) and return whether to admit the arriving one; admitting into a full cache needs an
    /// eviction.
    fn on_fill(&mut self, object: u32, now: u64, full: bool, evict: &mut Vec<u32>) -> bool;

    /// Whether the policy evicts between fills too; asked once, before the first step.
    fn evicts_any_time(&self) -> bool {
        false
    }

    /// At the start of step `now`, before its fills and its request (only for policies that
    /// [evict any time](Self::evicts_any_time)): push cached objects to evict onto `evict`.
    fn on_step(&mut self, _now: u64, _evict: &mut Vec<u32>) {}
}
