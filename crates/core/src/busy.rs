//! A calibrated busy loop: the paper's "expensive" comparison (`w` cycles) and cache miss
//! penalty (`ρ` cycles), made CPU-bound so that they show up in thread CPU time.
//!
//! A cycle here is a tick of the time-stamp counter on x86-64 (constant rate on every CPU of the
//! last decade) and a nominal 1/3 ns elsewhere. Calibration runs once per process and converts
//! cycles into iterations of a loop the optimiser cannot remove, so that the same `ρ` costs the
//! same number of instructions on every call: repeatable, and independent of frequency scaling
//! during the run.

use std::hint::black_box;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Iterations of [`spin_iterations`] per cycle, measured once.
static ITERATIONS_PER_CYCLE: OnceLock<f64> = OnceLock::new();

/// Nominal clock used where no cycle counter is available.
const NOMINAL_CYCLES_PER_NS: f64 = 3.0;

/// Burns `n` iterations of a loop that cannot be optimised away.
#[inline(never)]
pub fn spin_iterations(n: u64) {
    let mut x = 0u64;
    for i in 0..n {
        x = black_box(x.wrapping_add(i));
    }
    black_box(x);
}

#[cfg(target_arch = "x86_64")]
fn cycles_per_ns() -> f64 {
    fn tsc() -> u64 {
        // SAFETY: RDTSC has no preconditions and no side effects on memory; every x86-64 CPU has it.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    let t0 = Instant::now();
    let c0 = tsc();
    while t0.elapsed() < Duration::from_millis(20) {}
    let c1 = tsc();
    let ns = t0.elapsed().as_nanos() as f64;
    let rate = (c1.wrapping_sub(c0)) as f64 / ns;
    if rate.is_finite() && rate > 0.1 {
        rate
    } else {
        NOMINAL_CYCLES_PER_NS
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn cycles_per_ns() -> f64 {
    NOMINAL_CYCLES_PER_NS
}

fn calibrate() -> f64 {
    let cycles_per_ns = cycles_per_ns();
    // Best of several rounds: the fastest round is the one least disturbed by other threads.
    let n = 2_000_000u64;
    let mut best_ns = f64::INFINITY;
    for _ in 0..5 {
        let t = Instant::now();
        spin_iterations(n);
        best_ns = best_ns.min(t.elapsed().as_nanos() as f64);
    }
    let iterations_per_ns = n as f64 / best_ns.max(1.0);
    iterations_per_ns / cycles_per_ns
}

/// Loop iterations per cycle on this machine (calibrated on first use, about 0.1 s).
pub fn iterations_per_cycle() -> f64 {
    *ITERATIONS_PER_CYCLE.get_or_init(calibrate)
}

/// A busy loop burning a fixed number of cycles per call.
#[derive(Clone, Copy, Debug)]
pub struct BusyLoop {
    iterations: u64,
}

impl BusyLoop {
    /// A loop costing about `cycles` cycles; zero cycles costs nothing and skips calibration.
    pub fn new(cycles: u64) -> Self {
        let iterations = if cycles == 0 { 0 } else { (cycles as f64 * iterations_per_cycle()).round().max(1.0) as u64 };
        Self { iterations }
    }

    /// Burns the configured cycles.
    #[inline]
    pub fn burn(&self) {
        if self.iterations > 0 {
            spin_iterations(self.iterations);
        }
    }

    /// Loop iterations per call (for tests and reports).
    pub fn iterations(&self) -> u64 {
        self.iterations
    }
}
