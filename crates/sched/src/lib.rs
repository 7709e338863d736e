//! `superlinear-sched`: SurgeProtector against algorithmic complexity attacks on
//! self-adjusting workers, on an HFFS/BBQ integer priority queue.
//!
//! * [`queue`]: the HFFS queue / BBQ (thesis §3.5.4, ch. 4): a w-ary tree of w-bit bitmaps
//!   over priority buckets with O(levels) enqueue, dequeue-min and dequeue-max, logical
//!   partitioning (§4.4.2) and two sliding windows (§4.5.2); baselines for the benchmarks.

pub mod bench;
mod hugepages;
pub mod queue;
