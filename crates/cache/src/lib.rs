//! `superlinear-cache`: latency-aware caching with delayed hits (thesis ch. 2).
//!
//! When a miss takes Z request-times to fill, requests for the same object that arrive
//! meanwhile are *delayed hits*: neither hits nor misses, and hit rate stops predicting latency.
//! This crate holds the model and its algorithms:
//!
//! * [`trace`]: request traces (text with optional timestamp and latency columns, or the
//!   engine's binary key trace) and the miss latency Z, global or per object;
//! * [`sim`]: the discrete-time delayed-hits simulator (§2.3.2) and the classical model it is
//!   compared with (the AMAT estimate, Eq. 2.1);
//! * [`policy`] and [`policies`]: one eviction-policy trait, one file per policy (LRU, LFU, ARC,
//!   their MAD variants, Bélády, Bélády-AD) and a registry;
//! * [`belatedly`]: the offline latency-optimal bound (§2.4), a min-cost multi-commodity flow
//!   with caching intervals and no backing-store nodes, exported as a sparse LP for HiGHS, and
//!   the flow-balance rounding of its fractional solution;
//! * [`optimal`]: exhaustive search for the optimal schedule of tiny instances (tests);
//! * [`generate`]: bursty and paced request traces; [`bench`]: simulator speed.
//!
//! The MAD estimator and rank live in `superlinear_core::mad`, shared with the engine's
//! `lru-mad` worker.

pub mod belatedly;
pub mod bench;
pub mod future;
pub mod generate;
pub mod optimal;
pub mod policies;
pub mod policy;
pub mod sim;
pub mod trace;

pub use policy::{EvictionPolicy, Outcome, PolicyContext};
pub use sim::{simulate, SimReport, Timing};
pub use trace::{LatencyTrace, MissLatency};
