//! Fair queueing (thesis §3.4.2) as deficit round robin (Shreedhar & Varghese, 1995) over
//! *service time*: each backlogged flow receives `quantum` units of job size per round, so
//! flows share the processor equally whatever their job sizes. When the buffer is full the
//! tail packet of the longest flow is dropped (Demers, Keshav & Shenker's longest-queue drop),
//! found in O(levels) by keeping flow lengths in an HFFS queue. An adversary defeats it by
//! spreading minimum-size packets over many flows (Claim 4).

use super::{Scheduler, SchedulerConfig};
use crate::job::Job;
use crate::queue::{Handle, HffsQueue};
use std::collections::{HashMap, VecDeque};

struct Flow {
    q: VecDeque<Job>,
    deficit: f64,
    /// On the round-robin list (it may be there with an empty queue after a drop; the round
    /// skips and forgets it).
    active: bool,
    /// Entry in the length index.
    len_entry: Option<Handle>,
}

/// Deficit round robin with longest-queue drop.
pub struct FairQueue {
    flows: HashMap<u32, Flow>,
    round: VecDeque<u32>,
    /// Whether the flow at the front of `round` has had its quantum for this turn.
    turn_started: bool,
    quantum: f64,
    /// Flow ids by queue length (priority = length), for the longest-queue drop.
    lengths: HffsQueue<u32>,
    len: usize,
    capacity: usize,
}

impl FairQueue {
    /// An empty scheduler.
    pub fn new(c: &SchedulerConfig) -> Self {
        // Enough 64-bit levels to give every possible length its own priority.
        let mut levels = 1;
        while 64u64.pow(levels) <= c.capacity as u64 {
            levels += 1;
        }
        Self {
            flows: HashMap::new(),
            round: VecDeque::new(),
            turn_started: false,
            quantum: c.quantum.unwrap_or(c.job_max).max(f64::MIN_POSITIVE),
            lengths: HffsQueue::new(64, levels, c.capacity),
            len: 0,
            capacity: c.capacity,
        }
    }

    /// Re-files flow `id` under its current length (or removes it when empty).
    fn reindex(lengths: &mut HffsQueue<u32>, id: u32, flow: &mut Flow) {
        if let Some(h) = flow.len_entry.take() {
            lengths.remove(h);
        }
        if !flow.q.is_empty() {
            let p = (flow.q.len() as u64).min(lengths.span() - 1) as u32;
            flow.len_entry = lengths.push(p, id).ok();
        }
    }
}

impl Scheduler for FairQueue {
    fn enqueue(&mut self, job: Job) -> Option<Job> {
        let mut lost = None;
        if self.len == self.capacity {
            let own = self.flows.get(&job.flow).map_or(0, |f| f.q.len());
            let (longest, &victim) = self.lengths.peek_max().expect("a full buffer has flows");
            if own as u32 >= longest {
                return Some(job);
            }
            let flow = self.flows.get_mut(&victim).expect("indexed flows exist");
            lost = flow.q.pop_back();
            Self::reindex(&mut self.lengths, victim, flow);
            self.len -= 1;
        }
        let flow = self.flows.entry(job.flow).or_insert_with(|| Flow {
            q: VecDeque::new(),
            deficit: 0.0,
            active: false,
            len_entry: None,
        });
        flow.q.push_back(job);
        if !flow.active {
            flow.active = true;
            self.round.push_back(job.flow);
        }
        Self::reindex(&mut self.lengths, job.flow, flow);
        self.len += 1;
        lost
    }

    fn dequeue(&mut self) -> Option<Job> {
        loop {
            let id = *self.round.front()?;
            let flow = self.flows.get_mut(&id).expect("flows on the round exist");
            let Some(head) = flow.q.front() else {
                // Emptied by drops: forget it.
                self.round.pop_front();
                self.turn_started = false;
                self.flows.remove(&id);
                continue;
            };
            if !self.turn_started {
                flow.deficit += self.quantum;
                self.turn_started = true;
            }
            if head.size <= flow.deficit {
                let job = flow.q.pop_front().expect("non-empty");
                flow.deficit -= job.size;
                self.len -= 1;
                Self::reindex(&mut self.lengths, id, flow);
                if flow.q.is_empty() {
                    self.round.pop_front();
                    self.turn_started = false;
                    self.flows.remove(&id);
                }
                return Some(job);
            }
            // Turn over: to the back of the round, keeping the unused deficit.
            self.round.rotate_left(1);
            self.turn_started = false;
        }
    }

    fn len(&self) -> usize {
        self.len
    }
}
