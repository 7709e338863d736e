//! Quick probe: dependency stats and k-scaling of static vs MRF on a rule file and trace.
//! `cargo run --release -p superlinear-classify --example probe -- RULES TRACE [DISPATCH...]`

use std::sync::Arc;
use std::time::Instant;
use superlinear_classify::rules::{read_rules, ReadOptions};
use superlinear_classify::run::{execute, RunSpec};
use superlinear_classify::trace::{read_trace, TraceFormat};
use superlinear_classify::Snapshot;

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
    if std::env::var("HASH").is_ok() {
        let d = superlinear_classify::dispatch::RssToeplitzDispatcher::new(
            superlinear_classify::dispatch::FieldMask::FIVE_TUPLE,
            32,
        );
        for _ in 0..3 {
            let t0 = superlinear_core::cputime::thread_cpu_ns();
            let mut x = 0u32;
            for p in &packets {
                x ^= d.hash(p);
            }
            let dt = superlinear_core::cputime::thread_cpu_ns() - t0;
            println!("hash only: {:.2} ns/pkt ({x})", dt as f64 / packets.len() as f64);
        }
        let mut dd =
            superlinear_classify::dispatch::build_descriptors("rss", 32, 1, &snap, packets.clone().into()).unwrap();
        let desc: Vec<u32> = (0..packets.len() as u32).collect();
        for _ in 0..3 {
            let mut dispatched = vec![0u64; 32];
            let mut qs: Vec<Vec<u32>> = (0..32).map(|_| Vec::with_capacity(packets.len())).collect();
            let t0 = superlinear_core::cputime::thread_cpu_ns();
            dd.split_into(&desc, &mut dispatched, &mut qs);
            let dt = superlinear_core::cputime::thread_cpu_ns() - t0;
            println!("descriptor split_into: {:.2} ns/pkt", dt as f64 / packets.len() as f64);
        }
        return;
    }
    if std::env::var("DISP").is_ok() {
        for d in ["rr", "rss", "rss:dport"] {
            for k in [1usize, 32] {
                let mut disp = superlinear_classify::dispatch::build(d, k, 1, &snap).unwrap();
                let mut dispatched = vec![0u64; k];
                let mut qs: Vec<Vec<superlinear_classify::Packet>> =
                    (0..k).map(|_| Vec::with_capacity(packets.len())).collect();
                disp.split_into(&packets, &mut dispatched, &mut qs);
                for q in qs.iter_mut() {
                    q.clear();
                }
                let t0 = superlinear_core::cputime::thread_cpu_ns();
                disp.split_into(&packets, &mut dispatched, &mut qs);
                let dt = superlinear_core::cputime::thread_cpu_ns() - t0;
                let mut ws = vec![0u32; 1024];
                let t1 = superlinear_core::cputime::thread_cpu_ns();
                for c in packets.chunks(1024) {
                    disp.route_chunk(c, &mut dispatched, &mut ws[..c.len()]);
                }
                let dt2 = superlinear_core::cputime::thread_cpu_ns() - t1;
                println!(
                    "{d} k={k}: split_into {:.2} ns/pkt, route_chunk {:.2} ns/pkt",
                    dt as f64 / packets.len() as f64,
                    dt2 as f64 / packets.len() as f64
                );
            }
        }
        return;
    }
    let dispatches: Vec<String> = if args.len() > 3 { args[3..].to_vec() } else { vec!["rss".into()] };
    for algo in ["static", "mrf", "mrf-swap"] {
        let b =
            execute(&snap, &packets, &RunSpec { algo: algo.into(), dispatch: "rr".into(), k: 1, ..Default::default() })
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
                    &snap,
                    &packets,
                    &RunSpec { algo: algo.into(), dispatch: d.clone(), k, ..Default::default() },
                )
                .unwrap();
                let p = r.projected.unwrap();
                println!(
                    "  {} k={k}: projected x{:.1} work x{:.1} {:.2} Mpps (disp {:.1} ns/pkt)",
                    r.dispatch,
                    bp.projected_ns() as f64 / p.projected_ns() as f64,
                    bp.work_span() as f64 / p.work_span() as f64,
                    packets.len() as f64 * 1e3 / p.projected_ns() as f64,
                    p.dispatcher_cpu_ns as f64 / packets.len() as f64
                );
            }
        }
    }
}

#[allow(dead_code)]
fn dispatch_cost() {}
