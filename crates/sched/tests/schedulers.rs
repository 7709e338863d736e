//! Exact behaviour of every scheduling policy on small hand-made packet sequences: service
//! order, which packet a full buffer loses, per-flow order, fairness in service time.

use superlinear_sched::schedulers::{build, REGISTRY};
use superlinear_sched::{Class, Job, SchedulerConfig};

fn job(id: u32, flow: u32, bits: u32, size: f64) -> Job {
    Job { id, flow, bits, size, class: Class::Innocent }
}

fn config(capacity: usize) -> SchedulerConfig {
    SchedulerConfig::new(capacity, 0.01, 100.0, 64, 12_000)
}

fn drain(s: &mut dyn superlinear_sched::Scheduler) -> Vec<u32> {
    std::iter::from_fn(|| s.dequeue()).map(|j| j.id).collect()
}

#[test]
fn every_policy_serves_everything_it_admits_exactly_once() {
    for e in REGISTRY {
        let mut s = build(e.name, &config(1000)).unwrap();
        for i in 0..500u32 {
            assert!(s.enqueue(job(i, i % 7, 100 + (i * 37) % 900, 0.1 + (i % 13) as f64)).is_none(), "{}", e.name);
        }
        assert_eq!(s.len(), 500);
        let mut ids = drain(s.as_mut());
        ids.sort();
        assert_eq!(ids, (0..500).collect::<Vec<_>>(), "{}", e.name);
        assert!(s.is_empty());
    }
}

#[test]
fn fcfs_serves_in_arrival_order_and_drops_the_arrival() {
    let mut s = build("fcfs", &config(3)).unwrap();
    for i in 0..3 {
        assert!(s.enqueue(job(i, 0, 100, 10.0 - i as f64)).is_none());
    }
    assert_eq!(s.enqueue(job(9, 0, 100, 0.1)).map(|j| j.id), Some(9));
    assert_eq!(drain(s.as_mut()), vec![0, 1, 2]);
}

#[test]
fn sjf_serves_smallest_job_and_drops_largest() {
    let mut s = build("sjf", &config(3)).unwrap();
    s.enqueue(job(0, 0, 8000, 5.0));
    s.enqueue(job(1, 0, 100, 1.0));
    s.enqueue(job(2, 0, 8000, 9.0));
    // Full: an arrival smaller than the largest evicts it; a larger one is refused.
    assert_eq!(s.enqueue(job(3, 0, 100, 2.0)).map(|j| j.id), Some(2));
    assert_eq!(s.enqueue(job(4, 0, 100, 50.0)).map(|j| j.id), Some(4));
    assert_eq!(drain(s.as_mut()), vec![1, 3, 0]);
}

#[test]
fn wsjf_orders_by_job_per_bit_and_drops_the_largest_ratio() {
    let mut s = build("wsjf", &config(3)).unwrap();
    s.enqueue(job(0, 0, 8000, 8.0)); // 0.001 per bit
    s.enqueue(job(1, 0, 512, 8.0)); //  0.0156 per bit: an attack-like packet
    s.enqueue(job(2, 0, 4000, 2.0)); // 0.0005 per bit
    assert_eq!(s.enqueue(job(3, 0, 12000, 6.0)).map(|j| j.id), Some(1));
    assert_eq!(drain(s.as_mut()), vec![2, 3, 0]);
}

#[test]
fn wsjf_inorder_keeps_each_flow_in_order_and_ranks_flows_by_work_per_bit() {
    let mut s = build("wsjf-inorder", &config(100)).unwrap();
    // Flow 1: an expensive head packet then cheap ones (rank stays moderate); flow 2: cheap.
    s.enqueue(job(10, 1, 1000, 5.0));
    s.enqueue(job(11, 1, 1000, 0.1));
    s.enqueue(job(12, 1, 1000, 0.1));
    s.enqueue(job(20, 2, 1000, 1.0));
    s.enqueue(job(21, 2, 1000, 1.0));
    let order = drain(s.as_mut());
    let pos = |id: u32| order.iter().position(|&x| x == id).unwrap();
    assert!(pos(10) < pos(11) && pos(11) < pos(12), "{order:?}");
    assert!(pos(20) < pos(21));
    // Flow 2 (rank 1/1000) before flow 1 (rank 5.2/3000 > 1/1000).
    assert_eq!(order[0], 20);
}

#[test]
fn wsjf_inorder_drops_from_the_worst_flow_tail() {
    let mut s = build("wsjf-inorder", &config(3)).unwrap();
    s.enqueue(job(0, 1, 1000, 1.0));
    s.enqueue(job(1, 2, 100, 50.0));
    s.enqueue(job(2, 2, 100, 50.0));
    assert_eq!(s.enqueue(job(3, 3, 1000, 1.0)).map(|j| j.id), Some(2));
    assert_eq!(s.len(), 3);
}

#[test]
fn fair_queueing_shares_service_time_not_packets() {
    let mut c = config(1000);
    c.quantum = Some(10.0);
    let mut s = build("fq", &c).unwrap();
    // Flow 1: 100 jobs of 10; flow 2: 100 jobs of 1. Per round each gets ~10 units.
    for i in 0..100 {
        s.enqueue(job(i, 1, 100, 10.0));
        s.enqueue(job(1000 + i, 2, 100, 1.0));
    }
    let order = drain(s.as_mut());
    let first: Vec<u32> = order[..22].to_vec();
    let big = first.iter().filter(|&&id| id < 1000).count();
    let small = first.len() - big;
    assert_eq!((big, small), (2, 20), "{first:?}");
}

#[test]
fn fair_queueing_drops_from_the_longest_flow() {
    let mut s = build("fq", &config(4)).unwrap();
    for i in 0..3 {
        s.enqueue(job(i, 1, 100, 1.0));
    }
    s.enqueue(job(10, 2, 100, 1.0));
    // Full; flow 3 is new (0 queued): flow 1's tail goes.
    assert_eq!(s.enqueue(job(20, 3, 100, 1.0)).map(|j| j.id), Some(2));
    // Flow 1 now has 2, flow 3 has 1: an arrival on flow 1 (2 queued, longest 2) is refused.
    assert_eq!(s.enqueue(job(3, 1, 100, 1.0)).map(|j| j.id), Some(3));
}

#[test]
fn unknown_policy_and_bad_config_are_named() {
    assert!(build("lifo", &config(10)).err().unwrap().to_string().contains("unknown scheduling policy 'lifo'"));
    assert!(build("wsjf", &config(0)).err().unwrap().to_string().contains("at least one packet"));
}
