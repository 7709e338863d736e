//! The Hierarchical FFS queue (thesis §3.5.4) in BBQ's layout (§4.2.2): a bitmap tree over
//! integer priority buckets, each bucket a FIFO of queue elements drawn from a preallocated pool
//! (BBQ's free list), so ENQUEUE, DEQUEUE-MIN, DEQUEUE-MAX and removal by handle all cost
//! O(levels) bitmap operations plus O(1) list operations, independent of the number of queued
//! elements, and nothing is allocated after construction.
//!
//! Both ends are FIFO within a bucket, as in BBQ (enqueue at one end of the bucket's list,
//! dequeue from the other, whichever of MIN or MAX picked the bucket): among equal priorities
//! the oldest element leaves first. SurgeProtector uses DEQUEUE-MIN to pick the next job and
//! DEQUEUE-MAX to pick the job to drop when the buffer is full (§3.5.4).
//!
//! One software adaptation of BBQ's doubly linked list of single elements: a bucket is a
//! doubly linked list of *chunks* of [`CHUNK`] elements (an unrolled list), one 64-byte cache
//! line for `u32` payloads. Hardware reads its SRAM at a fixed latency, but a CPU pays a full
//! memory latency for every list node it chases; with 10⁶ queued elements a node-per-element
//! list costs one dependent cache miss per dequeue, a chunk costs one per [`CHUNK`] dequeues
//! (and the next chunk is prefetched meanwhile). Each chunk keeps an `alive` bitmap, so removal
//! by handle is still O(1) (clear a bit; unlink the chunk when it empties) and dequeuing the
//! oldest element of a chunk is one more find-first-set. Every chunk holds at least one queued
//! element, so `capacity` chunks always suffice; their memory is reserved up front and touched
//! only as needed.

use super::bitmap_tree::BitmapTree;
use super::{DoubleEndedPriorityQueue, PriorityQueue};

const NIL: u32 = u32::MAX;
/// `bucket` of a chunk on the free list, so a stale handle is caught instead of corrupting a list.
const FREE: u32 = u32::MAX;
/// Elements per chunk: 12 `u32` payloads and the 16-byte header fill one 64-byte line.
pub const CHUNK: usize = 12;

/// Identifies a queued element until it leaves the queue (for [`HffsQueue::remove`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Handle(pub u32);

/// Up to [`CHUNK`] queue elements of one bucket, in arrival order.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Chunk<T> {
    /// Next chunk towards the bucket's tail (newer elements); the free-list link when free.
    next: u32,
    /// Previous chunk towards the head (older elements).
    prev: u32,
    /// The bucket (priority) this chunk belongs to, or [`FREE`].
    bucket: u32,
    /// Bit i: slot i holds a queued element.
    alive: u16,
    /// Slots `0..filled` have been used; pushes append at `filled`.
    filled: u16,
    vals: [T; CHUNK],
}

/// One priority bucket: the ends of its chunk list (BBQ's PB).
#[derive(Clone, Copy)]
struct Bucket {
    head: u32,
    tail: u32,
}

const EMPTY: Bucket = Bucket { head: NIL, tail: NIL };

/// An integer priority queue over priorities `0..width^levels` holding at most `capacity`
/// elements of type `T`.
pub struct HffsQueue<T: Copy + Default> {
    tree: BitmapTree,
    buckets: Vec<Bucket>,
    chunks: Vec<Chunk<T>>,
    /// Recycled chunks (LIFO, so the chunk just emptied, still cached, is reused first).
    free: u32,
    len: usize,
    capacity: usize,
}

impl<T: Copy + Default> HffsQueue<T> {
    /// A queue with `width`-bit bitmaps, `levels` levels and a pool of `capacity` elements.
    /// Panics on an invalid shape (see [`HffsQueue::check`]).
    pub fn new(width: u32, levels: u32, capacity: usize) -> Self {
        if let Err(e) = Self::check(width, levels, capacity) {
            panic!("{e}");
        }
        let tree = BitmapTree::new(width, levels);
        let span = tree.span() as usize;
        // Reserved, not touched: pages are faulted in only as chunks are first used.
        let chunks = Vec::with_capacity(capacity);
        crate::hugepages::advise(&chunks);
        let mut buckets = Vec::with_capacity(span);
        crate::hugepages::advise(&buckets);
        buckets.resize(span, EMPTY);
        Self { tree, buckets, chunks, free: NIL, len: 0, capacity }
    }

    /// Checks a configuration, naming the problem.
    pub fn check(width: u32, levels: u32, capacity: usize) -> Result<(), String> {
        BitmapTree::check(width, levels)?;
        if capacity >= (NIL as usize) / CHUNK {
            return Err(format!("queue capacity {capacity} exceeds {}", (NIL as usize) / CHUNK - 1));
        }
        Ok(())
    }

    /// Number of priorities, `width^levels`.
    #[inline]
    pub fn span(&self) -> u64 {
        self.tree.span()
    }

    /// The bitmap tree (for its shape).
    pub fn tree(&self) -> &BitmapTree {
        &self.tree
    }

    /// Maximum number of queued elements.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Number of queued elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no element is queued.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the pool is exhausted.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len == self.capacity
    }

    /// A fresh chunk for bucket `b`, linked after `prev`.
    #[inline]
    fn alloc_chunk(&mut self, b: u32, prev: u32) -> u32 {
        if self.free != NIL {
            let c = self.free;
            let chunk = &mut self.chunks[c as usize];
            self.free = chunk.next;
            // Only the header: stale values in the slots are never read (`alive` is 0).
            chunk.next = NIL;
            chunk.prev = prev;
            chunk.bucket = b;
            chunk.alive = 0;
            chunk.filled = 0;
            c
        } else {
            // Never reallocates: at most `capacity` chunks are ever in use, and that many are
            // reserved (each chunk in use holds at least one queued element).
            debug_assert!(self.chunks.len() < self.chunks.capacity());
            self.chunks.push(Chunk { next: NIL, prev, bucket: b, alive: 0, filled: 0, vals: [T::default(); CHUNK] });
            self.chunks.len() as u32 - 1
        }
    }

    /// Unlinks the empty chunk `c` from its bucket and recycles it; clears the bucket's bit when
    /// it was the bucket's last chunk.
    #[inline]
    fn free_chunk(&mut self, c: u32) {
        let Chunk { next, prev, bucket, .. } = self.chunks[c as usize];
        let b = bucket as usize;
        if prev == NIL {
            self.buckets[b].head = next;
        } else {
            self.chunks[prev as usize].next = next;
        }
        if next == NIL {
            self.buckets[b].tail = prev;
        } else {
            self.chunks[next as usize].prev = prev;
        }
        if self.buckets[b].head == NIL {
            self.tree.clear(b);
        }
        let chunk = &mut self.chunks[c as usize];
        chunk.bucket = FREE;
        chunk.next = self.free;
        self.free = c;
    }

    /// Enqueues `value` at `priority` (at the back of its bucket). Returns the element's handle,
    /// or gives the value back when the pool is full. Panics if `priority ≥ span`.
    #[inline]
    pub fn push(&mut self, priority: u32, value: T) -> Result<Handle, T> {
        assert!((priority as u64) < self.tree.span(), "priority {priority} outside 0..{}", self.tree.span());
        if self.len == self.capacity {
            return Err(value);
        }
        let b = priority as usize;
        let mut t = self.buckets[b].tail;
        if t == NIL {
            t = self.alloc_chunk(priority, NIL);
            self.buckets[b] = Bucket { head: t, tail: t };
            self.tree.set(b);
        } else if self.chunks[t as usize].filled as usize == CHUNK {
            let c = self.alloc_chunk(priority, t);
            self.chunks[t as usize].next = c;
            self.buckets[b].tail = c;
            t = c;
        }
        let chunk = &mut self.chunks[t as usize];
        let i = chunk.filled as usize;
        chunk.vals[i] = value;
        chunk.alive |= 1 << i;
        chunk.filled += 1;
        self.len += 1;
        Ok(Handle(t * CHUNK as u32 + i as u32))
    }

    /// Takes the oldest element of bucket `b`, which must be non-empty.
    #[inline]
    fn pop_bucket(&mut self, b: usize) -> (u32, T) {
        let c = self.buckets[b].head;
        let chunk = &mut self.chunks[c as usize];
        let i = chunk.alive.trailing_zeros() as usize;
        let value = chunk.vals[i];
        chunk.alive &= !(1 << i);
        let (emptied, next) = (chunk.alive == 0, chunk.next);
        if emptied {
            self.free_chunk(c);
        } else if next != NIL && i == 0 {
            prefetch(&self.chunks[next as usize]);
        }
        self.len -= 1;
        (b as u32, value)
    }

    /// Dequeues the oldest element of the lowest priority (DEQUEUE-MIN).
    #[inline]
    pub fn pop_min(&mut self) -> Option<(u32, T)> {
        let b = self.tree.min()?;
        Some(self.pop_bucket(b))
    }

    /// Dequeues the oldest element of the highest priority (DEQUEUE-MAX).
    #[inline]
    pub fn pop_max(&mut self) -> Option<(u32, T)> {
        let b = self.tree.max()?;
        Some(self.pop_bucket(b))
    }

    /// The lowest priority queued.
    #[inline]
    pub fn min_priority(&self) -> Option<u32> {
        self.tree.min().map(|b| b as u32)
    }

    /// The highest priority queued.
    #[inline]
    pub fn max_priority(&self) -> Option<u32> {
        self.tree.max().map(|b| b as u32)
    }

    /// The element DEQUEUE-MIN would return, without removing it.
    pub fn peek_min(&self) -> Option<(u32, &T)> {
        let b = self.tree.min()?;
        Some((b as u32, self.oldest(b)))
    }

    /// The element DEQUEUE-MAX would return, without removing it.
    pub fn peek_max(&self) -> Option<(u32, &T)> {
        let b = self.tree.max()?;
        Some((b as u32, self.oldest(b)))
    }

    fn oldest(&self, b: usize) -> &T {
        let chunk = &self.chunks[self.buckets[b].head as usize];
        &chunk.vals[chunk.alive.trailing_zeros() as usize]
    }

    /// Dequeues the oldest element with priority in `lo..=hi` of lowest priority (a masked
    /// DEQUEUE-MIN, how a logical partition dequeues, §4.4.2).
    pub fn pop_min_in(&mut self, lo: u32, hi: u32) -> Option<(u32, T)> {
        let b = self.tree.first_at_or_after(lo as usize).filter(|&b| b <= hi as usize)?;
        Some(self.pop_bucket(b))
    }

    /// Dequeues the oldest element with priority in `lo..=hi` of highest priority.
    pub fn pop_max_in(&mut self, lo: u32, hi: u32) -> Option<(u32, T)> {
        let b = self.tree.last_at_or_before(hi as usize).filter(|&b| b >= lo as usize)?;
        Some(self.pop_bucket(b))
    }

    /// Lowest queued priority within `lo..=hi`.
    pub fn min_priority_in(&self, lo: u32, hi: u32) -> Option<u32> {
        self.tree.first_at_or_after(lo as usize).filter(|&b| b <= hi as usize).map(|b| b as u32)
    }

    /// Highest queued priority within `lo..=hi`.
    pub fn max_priority_in(&self, lo: u32, hi: u32) -> Option<u32> {
        self.tree.last_at_or_before(hi as usize).filter(|&b| b >= lo as usize).map(|b| b as u32)
    }

    /// Removes a queued element by its handle, wherever it is in its bucket. Panics if the
    /// handle's element has already left the queue.
    pub fn remove(&mut self, handle: Handle) -> (u32, T) {
        let (c, i) = (handle.0 / CHUNK as u32, handle.0 as usize % CHUNK);
        let chunk = &mut self.chunks[c as usize];
        assert!(chunk.bucket != FREE && chunk.alive >> i & 1 == 1, "handle {} names no queued element", handle.0);
        chunk.alive &= !(1 << i);
        let (prio, value, emptied) = (chunk.bucket, chunk.vals[i], chunk.alive == 0);
        if emptied {
            self.free_chunk(c);
        }
        self.len -= 1;
        (prio, value)
    }

    /// The priority and value of a queued element.
    pub fn get(&self, handle: Handle) -> Option<(u32, &T)> {
        let (c, i) = (handle.0 as usize / CHUNK, handle.0 as usize % CHUNK);
        let chunk = self.chunks.get(c)?;
        (chunk.bucket != FREE && chunk.alive >> i & 1 == 1).then_some((chunk.bucket, &chunk.vals[i]))
    }

    /// Bytes of index, bucket and (touched) chunk memory.
    pub fn bytes(&self) -> usize {
        self.tree.bytes()
            + self.buckets.len() * std::mem::size_of::<Bucket>()
            + self.chunks.len() * std::mem::size_of::<Chunk<T>>()
    }
}

/// Hints the CPU to fetch `x`'s cache line: the next chunk of a bucket being drained.
#[inline(always)]
fn prefetch<X>(x: &X) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it never faults and has no architecturally visible
    // effect, and the pointer comes from a valid reference anyway. SSE is part of the x86-64
    // baseline, so the intrinsic's target feature is always present.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(x as *const X as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

impl<T: Copy + Default> PriorityQueue<T> for HffsQueue<T> {
    fn push(&mut self, priority: u32, value: T) -> Result<(), T> {
        HffsQueue::push(self, priority, value).map(|_| ())
    }
    fn pop_min(&mut self) -> Option<(u32, T)> {
        HffsQueue::pop_min(self)
    }
    fn len(&self) -> usize {
        self.len
    }
}

impl<T: Copy + Default> DoubleEndedPriorityQueue<T> for HffsQueue<T> {
    fn pop_max(&mut self) -> Option<(u32, T)> {
        HffsQueue::pop_max(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_within_bucket_at_both_ends() {
        let mut q: HffsQueue<u32> = HffsQueue::new(4, 2, 8);
        for (p, v) in [(5, 1), (5, 2), (9, 3), (9, 4), (0, 5)] {
            q.push(p, v).unwrap();
        }
        assert_eq!(q.pop_max(), Some((9, 3)));
        assert_eq!(q.pop_min(), Some((0, 5)));
        assert_eq!(q.pop_min(), Some((5, 1)));
        assert_eq!(q.pop_max(), Some((9, 4)));
        assert_eq!(q.pop_max(), Some((5, 2)));
        assert_eq!(q.pop_min(), None);
    }

    #[test]
    fn pool_is_bounded_and_reused() {
        let mut q: HffsQueue<u8> = HffsQueue::new(2, 3, 2);
        assert!(q.push(1, 1).is_ok());
        assert!(q.push(1, 2).is_ok());
        assert_eq!(q.push(0, 3), Err(3));
        assert!(q.is_full());
        q.pop_min();
        assert!(q.push(7, 4).is_ok());
        assert_eq!(q.pop_max(), Some((7, 4)));
    }

    #[test]
    fn remove_by_handle_from_the_middle() {
        let mut q: HffsQueue<u32> = HffsQueue::new(8, 2, 16);
        let a = q.push(3, 1).unwrap();
        let b = q.push(3, 2).unwrap();
        let c = q.push(3, 3).unwrap();
        assert_eq!(q.remove(b), (3, 2));
        assert_eq!(q.remove(a), (3, 1));
        assert_eq!(q.get(c), Some((3, &3)));
        assert_eq!(q.remove(c), (3, 3));
        assert!(q.is_empty());
        assert_eq!(q.min_priority(), None);
    }

    #[test]
    fn range_queries_act_as_masked_dequeues() {
        let mut q: HffsQueue<u32> = HffsQueue::new(4, 2, 16);
        for p in [1, 6, 9, 14] {
            q.push(p, p).unwrap();
        }
        assert_eq!(q.pop_min_in(2, 13), Some((6, 6)));
        assert_eq!(q.pop_max_in(2, 13), Some((9, 9)));
        assert_eq!(q.pop_min_in(2, 13), None);
        assert_eq!(q.len(), 2);
    }
}
