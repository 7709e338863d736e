//! Dynamic priority ranges with two sliding windows (thesis §4.5.2, after Eiffel's circular
//! FFS queue): two logical HFFS queues of span `P` each, multiplexed over one physical queue by
//! logical partitioning (§4.4.2). The primary holds priorities `[base, base + P)`, the
//! secondary `[base + P, base + 2P)`; when the primary is empty and a minimum is requested,
//! the window advances by `P` and the two swap roles, so priorities may grow without bound
//! (virtual times, deadlines, WSJF-Inorder ranks on a growing scale).
//!
//! Priorities outside the window cannot be represented exactly: one below `base` (already
//! passed) goes to the window's first bucket, one at or above `base + 2P` to its last bucket,
//! and both are counted in [`SlidingWindowQueue::clamped`]. Pushing an out-of-window priority
//! into an empty queue moves the window to it, so an idle queue never clamps its next element.

use super::partitioned::PartitionedQueue;

/// A min/max priority queue over unbounded `u64` priorities, exact within a `2P` window.
pub struct SlidingWindowQueue<T: Copy + Default> {
    inner: PartitionedQueue<T>,
    /// Lowest priority of the primary window (a multiple of `P`).
    base: u64,
    /// Which logical queue is the primary window.
    primary: u32,
    window: u64,
    clamped: u64,
}

impl<T: Copy + Default> SlidingWindowQueue<T> {
    /// Two windows of `width^levels / 2` priorities each over one queue of `capacity` elements.
    pub fn new(width: u32, levels: u32, capacity: usize) -> Self {
        let inner = PartitionedQueue::new(width, levels, capacity, 2);
        let window = inner.span_each() as u64;
        Self { inner, base: 0, primary: 0, window, clamped: 0 }
    }

    /// Span of one window, `P`.
    pub fn window(&self) -> u64 {
        self.window
    }

    /// Lowest priority of the current primary window.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Elements whose priority fell outside the window when pushed.
    pub fn clamped(&self) -> u64 {
        self.clamped
    }

    /// Number of queued elements.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether no element is queued.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Whether the pool is exhausted.
    pub fn is_full(&self) -> bool {
        self.inner.is_full()
    }

    fn secondary(&self) -> u32 {
        1 - self.primary
    }

    /// Enqueues at an unbounded priority (clamped into the window when outside it).
    pub fn push(&mut self, priority: u64, value: T) -> Result<(), T> {
        if self.inner.is_empty() && (priority < self.base || priority >= self.base + 2 * self.window) {
            // Nothing queued: the window may move anywhere without misplacing an element.
            self.base = priority - priority % self.window;
        }
        if priority >= self.base + 2 * self.window {
            // An empty primary can make room by advancing the window first.
            self.settle();
        }
        let mut p = priority;
        if p < self.base {
            p = self.base;
            self.clamped += 1;
        } else if p >= self.base + 2 * self.window {
            p = self.base + 2 * self.window - 1;
            self.clamped += 1;
        }
        let (queue, rel) = if p < self.base + self.window {
            (self.primary, p - self.base)
        } else {
            (self.secondary(), p - self.base - self.window)
        };
        self.inner.push(queue, rel as u32, value).map(|_| ())
    }

    /// Advances the window while the primary is empty and the secondary is not.
    fn settle(&mut self) {
        if self.inner.len_of(self.primary) == 0 && self.inner.len_of(self.secondary()) > 0 {
            self.base += self.window;
            self.primary = self.secondary();
        }
    }

    /// Dequeues the oldest element of the lowest priority.
    pub fn pop_min(&mut self) -> Option<(u64, T)> {
        self.settle();
        let base = self.base;
        self.inner.pop_min(self.primary).map(|(p, v)| (base + p as u64, v))
    }

    /// Dequeues the oldest element of the highest priority.
    pub fn pop_max(&mut self) -> Option<(u64, T)> {
        self.settle();
        let (base, window, secondary) = (self.base, self.window, self.secondary());
        if let Some((p, v)) = self.inner.pop_max(secondary) {
            return Some((base + window + p as u64, v));
        }
        self.inner.pop_max(self.primary).map(|(p, v)| (base + p as u64, v))
    }

    /// The lowest queued priority.
    pub fn min_priority(&mut self) -> Option<u64> {
        self.settle();
        self.inner.min_priority(self.primary).map(|p| self.base + p as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_slides_with_growing_priorities() {
        // The hold model of event simulation: each new priority is the last one dequeued plus
        // less than one window, so every element fits the two windows exactly.
        let mut q: SlidingWindowQueue<u64> = SlidingWindowQueue::new(4, 2, 64);
        let p = q.window(); // 8
        for i in 0..10 {
            q.push(i, i).unwrap();
        }
        let mut last = 0;
        for step in 0..500u64 {
            let (prio, v) = q.pop_min().unwrap();
            assert_eq!(prio, v);
            assert!(prio >= last, "step {step}: {prio} after {last}");
            last = prio;
            let next = prio + (step * 7919) % p;
            q.push(next, next).unwrap();
        }
        assert_eq!(q.clamped(), 0);
        assert!(q.base() > 10 * p);
    }

    #[test]
    fn out_of_window_priorities_are_clamped_and_counted() {
        let mut q: SlidingWindowQueue<u32> = SlidingWindowQueue::new(4, 2, 8);
        q.push(100, 1).unwrap(); // empty: the window moves to 96..112
        q.push(1_000, 2).unwrap(); // beyond: last bucket
        q.push(3, 3).unwrap(); // passed: first bucket
        assert_eq!(q.clamped(), 2);
        assert_eq!(q.pop_min(), Some((96, 3)));
        assert_eq!(q.pop_max(), Some((111, 2)));
    }
}
