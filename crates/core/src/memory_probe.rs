//! A probe of how fast this machine serves memory right now, for the record of a timed run.
//!
//! On a shared or virtual machine a core's caches are shared with work we cannot see (an SMT
//! sibling shares L1 and L2, other cores the last-level cache), and the workers of the paper's
//! experiments spend their time reading lists and trees from those caches. The probe times a
//! random walk over a working set that fits one core's L2 (one cache line per step, each step
//! depending on the last, so no prefetcher hides a miss) and, as a control, a dependent multiply
//! chain, each for a short window, in the thread's own CPU time, the clock projected figures are
//! built from. It also keeps the share of the wall-clock windows the thread had a CPU for: a
//! walk slow in CPU time while the chain holds steady says the caches were taken; a low share
//! says the CPU was (by the host or another process).

use std::hint::black_box;
use std::time::{Duration, Instant};

use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::cputime::thread_cpu_ns;

/// One cache line of the walk: the index of the next line, padded so that lines do not share.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line {
    next: u32,
}

/// Steps between two looks at the clock: a few microseconds of walking.
const STEPS_PER_CHECK: usize = 1024;

/// The largest walk: beyond any L2, and an allocation no caller should fail on.
pub const MAX_BYTES: usize = 1 << 30;

/// A random cyclic walk over `bytes` of memory, one cache line per step.
pub struct MemoryProbe {
    lines: Vec<Line>,
}

/// One sample: thread CPU nanoseconds per step of the walk and of the multiply chain, and the
/// thread's CPU time over the wall-clock time of both windows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeSample {
    pub walk_ns: f64,
    pub alu_ns: f64,
    pub cpu_share: f64,
}

impl MemoryProbe {
    /// A walk over `bytes` (at least two cache lines, at most [`MAX_BYTES`]), visiting every line
    /// once per lap in an order drawn from `seed`: one cycle through a shuffled order, so no line
    /// is skipped and no hardware prefetcher can guess the next.
    pub fn new(bytes: usize, seed: u64) -> MemoryProbe {
        let n = lines_for(bytes);
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

    /// Walks for `window` of wall-clock time, then runs the multiply chain for as long.
    pub fn sample(&self, window: Duration) -> ProbeSample {
        // One untimed lap first: the lines come into this core's caches (after a point, they
        // hold its workers' data), so the window times how well the caches keep them.
        black_box(self.lap_length());
        let mut at = 0u32;
        let walk = for_window(window, || {
            for _ in 0..STEPS_PER_CHECK {
                at = self.lines[at as usize].next;
            }
        });
        black_box(at);
        let mut x = 1u64;
        let chain = for_window(window, || {
            for _ in 0..STEPS_PER_CHECK {
                // black_box keeps the chain from being folded; it may cost an L1 store and load
                // per step, which is still no cache the walk could lose.
                x = black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407));
            }
        });
        ProbeSample {
            walk_ns: walk.cpu_ns as f64 / walk.steps as f64,
            alu_ns: chain.cpu_ns as f64 / chain.steps as f64,
            cpu_share: (walk.cpu_ns + chain.cpu_ns) as f64 / (walk.wall_ns + chain.wall_ns).max(1) as f64,
        }
    }
}

/// Lines of a walk over `bytes`: at least two, at most [`MAX_BYTES`] worth.
fn lines_for(bytes: usize) -> usize {
    (bytes.min(MAX_BYTES) / std::mem::size_of::<Line>()).max(2)
}

/// What [`for_window`] timed.
struct Timed {
    steps: usize,
    cpu_ns: u64,
    wall_ns: u64,
}

/// Runs `chunk` (of [`STEPS_PER_CHECK`] steps) until `window` of wall-clock time has passed.
fn for_window(window: Duration, mut chunk: impl FnMut()) -> Timed {
    let cpu0 = thread_cpu_ns();
    let start = Instant::now();
    let mut steps = 0usize;
    loop {
        chunk();
        steps += STEPS_PER_CHECK;
        let elapsed = start.elapsed();
        if elapsed >= window {
            // A clock that did not move (CPU time at its resolution) still gives a positive time.
            let cpu_ns = thread_cpu_ns().saturating_sub(cpu0).max(1);
            return Timed { steps, cpu_ns, wall_ns: elapsed.as_nanos() as u64 };
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
        assert_eq!(lines_for(usize::MAX), MAX_BYTES / 64, "at most MAX_BYTES");
    }

    #[test]
    fn a_sample_is_a_positive_time_per_step() {
        let s = MemoryProbe::new(65_536, 1).sample(Duration::from_millis(1));
        assert!(s.walk_ns.is_finite() && s.walk_ns > 0.0);
        assert!(s.alu_ns.is_finite() && s.alu_ns > 0.0);
        assert!(s.cpu_share > 0.0 && s.cpu_share.is_finite());
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
