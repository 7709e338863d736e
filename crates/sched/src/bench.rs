//! Queue micro-benchmarks behind `superlinear attack bench-queue`: enqueue+dequeue pairs per
//! second on one core with `n` elements queued, for the HFFS queue and its comparison-based
//! baselines, under several priority patterns including each baseline's worst case. Timings
//! (thread CPU time), so never used in pass/fail tests.
//!
//! The "hold" model of priority-queue benchmarking: preload `n` elements, then time pairs of
//! one push and one pop, so the size stays at `n`. Priorities are generated before the clock
//! starts, so the random number generator is not timed.

use crate::queue::{BTreeQueue, BinaryHeapQueue, DoubleEndedPriorityQueue, HffsQueue, MinMaxHeap, PriorityQueue};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use superlinear_core::cputime::thread_cpu_ns;
use superlinear_core::Error;

/// Runs the hold model on one kind of queue: (priorities, n queued, pop the maximum?, capacity,
/// HFFS width, HFFS levels); `None` where the queue cannot pop its maximum.
pub type HoldRun = fn(&[u32], usize, bool, usize, u32, u32) -> Option<QueueBench>;

/// One queue the benchmark knows.
pub struct QueueEntry {
    /// Name on the command line and in result rows.
    pub name: &'static str,
    /// Its run.
    pub run: HoldRun,
}

/// Every queue the benchmark knows: the HFFS queue and its comparison-based baselines.
pub const QUEUES: &[QueueEntry] = &[
    QueueEntry {
        name: "hffs",
        run: |p, n, max_end, cap, w, l| Some(hold(&mut HffsQueue::<u32>::new(w, l, cap), p, n, max_end, pop_max_of)),
    },
    QueueEntry {
        name: "binary-heap",
        run: |p, n, max_end, cap, _, _| (!max_end).then(|| hold(&mut BinaryHeapQueue::new(cap), p, n, false, no_max)),
    },
    QueueEntry {
        name: "btree",
        run: |p, n, max_end, cap, _, _| Some(hold(&mut BTreeQueue::new(cap), p, n, max_end, pop_max_of)),
    },
    QueueEntry {
        name: "minmax-heap",
        run: |p, n, max_end, cap, _, _| Some(hold(&mut MinMaxHeap::new(cap), p, n, max_end, pop_max_of)),
    },
];

/// Priority patterns: name, one-line description.
pub const PATTERNS: &[(&str, &str)] = &[
    ("random", "uniform random priorities, push + pop-min"),
    ("ascending", "every push is a new maximum (wrapping), push + pop-min"),
    ("descending", "every push is a new minimum (wrapping): a full sift-up per push in a heap"),
    ("constant", "one priority for everything (FIFO), push + pop-min"),
    ("bimodal", "random lowest or highest 1% of the span, push + pop-min"),
    ("drop-max", "uniform random priorities, push + pop-max (a full buffer dropping its worst)"),
];

/// One measurement.
#[derive(Clone, Debug)]
pub struct QueueBench {
    /// Pairs timed.
    pub pairs: usize,
    /// Thread CPU nanoseconds for all pairs.
    pub cpu_ns: u64,
    /// Sum of popped priorities (checked equal across queues by the tests' callers).
    pub checksum: u64,
}

/// A [`QueueBench`] as results carry it, with its rate.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct QueueBenchRecord {
    pub pairs: usize,
    pub cpu_ns: u64,
    pub pairs_per_s: f64,
    pub checksum: u64,
}

impl QueueBench {
    /// The record of this measurement.
    pub fn record(&self) -> QueueBenchRecord {
        QueueBenchRecord {
            pairs: self.pairs,
            cpu_ns: self.cpu_ns,
            pairs_per_s: self.pairs_per_second(),
            checksum: self.checksum,
        }
    }

    /// Enqueue+dequeue pairs per second.
    pub fn pairs_per_second(&self) -> f64 {
        self.pairs as f64 * 1e9 / self.cpu_ns.max(1) as f64
    }
}

/// The priority sequence of a pattern over `span` priorities: `n` preload values then `pairs`.
pub fn priorities(pattern: &str, span: u64, count: usize, seed: u64) -> Result<Vec<u32>, Error> {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let s = span;
    let edge = (s / 100).max(1);
    let v: Vec<u32> = match pattern {
        "random" | "drop-max" => (0..count).map(|_| rng.gen_range(0..s) as u32).collect(),
        "ascending" => (0..count as u64).map(|i| (i % s) as u32).collect(),
        "descending" => (0..count as u64).map(|i| (s - 1 - i % s) as u32).collect(),
        "constant" => vec![(s / 2) as u32; count],
        "bimodal" => (0..count)
            .map(|_| {
                let x = rng.gen_range(0..edge);
                (if rng.gen::<bool>() { x } else { s - 1 - x }) as u32
            })
            .collect(),
        other => {
            let known: Vec<&str> = PATTERNS.iter().map(|p| p.0).collect();
            return Err(Error::config(format!("unknown pattern '{other}' (known: {})", known.join(", "))));
        }
    };
    Ok(v)
}

/// Pairs timed between two reads of the Ctrl-C flag.
const SLICE: usize = 4096;

fn hold<Q: PriorityQueue<u32>>(
    q: &mut Q,
    prios: &[u32],
    n: usize,
    max_end: bool,
    pop_max: fn(&mut Q) -> u32,
) -> QueueBench {
    let (pre, timed) = prios.split_at(n);
    for (i, &p) in pre.iter().enumerate() {
        let _ = q.push(p, i as u32);
    }
    let mut checksum = 0u64;
    let t0 = thread_cpu_ns();
    // In slices of pairs, so that Ctrl-C stops it (one relaxed load per slice).
    for (s, slice) in timed.chunks(SLICE).enumerate() {
        if superlinear_core::cancel::requested() {
            break;
        }
        let base = (s * SLICE) as u32;
        if max_end {
            for (i, &p) in slice.iter().enumerate() {
                let _ = q.push(p, base + i as u32);
                checksum += pop_max(q) as u64;
            }
        } else {
            for (i, &p) in slice.iter().enumerate() {
                let _ = q.push(p, base + i as u32);
                checksum += q.pop_min().map_or(0, |x| x.0) as u64;
            }
        }
    }
    let cpu_ns = thread_cpu_ns() - t0;
    std::hint::black_box(&q);
    QueueBench { pairs: timed.len(), cpu_ns, checksum }
}

fn pop_max_of<Q: DoubleEndedPriorityQueue<u32>>(q: &mut Q) -> u32 {
    q.pop_max().map_or(0, |x| x.0)
}

fn no_max<Q>(_: &mut Q) -> u32 {
    unreachable!("checked before the run")
}

/// Benchmarks one queue on one pattern with `n` queued elements and `pairs` timed pairs.
/// `Ok(None)` when the queue cannot run the pattern (a binary heap has no pop-max).
pub fn bench_queue(
    queue: &str,
    pattern: &str,
    n: usize,
    pairs: usize,
    width: u32,
    levels: u32,
    seed: u64,
) -> Result<Option<QueueBench>, Error> {
    let entry = QUEUES.iter().find(|q| q.name == queue).ok_or_else(|| {
        let known: Vec<&str> = QUEUES.iter().map(|q| q.name).collect();
        Error::config(format!("unknown queue '{queue}' (known: {})", known.join(", ")))
    })?;
    HffsQueue::<u32>::check(width, levels, n + 1).map_err(Error::config)?;
    let span = (width as u64).pow(levels);
    let prios = priorities(pattern, span, n + pairs, seed)?;
    let Some(bench) = (entry.run)(&prios, n, pattern == "drop-max", n + 1, width, levels) else {
        return Ok(None);
    };
    superlinear_core::cancel::check()?;
    Ok(Some(bench))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_queue_pops_the_same_priorities_on_every_pattern() {
        // The same priorities pushed and popped from either end give the same popped sum in every
        // queue that can pop that end; a queue without pop-max answers None for drop-max.
        for (pattern, _) in PATTERNS {
            let sums: Vec<Option<u64>> = QUEUES
                .iter()
                .map(|q| bench_queue(q.name, pattern, 500, 3_000, 16, 2, 7).unwrap().map(|b| b.checksum))
                .collect();
            let ran: Vec<u64> = sums.iter().flatten().copied().collect();
            assert!(ran.len() >= QUEUES.len() - 1, "{pattern}: {sums:?}");
            assert!(ran.windows(2).all(|w| w[0] == w[1]), "{pattern}: {sums:?}");
        }
        assert!(bench_queue("binary-heap", "drop-max", 10, 10, 16, 2, 1).unwrap().is_none());
        assert!(bench_queue("fibonacci", "random", 10, 10, 16, 2, 1).unwrap_err().to_string().contains("known: hffs"));
    }
}
