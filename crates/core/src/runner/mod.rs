//! The runner: one dispatcher feeding k workers, in the three ways the honesty contract needs.
//!
//! * [`run_projected`]: the dispatcher splits the stream (its CPU time is the serial part), then
//!   each worker serves its own stream on a pool of at most `parallel` threads, so no two workers
//!   ever share a core; each worker's own thread CPU time is taken. Valid for any k.
//! * [`run_threaded`]: a dispatcher thread (or D of them, [`run_threaded_dispatchers`]) and k
//!   worker threads connected by bounded single-producer single-consumer rings carrying
//!   batches; wall-clock time. With [`Placement::OneCorePerWorker`] this is the measured
//!   speedup (meaningful for k ≤ cores, or k + D ≤ cores with D dispatchers; with one
//!   dispatcher and k = cores, no core is left for its thread and it routes inside worker 0's);
//!   with [`Placement::SingleCore`] all workers share one CPU (paper Fig. 5c).
//!
//! Both are generic over the request type, so packet classifiers reuse them unchanged.
//!
//! The code is split by job: `batches` holds the dispatch loop every runner shares (routing into
//! per-worker batches), `projected` the projected runs, `rings` the SPSC rings and the waiting
//! on them, and `threaded` the real-thread runs; this module holds what they share (the streams,
//! the factories, the placement, and how a run's outcomes become its [`Accounting`]).

mod batches;
mod projected;
mod rings;
mod threaded;

pub use batches::{route_into_batches, Batches, BATCH};
pub use projected::{
    run_projected, run_projected_dispatchers, DISPATCH_REPEATS, DISPATCH_SEGMENT, UNCALIBRATED_PASSES,
};
pub use rings::RING_BATCHES;
pub use threaded::{run_threaded, run_threaded_dispatchers, run_threaded_dispatchers_within, run_threaded_within};

use crate::accounting::Accounting;
use crate::dispatch::Dispatcher;
use crate::worker::Worker;
use std::time::Instant;

/// Builds worker `i` of a run (inside the thread that will drive it).
pub type WorkerFactory<'a, R> = dyn Fn(usize) -> Box<dyn Worker<R>> + Sync + 'a;

/// A request stream split into an uncounted warm-up prefix and the counted requests.
#[derive(Clone, Copy)]
pub struct Streams<'a, R> {
    /// Served first and left out of every figure (empty when warm-up is included).
    pub warmup: &'a [R],
    /// The requests that are counted and timed.
    pub counted: &'a [R],
}

/// Where the worker threads of a threaded run go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Worker i on CPU i (when there are enough CPUs); the dispatcher on a free CPU if any.
    OneCorePerWorker,
    /// Every worker on the first CPU; the dispatcher on the second, when there is one.
    SingleCore,
}

struct Outcome {
    cpu_ns: u64,
    work: u64,
    served: u64,
    hits: Option<u64>,
    moved: Option<u64>,
    end: Option<Instant>,
    /// Wall-clock time inside `serve_batch` (real-thread runs).
    serve_wall_ns: u64,
}

fn counter_delta(after: Option<u64>, before: Option<u64>) -> Option<u64> {
    Some(after? - before.unwrap_or(0))
}

/// What a real-thread run adds to the accounting: its wall clock, the dispatcher's time
/// blocked on full rings, and whether the dispatch had no CPU of its own.
struct Threaded {
    wall_ns: u64,
    dispatcher_blocked_ns: u64,
    dispatcher_shares_core: bool,
}

fn into_accounting(
    k: usize,
    requests: usize,
    dispatcher_cpu_ns: u64,
    outcomes: Vec<Outcome>,
    threaded: Option<Threaded>,
) -> Accounting {
    Accounting {
        k,
        requests: requests as u64,
        wall_ns: threaded.as_ref().map(|t| t.wall_ns),
        dispatcher_cpu_ns,
        dispatchers: 1,
        dispatcher_cpu_total_ns: dispatcher_cpu_ns,
        worker_cpu_ns: outcomes.iter().map(|o| o.cpu_ns).collect(),
        worker_estimate_ns: outcomes.iter().map(|o| o.cpu_ns).collect(),
        worker_runs: vec![1; outcomes.len()],
        workers_rerun: 0,
        cost_per_work_ns: None,
        worker_work: outcomes.iter().map(|o| o.work).collect(),
        worker_requests: outcomes.iter().map(|o| o.served).collect(),
        worker_hits: outcomes.iter().map(|o| o.hits).collect(),
        worker_entries_moved: outcomes.iter().map(|o| o.moved).collect(),
        worker_serve_wall_ns: if threaded.is_some() {
            outcomes.iter().map(|o| o.serve_wall_ns).collect()
        } else {
            Vec::new()
        },
        dispatcher_blocked_ns: threaded.as_ref().map(|t| t.dispatcher_blocked_ns),
        dispatcher_shares_core: threaded.map(|t| t.dispatcher_shares_core),
    }
}

/// Builds the dispatcher of a run; called once per repetition so each starts fresh.
pub type DispatcherFactory<'a, R> = dyn Fn() -> Box<dyn Dispatcher<R>> + Sync + 'a;

/// Most passes over a run's workers when passes are added to span a least timed window (the
/// `min_timed` argument of [`run_projected`]).
pub const MAX_WINDOW_PASSES: usize = 16;

/// The contiguous shares of `requests` that `dispatchers` dispatcher threads route (at least
/// one, none empty unless there are no requests; the first ones one request longer when they do
/// not divide evenly).
pub fn dispatcher_shares<R>(requests: &[R], dispatchers: usize) -> Vec<&[R]> {
    let d = dispatchers.clamp(1, requests.len().max(1));
    let (base, extra) = (requests.len() / d, requests.len() % d);
    let mut shares = Vec::with_capacity(d);
    let mut rest = requests;
    for i in 0..d {
        let (share, tail) = rest.split_at(base + usize::from(i < extra));
        shares.push(share);
        rest = tail;
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cputime::allowed_cpus;
    use crate::dispatch::{KeyHashDispatcher, RoundRobinDispatcher, WorkerLoads};
    use std::sync::Mutex;
    use std::time::Duration;

    /// Spins a fixed number of iterations per request (work 1 each); worker `slow` also spins
    /// `burst` iterations on its first build only, as a burst of stolen time would cost it once.
    pub(super) struct Spinner {
        pub(super) per_request: u64,
        pub(super) burst: u64,
    }
    impl Worker for Spinner {
        fn serve(&mut self, _: &u64) -> u64 {
            crate::busy::spin_iterations(self.per_request + std::mem::take(&mut self.burst));
            1
        }
    }

    #[test]
    fn threaded_runs_repeat_until_they_span_the_timed_window() {
        let requests: Vec<u64> = (0..2_000u64).collect();
        let streams = Streams { warmup: &[], counted: &requests };
        let factory = |_: usize| -> Box<dyn Worker> { Box::new(Spinner { per_request: 10, burst: 0 }) };
        let rr = || -> Box<dyn Dispatcher> { Box::new(RoundRobinDispatcher::new(2)) };
        let once = run_threaded_within(streams, &rr, 2, &factory, Placement::SingleCore, Duration::ZERO);
        assert_eq!(once.worker_runs, vec![1, 1]);
        let window = run_threaded_within(streams, &rr, 2, &factory, Placement::SingleCore, Duration::from_secs(3600));
        assert_eq!(window.worker_runs, vec![MAX_WINDOW_PASSES as u32; 2]);
        assert_eq!(window.worker_work, once.worker_work);
        assert_eq!(window.worker_work.iter().sum::<u64>(), 2_000);
        // Where the measured run's time went: each worker's time serving, within the run's wall
        // clock, and the dispatcher's time blocked on full rings; projected runs have neither.
        let wall = once.wall_ns.expect("threaded");
        assert_eq!(once.worker_serve_wall_ns.len(), 2);
        assert!(once.worker_serve_wall_ns.iter().all(|&s| s > 0 && s <= wall), "{once:?}");
        assert!(once.dispatcher_blocked_ns.is_some_and(|b| b <= wall));
        let projected = run_projected(streams, &rr, 2, &factory, 2, 1, Duration::ZERO);
        assert!(projected.worker_serve_wall_ns.is_empty() && projected.dispatcher_blocked_ns.is_none());
        assert_eq!(projected.dispatcher_shares_core, None);
        // Single-core placement puts the dispatcher on the second allowed CPU, where there is one.
        assert_eq!(once.dispatcher_shares_core, Some(allowed_cpus().len() < 2));
    }

    /// Round-robin that records the threads it routes in.
    struct RecordingThreads {
        inner: RoundRobinDispatcher,
        seen: std::sync::Arc<Mutex<Vec<std::thread::ThreadId>>>,
    }
    impl Dispatcher for RecordingThreads {
        fn route(&mut self, request: &u64, loads: &WorkerLoads<'_>) -> usize {
            let me = std::thread::current().id();
            let mut seen = self.seen.lock().unwrap();
            if !seen.contains(&me) {
                seen.push(me);
            }
            self.inner.route(request, loads)
        }
    }

    #[test]
    fn with_no_cpu_left_for_it_the_dispatcher_routes_inside_worker_0s_thread() {
        let n = allowed_cpus().len();
        let warmup: Vec<u64> = (0..3_000u64).collect();
        let requests: Vec<u64> = (0..20_000u64).collect();
        let streams = Streams { warmup: &warmup, counted: &requests };
        // k = n: worker 0's thread routes; k = n - 1 (where there are 2 CPUs or more): a
        // dispatcher thread of its own. Either way the same streams, work and counts.
        for k in [n, n - 1].into_iter().filter(|&k| k >= 1) {
            let seen = std::sync::Arc::new(Mutex::new(Vec::new()));
            let worker0 = Mutex::new(None);
            let factory = |i: usize| -> Box<dyn Worker> {
                if i == 0 {
                    *worker0.lock().unwrap() = Some(std::thread::current().id());
                }
                Box::new(Spinner { per_request: 50, burst: 0 })
            };
            let make = || -> Box<dyn Dispatcher> {
                Box::new(RecordingThreads { inner: RoundRobinDispatcher::new(k), seen: seen.clone() })
            };
            let affinity = allowed_cpus();
            let acc = run_threaded_within(streams, &make, k, &factory, Placement::OneCorePerWorker, Duration::ZERO);
            assert_eq!(allowed_cpus(), affinity, "the caller's affinity is left alone");
            let routed_in = seen.lock().unwrap().clone();
            assert_eq!(routed_in.len(), 1, "one routing thread");
            let inside = Some(routed_in[0]) == *worker0.lock().unwrap();
            assert_eq!(inside, k == n, "k = {k} on {n} CPUs");
            assert_eq!(acc.dispatcher_shares_core, Some(inside), "the record says which path ran");
            assert_eq!(acc.worker_requests.iter().sum::<u64>(), 20_000);
            let projected = run_projected(streams, &make, k, &factory, 2, 1, Duration::ZERO);
            assert_eq!(acc.worker_work, projected.worker_work);
            let wall = acc.wall_ns.expect("threaded");
            assert!(acc.worker_serve_wall_ns.iter().all(|&s| s > 0 && s <= wall), "{acc:?}");
            assert!(acc.worker_cpu_ns.iter().all(|&c| c > 0), "{acc:?}");
            assert!(acc.dispatcher_cpu_ns > 0 && acc.dispatcher_cpu_ns <= wall, "{acc:?}");
            assert!(acc.dispatcher_blocked_ns.is_some_and(|b| b <= wall));
        }
    }

    #[test]
    fn dispatcher_shares_are_contiguous_and_cover_the_requests() {
        let requests: Vec<u32> = (0..10).collect();
        let shares = dispatcher_shares(&requests, 3);
        assert_eq!(shares, vec![&requests[0..4], &requests[4..7], &requests[7..10]]);
        assert_eq!(dispatcher_shares(&requests, 1), vec![&requests[..]]);
        assert_eq!(dispatcher_shares(&requests, 0).len(), 1);
        assert_eq!(dispatcher_shares(&requests, 50).len(), 10);
        assert_eq!(dispatcher_shares::<u32>(&[], 4), vec![&[] as &[u32]]);
    }

    #[test]
    fn threaded_runs_with_several_dispatchers_serve_what_the_projection_splits() {
        let requests: Vec<u64> = (0..30_011u64).map(|i| i.wrapping_mul(0x9e37_79b9) % 7_000).collect();
        let streams = Streams { warmup: &requests[..1_000], counted: &requests[1_000..] };
        let factory = |_: usize| -> Box<dyn Worker> { Box::new(Spinner { per_request: 10, burst: 0 }) };
        let k = 3;
        let hash = || -> Box<dyn Dispatcher> { Box::new(KeyHashDispatcher::new(k, 5)) };
        let projected = run_projected_dispatchers(streams, &hash, k, &factory, 2, 1, Duration::ZERO, 4);
        for placement in [Placement::SingleCore, Placement::OneCorePerWorker] {
            let threaded = run_threaded_dispatchers_within(streams, &hash, k, &factory, placement, Duration::ZERO, 4);
            // Every counted request served once, by the worker its key hashes to; the warm-up,
            // which dispatcher 0 alone hands on, is not counted.
            assert_eq!(threaded.dispatchers, 4);
            assert_eq!(threaded.worker_requests, projected.worker_requests);
            assert_eq!(threaded.worker_work, projected.worker_work);
            assert_eq!(threaded.worker_requests.iter().sum::<u64>(), 29_011);
            assert!(threaded.dispatcher_cpu_ns <= threaded.dispatcher_cpu_total_ns);
            assert!(threaded.wall_ns.is_some_and(|w| w > 0));
        }
        // One dispatcher is the plain threaded run.
        let one =
            run_threaded_dispatchers_within(streams, &hash, k, &factory, Placement::SingleCore, Duration::ZERO, 1);
        assert_eq!((one.dispatchers, one.worker_requests.clone()), (1, projected.worker_requests));
    }
}
