//! First come, first served (thesis §3.4.1) with tail drop: the policy whose displacement
//! factor grows without bound with J_max / P_min (Claim 3).

use super::{Scheduler, SchedulerConfig};
use crate::job::Job;
use std::collections::VecDeque;

/// A bounded FIFO.
pub struct Fcfs {
    q: VecDeque<Job>,
    capacity: usize,
}

impl Fcfs {
    /// An empty FIFO of `config.capacity` packets.
    pub fn new(config: &SchedulerConfig) -> Self {
        Self { q: VecDeque::with_capacity(config.capacity), capacity: config.capacity }
    }
}

impl Scheduler for Fcfs {
    fn enqueue(&mut self, job: Job) -> Option<Job> {
        if self.q.len() == self.capacity {
            return Some(job);
        }
        self.q.push_back(job);
        None
    }
    fn dequeue(&mut self) -> Option<Job> {
        self.q.pop_front()
    }
    fn len(&self) -> usize {
        self.q.len()
    }
}
