//! Quick run of the key-worker attack experiment (`cargo run --release -p superlinear-sched
//! --example key_attack -- ALGO ADVERSARY`); `superlinear attack worker` is the supported way.

use superlinear_core::workload::WorkloadSpec;
use superlinear_sched::dist::Dist;
use superlinear_sched::stage::{run_key_attack, KeyAttackSpec, LearnMode};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let algo = args.first().cloned().unwrap_or_else(|| "mtf".into());
    let adversary = args.get(1).cloned().unwrap_or_else(|| "rotate".into());
    let spec = KeyAttackSpec {
        algo,
        workload: WorkloadSpec::Zipf { m: 5000, alpha: 1.1 },
        requests: 100_000,
        packet_bytes: Dist::Normal(1250.0, 400.0),
        attack_bytes: 64,
        adversary,
        load: 0.8,
        attack_fractions: (0..9).map(|i| 10f64.powf(-4.0 + 0.5 * i as f64)).collect(),
        policies: vec!["fcfs".into(), "fq".into(), "sjf".into(), "wsjf".into(), "wsjf-inorder".into()],
        buffer: 1024,
        learn: LearnMode::Last,
        us_per_work: None,
        warmup: 0.2,
        seed: 1,
        threads: 2,
    };
    let (s, items) = run_key_attack(&spec).expect("valid");
    println!(
        "items {} mean work {:.1} us/work {:.5} (calibrated {}) r_max {:.0} r_I {:.0}",
        items, s.mean_work, s.us_per_work, s.calibrated, s.r_max, s.innocent_rate
    );
    for p in &spec.policies {
        print!("{p:>13} DF {:8.2}:", s.displacement_factor(p));
        for r in s.rows.iter().filter(|r| &r.policy == p) {
            print!(" {:.0}/{:.2}", r.outcome.goodput, r.df);
        }
        println!();
    }
}
