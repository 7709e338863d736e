use superlinear_cache::generate::TraceSpec;
use superlinear_cache::policies;
use superlinear_cache::{simulate, MissLatency, PolicyContext, Timing};
fn main() {
    let args: Vec<f64> = std::env::args().skip(1).map(|a| a.parse().unwrap()).collect();
    let spec = TraceSpec {
        requests: args[0] as usize,
        objects: args[1] as usize,
        bursty_fraction: args[2],
        burst_length: args[3],
        burst_gap: args[4],
        alpha: args[5],
        ..TraceSpec::default()
    };
    let t = spec.generate().unwrap();
    for &cap in &[args[6] as usize] {
        for z in [10u64, 100, 1000, 10000] {
            let zl = MissLatency::Global(z);
            let mut line = format!("C={cap} Z={z}:");
            let mut base = 0.0;
            for name in ["lru", "lru-mad", "arc", "arc-mad", "lfu", "lfu-mad", "belady", "belady-ad"] {
                let ctx = PolicyContext { requests: &t.requests, objects: spec.objects, z: &zl, capacity: cap };
                let mut p = policies::build(name, &ctx).unwrap();
                let r = simulate(&t.requests, spec.objects, &zl, cap, p.as_mut(), Timing::Delayed);
                if name == "lru" {
                    base = r.mean_latency();
                }
                line += &format!(
                    " {name} {:.3} ({:+.1}%)",
                    r.mean_latency() / z as f64,
                    100.0 * (r.mean_latency() / base - 1.0)
                );
            }
            println!("{line}");
        }
    }
}
