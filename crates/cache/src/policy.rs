//! The one eviction-policy interface of the delayed-hits simulator.
//!
//! The simulator classifies every request (true hit, delayed hit, miss) and tells the policy;
//! when a fill arrives it asks the policy what to do, because in this model (thesis §2.3.2)
//! admission and eviction happen only when a fill arrives: evict any cached objects (usually
//! none, or one to make room) and admit the arriving object or not. A policy keeps whatever
//! order it needs; the simulator checks its answers against the cache contents and capacity.

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
}
