//! The law's driver: T(1) once, then for each dispatch assignment and k the working-set pass
//! over every worker's own stream, summed into per-worker work with the cost function g.
//!
//! Per k this is one counting sort of the requests by worker (stable, so each worker's stream
//! keeps its order) and one O(n_i log n_i) pass per worker: O(n log n) in all, single-threaded.

use super::candidate::Candidate;
use super::cost::CostFunction;
use super::items::ItemSequence;
use super::speedup::{LawPoint, WorkerStats};
use super::working_set::{Access, WorkingSetPass};
use crate::error::Error;

/// Evaluates the law for one item sequence and one cost function, reusing its buffers.
pub struct Evaluator {
    items: ItemSequence,
    cost: Box<dyn CostFunction>,
    pass: WorkingSetPass,
    assignment: Vec<u32>,
    grouped: Vec<u32>,
    baseline: Option<WorkerStats>,
}

impl Evaluator {
    /// An evaluator of `items` under the cost function `cost`.
    pub fn new(items: ItemSequence, cost: Box<dyn CostFunction>) -> Self {
        let pass = WorkingSetPass::new(items.id_space());
        Self { items, cost, pass, assignment: Vec::new(), grouped: Vec::new(), baseline: None }
    }

    /// The item sequence.
    pub fn items(&self) -> &ItemSequence {
        &self.items
    }

    /// The cost function g.
    pub fn cost(&self) -> &dyn CostFunction {
        self.cost.as_ref()
    }

    /// T(1): one worker serving the whole stream (computed once; a pass a stop request cut
    /// short is returned, not kept, and its caller reports the run interrupted).
    pub fn baseline(&mut self) -> WorkerStats {
        if let Some(stats) = &self.baseline {
            return stats.clone();
        }
        let stats = serve(&mut self.pass, self.cost.as_ref(), self.items.ids(), self.items.m());
        if !crate::cancel::requested() {
            self.baseline = Some(stats.clone());
        }
        stats
    }

    /// The law at k for a given assignment: `workers[t]` in `0..k` serves request t.
    pub fn assigned(&mut self, workers: &[u32], k: usize) -> Result<LawPoint, Error> {
        check(workers, k, self.items.len())?;
        let baseline = self.baseline();
        let ranges = group(self.items.ids(), workers, k, &mut self.grouped);
        let stats = ranges
            .iter()
            .map(|r| serve(&mut self.pass, self.cost.as_ref(), &self.grouped[r.clone()], self.items.m()))
            .collect();
        crate::cancel::check()?; // a pass cut short counted part of its stream
        Ok(LawPoint { k, baseline_work: baseline.work, workers: stats })
    }

    /// The law at k for a dispatch candidate.
    pub fn candidate(&mut self, candidate: &dyn Candidate, k: usize) -> Result<LawPoint, Error> {
        if k == 0 {
            return Err(Error::config("k must be at least 1"));
        }
        if candidate.requests() != self.items.len() {
            return Err(Error::config(format!(
                "candidate '{}' assigns {} requests but the item sequence has {}",
                candidate.name(),
                candidate.requests(),
                self.items.len()
            )));
        }
        let mut assignment = std::mem::take(&mut self.assignment);
        candidate.assign(k, &mut assignment);
        let point = self.assigned(&assignment, k);
        self.assignment = assignment;
        point
    }

    /// What every request met, in request order (for inspection and tests; allocates per
    /// request). `workers` = `None` is the single worker.
    pub fn accesses(&mut self, workers: Option<&[u32]>, k: usize) -> Result<Vec<Access>, Error> {
        let n = self.items.len();
        let single = vec![0u32; if workers.is_none() { n } else { 0 }];
        let (workers, k) = match workers {
            Some(w) => (w, k),
            None => (&single[..], 1),
        };
        check(workers, k, n)?;
        let indices: Vec<u32> = (0..n as u32).collect();
        let mut grouped = Vec::new();
        let ranges = group(&indices, workers, k, &mut grouped);
        let mut out = vec![Access::Absent; n];
        let ids = self.items.ids();
        let mode = self.cost.mode();
        for r in ranges {
            let order = &grouped[r];
            let stream: Vec<u32> = order.iter().map(|&t| ids[t as usize]).collect();
            let mut slots = order.iter();
            self.pass.run(&stream, self.items.m(), mode, |a| {
                out[*slots.next().expect("one access per request") as usize] = a;
            });
        }
        crate::cancel::check()?;
        Ok(out)
    }
}

fn check(workers: &[u32], k: usize, n: usize) -> Result<(), Error> {
    if k == 0 {
        return Err(Error::config("k must be at least 1"));
    }
    if workers.len() != n {
        return Err(Error::config(format!("{} worker assignments for {n} requests", workers.len())));
    }
    if let Some((t, w)) = workers.iter().enumerate().find(|(_, &w)| w as usize >= k) {
        return Err(Error::config(format!("request {t} is assigned to worker {w}, but k = {k}")));
    }
    Ok(())
}

/// Stable counting sort of `values` by worker into `out`; returns each worker's range.
fn group(values: &[u32], workers: &[u32], k: usize, out: &mut Vec<u32>) -> Vec<std::ops::Range<usize>> {
    let mut start = vec![0usize; k + 1];
    for &w in workers {
        start[w as usize + 1] += 1;
    }
    for i in 0..k {
        start[i + 1] += start[i];
    }
    let ranges = (0..k).map(|i| start[i]..start[i + 1]).collect();
    out.clear();
    out.resize(values.len(), 0);
    for (&v, &w) in values.iter().zip(workers) {
        let slot = &mut start[w as usize];
        out[*slot] = v;
        *slot += 1;
    }
    ranges
}

/// One worker serving `stream` from the initial state: its stats under g.
fn serve(pass: &mut WorkingSetPass, cost: &dyn CostFunction, stream: &[u32], m: usize) -> WorkerStats {
    let mut s = WorkerStats { requests: stream.len() as u64, hits: cost.is_cache().then_some(0), ..Default::default() };
    let mut hits = 0u64;
    pass.run(stream, m, cost.mode(), |a| {
        s.work += cost.cost(a, m);
        match a {
            Access::Repeat { working_set } => s.working_set_sum += working_set,
            Access::First { .. } => s.first_accesses += 1,
            Access::Absent => s.absent += 1,
        }
        hits += cost.hit(a) as u64;
    });
    if let Some(h) = s.hits.as_mut() {
        *h = hits;
    }
    s
}
