//! `superlinear-core`: the engine behind the superlinear toolkit.
//!
//! A locality-boosting [`dispatch`]er splits one request stream into k streams; k [`worker`]s,
//! each holding the whole data set (replicated state) and self-adjusting to its own stream,
//! serve them. The [`runner`] executes that pipeline and its [`accounting`] reports the three
//! kinds of speedup of the project's honesty contract: measured (real threads, k ≤ cores),
//! projected (serial dispatcher time + the slowest worker's own CPU time) and work (exact
//! operation counts). See the paper, §3.3–3.4 and Appendix A.

pub mod busy;
pub mod error;
pub mod worker;
pub mod workers;

pub use error::Error;
pub use worker::{Worker, WorkerParams};
pub mod accounting;
pub mod bench;
pub mod calibrate;
pub mod cancel;
pub mod config;
pub mod cputime;
pub mod dispatch;
pub mod hash;
pub mod input;
pub mod law;
pub mod mad;
pub mod memory_probe;
pub mod prefetch;
pub mod run_config;
pub mod runner;
pub mod workload;
