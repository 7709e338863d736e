//! Simulator speed: requests per second of one policy over a trace, in thread CPU time
//! (kind: measured; a benchmark, never a test assertion).

use crate::policies;
use crate::policy::PolicyContext;
use crate::sim::{simulate, SimReport, Timing};
use crate::trace::MissLatency;
use superlinear_core::cputime::thread_cpu_ns;
use superlinear_core::Error;

/// One timed simulation.
#[derive(Clone, Copy, Debug)]
pub struct SpeedReport {
    /// What the simulation counted.
    pub report: SimReport,
    /// Thread CPU time of the simulation (policy construction included).
    pub cpu_ns: u64,
}

impl SpeedReport {
    /// Requests simulated per second of CPU time.
    pub fn requests_per_second(&self) -> f64 {
        self.report.requests as f64 * 1e9 / self.cpu_ns.max(1) as f64
    }
}

/// Times `policy` over `requests`.
pub fn time_policy(
    policy: &str,
    requests: &[u32],
    objects: usize,
    z: &MissLatency,
    capacity: usize,
) -> Result<SpeedReport, Error> {
    let t0 = thread_cpu_ns();
    let ctx = PolicyContext { requests, objects, z, capacity };
    let mut p = policies::build(policy, &ctx)?;
    let report = simulate(requests, objects, z, capacity, p.as_mut(), Timing::Delayed);
    superlinear_core::cancel::check()?;
    Ok(SpeedReport { report, cpu_ns: thread_cpu_ns() - t0 })
}
