//! The event-driven single-server simulator (thesis §3.6.2, Fig. 3.16): a G/G/1/K queue fed by
//! innocent traffic and a rate-limited adversary, served non-preemptively in the order a
//! [`Scheduler`] decides, with the true job size known to the scheduler (as in the thesis's
//! simulations).
//!
//! Arrivals are evenly spaced (§3.3.1: innocent inter-arrival time E[P]/r_I; attack packets
//! every P_A/r_A, each from its own spoofed flow, which is what defeats fair queueing). The
//! next event is either the next arrival or the end of the job in service, so no event heap is
//! needed.
//!
//! Goodput o_I counts the innocent packets that *arrive* inside the measurement window (after a
//! warm-up, before a tail of [`TAIL`] of the run) and are served at any time before the run
//! ends, divided by the window's length. Counting arrivals rather than completions keeps
//! packets that are merely delayed past the window's end (one long job at an idle server
//! delays a burst of innocent packets) from looking displaced; packets still waiting when the
//! run ends have waited at least the tail and count as displaced, as in steady state.

use crate::job::{Class, Job};
use crate::schedulers::{build, SchedulerConfig};
use crate::traffic::InnocentTraffic;
use superlinear_core::error::number_text;
use superlinear_core::Error;

/// Fraction of a run after the measurement window: arrivals continue, so packets of the window
/// can still be served.
pub const TAIL: f64 = 0.2;

/// The adversary's traffic: rate in bits/µs, packet size in bits, job size in µs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Attack {
    /// r_A in bits per µs (Mbit/s).
    pub rate: f64,
    /// P_A in bits.
    pub bits: u32,
    /// J_A in µs.
    pub job: f64,
}

/// One simulation.
#[derive(Clone, Debug)]
pub struct SimSpec {
    /// Scheduling policy (registry name).
    pub policy: String,
    /// Buffer and priority-queue configuration.
    pub sched: SchedulerConfig,
    /// r_I in bits per µs.
    pub innocent_rate: f64,
    /// Innocent packets to generate (fixes the simulated time: packets · E[P] / r_I).
    pub packets: usize,
    /// Fraction of the simulated time left out of the goodput (warm-up).
    pub warmup: f64,
    /// The adversary, if any.
    pub attack: Option<Attack>,
    /// Seed of the innocent traffic (the same with and without attack: common random numbers).
    pub seed: u64,
}

/// What one simulation measured.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct SimOutcome {
    /// Simulated time in µs.
    #[serde(rename = "duration_us")]
    pub duration: f64,
    /// Length of the measurement window in µs.
    #[serde(rename = "window_us")]
    pub window: f64,
    /// Innocent goodput o_I in bits/µs.
    pub goodput: f64,
    /// Attack bits served per µs.
    pub attack_goodput: f64,
    /// Innocent packets offered, served (in window or not) and dropped.
    pub innocent_offered: u64,
    /// Innocent packets whose service completed.
    pub innocent_served: u64,
    /// Innocent packets lost at the buffer.
    pub innocent_dropped: u64,
    /// Attack packets offered.
    pub attack_offered: u64,
    /// Attack packets whose service completed.
    pub attack_served: u64,
    /// Attack packets lost at the buffer.
    pub attack_dropped: u64,
    /// Fraction of the window the server was busy.
    pub utilisation: f64,
}

/// Runs one simulation. `mean_bits` is E[P] of the innocent traffic (it sets the spacing).
pub fn simulate(traffic: &InnocentTraffic, mean_bits: f64, spec: &SimSpec) -> Result<SimOutcome, Error> {
    if !(spec.innocent_rate > 0.0 && spec.innocent_rate.is_finite()) {
        return Err(Error::config(format!("innocent rate must be positive, got {}", number_text(spec.innocent_rate))));
    }
    if !(0.0..1.0 - TAIL).contains(&spec.warmup) {
        return Err(Error::config(format!(
            "warm-up must be a fraction in [0, {}), got {}",
            1.0 - TAIL,
            number_text(spec.warmup)
        )));
    }
    if let Some(a) = spec.attack {
        if !(a.rate > 0.0 && a.rate.is_finite() && a.bits > 0 && a.job > 0.0) {
            return Err(Error::config(format!("attack needs positive rate, packet and job sizes, got {a:?}")));
        }
    }
    let mut sched = build(&spec.policy, &spec.sched)?;
    let gap_i = mean_bits / spec.innocent_rate;
    let duration = spec.packets as f64 * gap_i;
    let start = spec.warmup * duration;
    let end = (1.0 - TAIL) * duration;
    let mut out = SimOutcome { duration, window: end - start, ..SimOutcome::default() };
    // Sequence numbers of the arrivals inside the window (arrivals are numbered in time order).
    let (mut first_in, mut last_in) = (u32::MAX, 0u32);

    let mut innocent = traffic.sampler(spec.seed);
    let mut next_i = 0.0f64;
    let (gap_a, mut next_a) = match spec.attack {
        // Half a gap of phase, so the two streams do not tie at time 0.
        Some(a) => {
            let g = a.bits as f64 / a.rate;
            (g, g / 2.0)
        }
        None => (f64::INFINITY, f64::INFINITY),
    };
    let mut attack_flow = 1u32 << 31;
    let mut serving: Option<Job> = None;
    let mut free_at = 0.0f64;
    let (mut innocent_bits, mut attack_bits, mut busy) = (0.0f64, 0.0f64, 0.0f64);
    let mut seq = 0u32;

    // Ctrl-C: the loop reads the stop flag at its first event, then every 65,536.
    let mut events = 0u32;
    loop {
        events = events.wrapping_add(1);
        if events % 65_536 == 1 {
            superlinear_core::cancel::check()?;
        }
        let arrival = next_i.min(next_a);
        if let Some(job) = serving.filter(|_| free_at <= arrival) {
            // Service completes first.
            if free_at > duration {
                break;
            }
            let began = free_at - job.size;
            busy += (free_at.min(end) - began.max(start)).max(0.0);
            let counted = (first_in..=last_in).contains(&job.id);
            match job.class {
                Class::Innocent => {
                    out.innocent_served += 1;
                    if counted {
                        innocent_bits += job.bits as f64;
                    }
                }
                Class::Attack => {
                    out.attack_served += 1;
                    if counted {
                        attack_bits += job.bits as f64;
                    }
                }
            }
            serving = sched.dequeue();
            if let Some(next) = serving {
                free_at += next.size;
            }
            continue;
        }
        if arrival > duration {
            break;
        }
        let job = if next_i <= next_a {
            next_i += gap_i;
            out.innocent_offered += 1;
            let (bits, size) = innocent.next_pair();
            Job { id: seq, flow: innocent.next_flow(), bits, size, class: Class::Innocent }
        } else {
            let a = spec.attack.expect("attack arrivals only with an attack");
            next_a += gap_a;
            out.attack_offered += 1;
            attack_flow = attack_flow.wrapping_add(1) | 1 << 31;
            Job { id: seq, flow: attack_flow, bits: a.bits, size: a.job, class: Class::Attack }
        };
        if (start..end).contains(&arrival) {
            first_in = first_in.min(seq);
            last_in = seq;
        }
        seq = seq.checked_add(1).ok_or_else(|| Error::config("more than 2^32 arrivals in one simulation"))?;
        if serving.is_none() {
            // Idle server and (necessarily) empty buffer: service starts at once.
            serving = Some(job);
            free_at = arrival + job.size;
        } else if let Some(lost) = sched.enqueue(job) {
            match lost.class {
                Class::Innocent => out.innocent_dropped += 1,
                Class::Attack => out.attack_dropped += 1,
            }
        }
    }
    out.goodput = innocent_bits / out.window;
    out.attack_goodput = attack_bits / out.window;
    out.utilisation = busy / out.window;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Dist;

    fn traffic() -> InnocentTraffic {
        InnocentTraffic::from_dists(Dist::Const(1000.0), Dist::Const(1.0), 64, 1500, 10.0, 4).unwrap()
    }

    #[test]
    fn underloaded_system_serves_everything() {
        let t = traffic();
        // 8000 bits per µs of service: r_max = 8000 bits/µs; offer half: everything arriving in
        // the window is served, so the goodput is the offered rate.
        let spec = SimSpec {
            policy: "fcfs".into(),
            sched: SchedulerConfig::new(64, 0.01, 10.0, 512, 12000),
            innocent_rate: 4000.0,
            packets: 10_000,
            warmup: 0.1,
            attack: None,
            seed: 1,
        };
        let o = simulate(&t, 8000.0, &spec).unwrap();
        assert_eq!(o.innocent_dropped, 0);
        assert!((o.goodput - 4000.0).abs() < 1.0, "{o:?}");
        assert!((o.utilisation - 0.5).abs() < 0.01, "{o:?}");
    }

    #[test]
    fn fcfs_loses_far_more_than_the_attack_bandwidth() {
        let t = traffic();
        let mut spec = SimSpec {
            policy: "fcfs".into(),
            sched: SchedulerConfig::new(64, 0.01, 10.0, 512, 12000),
            innocent_rate: 6000.0,
            packets: 20_000,
            warmup: 0.1,
            attack: Some(Attack { rate: 100.0, bits: 512, job: 10.0 }),
            seed: 1,
        };
        let fcfs = simulate(&t, 8000.0, &spec).unwrap();
        // 100 bits/µs of 64-byte packets each worth 10 µs: 2 µs of work per µs, overload.
        assert!(6000.0 - fcfs.goodput > 20.0 * 100.0, "{fcfs:?}");
        spec.policy = "wsjf".into();
        let wsjf = simulate(&t, 8000.0, &spec).unwrap();
        assert!(6000.0 - wsjf.goodput < 100.0, "{wsjf:?}");
    }
}
