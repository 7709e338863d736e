//! A developer's probe: a dispatcher's serial cost per packet over a trace replayed to 10^6
//! packets, k = 32, best of 7 passes.
//! `cargo run --release -p superlinear-classify --example dispatch_cost -- RULES TRACE DISPATCH...`

use std::sync::Arc;
use superlinear_classify::dispatch::{build_descriptors, RuleAwarePlanner};
use superlinear_classify::rules::{read_rules, ReadOptions};
use superlinear_classify::trace::{read_trace, TraceFormat};
use superlinear_classify::Snapshot;
use superlinear_core::cputime::thread_cpu_ns;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let planner =
        RuleAwarePlanner::new(Arc::new(Snapshot::new(read_rules(&args[1], &ReadOptions::default()).unwrap())));
    let packets: Arc<[superlinear_classify::Packet]> = read_trace(&args[2], TraceFormat::Auto).unwrap().packets.into();
    let ids: Vec<u32> = (0..1_000_000u32).map(|i| i % packets.len() as u32).collect();
    for spec in &args[3..] {
        let mut best = u64::MAX;
        let mut load = vec![0u64; 32];
        for _ in 0..7 {
            let mut d = build_descriptors(spec, 32, 1, &planner, packets.clone()).unwrap();
            let mut out = vec![0u32; ids.len()];
            let t0 = thread_cpu_ns();
            for (c, o) in ids.chunks(256).zip(out.chunks_mut(256)) {
                d.assign_chunk(c, o);
            }
            best = best.min(thread_cpu_ns() - t0);
            load = vec![0u64; 32];
            out.iter().for_each(|&w| load[w as usize] += 1);
        }
        let imbalance = *load.iter().max().unwrap() as f64 * 32.0 / ids.len() as f64;
        println!("{spec}: {:.2} ns/packet, imbalance {imbalance:.2}", best as f64 / ids.len() as f64);
    }
}
