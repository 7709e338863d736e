//! Exact work counts (deterministic): MRF behind a locality-boosting dispatcher reduces each
//! worker's work super-linearly; round robin does not; a static list never does (paper
//! Figs. 8d, 9c, 9d). Wide margins, no timings.

use std::sync::Arc;
use superlinear_classify::generate::SyntheticSpec;
use superlinear_classify::run::{check, execute, RunSpec};
use superlinear_classify::{RuleAwarePlanner, Snapshot};

fn work_speedup(
    planner: &RuleAwarePlanner,
    packets: &[superlinear_classify::Packet],
    algo: &str,
    dispatch: &str,
    k: usize,
) -> f64 {
    let run = |dispatch: &str, k: usize| {
        let spec = RunSpec { algo: algo.into(), dispatch: dispatch.into(), k, parallel: 1, ..Default::default() };
        execute(planner, packets, &spec).unwrap().projected.unwrap().work_span()
    };
    run("rr", 1) as f64 / run(dispatch, k) as f64
}

#[test]
fn mrf_with_locality_is_superlinear_and_round_robin_is_not() {
    // 499 independent rules, 20 flows per rule, uniform traffic.
    let spec = SyntheticSpec { rules: 499, depth: 0, flows_per_rule: 20, catch_all_fraction: 0.0 };
    let planner = RuleAwarePlanner::new(Arc::new(Snapshot::new(spec.rule_set().unwrap())));
    let packets = spec.trace(60_000, 3).unwrap();
    let k = 8;
    let dport = work_speedup(&planner, &packets, "mrf", "rss:dport", k);
    let rule = work_speedup(&planner, &packets, "mrf", "rule", k);
    let rr = work_speedup(&planner, &packets, "mrf", "rr", k);
    let five = work_speedup(&planner, &packets, "mrf", "rss", k);
    let stat = work_speedup(&planner, &packets, "static", "rss:dport", k);
    assert!(dport > 3.0 * k as f64, "dport {dport}");
    assert!(rule >= 0.9 * dport, "rule {rule} vs dport {dport}");
    assert!(rr < 1.3 * k as f64, "rr {rr}");
    assert!(five < 1.5 * k as f64, "5-tuple {five} (flows of a rule spread everywhere)");
    assert!(stat < 1.3 * k as f64, "static {stat}");
}

#[test]
fn dependencies_and_catch_all_limit_self_adjustment() {
    // Deeper chains: more work per packet for MRF at k = 1 (the whole chain stays active).
    let work = |depth: usize| {
        let spec = SyntheticSpec { rules: 200, depth, flows_per_rule: 1, catch_all_fraction: 0.0 };
        let planner = RuleAwarePlanner::new(Arc::new(Snapshot::new(spec.rule_set().unwrap())));
        let packets = spec.trace(20_000, 1).unwrap();
        let r = execute(
            &planner,
            &packets,
            &RunSpec { algo: "mrf".into(), dispatch: "rr".into(), k: 1, ..Default::default() },
        )
        .unwrap();
        r.projected.unwrap().work_total() as f64 / packets.len() as f64
    };
    let (w1, w8) = (work(1), work(8));
    assert!(w8 > 3.0 * w1, "d=1 {w1}, d=8 {w8}");
    // All traffic to the catch-all: MRF cannot move it and costs as much as the static list.
    let spec = SyntheticSpec { rules: 300, depth: 0, flows_per_rule: 1, catch_all_fraction: 1.0 };
    let planner = RuleAwarePlanner::new(Arc::new(Snapshot::new(spec.rule_set().unwrap())));
    let packets = spec.trace(5_000, 1).unwrap();
    let cost = |algo: &str| {
        let r = execute(
            &planner,
            &packets,
            &RunSpec { algo: algo.into(), dispatch: "rr".into(), k: 1, ..Default::default() },
        )
        .unwrap();
        r.projected.unwrap().work_total()
    };
    assert_eq!(cost("mrf"), cost("static"));
}

#[test]
fn check_counts_every_packet_and_a_million_flows_need_no_flow_state() {
    let spec = SyntheticSpec { rules: 10_000, depth: 0, flows_per_rule: 100, catch_all_fraction: 0.0 };
    assert_eq!(spec.flows(), 1_000_000);
    let planner = RuleAwarePlanner::new(Arc::new(Snapshot::new(spec.rule_set().unwrap())));
    let packets = spec.trace(30_000, 2).unwrap();
    let report = check(&planner, &packets, "mrf", "rss", 4, 1, 0).unwrap();
    assert_eq!((report.checked, report.mismatches), (30_000, 0));
    assert_eq!(report.matches.iter().sum::<u64>(), 30_000);
}

#[test]
fn statistics_follow_the_workers() {
    let spec = SyntheticSpec { rules: 101, depth: 2, flows_per_rule: 2, catch_all_fraction: 0.0 };
    let planner = RuleAwarePlanner::new(Arc::new(Snapshot::new(spec.rule_set().unwrap())));
    let packets = spec.trace(8_000, 4).unwrap();
    let r = execute(
        &planner,
        &packets,
        &RunSpec {
            algo: "mrf".into(),
            dispatch: "rss:dport".into(),
            k: 4,
            stats: true,
            window: 1000,
            ..Default::default()
        },
    )
    .unwrap();
    let stats: Vec<_> = r.stats.into_iter().map(|s| s.unwrap()).collect();
    assert_eq!(stats.iter().map(|s| s.packets).sum::<u64>(), 8_000);
    let acc = r.projected.unwrap();
    assert_eq!(stats.iter().map(|s| s.work).collect::<Vec<_>>(), acc.worker_work);
    // Each hit of a chain tail touches its 3 levels (d = 2).
    assert!(stats.iter().all(|s| s.chain_hist[3] == s.packets));
    // Each worker sees about a quarter of the 101 chains.
    assert!(
        stats.iter().all(|s| s.mean_active() < 40.0),
        "{:?}",
        stats.iter().map(|s| s.mean_active()).collect::<Vec<_>>()
    );
}

#[test]
fn a_replayed_capture_runs_by_descriptors_with_the_same_work() {
    // A capture looped three times: descriptors into the capture give exactly the work of the
    // copies, and a period the packets do not have is refused.
    let spec = SyntheticSpec { rules: 199, depth: 2, flows_per_rule: 5, catch_all_fraction: 0.1 };
    let planner = RuleAwarePlanner::new(Arc::new(Snapshot::new(spec.rule_set().unwrap())));
    let capture = spec.trace(5_000, 4).unwrap();
    let replayed: Vec<_> = capture.iter().copied().cycle().take(15_000).collect();
    let work = |period: usize| {
        let spec = RunSpec { dispatch: "rss".into(), k: 4, parallel: 1, period, ..Default::default() };
        let acc = execute(&planner, &replayed, &spec).unwrap().projected.unwrap();
        (acc.worker_work.clone(), acc.worker_requests.clone())
    };
    assert_eq!(work(5_000), work(0));
    let wrong = RunSpec { period: 4_999, ..Default::default() };
    let err = execute(&planner, &replayed, &wrong).unwrap_err().to_string();
    assert!(err.contains("replay period"), "{err}");
}

#[test]
fn a_warm_up_is_served_first_and_left_out_of_the_counts() {
    // Stateless RSS gives each worker the same stream prefix with or without the rest, so the
    // counted work after a warm-up is exactly the whole run's work less the warm-up's alone,
    // worker by worker, in the projected and the threaded runner alike.
    let spec = SyntheticSpec { rules: 307, depth: 1, flows_per_rule: 3, catch_all_fraction: 0.05 };
    let planner = RuleAwarePlanner::new(Arc::new(Snapshot::new(spec.rule_set().unwrap())));
    let packets = spec.trace(12_000, 5).unwrap();
    let warmup = 4_000;
    let run = |packets: &[superlinear_classify::Packet], warmup: usize, measured: bool| {
        let spec = RunSpec { k: 2, warmup, measured, projected: !measured, parallel: 1, ..Default::default() };
        let r = execute(&planner, packets, &spec).unwrap();
        let acc = if measured { r.measured } else { r.projected }.unwrap();
        (acc.requests, acc.worker_work.clone(), acc.worker_requests.clone())
    };
    let (_, whole, whole_requests) = run(&packets, 0, false);
    let (_, first, first_requests) = run(&packets[..warmup], 0, false);
    let expected_work: Vec<u64> = whole.iter().zip(&first).map(|(a, b)| a - b).collect();
    let expected_requests: Vec<u64> = whole_requests.iter().zip(&first_requests).map(|(a, b)| a - b).collect();
    assert!(expected_work.iter().all(|&w| w > 0));
    // The threaded runner needs a core per worker.
    let threaded = superlinear_core::cputime::available_cores() >= 2;
    for measured in [false, true].into_iter().filter(|&m| !m || threaded) {
        let (requests, work, served) = run(&packets, warmup, measured);
        assert_eq!(requests, (packets.len() - warmup) as u64, "measured = {measured}");
        assert_eq!(work, expected_work, "measured = {measured}");
        assert_eq!(served, expected_requests, "measured = {measured}");
    }
    let all = RunSpec { warmup: packets.len(), ..Default::default() };
    let err = execute(&planner, &packets, &all).unwrap_err().to_string();
    assert!(err.contains("nothing left to count"), "{err}");
}
