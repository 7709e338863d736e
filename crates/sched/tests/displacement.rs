//! The thesis's claims in simulation, with wide margins (deterministic for the seed):
//! under the optimal attack, FCFS and FQ displace far more than one innocent bit per attack bit
//! and more so as J_max / P_min grows (Claims 3, 4); SJF stays under E[P]/P_min · ρ
//! (Theorem 2); WSJF and WSJF-Inorder stay at most 1 (Theorem 3), also against probed attacks.

use superlinear_sched::attack::bound;
use superlinear_sched::dist::Dist;
use superlinear_sched::sweep::{run_sweep, Sweep, SweepSpec};
use superlinear_sched::traffic::{InnocentStats, InnocentTraffic};

fn traffic(job_max: f64) -> InnocentTraffic {
    InnocentTraffic::from_dists(Dist::Normal(1250.0, 400.0), Dist::Exp(1.0), 64, 1500, job_max, 32).unwrap()
}

fn sweep(policy: &str, t: &InnocentTraffic, stats: &InnocentStats, probe: usize) -> Sweep {
    let r_max = stats.r_max();
    let spec = SweepSpec {
        policy: policy.into(),
        innocent_rate: 0.8 * r_max,
        attack_rates: (0..7).map(|i| r_max * 10f64.powf(-3.5 + 0.5 * i as f64)).collect(),
        buffer: 256,
        width: 64,
        levels: 2,
        packets: 6_000,
        warmup: 0.2,
        seed: 11,
        probe_jobs: probe,
        threads: 2,
    };
    run_sweep(t, stats, &spec).unwrap()
}

#[test]
fn job_size_oblivious_policies_are_unbounded_wsjf_is_not() {
    let small = traffic(10.0);
    let large = traffic(40.0);
    let (s_small, s_large) = (small.stats(20_000, 5), large.stats(20_000, 5));
    for policy in ["fcfs", "fq"] {
        let a = sweep(policy, &small, &s_small, 0).displacement_factor();
        let b = sweep(policy, &large, &s_large, 0).displacement_factor();
        assert!(a > 20.0, "{policy}: DF {a} at J_max/P_min = 10 µs / 64 B");
        assert!(b > 2.0 * a, "{policy}: DF {b} at 4x J_max should grow well beyond {a}");
    }
    let sjf = sweep("sjf", &small, &s_small, 0).displacement_factor();
    let sjf_bound = bound("sjf", &s_small, 0.8 * s_small.r_max(), small.bits_min, small.job_max, 32).unwrap();
    assert!(sjf > 1.0 && sjf <= sjf_bound.value, "SJF DF {sjf} vs bound {}", sjf_bound.value);
    for policy in ["wsjf", "wsjf-inorder"] {
        let df = sweep(policy, &small, &s_small, 2).displacement_factor();
        assert!(df <= 1.0, "{policy}: DF {df} exceeds Theorem 3's bound");
        let df_large = sweep(policy, &large, &s_large, 0).displacement_factor();
        assert!(df_large <= 1.0, "{policy}: DF {df_large} at large J_max");
    }
}
