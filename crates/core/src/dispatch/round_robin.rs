//! Round-robin dispatch: perfectly balanced, and every worker still sees every item.

use super::{Dispatcher, WorkerLoads};

/// Sends request i to worker i mod k.
pub struct RoundRobinDispatcher {
    k: usize,
    next: usize,
}

impl RoundRobinDispatcher {
    /// Round-robin over `k` workers.
    pub fn new(k: usize) -> Self {
        Self { k: k.max(1), next: 0 }
    }
}

impl<R> Dispatcher<R> for RoundRobinDispatcher {
    #[inline]
    fn route(&mut self, _request: &R, _loads: &WorkerLoads<'_>) -> usize {
        let w = self.next;
        self.next += 1;
        if self.next == self.k {
            self.next = 0;
        }
        w
    }
}
