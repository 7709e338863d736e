//! WSJF-Inorder (thesis §3.5.3): per-flow FIFO queues, so packets of a flow leave in order;
//! the flow of lowest rank is served next, where
//!
//! `Rank(f) = Σ_i J_i(f) / Σ_i P_i(f)` over the packets queued in flow f,
//!
//! the flow's outstanding work per bit. Ranks live in an HFFS queue (log-spaced like WSJF's
//! ratios); a flow's entry is re-filed by handle whenever a packet joins or leaves it. When the
//! buffer is full the tail packet of the flow of highest rank is dropped (the arrival, when its
//! own job per bit is at least that rank).

use super::{Scheduler, SchedulerConfig};
use crate::job::Job;
use crate::quantize::LogScale;
use crate::queue::{Handle, HffsQueue};
use std::collections::{HashMap, VecDeque};

struct Flow {
    q: VecDeque<Job>,
    sum_size: f64,
    sum_bits: u64,
    entry: Option<Handle>,
}

impl Flow {
    fn rank(&self) -> f64 {
        self.sum_size.max(0.0) / self.sum_bits.max(1) as f64
    }
}

/// WSJF over flows, in order within each flow.
pub struct WsjfInorder {
    flows: HashMap<u32, Flow>,
    ranks: HffsQueue<u32>,
    scale: LogScale,
    len: usize,
    capacity: usize,
}

impl WsjfInorder {
    /// An empty scheduler; ranks spaced like WSJF's ratios.
    pub fn new(c: &SchedulerConfig) -> Self {
        let ranks = HffsQueue::new(c.width, c.levels, c.capacity);
        let scale = LogScale::new(c.job_floor() / c.bits_max as f64, c.job_max / c.bits_min as f64, ranks.span());
        Self { flows: HashMap::new(), ranks, scale, len: 0, capacity: c.capacity }
    }

    /// Re-files flow `id` under its current rank, or forgets it when empty.
    fn rerank(&mut self, id: u32) {
        let flow = self.flows.get_mut(&id).expect("flow exists");
        if let Some(h) = flow.entry.take() {
            self.ranks.remove(h);
        }
        if flow.q.is_empty() {
            self.flows.remove(&id);
        } else {
            let p = self.scale.bucket(flow.rank());
            flow.entry = self.ranks.push(p, id).ok();
        }
    }
}

impl Scheduler for WsjfInorder {
    fn enqueue(&mut self, job: Job) -> Option<Job> {
        let mut lost = None;
        if self.len == self.capacity {
            let (top, &victim) = self.ranks.peek_max().expect("a full buffer has flows");
            if self.scale.bucket(job.ratio()) >= top {
                return Some(job);
            }
            let flow = self.flows.get_mut(&victim).expect("ranked flows exist");
            let dropped = flow.q.pop_back().expect("ranked flows are backlogged");
            flow.sum_size -= dropped.size;
            flow.sum_bits -= dropped.bits as u64;
            lost = Some(dropped);
            self.len -= 1;
            self.rerank(victim);
        }
        let flow = self.flows.entry(job.flow).or_insert_with(|| Flow {
            q: VecDeque::new(),
            sum_size: 0.0,
            sum_bits: 0,
            entry: None,
        });
        flow.q.push_back(job);
        flow.sum_size += job.size;
        flow.sum_bits += job.bits as u64;
        self.len += 1;
        self.rerank(job.flow);
        lost
    }

    fn dequeue(&mut self) -> Option<Job> {
        let (_, id) = self.ranks.pop_min()?;
        let flow = self.flows.get_mut(&id).expect("ranked flows exist");
        flow.entry = None;
        let job = flow.q.pop_front().expect("ranked flows are backlogged");
        flow.sum_size -= job.size;
        flow.sum_bits -= job.bits as u64;
        self.len -= 1;
        self.rerank(id);
        Some(job)
    }

    fn len(&self) -> usize {
        self.len
    }
}
