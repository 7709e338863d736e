//! A probe of how fast this machine serves memory right now, for the record of a timed run.
//!
//! On a shared or virtual machine a core's caches are shared with tenants we cannot see (an SMT
//! sibling shares L1 and L2, other cores the last-level cache), so a memory-bound worker's time
//! moves with what they do while an arithmetic loop's does not. The workers of the paper's
//! experiments are memory-bound (a list or tree walked per request), so this is the noise their
//! timed figures carry. The probe times a random walk over a working set that fits one core's L2
//! (one step per cache line, each step depending on the last, as a list walk does) and, as a
//! control, a dependent multiply chain, each for a short window. A walk much slower than its
//! least while the chain holds steady means the caches, not the CPU, were taken.

use std::hint::black_box;
use std::time::{Duration, Instant};

use rand::seq::SliceRandom;
use rand::SeedableRng;

/// One cache line of the walk: the index of the next line, padded so that lines do not share.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line {
    next: u32,
}

/// Steps between two looks at the clock: a few microseconds of walking.
const STEPS_PER_CHECK: usize = 1024;

/// A random cyclic walk over `bytes` of memory, one cache line per step.
pub struct MemoryProbe {
    lines: Vec<Line>,
}

/// One sample: nanoseconds per step of the walk and of the multiply chain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeSample {
    pub walk_ns: f64,
    pub alu_ns: f64,
}

impl MemoryProbe {
    /// A walk over `bytes` (at least two cache lines), visiting every line once per lap in an
    /// order drawn from `seed`: one cycle through a shuffled order, so no line is skipped and no
    /// hardware prefetcher can guess the next.
    pub fn new(bytes: usize, seed: u64) -> MemoryProbe {
        let n = (bytes / std::mem::size_of::<Line>()).clamp(2, u32::MAX as usize);
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.shuffle(&mut rand_pcg::Pcg64Mcg::seed_from_u64(seed));
        let mut lines = vec![Line { next: 0 }; n];
        for (i, &at) in order.iter().enumerate() {
            lines[at as usize].next = order[(i + 1) % n];
        }
        MemoryProbe { lines }
    }

    /// Bytes the walk covers.
    pub fn bytes(&self) -> usize {
        self.lines.len() * std::mem::size_of::<Line>()
    }

    /// Lines visited in one lap from line 0 before coming back to it (every line: a test's check).
    pub fn lap_length(&self) -> usize {
        let mut at = self.lines[0].next;
        let mut steps = 1;
        while at != 0 {
            at = self.lines[at as usize].next;
            steps += 1;
        }
        steps
    }

    /// Walks for `window`, then runs the multiply chain for as long: nanoseconds per step of each.
    pub fn sample(&self, window: Duration) -> ProbeSample {
        ProbeSample { walk_ns: self.walk(window), alu_ns: multiply_chain(window) }
    }

    fn walk(&self, window: Duration) -> f64 {
        // One untimed lap first: the lines come into this core's caches (after a point, they
        // hold its workers' data), so the window times how well the caches keep them.
        let mut at = self.lines[0].next;
        while at != 0 {
            at = self.lines[at as usize].next;
        }
        let mut steps = 0usize;
        let start = Instant::now();
        loop {
            for _ in 0..STEPS_PER_CHECK {
                at = self.lines[at as usize].next;
            }
            steps += STEPS_PER_CHECK;
            let elapsed = start.elapsed();
            if elapsed >= window {
                black_box(at);
                return elapsed.as_nanos() as f64 / steps as f64;
            }
        }
    }
}

/// A dependent 64-bit multiply-add chain (a PCG step) for `window`: nanoseconds per step.
fn multiply_chain(window: Duration) -> f64 {
    let mut x = 1u64;
    let mut steps = 0usize;
    let start = Instant::now();
    loop {
        for _ in 0..STEPS_PER_CHECK {
            x = black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407));
        }
        steps += STEPS_PER_CHECK;
        let elapsed = start.elapsed();
        if elapsed >= window {
            black_box(x);
            return elapsed.as_nanos() as f64 / steps as f64;
        }
    }
}

/// Bytes of the L2 cache of CPU 0 as Linux reports it (`/sys/devices/system/cpu/cpu0/cache`),
/// or None where it does not.
pub fn l2_bytes() -> Option<usize> {
    let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let read = |name: &str| std::fs::read_to_string(entry.path().join(name)).ok();
        if read("level").as_deref().map(str::trim) == Some("2")
            && read("type").as_deref().map(str::trim) != Some("Instruction")
        {
            return parse_cache_size(read("size")?.trim());
        }
    }
    None
}

/// A sysfs cache size (`1024K`, `2M`, `512`) in bytes.
fn parse_cache_size(text: &str) -> Option<usize> {
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => text.split_at(i),
        None => (text, ""),
    };
    let n: usize = digits.parse().ok()?;
    match unit {
        "" => Some(n),
        "K" => n.checked_mul(1 << 10),
        "M" => n.checked_mul(1 << 20),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_is_one_cycle_through_every_line() {
        for bytes in [128, 4096, 100_000, 786_432] {
            let probe = MemoryProbe::new(bytes, 7);
            assert_eq!(probe.bytes(), bytes / 64 * 64);
            assert_eq!(probe.lap_length(), bytes / 64);
        }
        assert_eq!(MemoryProbe::new(0, 1).lap_length(), 2, "at least two lines");
    }

    #[test]
    fn a_sample_is_a_positive_time_per_step() {
        let s = MemoryProbe::new(65_536, 1).sample(Duration::from_millis(1));
        assert!(s.walk_ns.is_finite() && s.walk_ns > 0.0);
        assert!(s.alu_ns.is_finite() && s.alu_ns > 0.0);
    }

    #[test]
    fn cache_sizes_read_as_sysfs_writes_them() {
        assert_eq!(parse_cache_size("1024K"), Some(1 << 20));
        assert_eq!(parse_cache_size("2M"), Some(2 << 20));
        assert_eq!(parse_cache_size("512"), Some(512));
        assert_eq!(parse_cache_size("12G"), None);
        assert_eq!(parse_cache_size("K"), None);
    }
}
