//! Logical partitioning (thesis §4.4.2): q independent priority queues multiplexed over one
//! physical HFFS queue, sharing its element pool with zero fragmentation.
//!
//! The physical priority span `P = w^D` is cut into q disjoint ranges of `S = ⌊P / q⌋`
//! priorities; logical queue `i` with relative priority `j < S` uses physical priority
//! `i·S + j` (the paper's concatenation of `i` and `j`). Dequeuing from logical queue `i` is a
//! dequeue restricted to its range: when the ranges are aligned to subtrees (q ≤ w dividing w:
//! a mask on the root bitmap; q > w: a steering step to the subtree, then a mask, Figs. 4.9 and
//! 4.10), the bounded successor/predecessor query of [`super::BitmapTree`] reads exactly those
//! bitmaps; for other q it stays O(levels). Any logical queue may hold every element of the
//! pool: only the priority span is divided, never the memory.

use super::hffs::{Handle, HffsQueue};

/// q logical queues over one [`HffsQueue`].
pub struct PartitionedQueue<T: Copy + Default> {
    inner: HffsQueue<T>,
    queues: u32,
    span_each: u32,
    lens: Vec<usize>,
}

impl<T: Copy + Default> PartitionedQueue<T> {
    /// `queues` logical queues over a `width`-bit, `levels`-level queue of `capacity` elements.
    pub fn new(width: u32, levels: u32, capacity: usize, queues: u32) -> Self {
        if let Err(e) = Self::check(width, levels, capacity, queues) {
            panic!("{e}");
        }
        let inner = HffsQueue::new(width, levels, capacity);
        let span_each = (inner.span() / queues as u64) as u32;
        Self { inner, queues, span_each, lens: vec![0; queues as usize] }
    }

    /// Checks a configuration, naming the problem.
    pub fn check(width: u32, levels: u32, capacity: usize, queues: u32) -> Result<(), String> {
        HffsQueue::<T>::check(width, levels, capacity)?;
        let span = (width as u64).pow(levels);
        if queues == 0 || queues as u64 > span {
            return Err(format!("{queues} logical queues need 1 to {span} (the priority span {width}^{levels})"));
        }
        Ok(())
    }

    /// Number of logical queues q.
    pub fn queues(&self) -> u32 {
        self.queues
    }

    /// Priorities per logical queue, `⌊P / q⌋`.
    pub fn span_each(&self) -> u32 {
        self.span_each
    }

    /// Elements in logical queue `i`.
    pub fn len_of(&self, i: u32) -> usize {
        self.lens[i as usize]
    }

    /// Elements in all logical queues.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether every logical queue is empty.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Whether the shared pool is exhausted.
    pub fn is_full(&self) -> bool {
        self.inner.is_full()
    }

    #[inline]
    fn range(&self, i: u32) -> (u32, u32) {
        assert!(i < self.queues, "logical queue {i} outside 0..{}", self.queues);
        let lo = i * self.span_each;
        (lo, lo + self.span_each - 1)
    }

    /// Enqueues into logical queue `i` at relative priority `j < span_each`.
    pub fn push(&mut self, i: u32, j: u32, value: T) -> Result<Handle, T> {
        let (lo, _) = self.range(i);
        assert!(j < self.span_each, "relative priority {j} outside 0..{}", self.span_each);
        let h = self.inner.push(lo + j, value)?;
        self.lens[i as usize] += 1;
        Ok(h)
    }

    /// Dequeues the lowest relative priority of logical queue `i`.
    pub fn pop_min(&mut self, i: u32) -> Option<(u32, T)> {
        let (lo, hi) = self.range(i);
        let (p, v) = self.inner.pop_min_in(lo, hi)?;
        self.lens[i as usize] -= 1;
        Some((p - lo, v))
    }

    /// Dequeues the highest relative priority of logical queue `i`.
    pub fn pop_max(&mut self, i: u32) -> Option<(u32, T)> {
        let (lo, hi) = self.range(i);
        let (p, v) = self.inner.pop_max_in(lo, hi)?;
        self.lens[i as usize] -= 1;
        Some((p - lo, v))
    }

    /// Lowest relative priority queued in logical queue `i`.
    pub fn min_priority(&self, i: u32) -> Option<u32> {
        let (lo, hi) = self.range(i);
        self.inner.min_priority_in(lo, hi).map(|p| p - lo)
    }

    /// Highest relative priority queued in logical queue `i`.
    pub fn max_priority(&self, i: u32) -> Option<u32> {
        let (lo, hi) = self.range(i);
        self.inner.max_priority_in(lo, hi).map(|p| p - lo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_are_independent_and_share_the_pool() {
        // The paper's two examples: w = 4, D = 2, q = 2 (root mask) and q = 8 (steering).
        for q in [2u32, 8, 3] {
            let mut pq: PartitionedQueue<u32> = PartitionedQueue::new(4, 2, 16, q);
            let s = pq.span_each();
            for i in 0..q {
                pq.push(i, s - 1, 100 + i).unwrap();
                pq.push(i, 0, i).unwrap();
            }
            for i in 0..q {
                assert_eq!(pq.pop_min(i), Some((0, i)));
                assert_eq!(pq.pop_max(i), Some((s - 1, 100 + i)));
                assert_eq!(pq.pop_min(i), None);
            }
            // One logical queue may take the whole pool.
            for k in 0..16 {
                pq.push(q - 1, k % s, k).unwrap();
            }
            assert!(pq.is_full());
            assert_eq!(pq.len_of(q - 1), 16);
            assert_eq!(pq.pop_min(0), None);
        }
    }
}
