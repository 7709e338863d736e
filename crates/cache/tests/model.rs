//! The delayed-hits model and its policies: the thesis' worked examples, exact costs, the
//! optimum of tiny instances as ground truth, and MAD against its base policies.

use proptest::prelude::*;
use superlinear_cache::generate::TraceSpec;
use superlinear_cache::optimal::{optimal_latency, Model};
use superlinear_cache::policies::{self, BeladyAd, REGISTRY};
use superlinear_cache::{simulate, EvictionPolicy, MissLatency, Outcome, PolicyContext, SimReport, Timing};
use superlinear_core::workers::{DelayedHitsCache, Eviction};
use superlinear_core::Worker;

fn run(policy: &str, requests: &[u32], objects: usize, z: &MissLatency, capacity: usize, timing: Timing) -> SimReport {
    let ctx = PolicyContext { requests, objects, z, capacity };
    let mut p = policies::build(policy, &ctx).unwrap();
    simulate(requests, objects, z, capacity, p.as_mut(), timing)
}

fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| e.name).collect()
}

#[test]
fn thesis_worked_example_z10() {
    // Z = 10: a miss at T = 3, then requests for the same object at T = 5 and T = 11 cost 8 and
    // 2 (§2.1); every other step requests a new object (a miss, 10).
    let x = 0u32;
    let requests: Vec<u32> = (0..12).map(|t| if [3, 5, 11].contains(&t) { x } else { 100 + t }).collect();
    let z = MissLatency::Global(10);
    for name in names() {
        let r = run(name, &requests, 112, &z, 12, Timing::Delayed);
        assert_eq!((r.hits, r.delayed_hits, r.misses), (0, 2, 10), "{name}");
        assert_eq!(r.latency, 9 * 10 + 10 + 8 + 2, "{name}");
    }
    // The classical model calls both later requests hits: its latency is the misses' alone.
    let c = run("lru", &requests, 112, &z, 12, Timing::Classical);
    assert_eq!((c.hits, c.delayed_hits, c.misses, c.latency), (2, 0, 10, 100));
}

#[test]
fn figure_2_15_ranks_and_eviction() {
    // Z = 3, cache of 2 holding A and B when D's fill arrives at T = 9. A's next request is
    // 100 steps away in a burst of three (aggregate delay 3 + 2 + 1 = 6); B's is 10 steps away
    // in a burst of two (3 + 2 = 5). Ranks 0.06 and 0.5 (Eq. 2.45): A leaves.
    let (a, b, d) = (0u32, 1u32, 2u32);
    let mut requests = vec![a, b, a, b, a, b];
    requests.resize(112, d);
    for t in [19, 20] {
        requests[t] = b;
    }
    for t in [109, 110, 111] {
        requests[t] = a;
    }
    let z = MissLatency::Global(3);
    let ctx = PolicyContext { requests: &requests, objects: 3, z: &z, capacity: 2 };
    let mut p = BeladyAd::new(&ctx);
    let outcomes = [Outcome::Miss, Outcome::Miss, Outcome::DelayedHit, Outcome::DelayedHit];
    for t in 0..9u64 {
        if t == 3 || t == 4 {
            let mut evict = Vec::new();
            assert!(p.on_fill([a, b][t as usize - 3], t, false, &mut evict) && evict.is_empty());
        }
        let o = requests[t as usize];
        p.on_request(o, t, if t < 4 { outcomes[t as usize] } else { Outcome::Hit });
    }
    assert!((p.rank(a, 9).value() - 0.06).abs() < 1e-12);
    assert!((p.rank(b, 9).value() - 0.5).abs() < 1e-12);
    let mut evict = Vec::new();
    assert!(p.on_fill(d, 9, true, &mut evict));
    assert_eq!(evict, vec![a]);
}

#[test]
fn per_object_latency_is_each_objects_own() {
    // Object 0 with Z = 2, object 1 with Z = 5; one request each at 0 and 1, again at 3 and 4.
    let z = MissLatency::PerObject(vec![2, 5]);
    let r = run("lru", &[0, 1, 1, 0, 1], 2, &z, 2, Timing::Delayed);
    // 0: miss 2, fill at 2, hit at 3. 1: miss 5 (fill at 6), delayed 4 at T = 2 and 2 at T = 4.
    assert_eq!((r.hits, r.delayed_hits, r.misses, r.latency), (1, 2, 2, 2 + 5 + 4 + 2));
}

#[test]
fn core_lru_mad_worker_matches_the_simulator() {
    // The engine's worker and the simulator's policy share the ranking: same latency, exactly.
    let spec = TraceSpec { requests: 30_000, objects: 400, ..TraceSpec::default() };
    let trace = spec.generate().unwrap();
    for (z, cap) in [(20u64, 30usize), (200, 60), (2, 10)] {
        for (eviction, policy) in [(Eviction::Mad, "lru-mad"), (Eviction::Recency, "lru")] {
            let mut worker = DelayedHitsCache::new(cap, z, eviction);
            let work: u64 = trace.requests.iter().map(|&o| worker.serve(&(o as u64))).sum();
            let sim = run(policy, &trace.requests, 400, &MissLatency::Global(z), cap, Timing::Delayed);
            assert_eq!(worker.total_latency(), sim.latency, "{policy} Z={z} C={cap}");
            assert_eq!(worker.outcomes(), (sim.hits, sim.delayed_hits, sim.misses));
            assert_eq!(work, sim.requests + sim.latency);
        }
    }
}

#[test]
fn mad_beats_its_base_policy_on_bursty_traces() {
    // Half the objects arrive in trains of 8 requests about 2 steps apart. MAD's gain grows with
    // Z (thesis Figs. 2.20-2.22); at Z = 10 it is within a percent, so only larger Z are
    // asserted, with wide margins.
    let spec = TraceSpec { requests: 100_000, objects: 2_000, ..TraceSpec::default() };
    let trace = spec.generate().unwrap();
    for (z, base, mad) in [(100u64, "lru", "lru-mad"), (1000, "lru", "lru-mad"), (10_000, "lru", "lru-mad")] {
        let zl = MissLatency::Global(z);
        let b = run(base, &trace.requests, 2_000, &zl, 100, Timing::Delayed);
        let m = run(mad, &trace.requests, 2_000, &zl, 100, Timing::Delayed);
        assert!(
            (m.latency as f64) < 0.97 * b.latency as f64,
            "Z={z}: {mad} {} vs {base} {}",
            m.mean_latency(),
            b.mean_latency()
        );
    }
}

#[test]
fn belady_maximises_hits_in_the_classical_model() {
    let spec = TraceSpec { requests: 20_000, objects: 300, ..TraceSpec::default() };
    let trace = spec.generate().unwrap();
    let z = MissLatency::Global(1);
    let opt = run("belady", &trace.requests, 300, &z, 20, Timing::Classical);
    for name in names() {
        let r = run(name, &trace.requests, 300, &z, 20, Timing::Classical);
        assert!(r.hits <= opt.hits, "{name} {} > belady {}", r.hits, opt.hits);
    }
}

fn small_trace() -> impl Strategy<Value = (Vec<u32>, usize)> {
    (2usize..5).prop_flat_map(|m| (prop::collection::vec(0..m as u32, 1..14), Just(m)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// With Z = 1 there are no delayed hits: every policy's latency is its miss count.
    #[test]
    fn z_one_latency_is_the_miss_count(trace in prop::collection::vec(0u32..9, 1..300), cap in 1usize..6) {
        for name in names() {
            let r = run(name, &trace, 9, &MissLatency::Global(1), cap, Timing::Delayed);
            prop_assert_eq!(r.delayed_hits, 0);
            prop_assert_eq!(r.latency, r.misses);
            prop_assert_eq!(r.hits + r.misses, trace.len() as u64);
        }
    }

    /// Outcomes add up; the classical model has no delayed hits and costs Z per miss.
    #[test]
    fn accounting_is_consistent(trace in prop::collection::vec(0u32..12, 1..300), cap in 1usize..6, z in 1u64..40) {
        let zl = MissLatency::Global(z);
        for name in names() {
            let r = run(name, &trace, 12, &zl, cap, Timing::Delayed);
            prop_assert_eq!(r.hits + r.delayed_hits + r.misses, trace.len() as u64);
            prop_assert!(r.latency >= r.misses * z && r.latency <= (r.misses + r.delayed_hits) * z);
            let c = run(name, &trace, 12, &zl, cap, Timing::Classical);
            prop_assert_eq!((c.delayed_hits, c.latency), (0, c.misses * z));
        }
    }

    /// The optimum of the simulator's model is at most every policy, and the thesis' model
    /// (eviction at any time) is at most that.
    #[test]
    fn exhaustive_optimum_bounds_every_policy((trace, m) in small_trace(), cap in 1usize..3, z in 1u64..6) {
        let zl = MissLatency::Global(z);
        let at_fills = optimal_latency(&trace, m, &zl, cap, Model::AtFills).unwrap();
        let any_time = optimal_latency(&trace, m, &zl, cap, Model::AnyTime).unwrap();
        prop_assert!(any_time <= at_fills);
        for name in names() {
            let r = run(name, &trace, m, &zl, cap, Timing::Delayed);
            prop_assert!(at_fills <= r.latency, "{} {} < optimum {}", name, r.latency, at_fills);
        }
    }
}

#[test]
fn impossible_parameters_are_errors() {
    let z = MissLatency::Global(3);
    let ctx = PolicyContext { requests: &[0], objects: 1, z: &z, capacity: 0 };
    let err = policies::build("lru", &ctx).err().expect("capacity 0 is refused").to_string();
    assert!(err.contains("at least 1"), "{err}");
    let ctx = PolicyContext { capacity: 1, ..ctx };
    let err = policies::build("fifo", &ctx).err().expect("unknown policy").to_string();
    assert!(err.contains("unknown policy 'fifo'") && err.contains("lru-mad"), "{err}");
    assert!(MissLatency::global(0).is_err());
}
