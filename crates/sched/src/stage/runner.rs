//! The work-clocked stage: one worker behind a scheduler's bounded buffer, fed by innocent and
//! attack packets at given bit rates (the simulator of [`crate::sim`], with a real worker as the
//! server). A packet's service begins when the scheduler hands it to the worker, which then
//! serves it for real: its service time is its exact work in the worker's current state times
//! a fixed cost per work unit, and the estimator learns that work at once.

use super::{JobEstimator, StageWorker};
use crate::job::{Class, Job};
use crate::schedulers::{build, SchedulerConfig};
use crate::sim::TAIL;
use superlinear_core::cputime::thread_cpu_ns;
use superlinear_core::error::number_text;
use superlinear_core::Error;

/// A packet offered to the stage.
#[derive(Clone, Debug, PartialEq)]
pub struct StageRequest<R> {
    /// What the worker serves (a key, a packet header).
    pub request: R,
    /// Packet size in bits.
    pub bits: u32,
    /// Flow (for fair queueing and WSJF-Inorder).
    pub flow: u32,
    /// Innocent or attack (accounting only).
    pub class: Class,
}

/// One run of the stage.
#[derive(Clone, Debug)]
pub struct StageSpec {
    /// Scheduling policy (`fcfs` for an unprotected worker, `wsjf` for SurgeProtector).
    pub policy: String,
    /// Buffer and queue configuration; job sizes in work units.
    pub sched: SchedulerConfig,
    /// Microseconds of service per work unit.
    pub us_per_work: f64,
    /// r_I in bits/µs.
    pub innocent_rate: f64,
    /// r_A in bits/µs; 0 for no attack.
    pub attack_rate: f64,
    /// Fraction of the run left out of the goodput.
    pub warmup: f64,
}

/// What a stage run measured. Rates in bits/µs (Mbit/s) of work-clocked time.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct StageOutcome {
    /// Work-clocked duration in µs.
    #[serde(rename = "duration_us")]
    pub duration: f64,
    /// Measurement window in µs.
    #[serde(rename = "window_us")]
    pub window: f64,
    /// Innocent goodput o_I in bits/µs.
    pub goodput: f64,
    /// Attack bits served per µs.
    pub attack_goodput: f64,
    /// Innocent packets offered.
    pub innocent_offered: u64,
    /// Innocent packets served.
    pub innocent_served: u64,
    /// Innocent packets lost at the buffer.
    pub innocent_dropped: u64,
    /// Attack packets offered.
    pub attack_offered: u64,
    /// Attack packets served.
    pub attack_served: u64,
    /// Attack packets lost at the buffer.
    pub attack_dropped: u64,
    /// Work units spent on innocent packets (exact).
    pub innocent_work: u64,
    /// Work units spent on attack packets (exact).
    pub attack_work: u64,
    /// Fraction of the window the worker was busy.
    pub utilisation: f64,
    /// Mean |estimate − work| / max(work, 1) over served innocent packets.
    pub estimate_error: f64,
    /// Thread CPU time of the whole run (scheduling, estimating and serving), measured.
    pub cpu_ns: u64,
}

/// Runs the stage: `innocent` arrive in order at rate r_I; attack packets come from
/// `attack(n)` (the n-th attack packet) at rate r_A.
pub fn run_stage<R: Clone, W: StageWorker<R>>(
    worker: &mut W,
    estimator: &mut dyn JobEstimator<R>,
    innocent: &[StageRequest<R>],
    attack: &mut dyn FnMut(u64) -> StageRequest<R>,
    spec: &StageSpec,
) -> Result<StageOutcome, Error> {
    if !(spec.innocent_rate > 0.0 && spec.innocent_rate.is_finite()) {
        return Err(Error::config(format!("innocent rate must be positive, got {}", number_text(spec.innocent_rate))));
    }
    if !(spec.attack_rate >= 0.0 && spec.attack_rate.is_finite()) {
        return Err(Error::config(format!("attack rate must be non-negative, got {}", number_text(spec.attack_rate))));
    }
    if !(spec.us_per_work > 0.0 && spec.us_per_work.is_finite()) {
        return Err(Error::config(format!(
            "cost per work unit must be positive, got {}",
            number_text(spec.us_per_work)
        )));
    }
    if innocent.is_empty() {
        return Err(Error::config("the stage needs innocent traffic"));
    }
    let cpu0 = thread_cpu_ns();
    let mut sched = build(&spec.policy, &spec.sched)?;
    let duration = innocent.iter().map(|r| r.bits as f64).sum::<f64>() / spec.innocent_rate;
    if !(0.0..1.0 - TAIL).contains(&spec.warmup) {
        return Err(Error::config(format!(
            "warm-up must be a fraction in [0, {}), got {}",
            1.0 - TAIL,
            number_text(spec.warmup)
        )));
    }
    let start = spec.warmup * duration;
    let end = (1.0 - TAIL) * duration;
    let mut out = StageOutcome { duration, window: end - start, ..StageOutcome::default() };

    // Requests waiting in the buffer, by slot (the scheduler's Job.id), with their estimate and
    // whether they arrived inside the window.
    let mut slots: Vec<Option<(StageRequest<R>, f64, bool)>> = Vec::new();
    let mut free: Vec<u32> = Vec::new();

    let (mut next_i, mut i_idx) = (0.0f64, 0usize);
    let mut next_a = if spec.attack_rate > 0.0 { 0.0f64 } else { f64::INFINITY };
    let mut a_idx = 0u64;
    // The packet in service: its class, bits and whether it arrived in the window.
    let mut serving: Option<(Class, u32, bool)> = None;
    let mut free_at = 0.0f64;
    let (mut innocent_bits, mut attack_bits, mut busy, mut err_sum) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);

    // Serves one request now (at `t`): the worker does the real work, the estimator learns it.
    let mut serve = |worker: &mut W,
                     estimator: &mut dyn JobEstimator<R>,
                     out: &mut StageOutcome,
                     r: &StageRequest<R>,
                     est: f64,
                     t: f64|
     -> (f64, f64) {
        let work = worker.serve(&r.request);
        estimator.observe(&r.request, work);
        match r.class {
            Class::Innocent => {
                out.innocent_work += work;
                err_sum += (est - work as f64).abs() / (work.max(1) as f64);
            }
            Class::Attack => out.attack_work += work,
        }
        let service = work as f64 * spec.us_per_work;
        (t + service, service)
    };

    // Ctrl-C: the loop reads the stop flag at its first event, then every 65,536.
    let mut events = 0u32;
    loop {
        events = events.wrapping_add(1);
        if events % 65_536 == 1 {
            superlinear_core::cancel::check()?;
        }
        let arrival = next_i.min(next_a);
        if let Some((class, bits, counted)) = serving.filter(|_| free_at <= arrival) {
            if free_at > duration {
                break;
            }
            match class {
                Class::Innocent => {
                    out.innocent_served += 1;
                    if counted {
                        innocent_bits += bits as f64;
                    }
                }
                Class::Attack => {
                    out.attack_served += 1;
                    if counted {
                        attack_bits += bits as f64;
                    }
                }
            }
            serving = None;
            if let Some(job) = sched.dequeue() {
                let (r, est, counted) = slots[job.id as usize].take().expect("queued requests are parked");
                free.push(job.id);
                let began = free_at;
                let (done, _) = serve(worker, estimator, &mut out, &r, est, began);
                busy += (done.min(end) - began.max(start)).max(0.0);
                free_at = done;
                serving = Some((r.class, r.bits, counted));
            }
            continue;
        }
        if arrival > duration {
            break;
        }
        let r = if next_i <= next_a {
            let r = innocent[i_idx].clone();
            i_idx += 1;
            next_i = innocent.get(i_idx).map_or(f64::INFINITY, |_| next_i + r.bits as f64 / spec.innocent_rate);
            out.innocent_offered += 1;
            r
        } else {
            let r = attack(a_idx);
            a_idx += 1;
            next_a += r.bits as f64 / spec.attack_rate;
            out.attack_offered += 1;
            r
        };
        let est = estimator.estimate(&r.request, &*worker).max(1.0);
        let counted = (start..end).contains(&arrival);
        if serving.is_none() {
            let (done, _) = serve(worker, estimator, &mut out, &r, est, arrival);
            busy += (done.min(end) - arrival.max(start)).max(0.0);
            free_at = done;
            serving = Some((r.class, r.bits, counted));
        } else {
            let job = Job { id: 0, flow: r.flow, bits: r.bits, size: est, class: r.class };
            let id = match free.pop() {
                Some(i) => {
                    slots[i as usize] = Some((r, est, counted));
                    i
                }
                None => {
                    slots.push(Some((r, est, counted)));
                    slots.len() as u32 - 1
                }
            };
            if let Some(lost) = sched.enqueue(Job { id, ..job }) {
                slots[lost.id as usize] = None;
                free.push(lost.id);
                match lost.class {
                    Class::Innocent => out.innocent_dropped += 1,
                    Class::Attack => out.attack_dropped += 1,
                }
            }
        }
    }
    out.goodput = innocent_bits / out.window;
    out.attack_goodput = attack_bits / out.window;
    out.utilisation = busy / out.window;
    out.estimate_error = err_sum / out.innocent_served.max(1) as f64;
    out.cpu_ns = thread_cpu_ns() - cpu0;
    Ok(out)
}
