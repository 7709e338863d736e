//! A developer's probe of MRF's own cost at k = 1 (issue 17): single-core ns per packet and per
//! compared rule of the static list and MRF, with MRF's second work counter (entries moved and
//! list entries walked) per packet. Timings are thread CPU time, median [range] of `RUNS`
//! (default 5) runs alternating the classifiers, each from a fresh classifier.
//! `cargo run --release -p superlinear-classify --example mrf_cost -- RULES TRACE [PACKETS]`

use std::sync::Arc;
use superlinear_classify::classifier::{MrfClassifier, MrfVariant, StaticClassifier};
use superlinear_classify::rules::{read_rules, ReadOptions};
use superlinear_classify::trace::{read_trace, TraceFormat};
use superlinear_classify::Snapshot;
use superlinear_core::cputime::thread_cpu_ns;

fn median_range(mut v: Vec<f64>) -> String {
    v.sort_by(f64::total_cmp);
    format!("{:.3} [{:.3}, {:.3}]", v[v.len() / 2], v[0], v[v.len() - 1])
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let snap = Arc::new(Snapshot::new(read_rules(&args[1], &ReadOptions::default()).unwrap()));
    let trace = read_trace(&args[2], TraceFormat::Auto).unwrap().packets;
    let n: usize = args.get(3).and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    let packets: Vec<_> = trace.iter().cycle().take(n).copied().collect();
    let runs: usize = std::env::var("RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
    let (mut st, mut mr) = (Vec::new(), Vec::new());
    let (mut st_work, mut mr_work, mut mr_moved) = (0u64, 0u64, 0u64);
    for _ in 0..runs {
        let mut s = StaticClassifier::new(snap.clone());
        let t0 = thread_cpu_ns();
        st_work = packets.iter().map(|p| s.classify(p).work).sum();
        st.push((thread_cpu_ns() - t0) as f64);
        let mut m = MrfClassifier::new(snap.clone(), MrfVariant::Precomputed);
        let t0 = thread_cpu_ns();
        mr_work = packets.iter().map(|p| m.classify(p).work).sum();
        mr.push((thread_cpu_ns() - t0) as f64);
        mr_moved = m.moved();
    }
    let n = packets.len() as f64;
    println!(
        "static: {:.1} rules/pkt, ns/pkt {}, ns/rule {}",
        st_work as f64 / n,
        median_range(st.iter().map(|t| t / n).collect()),
        median_range(st.iter().map(|t| t / st_work as f64).collect())
    );
    println!(
        "mrf:    {:.1} rules/pkt, {:.1} moved/pkt, ns/pkt {}, ns/rule {}",
        mr_work as f64 / n,
        mr_moved as f64 / n,
        median_range(mr.iter().map(|t| t / n).collect()),
        median_range(mr.iter().map(|t| t / mr_work as f64).collect())
    );
}
