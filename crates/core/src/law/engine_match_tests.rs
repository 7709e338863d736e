//! The law against the engine: predicted per-worker work must equal a real run's work counts,
//! for MTF and LRU, uniform and Zipf input, every key dispatcher and several k.

use super::*;
use crate::run_config::{execute, Modes, RunConfig, StateModel};
use crate::worker::WorkerParams;
use crate::workers::AlgoSpec;

/// The per-worker work counts of a real engine run (projected mode, replicated state): what the
/// law and the simulator must reproduce exactly.
pub(super) fn engine_work(
    algo: &str,
    params: WorkerParams,
    dispatch: &str,
    workload: &WorkloadSpec,
    n: usize,
    k: usize,
    seed: u64,
) -> Vec<u64> {
    let config = RunConfig {
        algo: AlgoSpec::parse(algo).unwrap(),
        params,
        dispatch: dispatch.into(),
        workload: workload.clone(),
        k,
        requests: n,
        warmup: 0,
        exclude_warmup: false,
        seed,
        state: StateModel::Replicated,
        modes: Modes { projected: true, measured: false, single_core: false },
        parallel: 1,
        repeats: 1,
        min_timed_ms: 0,
    };
    execute(&config).unwrap().projected.unwrap().worker_work
}

fn miss_cost(rho: u64) -> WorkerParams {
    WorkerParams { capacity: None, compare_cycles: 0, miss_cycles: rho }
}

#[test]
fn assignments_match_the_engine() {
    let workloads = [WorkloadSpec::Uniform { m: 300 }, WorkloadSpec::Zipf { m: 300, alpha: 1.01 }];
    let (n, seed) = (3000, 11);
    for workload in &workloads {
        let w = key_workload(workload, n, seed).unwrap();
        for (algo, rho) in [("mtf", 0), ("lru:40", 3)] {
            let mut ev = Evaluator::new(w.items.clone(), cost_function(algo, rho).unwrap());
            let t1 = engine_work(algo, miss_cost(rho), "hash", workload, n, 1, seed);
            assert_eq!(vec![ev.baseline().work], t1, "{algo} baseline");
            for dispatch in ["rr", "random", "hash"] {
                let candidate = key_candidate(dispatch, &w.keys, seed).unwrap();
                for k in [2, 3, 8] {
                    let point = ev.candidate(&candidate, k).unwrap();
                    let predicted: Vec<u64> = point.workers.iter().map(|s| s.work).collect();
                    let real = engine_work(algo, miss_cost(rho), dispatch, workload, n, k, seed);
                    assert_eq!(predicted, real, "{algo} {dispatch} k={k} {}", workload.label());
                }
            }
        }
    }
}

#[test]
fn uniform_mtf_with_hash_dispatch_is_superlinear() {
    // Eq. 2's regime: uniform input, m ≫ k; key hash gives ℓ ≈ k and q ≈ k.
    let w = key_workload(&WorkloadSpec::Uniform { m: 2000 }, 40_000, 3).unwrap();
    let mut ev = Evaluator::new(w.items, cost_function("mtf", 0).unwrap());
    let hash = ev.candidate(&key_candidate("hash", &w.keys, 3).unwrap(), 8).unwrap();
    assert!(hash.ell() > 5.0 && hash.q() > 5.0 && hash.work_speedup() > 30.0, "{hash:?}");
    // Round-robin isolates nothing: ℓ ≈ 1 (each worker still sees every item).
    let rr = ev.candidate(&key_candidate("rr", &w.keys, 3).unwrap(), 8).unwrap();
    assert!(rr.ell() < 1.3 && rr.work_speedup() < 10.0, "{rr:?}");
}

#[test]
fn items_and_assignment_can_be_given_separately() {
    // Items are rules 0..4; requests carry an arbitrary assignment.
    let items = ItemSequence::new(vec![0, 1, 0, 2, 1, 0, 3, 3], 4).unwrap();
    let mut ev = Evaluator::new(items, cost_function("mtf", 0).unwrap());
    // One worker: 1, 2, 2(0 after 1), 3, 3(1 after 0,2), 3(0 after 2,1), 4, 1.
    assert_eq!(ev.baseline().work, 1 + 2 + 2 + 3 + 3 + 3 + 4 + 1);
    let p = ev.assigned(&[0, 1, 0, 1, 1, 0, 0, 0], 2).unwrap();
    // Worker 0 sees 0,0,0,3,3: 1+1+1+4+1; worker 1 sees 1,2,1: 2+3+2.
    assert_eq!(p.workers.iter().map(|s| s.work).collect::<Vec<_>>(), vec![8, 7]);
    assert!(ev.assigned(&[0, 2, 0, 0, 0, 0, 0, 0], 2).unwrap_err().to_string().contains("worker 2"));
    assert!(ev.assigned(&[0], 2).is_err());
    let accesses = ev.accesses(None, 1).unwrap();
    assert_eq!(accesses[2], Access::Repeat { working_set: 1 });
    assert_eq!(accesses[6], Access::First { position: 3 });
}
