//! The model for workers whose cost is *not* a function of the working set: exact simulation.
//!
//! A splay tree's cost of a request (the search path before the splay) depends on the shape the
//! whole history of rotations left behind, not only on |W_t(x)|; there is no closed form g for
//! [`super::cost`]. So the model runs the engine's own worker ([`crate::workers`], built by the
//! registry from the workload's items in the engine's initial order, replicated state) on each
//! worker's own key stream, dispatched by the engine's dispatcher with the engine's seed: the
//! predicted per-worker work *is* a run's `worker_work`, single-threaded and without timing.
//! Comparisons burn no cycles here (`w` only changes time, not work units); ρ is passed as the
//! engine passes it (the delayed-hits caches' fill delay depends on it).
//!
//! It costs one pass of the structure over the stream per k (plus one for T(1)): O(n log m) for
//! a splay tree, amortised; a million requests take well under a second per k.

use super::candidate::Candidate;
use super::items::ItemSequence;
use super::speedup::{LawPoint, LawPointRecord, WorkerStats};
use crate::error::Error;
use crate::worker::WorkerParams;
use crate::workers::AlgoSpec;

/// One key stream served by the engine's worker `algo`, per dispatch and k.
pub struct Simulator {
    algo: AlgoSpec,
    params: WorkerParams,
    /// The workload's items in the engine's initial order (what every worker is built from).
    items: Vec<u64>,
    /// Each request's key.
    keys: Vec<u64>,
    /// Each request's item id (for first-access and absent counts).
    ids: ItemSequence,
    assignment: Vec<u32>,
    /// `seen[id] == epoch`: the worker being simulated has met item `id`.
    seen: Vec<u32>,
    epoch: u32,
    baseline: Option<WorkerStats>,
}

impl Simulator {
    /// A simulator of `algo` (a registry name such as `splay`) over the workload's `items` and
    /// request `keys`; `rho` is the engine's `miss_cycles`.
    pub fn new(algo: &str, rho: u64, items: Vec<u64>, keys: Vec<u64>) -> Result<Self, Error> {
        let algo = AlgoSpec::parse(algo)?;
        let ids = ItemSequence::from_keys(&items, &keys)?;
        let params = WorkerParams { capacity: algo.capacity, compare_cycles: 0, miss_cycles: rho };
        let seen = vec![0; ids.id_space()];
        Ok(Self { algo, params, items, keys, ids, assignment: Vec::new(), seen, epoch: 0, baseline: None })
    }

    /// The algorithm, as on the command line.
    pub fn name(&self) -> String {
        self.algo.to_string()
    }

    /// Items in the initial order.
    pub fn m(&self) -> usize {
        self.items.len()
    }

    /// Number of requests.
    pub fn requests(&self) -> usize {
        self.keys.len()
    }

    /// T(1): one worker serving the whole stream (simulated once).
    pub fn baseline(&mut self) -> WorkerStats {
        if let Some(stats) = &self.baseline {
            return stats.clone();
        }
        let all: Vec<u32> = (0..self.keys.len() as u32).collect();
        let stats = self.serve(&all);
        if !crate::cancel::requested() {
            self.baseline = Some(stats.clone()); // a pass cut short is not kept (as the law's)
        }
        stats
    }

    /// Every worker of an assignment (`workers[t]` in `0..k` serves request t), simulated.
    pub fn assigned(&mut self, workers: &[u32], k: usize) -> Result<LawPoint, Error> {
        if k == 0 {
            return Err(Error::config("k must be at least 1"));
        }
        if workers.len() != self.keys.len() {
            return Err(Error::config(format!(
                "{} worker assignments for {} requests",
                workers.len(),
                self.keys.len()
            )));
        }
        if let Some((t, w)) = workers.iter().enumerate().find(|(_, &w)| w as usize >= k) {
            return Err(Error::config(format!("request {t} is assigned to worker {w}, but k = {k}")));
        }
        let baseline = self.baseline();
        let mut streams: Vec<Vec<u32>> = vec![Vec::new(); k];
        for (t, &w) in workers.iter().enumerate() {
            streams[w as usize].push(t as u32);
        }
        let stats = streams.iter().map(|s| self.serve(s)).collect();
        crate::cancel::check()?; // a pass cut short counted part of its stream
        Ok(LawPoint { k, baseline_work: baseline.work, workers: stats })
    }

    /// Every worker behind a dispatch candidate at k, simulated.
    pub fn candidate(&mut self, candidate: &dyn Candidate, k: usize) -> Result<LawPoint, Error> {
        if k == 0 {
            return Err(Error::config("k must be at least 1"));
        }
        if candidate.requests() != self.keys.len() {
            return Err(Error::config(format!(
                "candidate '{}' assigns {} requests but the stream has {}",
                candidate.name(),
                candidate.requests(),
                self.keys.len()
            )));
        }
        let mut assignment = std::mem::take(&mut self.assignment);
        candidate.assign(k, &mut assignment);
        let point = self.assigned(&assignment, k);
        self.assignment = assignment;
        point
    }

    /// One fresh worker serving the requests `stream` (indices, in order).
    fn serve(&mut self, stream: &[u32]) -> WorkerStats {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.seen.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
        let stamp = self.epoch;
        let mut worker = self.algo.build(&self.items, &self.params);
        let (m, ids) = (self.ids.m(), self.ids.ids());
        let mut s = WorkerStats { requests: stream.len() as u64, ..Default::default() };
        for (i, &t) in stream.iter().enumerate() {
            if i % super::working_set::STOP_EVERY == super::working_set::STOP_EVERY - 1 && crate::cancel::requested() {
                break; // its caller reports the run interrupted
            }
            s.work += worker.serve(&self.keys[t as usize]);
            let id = ids[t as usize];
            if id as usize >= m && self.algo.capacity.is_none() {
                s.absent += 1;
            } else if self.seen[id as usize] != stamp {
                self.seen[id as usize] = stamp;
                s.first_accesses += 1;
            }
        }
        s.hits = worker.hits();
        s
    }
}

/// The record of a simulated point: as the law's, without working-set sizes (a simulation
/// does not compute them).
pub fn simulated_record(point: &LawPoint, s: f64) -> LawPointRecord {
    let mut r = point.record(s);
    r.workers.iter_mut().for_each(|w| w.mean_working_set = None);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::law::{key_candidate, key_workload};
    use crate::workload::WorkloadSpec;

    /// Three cycles per comparison, no miss cost: the simulator's own unit.
    fn engine_work(algo: &str, dispatch: &str, workload: &WorkloadSpec, n: usize, k: usize, seed: u64) -> Vec<u64> {
        let params = WorkerParams { capacity: None, compare_cycles: 3, miss_cycles: 0 };
        crate::law::engine_match_tests::engine_work(algo, params, dispatch, workload, n, k, seed)
    }

    #[test]
    fn simulated_splay_and_tree_equal_the_engine() {
        let workloads = [WorkloadSpec::Uniform { m: 500 }, WorkloadSpec::Zipf { m: 500, alpha: 1.01 }];
        let (n, seed) = (4000, 7);
        for workload in &workloads {
            let w = key_workload(workload, n, seed).unwrap();
            for algo in ["splay", "tree"] {
                let mut sim = Simulator::new(algo, 0, w.item_keys.clone(), w.keys.clone()).unwrap();
                assert_eq!(vec![sim.baseline().work], engine_work(algo, "hash", workload, n, 1, seed));
                for dispatch in ["rr", "hash"] {
                    let c = key_candidate(dispatch, &w.keys, seed).unwrap();
                    for k in [2, 8] {
                        let p = sim.candidate(&c, k).unwrap();
                        let got: Vec<u64> = p.workers.iter().map(|s| s.work).collect();
                        assert_eq!(got, engine_work(algo, dispatch, workload, n, k, seed), "{algo} {dispatch} {k}");
                        let r = simulated_record(&p, 0.0);
                        assert!(r.workers.iter().all(|w| w.mean_working_set.is_none()));
                        let firsts: u64 = p.workers.iter().map(|s| s.first_accesses).sum();
                        assert!(firsts >= 500.min(n as u64) / 2 && firsts <= n as u64);
                    }
                }
            }
        }
    }

    #[test]
    fn refuses_bad_assignments() {
        let mut sim = Simulator::new("splay", 0, vec![1, 2, 3], vec![1, 3, 2]).unwrap();
        assert!(sim.assigned(&[0, 1], 2).is_err());
        assert!(sim.assigned(&[0, 2, 1], 2).unwrap_err().to_string().contains("worker 2"));
        assert!(sim.assigned(&[0, 0, 0], 0).is_err());
        assert!(Simulator::new("nope", 0, vec![1], vec![1]).is_err());
        // One worker: 2 at the root of the balanced 1-2-3, then 3 below it, then 2 below 3.
        let p = sim.assigned(&[0, 0, 0], 1).unwrap();
        assert_eq!(p.workers[0].work, p.baseline_work);
        assert_eq!(p.workers[0].first_accesses, 3);
    }
}
