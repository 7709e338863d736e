//! Integer priority queues: the HFFS queue / BBQ (thesis §3.5.4, ch. 4) with logical
//! partitioning (§4.4.2) and sliding windows (§4.5.2), and the comparison-based baselines it is
//! benchmarked against (binary heap, B-tree map, min-max heap).
//!
//! One small interface for what the benchmarks and tests compare: [`PriorityQueue`] (push,
//! DEQUEUE-MIN) and [`DoubleEndedPriorityQueue`] (also DEQUEUE-MAX). Schedulers use
//! [`HffsQueue`] directly, for removal by handle.

mod binary_heap;
mod bitmap_tree;
mod btree;
mod hffs;
mod min_max_heap;
mod partitioned;
mod sliding;

pub use binary_heap::BinaryHeapQueue;
pub use bitmap_tree::BitmapTree;
pub use btree::BTreeQueue;
pub use hffs::{Handle, HffsQueue};
pub use min_max_heap::MinMaxHeap;
pub use partitioned::PartitionedQueue;
pub use sliding::SlidingWindowQueue;

/// A bounded priority queue over `u32` priorities: lowest priority first, FIFO among equals.
pub trait PriorityQueue<T> {
    /// Enqueues `value`; gives it back when the queue is full.
    fn push(&mut self, priority: u32, value: T) -> Result<(), T>;
    /// Dequeues the lowest priority (the oldest among equals).
    fn pop_min(&mut self) -> Option<(u32, T)>;
    /// Number of queued elements.
    fn len(&self) -> usize;
    /// Whether no element is queued.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A priority queue that can also dequeue its highest priority: what a scheduler that drops
/// the worst job when its buffer is full needs (SurgeProtector, thesis §3.5.4).
pub trait DoubleEndedPriorityQueue<T>: PriorityQueue<T> {
    /// Dequeues the highest priority.
    fn pop_max(&mut self) -> Option<(u32, T)>;
}
