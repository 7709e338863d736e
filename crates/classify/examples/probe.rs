//! A developer's probe: dependency statistics of a rule file and the k-scaling (projected and
//! work) of static, MRF and MRF-swap behind the given dispatchers, without Python.
//! `REPS=N cargo run --release -p superlinear-classify --example probe -- RULES TRACE [DISPATCH...]`
//! (`REPS` replays the trace N times; `REPEATS=N`: projected timings best of N).

use std::sync::Arc;
use std::time::Instant;
use superlinear_classify::rules::{read_rules, ReadOptions};
use superlinear_classify::run::{execute, RunSpec};
use superlinear_classify::trace::{read_trace, TraceFormat};
use superlinear_classify::{RuleAwarePlanner, Snapshot};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let set = read_rules(&args[1], &ReadOptions::default()).unwrap();
    let t0 = Instant::now();
    let snap = Arc::new(Snapshot::new(set));
    let g = &snap.deps;
    println!(
        "{} rules, deps built in {:?}: edges {}, same-action pairs {}, dependent rules {}, max depth {}",
        snap.len(),
        t0.elapsed(),
        g.edges(),
        g.same_action_pairs(),
        g.dependent_rules(),
        g.max_depth()
    );
    let mut packets = read_trace(&args[2], TraceFormat::Auto).unwrap().packets;
    let reps: usize = std::env::var("REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let base = packets.clone();
    for _ in 1..reps {
        packets.extend_from_slice(&base);
    }
    let repeats: usize = std::env::var("REPEATS").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let planner = RuleAwarePlanner::new(snap);
    let dispatches: Vec<String> = if args.len() > 3 { args[3..].to_vec() } else { vec!["rss".into()] };
    for algo in ["static", "mrf", "mrf-swap"] {
        let b = execute(
            &planner,
            &packets,
            &RunSpec { algo: algo.into(), dispatch: "rr".into(), k: 1, repeats, ..Default::default() },
        )
        .unwrap();
        let bp = b.projected.unwrap();
        println!(
            "{algo} k=1: {:.3} Mpps, work/pkt {:.1}",
            packets.len() as f64 * 1e3 / bp.projected_ns() as f64,
            bp.work_total() as f64 / packets.len() as f64
        );
        for d in &dispatches {
            for k in [2, 8, 32] {
                let r = execute(
                    &planner,
                    &packets,
                    &RunSpec { algo: algo.into(), dispatch: d.clone(), k, repeats, ..Default::default() },
                )
                .unwrap();
                let p = r.projected.unwrap();
                println!(
                    "  {} k={k}: projected x{:.1} work x{:.1} {:.2} Mpps (disp {:.1} ns/pkt, busiest worker {:.2} ms)",
                    r.dispatch,
                    bp.projected_ns() as f64 / p.projected_ns() as f64,
                    bp.work_span() as f64 / p.work_span() as f64,
                    packets.len() as f64 * 1e3 / p.projected_ns() as f64,
                    p.dispatcher_cpu_ns as f64 / packets.len() as f64,
                    p.worker_cpu_ns.iter().max().copied().unwrap_or(0) as f64 / 1e6
                );
            }
        }
    }
}
