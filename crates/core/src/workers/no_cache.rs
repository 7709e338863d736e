//! No cache: the baseline of the cache panels, where every request goes to the slow backend.

use crate::busy::BusyLoop;
use crate::worker::Worker;

/// Every request is a miss and burns `ρ` cycles. Work: 1 access + ρ per request.
pub struct NoCache {
    miss: BusyLoop,
    miss_cycles: u64,
}

impl NoCache {
    /// A backend that costs `miss_cycles` per request.
    pub fn new(miss_cycles: u64) -> Self {
        Self { miss: BusyLoop::new(miss_cycles), miss_cycles }
    }
}

impl Worker for NoCache {
    #[inline]
    fn serve(&mut self, _key: &u64) -> u64 {
        self.miss.burn();
        1 + self.miss_cycles
    }

    fn hits(&self) -> Option<u64> {
        Some(0)
    }
}
