//! Belatedly's flow network without a solver: every schedule the simulator plays is a feasible
//! flow of the same latency (Lemma 1 and the cost of Eq. 2.13), and the rounding of an integral
//! flow replays that schedule. The LP itself is solved by HiGHS in the Python tests.

use proptest::prelude::*;
use std::cell::RefCell;
use superlinear_cache::belatedly::{round_schedules, FlowNetwork};
use superlinear_cache::generate::TraceSpec;
use superlinear_cache::policies::{self, REGISTRY};
use superlinear_cache::{simulate, EvictionPolicy, MissLatency, Outcome, PolicyContext, SimReport, Timing};

/// Wraps a policy and records when each object enters and leaves the cache.
struct Recorder<'a> {
    inner: Box<dyn EvictionPolicy + 'a>,
    events: RefCell<Vec<Vec<(u64, bool)>>>,
}

impl EvictionPolicy for Recorder<'_> {
    fn on_request(&mut self, object: u32, now: u64, outcome: Outcome) {
        self.inner.on_request(object, now, outcome);
    }

    fn on_fill(&mut self, object: u32, now: u64, full: bool, evict: &mut Vec<u32>) -> bool {
        let admit = self.inner.on_fill(object, now, full, evict);
        let mut ev = self.events.borrow_mut();
        for &v in evict.iter() {
            ev[v as usize].push((now, false));
        }
        if admit {
            ev[object as usize].push((now, true));
        }
        admit
    }
}

fn replay(
    policy: &str,
    requests: &[u32],
    objects: usize,
    z: &MissLatency,
    cap: usize,
) -> (SimReport, Vec<Vec<(u64, bool)>>) {
    let ctx = PolicyContext { requests, objects, z, capacity: cap };
    let mut r =
        Recorder { inner: policies::build(policy, &ctx).unwrap(), events: RefCell::new(vec![Vec::new(); objects]) };
    let report = simulate(requests, objects, z, cap, &mut r, Timing::Delayed);
    (report, r.events.into_inner())
}

fn cached_at(events: &[Vec<(u64, bool)>]) -> impl Fn(u32, u64) -> bool + '_ {
    move |o, t| events[o as usize].iter().rev().find(|(at, _)| *at <= t).is_some_and(|(_, admitted)| *admitted)
}

fn check_all_policies(requests: &[u32], objects: usize, z: &MissLatency, cap: usize) {
    let net = FlowNetwork::build(requests, objects, z, cap).unwrap();
    for entry in REGISTRY {
        let (report, events) = replay(entry.name, requests, objects, z, cap);
        let x = net.schedule_point(cached_at(&events));
        let v = net.violation(&x);
        assert!(v < 1e-9, "{}: violation {v}", entry.name);
        assert_eq!(net.latency(&x).round() as u64, report.latency, "{}", entry.name);
        // Rounding the integral flow replays the schedule: same latency, by threshold or at random.
        for r in round_schedules(&net, &x, requests, z, 1, 7) {
            assert_eq!(r.report.latency, report.latency, "{}: rounded {:?}", entry.name, r);
        }
    }
}

#[test]
fn every_policy_is_a_feasible_flow_of_its_latency() {
    let spec = TraceSpec { requests: 5_000, objects: 120, ..TraceSpec::default() };
    let trace = spec.generate().unwrap();
    for (z, cap) in [(1u64, 8usize), (7, 8), (60, 20), (400, 5)] {
        check_all_policies(&trace.requests, 120, &MissLatency::Global(z), cap);
    }
    let per_object = MissLatency::PerObject((0..120).map(|o| [3, 30, 300][o % 3]).collect());
    check_all_policies(&trace.requests, 120, &per_object, 10);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_small_traces(trace in prop::collection::vec(0u32..6, 1..60), cap in 1usize..4, z in 1u64..9) {
        check_all_policies(&trace, 6, &MissLatency::Global(z), cap);
    }
}

#[test]
fn network_shape() {
    // Z = 3. Object 0 at 0, 1, 5, 9: first window 3 + 2; nodes at fills {3, 4, 8} and after
    // requests {2, 6, 10}, kept within [0 + Z, 9]: 3, 4, 6, 8. Object 1 at 2, 3, 4, 6, 7, 8: first
    // window 3 + 2 + 1; nodes within [5, 8]: 5, 6, 7, 8.
    let net = FlowNetwork::build(&[0, 0, 1, 1, 1, 0, 1, 1, 1, 0], 2, &MissLatency::Global(3), 1).unwrap();
    assert_eq!(net.constant, (3 + 2) + (3 + 2 + 1));
    let size = net.size();
    assert_eq!(size.intervals, 8);
    // y and e per node, one occupancy variable and row per interval boundary time.
    assert_eq!(size.variables, 2 * size.intervals + (size.rows - size.intervals));
    assert_eq!(net.indptr.len(), size.rows + 1);
    assert!(FlowNetwork::build(&[0], 1, &MissLatency::Global(1), 0).is_err());
}
