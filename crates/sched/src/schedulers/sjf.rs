//! Shortest job first (thesis §3.4.3): the queued job of smallest size is served next, the
//! largest is dropped when the buffer is full. Its displacement factor is bounded by
//! E[P]/P_min · ρ (Theorem 2), independent of J_max but not of packet sizes.

use super::drop_max::DropMaxBuffer;
use super::{Scheduler, SchedulerConfig};
use crate::job::Job;

/// SJF on the HFFS queue.
pub struct Sjf(DropMaxBuffer);

impl Sjf {
    /// Job sizes spaced log-uniformly over the configured range.
    pub fn new(c: &SchedulerConfig) -> Self {
        Self(DropMaxBuffer::new(c.capacity, c.width, c.levels, c.job_floor(), c.job_max, |j| j.size))
    }
}

impl Scheduler for Sjf {
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
