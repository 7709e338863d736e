//! `superlinear-sched`: SurgeProtector against algorithmic complexity attacks on
//! self-adjusting workers, on an HFFS/BBQ integer priority queue.
//!
//! * [`queue`]: the HFFS queue / BBQ (thesis §3.5.4, ch. 4): a w-ary tree of w-bit bitmaps
//!   over priority buckets with O(levels) enqueue, dequeue-min and dequeue-max, logical
//!   partitioning (§4.4.2) and two sliding windows (§4.5.2); baselines for the benchmarks.
//! * [`schedulers`]: FCFS, fair queueing, SJF, WSJF and WSJF-Inorder behind one
//!   [`schedulers::Scheduler`] trait (§3.4, §3.5.3).
//! * [`sim`]: the event-driven G/G/1/K simulator with innocent [`traffic`] and an adversary;
//!   [`attack`]: the optimal attack (Eqs. 3.8, 3.9) and the analytic bounds; [`sweep`]: goodput
//!   and the displacement factor (Eq. 3.1) over attack rates.
//! * [`stage`]: SurgeProtector in front of a real worker: job sizes estimated (§3.5.2), WSJF
//!   on the HFFS queue, drop-max when full; the attack experiment on the core's key workers
//!   and on the packet classifier's MRF workers (job sizes from the flow's rule and its current
//!   position, an adversary for deep, dependency-heavy and catch-all rules).

pub mod attack;
pub mod bench;
pub mod config;
pub mod dist;
mod hugepages;
pub mod job;
pub mod quantize;
pub mod queue;
pub mod schedulers;
pub mod sim;
pub mod stage;
pub mod sweep;
pub mod traffic;

pub use job::{Class, Job};
pub use schedulers::{Scheduler, SchedulerConfig};
