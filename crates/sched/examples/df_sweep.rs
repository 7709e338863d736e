//! Quick displacement-factor sweep from the command line (`cargo run --release -p
//! superlinear-sched --example df_sweep -- [PACKETS] [JMAX_US]`); `superlinear attack sim` is
//! the supported way, with result files and plots.

use superlinear_sched::attack::bound;
use superlinear_sched::dist::Dist;
use superlinear_sched::schedulers::REGISTRY;
use superlinear_sched::sweep::{run_sweep, SweepSpec};
use superlinear_sched::traffic::InnocentTraffic;

fn main() {
    let args: Vec<f64> = std::env::args().skip(1).map(|a| a.parse().expect("numbers")).collect();
    let packets = args.first().copied().unwrap_or(100_000.0) as usize;
    let jmax = args.get(1).copied().unwrap_or(10.0);
    let traffic = InnocentTraffic::from_dists(
        Dist::parse("normal:1250:400", "packet").unwrap(),
        Dist::parse("exp:1", "job").unwrap(),
        64,
        1500,
        jmax,
        64,
    )
    .unwrap();
    let stats = traffic.stats(100_000, 7);
    let r_i = 0.83 * stats.r_max();
    println!(
        "E[P] = {:.0} bits, E[J] = {:.3} us, r_max = {:.0} Mbps, r_I = {:.0} Mbps",
        stats.mean_bits,
        stats.mean_job,
        stats.r_max(),
        r_i
    );
    let rates: Vec<f64> = (0..13).map(|i| stats.r_max() * 10f64.powf(-3.0 + 0.25 * i as f64)).collect();
    for e in REGISTRY {
        let spec = SweepSpec {
            policy: e.name.into(),
            innocent_rate: r_i,
            attack_rates: rates.clone(),
            buffer: 1024,
            width: 64,
            levels: 2,
            packets,
            warmup: 0.2,
            seed: 1,
            probe_jobs: 0,
            threads: 2,
        };
        let t = std::time::Instant::now();
        let s = run_sweep(&traffic, &stats, &spec).unwrap();
        let b = bound(e.name, &stats, r_i, traffic.bits_min, traffic.job_max, traffic.flows);
        println!(
            "{:>13}: base {:7.0}  DF {:8.3}  bound {:?}  ({:.1}s)",
            e.name,
            s.baseline.goodput,
            s.displacement_factor(),
            b.map(|b| b.value),
            t.elapsed().as_secs_f64()
        );
        for p in &s.points {
            print!(" {:.2}@{:.1}", p.df, p.used.job);
        }
        println!();
    }
}
