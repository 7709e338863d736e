//! Baseline: the standard library's binary heap as a min-queue with FIFO ties (priority, then
//! arrival sequence). O(log n) per operation; it has no DEQUEUE-MAX, which is why a WSJF buffer
//! built on it must tail-drop (thesis §3.6.3, Fig. 3.20).

use super::PriorityQueue;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

struct Entry<T> {
    key: (u32, u64),
    value: T,
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Entry<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

/// `BinaryHeap` with FIFO ties and a capacity bound.
pub struct BinaryHeapQueue<T> {
    heap: BinaryHeap<Reverse<Entry<T>>>,
    capacity: usize,
    seq: u64,
}

impl<T> BinaryHeapQueue<T> {
    /// An empty heap holding at most `capacity` elements (preallocated).
    pub fn new(capacity: usize) -> Self {
        Self { heap: BinaryHeap::with_capacity(capacity), capacity, seq: 0 }
    }
}

impl<T> PriorityQueue<T> for BinaryHeapQueue<T> {
    fn push(&mut self, priority: u32, value: T) -> Result<(), T> {
        if self.heap.len() == self.capacity {
            return Err(value);
        }
        self.seq += 1;
        self.heap.push(Reverse(Entry { key: (priority, self.seq), value }));
        Ok(())
    }
    fn pop_min(&mut self) -> Option<(u32, T)> {
        self.heap.pop().map(|Reverse(e)| (e.key.0, e.value))
    }
    fn len(&self) -> usize {
        self.heap.len()
    }
}
