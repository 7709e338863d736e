//! Packet-size weighted shortest job first, SurgeProtector's policy (thesis §3.4.4): the
//! queued packet of smallest job size per bit is served next; when the buffer is full the
//! packet of largest job size per bit is dropped (§3.5.4). Its displacement factor is at most
//! ρ ≤ 1 (Theorem 3): to displace a bit of innocent traffic the adversary must send a bit.

use super::drop_max::DropMaxBuffer;
use super::{Scheduler, SchedulerConfig};
use crate::job::Job;

/// WSJF on the HFFS queue.
pub struct Wsjf(DropMaxBuffer);

impl Wsjf {
    /// Ratios spaced log-uniformly from `job_min / bits_max` to `job_max / bits_min`.
    pub fn new(c: &SchedulerConfig) -> Self {
        let lo = c.job_floor() / c.bits_max as f64;
        let hi = c.job_max / c.bits_min as f64;
        Self(DropMaxBuffer::new(c.capacity, c.width, c.levels, lo, hi, Job::ratio))
    }
}

impl Scheduler for Wsjf {
    fn enqueue(&mut self, job: Job) -> Option<Job> {
        self.0.enqueue(job)
    }
    fn dequeue(&mut self) -> Option<Job> {
        self.0.dequeue()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}
