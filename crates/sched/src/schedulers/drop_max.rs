//! The buffer SJF and WSJF share: an HFFS queue keyed by a quantized job property, served
//! lowest first (DEQUEUE-MIN) and, when full, losing its highest (DEQUEUE-MAX), the arrival
//! included (thesis §3.5.4: a queue that can only tail-drop lets an attacker fill it with
//! expensive jobs).

use crate::job::Job;
use crate::quantize::LogScale;
use crate::queue::HffsQueue;

/// A drop-max buffer ordered by `key(job)` on a logarithmic scale.
pub struct DropMaxBuffer {
    q: HffsQueue<Job>,
    scale: LogScale,
    key: fn(&Job) -> f64,
}

impl DropMaxBuffer {
    /// A buffer of `capacity` jobs over a `width^levels` queue; keys spaced log-uniformly over
    /// `[lo, hi]`.
    pub fn new(capacity: usize, width: u32, levels: u32, lo: f64, hi: f64, key: fn(&Job) -> f64) -> Self {
        let q = HffsQueue::new(width, levels, capacity);
        let scale = LogScale::new(lo, hi, q.span());
        Self { q, scale, key }
    }

    /// Admits `job`, dropping the job of highest key when full (the arrival itself when its
    /// key is at least the highest queued one).
    pub fn enqueue(&mut self, job: Job) -> Option<Job> {
        let p = self.scale.bucket((self.key)(&job));
        let mut lost = None;
        if self.q.is_full() {
            match self.q.max_priority() {
                Some(top) if p < top => lost = self.q.pop_max().map(|(_, j)| j),
                _ => return Some(job),
            }
        }
        // Cannot fail: there is room now.
        let _ = self.q.push(p, job);
        lost
    }

    /// The job of lowest key (the oldest among equal keys).
    pub fn dequeue(&mut self) -> Option<Job> {
        self.q.pop_min().map(|(_, j)| j)
    }

    /// Jobs buffered.
    pub fn len(&self) -> usize {
        self.q.len()
    }
}
