//! A developer's probe: the static list's first-match scan with and without the prefilter that
//! MRF's scan uses (`classifier::prefilter`), over a trace replayed to 10^6 packets, one core;
//! 5 alternated rounds, median and range of each.
//! `cargo run --release -p superlinear-classify --example static_prefilter -- RULES TRACE`

use std::hint::black_box;
use superlinear_classify::classifier::prefilter;
use superlinear_classify::rules::{read_rules, ReadOptions};
use superlinear_classify::trace::{read_trace, TraceFormat};
use superlinear_classify::Snapshot;
use superlinear_core::cputime::thread_cpu_ns;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let snap = Snapshot::new(read_rules(&args[1], &ReadOptions::default()).unwrap());
    let trace = read_trace(&args[2], TraceFormat::Auto).unwrap().packets;
    let packets: Vec<_> = (0..1_000_000).map(|i| trace[i % trace.len()]).collect();
    let keys: Vec<prefilter::Key> = snap.table.iter().map(prefilter::key).collect();
    let ids: Vec<u32> = (0..snap.len() as u32).collect();
    let (mut plain, mut filtered) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let t0 = thread_cpu_ns();
        let a: u64 = packets.iter().map(|p| snap.first_match(black_box(p)).map_or(0, u64::from)).sum();
        plain.push((thread_cpu_ns() - t0) as f64 / packets.len() as f64);
        let t0 = thread_cpu_ns();
        let b: u64 = packets
            .iter()
            .map(|p| prefilter::first_match(&keys, &ids, &snap.table, black_box(p)).map_or(0, |i| i as u64))
            .sum();
        filtered.push((thread_cpu_ns() - t0) as f64 / packets.len() as f64);
        assert_eq!(a, b, "the prefilter changed a first match");
    }
    let show = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        format!("{:.1} [{:.1}-{:.1}] ns/packet ({:.3} Mpps)", v[2], v[0], v[4], 1e3 / v[2])
    };
    println!("static, plain scan:    {}", show(plain));
    println!("static, with prefilter: {}", show(filtered));
}
