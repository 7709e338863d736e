//! Rule additions and deletions while traffic flows (paper §4.1): a new rule set is compiled
//! (table and dependency graph) away from the workers, then published in one step; each worker
//! notices at its next packet (one atomic load), takes the new snapshot and builds a fresh
//! order (a new index array). A packet is classified entirely against one generation, so no
//! packet is lost or classified against a half-updated rule set.
//!
//! The fast path is lock-free (an atomic version); the lock is taken only by a worker that
//! switches generations and by the publisher, never per packet.

use crate::rules::RuleSet;
use crate::snapshot::Snapshot;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// The rule set in force, shared by the workers that follow it.
#[derive(Debug)]
pub struct RuleUpdates {
    current: RwLock<Arc<Snapshot>>,
    version: AtomicU64,
}

impl RuleUpdates {
    /// Starts with `rules` as generation 0.
    pub fn new(rules: RuleSet) -> Arc<Self> {
        Arc::new(Self { current: RwLock::new(Arc::new(Snapshot::new(rules))), version: AtomicU64::new(0) })
    }

    /// The generation in force.
    #[inline]
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// The snapshot in force.
    pub fn current(&self) -> Arc<Snapshot> {
        self.current.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Compiles `rules` and makes them the rule set in force; returns the new generation.
    pub fn publish(&self, rules: RuleSet) -> u64 {
        let mut guard = self.current.write().unwrap_or_else(|e| e.into_inner());
        let generation = guard.generation + 1;
        // Compiled under the lock so that generations are published in order; workers keep
        // classifying against the old snapshot meanwhile (they only read the version).
        *guard = Arc::new(Snapshot::with_generation(rules, generation));
        self.version.store(generation, Ordering::Release);
        generation
    }
}
