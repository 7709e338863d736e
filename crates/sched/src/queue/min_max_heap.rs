//! Baseline: a double-ended heap, the min-max heap of Atkinson, Sack, Santoro and Strothotte
//! (CACM 1986). Even levels are ordered as a min-heap, odd levels as a max-heap, so both ends are
//! found in O(1) and removed in O(log n): the comparison-based double-ended priority queue the
//! thesis measures against the HFFS queue (§3.6.3, "DEPQ").
//!
//! Keys are (priority, arrival sequence): FIFO ties on the min end.

use super::{DoubleEndedPriorityQueue, PriorityQueue};

/// A min-max heap with a capacity bound.
pub struct MinMaxHeap<T> {
    a: Vec<((u32, u64), T)>,
    capacity: usize,
    seq: u64,
}

#[inline]
fn is_min_level(i: usize) -> bool {
    (i + 1).ilog2() & 1 == 0
}

impl<T> MinMaxHeap<T> {
    /// An empty heap holding at most `capacity` elements (preallocated).
    pub fn new(capacity: usize) -> Self {
        Self { a: Vec::with_capacity(capacity), capacity, seq: 0 }
    }

    #[inline]
    fn key(&self, i: usize) -> (u32, u64) {
        self.a[i].0
    }

    fn bubble_up(&mut self, i: usize) {
        if i == 0 {
            return;
        }
        let parent = (i - 1) / 2;
        if is_min_level(i) {
            if self.key(i) > self.key(parent) {
                self.a.swap(i, parent);
                self.bubble_up_grand(parent, |x, y| x > y);
            } else {
                self.bubble_up_grand(i, |x, y| x < y);
            }
        } else if self.key(i) < self.key(parent) {
            self.a.swap(i, parent);
            self.bubble_up_grand(parent, |x, y| x < y);
        } else {
            self.bubble_up_grand(i, |x, y| x > y);
        }
    }

    /// Moves `i` up over grandparents while `better(key(i), key(grandparent))`.
    #[inline]
    fn bubble_up_grand(&mut self, mut i: usize, better: impl Fn((u32, u64), (u32, u64)) -> bool) {
        while i >= 3 {
            let gp = ((i - 1) / 2 - 1) / 2;
            if better(self.key(i), self.key(gp)) {
                self.a.swap(i, gp);
                i = gp;
            } else {
                break;
            }
        }
    }

    /// Restores the heap below `i` after its element was replaced (trickle-down).
    fn trickle_down(&mut self, mut i: usize) {
        let min = is_min_level(i);
        let better = |x: (u32, u64), y: (u32, u64)| if min { x < y } else { x > y };
        let n = self.a.len();
        loop {
            let first_child = 2 * i + 1;
            if first_child >= n {
                return;
            }
            // The best among children and grandchildren.
            let mut m = first_child;
            let candidates = [first_child + 1, 4 * i + 3, 4 * i + 4, 4 * i + 5, 4 * i + 6];
            for &c in &candidates {
                if c < n && better(self.key(c), self.key(m)) {
                    m = c;
                }
            }
            if m >= 4 * i + 3 {
                // A grandchild.
                if better(self.key(m), self.key(i)) {
                    self.a.swap(m, i);
                    let parent = (m - 1) / 2;
                    if better(self.key(parent), self.key(m)) {
                        self.a.swap(m, parent);
                    }
                    i = m;
                } else {
                    return;
                }
            } else {
                if better(self.key(m), self.key(i)) {
                    self.a.swap(m, i);
                }
                return;
            }
        }
    }

    fn remove_at(&mut self, i: usize) -> ((u32, u64), T) {
        let last = self.a.len() - 1;
        self.a.swap(i, last);
        let out = self.a.pop().expect("non-empty");
        if i < self.a.len() {
            self.trickle_down(i);
        }
        out
    }
}

impl<T> PriorityQueue<T> for MinMaxHeap<T> {
    fn push(&mut self, priority: u32, value: T) -> Result<(), T> {
        if self.a.len() == self.capacity {
            return Err(value);
        }
        self.seq += 1;
        self.a.push(((priority, self.seq), value));
        self.bubble_up(self.a.len() - 1);
        Ok(())
    }
    fn pop_min(&mut self) -> Option<(u32, T)> {
        if self.a.is_empty() {
            return None;
        }
        let (k, v) = self.remove_at(0);
        Some((k.0, v))
    }
    fn len(&self) -> usize {
        self.a.len()
    }
}

impl<T> DoubleEndedPriorityQueue<T> for MinMaxHeap<T> {
    fn pop_max(&mut self) -> Option<(u32, T)> {
        let i = match self.a.len() {
            0 => return None,
            1 => 0,
            2 => 1,
            _ => {
                if self.key(1) >= self.key(2) {
                    1
                } else {
                    2
                }
            }
        };
        let (k, v) = self.remove_at(i);
        Some((k.0, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ends_in_order() {
        let mut h = MinMaxHeap::new(100);
        let prios: Vec<u32> = (0..60).map(|i| (i * 37 + 11) % 50).collect();
        for (i, &p) in prios.iter().enumerate() {
            h.push(p, i).unwrap();
        }
        let mut sorted = prios.clone();
        sorted.sort();
        let (mut lo, mut hi) = (0, sorted.len());
        for step in 0..prios.len() {
            if step % 3 == 0 {
                hi -= 1;
                assert_eq!(h.pop_max().unwrap().0, sorted[hi]);
            } else {
                assert_eq!(h.pop_min().unwrap().0, sorted[lo]);
                lo += 1;
            }
        }
        assert!(h.pop_min().is_none());
    }
}
