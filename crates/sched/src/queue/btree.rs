//! Baseline: a `BTreeMap` keyed by (priority, arrival sequence), the ordered-map way to get
//! both ends with FIFO ties. O(log n) per operation with node allocation on the hot path.

use super::{DoubleEndedPriorityQueue, PriorityQueue};
use std::collections::BTreeMap;

/// `BTreeMap<(priority, seq), T>` with a capacity bound.
pub struct BTreeQueue<T> {
    map: BTreeMap<(u32, u64), T>,
    capacity: usize,
    seq: u64,
}

impl<T> BTreeQueue<T> {
    /// An empty map holding at most `capacity` elements.
    pub fn new(capacity: usize) -> Self {
        Self { map: BTreeMap::new(), capacity, seq: 0 }
    }
}

impl<T> PriorityQueue<T> for BTreeQueue<T> {
    fn push(&mut self, priority: u32, value: T) -> Result<(), T> {
        if self.map.len() == self.capacity {
            return Err(value);
        }
        self.seq += 1;
        self.map.insert((priority, self.seq), value);
        Ok(())
    }
    fn pop_min(&mut self) -> Option<(u32, T)> {
        self.map.pop_first().map(|((p, _), v)| (p, v))
    }
    fn len(&self) -> usize {
        self.map.len()
    }
}

impl<T> DoubleEndedPriorityQueue<T> for BTreeQueue<T> {
    fn pop_max(&mut self) -> Option<(u32, T)> {
        // The oldest of the highest priority, like the HFFS queue: the first key of that
        // priority, found by a range query from (max, 0).
        let (&(p, _), _) = self.map.last_key_value()?;
        let key = *self.map.range((p, 0)..).next().map(|(k, _)| k)?;
        self.map.remove(&key).map(|v| (p, v))
    }
}
