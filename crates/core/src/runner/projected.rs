//! The projected runs ([`run_projected`], [`run_projected_dispatchers`]): the dispatch timed on
//! its own, then every worker's stream served on a pool of pinned threads, pass after pass, each
//! worker's least CPU time kept and calibrated.

use super::batches::CHUNK;
use super::{
    counter_delta, dispatcher_shares, into_accounting, route_into_batches, Batches, DispatcherFactory, Outcome,
    Streams, WorkerFactory, MAX_WINDOW_PASSES,
};
use crate::accounting::Accounting;
use crate::calibrate;
use crate::cputime::{allowed_cpus, pin_current_thread, thread_cpu_ns};
use crate::worker::Worker;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Least number of timed runs of the dispatch in a projected run.
pub const DISPATCH_REPEATS: usize = 5;
/// Least number of passes over the workers of a run too small to calibrate (k below
/// [`calibrate::MIN_WORKERS`]).
pub const UNCALIBRATED_PASSES: usize = 3;
/// Requests per separately timed segment of the dispatch (16 chunks).
pub const DISPATCH_SEGMENT: usize = 16 * CHUNK;

/// Projected run: serial dispatch, then each worker on its own stream, at most `parallel` at once.
/// The same as [`run_projected_dispatchers`] with one dispatcher (DESIGN.md's projected kind).
pub fn run_projected<R: Copy + Default + Send + Sync>(
    streams: Streams<'_, R>,
    dispatcher: &DispatcherFactory<'_, R>,
    k: usize,
    factory: &WorkerFactory<'_, R>,
    parallel: usize,
    repeats: usize,
    min_timed: Duration,
) -> Accounting {
    run_projected_dispatchers(streams, dispatcher, k, factory, parallel, repeats, min_timed, 1)
}

/// Projected run with `dispatchers` dispatcher threads: each dispatches its own contiguous
/// share of the counted requests (as a NIC that spreads packets over several receive queues
/// hands each queue's core a share), then each worker serves its own stream, at most `parallel`
/// at once.
///
/// With one dispatcher this is DESIGN.md's projected kind: T(k) = the serial dispatcher's CPU
/// time + the slowest worker's. With D > 1, each share is routed by a dispatcher of its own
/// (fresh, having routed the warm-up untimed, so a dispatcher with state knows only its share:
/// a stateless one such as RSS makes exactly the single dispatcher's decisions), and T(k) takes
/// the slowest dispatcher's CPU time in place of the serial one ([`Accounting::dispatchers`]). A
/// worker's stream is its requests from every share in order, so it is the same subsequence of
/// the input whatever D is: the shares are contiguous and taken in order.
///
/// Every worker's stream is served in `repeats` passes over all workers (at least
/// [`UNCALIBRATED_PASSES`] when k is too small to calibrate, and more, up to
/// [`MAX_WINDOW_PASSES`], until the passes span `min_timed` of wall-clock time), from a fresh
/// state each time, keeping each worker's least CPU time: on shared or virtual machines a run is
/// only ever slowed down by interference, never sped up. Then each worker's time is calibrated against the
/// cost per unit of work of all workers, re-running suspects ([`crate::calibrate`]); the result's
/// `worker_estimate_ns` is what the projection uses, `worker_cpu_ns` what was measured. The
/// dispatch is timed `max(repeats, DISPATCH_REPEATS)` times in segments of [`DISPATCH_SEGMENT`]
/// requests, keeping each segment's least time. Work counts are deterministic and identical
/// across runs. (Independent repeats of a whole run, and their median and range, are the
/// experiment driver's.)
#[allow(clippy::too_many_arguments)]
pub fn run_projected_dispatchers<R: Copy + Default + Send + Sync>(
    streams: Streams<'_, R>,
    dispatcher: &DispatcherFactory<'_, R>,
    k: usize,
    factory: &WorkerFactory<'_, R>,
    parallel: usize,
    repeats: usize,
    min_timed: Duration,
    dispatchers: usize,
) -> Accounting {
    let k = k.max(1);
    let repeats = repeats.max(1);
    let shares = dispatcher_shares(streams.counted, dispatchers);
    let Split { warm, counted, share_counts } = split_streams(streams, &shares, dispatcher, k);
    let share_ns = time_dispatch(streams.warmup, &shares, &share_counts, dispatcher, k, repeats);
    let dispatcher_cpu_ns = share_ns.iter().copied().max().unwrap_or(0);

    let cpus = allowed_cpus();
    let threads = parallel.clamp(1, cpus.len().max(1));
    let (outcomes, mut runs) = serve_passes(k, &warm, &counted, factory, threads, &cpus, repeats, min_timed);
    let work: Vec<u64> = outcomes.iter().map(|o| o.work).collect();
    let (outcomes, cost, rerun) = rerun_suspects(outcomes, &work, &warm, &counted, factory, threads, &cpus, &mut runs);
    let cpu: Vec<u64> = outcomes.iter().map(|o| o.cpu_ns).collect();
    let mut accounting = into_accounting(k, streams.counted.len(), dispatcher_cpu_ns, outcomes, None);
    accounting.worker_estimate_ns = calibrate::estimates(&cpu, &work, cost);
    accounting.worker_runs = runs;
    accounting.cost_per_work_ns = cost;
    accounting.workers_rerun = rerun.iter().filter(|&&r| r).count();
    accounting.dispatchers = shares.len();
    accounting.dispatcher_cpu_total_ns = share_ns.iter().sum();
    accounting
}

/// A projected run's requests as its workers serve them, split by the dispatch.
struct Split<R> {
    /// Each worker's warm-up stream.
    warm: Vec<Vec<R>>,
    /// Each worker's counted stream.
    counted: Vec<Vec<R>>,
    /// For each share, the number of its requests each worker got.
    share_counts: Vec<Vec<u64>>,
}

/// Each worker's streams, materialised untimed by the same dispatch loop that [`time_dispatch`]
/// times: the warm-up by the first dispatcher, then each share by its own after it routed the
/// warm-up.
fn split_streams<R: Copy + Default + Send + Sync>(
    streams: Streams<'_, R>,
    shares: &[&[R]],
    dispatcher: &DispatcherFactory<'_, R>,
    k: usize,
) -> Split<R> {
    let mut warm: Vec<Vec<R>> = vec![Vec::new(); k];
    let mut counted: Vec<Vec<R>> = (0..k).map(|_| Vec::with_capacity(streams.counted.len() / k + 1)).collect();
    let mut share_counts: Vec<Vec<u64>> = Vec::with_capacity(shares.len());
    for (i, share) in shares.iter().enumerate() {
        let mut d = dispatcher();
        let mut dispatched = vec![0u64; k];
        let mut batches = Batches::new(k);
        // The first dispatcher's warm-up is the workers'; the others' only warms their state.
        let mut keep = |w: usize, batch: &[R]| {
            if i == 0 {
                warm[w].extend_from_slice(batch);
            }
        };
        route_into_batches(d.as_mut(), streams.warmup, &mut dispatched, &mut batches, &mut keep);
        batches.drain(&mut keep);
        let before: Vec<u64> = counted.iter().map(|q| q.len() as u64).collect();
        let mut append = |w: usize, batch: &[R]| counted[w].extend_from_slice(batch);
        route_into_batches(d.as_mut(), share, &mut dispatched, &mut batches, &mut append);
        batches.drain(&mut append);
        share_counts.push(counted.iter().zip(&before).map(|(q, b)| q.len() as u64 - b).collect());
    }
    Split { warm, counted, share_counts }
}

/// Each dispatcher's CPU time over its share (`expected`: the counts [`split_streams`] took), in
/// nanoseconds, one per share.
fn time_dispatch<R: Copy + Default + Send + Sync>(
    warmup: &[R],
    shares: &[&[R]],
    share_counts: &[Vec<u64>],
    dispatcher: &DispatcherFactory<'_, R>,
    k: usize,
    repeats: usize,
) -> Vec<u64> {
    // Each dispatcher's CPU time, taken as the threaded runner's dispatcher spends it (routing
    // and appending to reused batches; see [`route_into_batches`]), from a fresh dispatcher
    // that has routed the warm-up untimed. The dispatch is cheap next to the workers, so it is
    // timed at least DISPATCH_REPEATS times, segment by segment, and each segment's least time
    // is kept: a burst of noise costs only the segment it hit, in the run it hit.
    let mut segment_ns: Vec<Vec<u64>> =
        shares.iter().map(|share| vec![u64::MAX; share.chunks(DISPATCH_SEGMENT).count()]).collect();
    for _ in 0..repeats.max(DISPATCH_REPEATS) {
        for ((share, share_ns), expected) in shares.iter().zip(segment_ns.iter_mut()).zip(share_counts) {
            let mut d = dispatcher();
            let mut dispatched = vec![0u64; k];
            let mut batches = Batches::new(k);
            let recycle = |_: usize, batch: &[R]| {
                std::hint::black_box(batch);
            };
            route_into_batches(d.as_mut(), warmup, &mut dispatched, &mut batches, recycle);
            batches.drain(recycle);
            let before = dispatched.clone();
            // On a thread of its own, so that its CPU clock measures the dispatch alone.
            std::thread::scope(|s| {
                s.spawn(|| {
                    for (segment, best) in share.chunks(DISPATCH_SEGMENT).zip(share_ns.iter_mut()) {
                        let t0 = thread_cpu_ns();
                        route_into_batches(d.as_mut(), segment, &mut dispatched, &mut batches, recycle);
                        *best = (*best).min(thread_cpu_ns() - t0);
                    }
                })
                .join()
                .expect("dispatcher thread panicked")
            });
            batches.drain(recycle);
            // The timed dispatch must have made the same decisions as the materialised split.
            debug_assert!(
                crate::cancel::requested()
                    || dispatched.iter().zip(&before).zip(expected).all(|((a, b), n)| a - b == *n)
            );
        }
    }
    segment_ns.iter().map(|s| s.iter().map(|&ns| if ns == u64::MAX { 0 } else { ns }).sum()).collect()
}

/// Serves every worker's streams in passes over all workers ([`serve_pass`]), keeping each
/// worker's run of least CPU time; returns those runs and how many runs each worker had.
#[allow(clippy::too_many_arguments)]
fn serve_passes<R: Copy + Send + Sync>(
    k: usize,
    warm: &[Vec<R>],
    counted: &[Vec<R>],
    factory: &WorkerFactory<'_, R>,
    threads: usize,
    cpus: &[usize],
    repeats: usize,
    min_timed: Duration,
) -> (Vec<Outcome>, Vec<u32>) {
    // Every worker's stream once per pass, the passes one after another, so that a worker's
    // repeats are the other workers' runs apart rather than back to back in one burst of noise.
    let mut best: Vec<Option<Outcome>> = (0..k).map(|_| None).collect();
    let mut runs = vec![0u32; k];
    let all: Vec<usize> = (0..k).collect();
    // With too few workers to calibrate against each other (k = 1 above all: every speedup's
    // baseline), each worker's least time is taken over more passes instead. And a short run
    // gets more passes until together they span `min_timed`: on a virtual machine
    // the cost per unit of work of every worker can rise by half for a second or more (a noisy
    // neighbour on the host's caches and memory); a pass inside such a stretch is slowed whole,
    // and calibrating its workers against each other cannot see it. Passes spread over a longer
    // window let each worker's least time come from outside it.
    let passes = if k < calibrate::MIN_WORKERS { repeats.max(UNCALIBRATED_PASSES) } else { repeats };
    let started = Instant::now();
    let mut done = 0;
    while done < passes || (started.elapsed() < min_timed && done < MAX_WINDOW_PASSES) {
        if done > 0 && crate::cancel::requested() {
            break;
        }
        serve_pass(&all, warm, counted, factory, threads, cpus, &mut best, &mut runs);
        done += 1;
    }
    (best.into_iter().map(|o| o.expect("every worker ran")).collect(), runs)
}

/// Calibrates the workers' `outcomes` (their `work` alongside), serving suspects again
/// ([`serve_pass`], counting in `runs`); returns the outcomes kept, the cost per unit of work,
/// and which workers were re-run.
#[allow(clippy::too_many_arguments)]
fn rerun_suspects<R: Copy + Send + Sync>(
    mut outcomes: Vec<Outcome>,
    work: &[u64],
    warm: &[Vec<R>],
    counted: &[Vec<R>],
    factory: &WorkerFactory<'_, R>,
    threads: usize,
    cpus: &[usize],
    runs: &mut [u32],
) -> (Vec<Outcome>, Option<f64>, Vec<bool>) {
    // Calibration (crate::calibrate): suspects are served again, interleaved, until none is left
    // or each has had its re-runs; the cost per unit of work is taken again after each round.
    let mut rerun = vec![false; outcomes.len()];
    let mut cost = calibrate::cost_per_work(&outcomes.iter().map(|o| o.cpu_ns).collect::<Vec<_>>(), work);
    for _ in 0..calibrate::MAX_RERUNS {
        let Some(c) = cost else { break };
        let cpu: Vec<u64> = outcomes.iter().map(|o| o.cpu_ns).collect();
        let suspects = calibrate::suspects(&cpu, work, c);
        if suspects.is_empty() || crate::cancel::requested() {
            break;
        }
        suspects.iter().for_each(|&i| rerun[i] = true);
        let mut again: Vec<Option<Outcome>> = outcomes.into_iter().map(Some).collect();
        serve_pass(&suspects, warm, counted, factory, threads, cpus, &mut again, runs);
        outcomes = again.into_iter().map(|o| o.expect("every worker ran")).collect();
        cost = calibrate::cost_per_work(&outcomes.iter().map(|o| o.cpu_ns).collect::<Vec<_>>(), work);
    }
    (outcomes, cost, rerun)
}

/// Serves the streams of `which` workers once each, from a fresh worker after its warm-up, on a
/// pool of `threads` pinned threads (no two workers share a core), keeping in `best` the run of
/// least CPU time of each and counting its runs.
///
/// Every core of the pool stays busy to the end of the pass: where fewer workers than threads
/// are left (k = 1, a lone suspect, the last workers of a pass), copies of the pass's workers fill
/// the idle cores, each copy one more timed run of its worker. A worker is thus always timed
/// beside others, as every worker of a run with k ≥ cores is; timed beside an idle core it would
/// run faster (a core's sibling, shared caches and memory bandwidth are then its own), or beside
/// whatever other job the machine runs, which would make T(1) the noisiest time of all.
#[allow(clippy::too_many_arguments)]
fn serve_pass<R: Copy + Send + Sync>(
    which: &[usize],
    warm: &[Vec<R>],
    counted: &[Vec<R>],
    factory: &WorkerFactory<'_, R>,
    threads: usize,
    cpus: &[usize],
    best: &mut [Option<Outcome>],
    runs: &mut [u32],
) {
    let threads = threads.max(1);
    let padded = which.len().div_ceil(threads) * threads;
    let which: Vec<usize> = which.iter().copied().cycle().take(padded).collect();
    let which = &which[..];
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Outcome)>> = Mutex::new(Vec::with_capacity(which.len()));
    std::thread::scope(|s| {
        for t in 0..threads.min(which.len()) {
            let (next, results) = (&next, &results);
            s.spawn(move || {
                pin_current_thread(cpus[t % cpus.len()]);
                while let Some(&i) = which.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let mut worker = factory(i);
                    serve_in_slices(worker.as_mut(), &warm[i]);
                    let (hits0, moved0) = (worker.hits(), worker.entries_moved());
                    let t0 = thread_cpu_ns();
                    let work = serve_in_slices(worker.as_mut(), &counted[i]);
                    let cpu_ns = thread_cpu_ns() - t0;
                    let hits = counter_delta(worker.hits(), hits0);
                    let moved = counter_delta(worker.entries_moved(), moved0);
                    drop(worker);
                    let served = counted[i].len() as u64;
                    let outcome = Outcome { cpu_ns, work, served, hits, moved, end: None, serve_wall_ns: 0 };
                    results.lock().expect("no poisoned lock").push((i, outcome));
                }
            });
        }
    });
    for (i, outcome) in results.into_inner().expect("no poisoned lock") {
        runs[i] += 1;
        if best[i].as_ref().is_none_or(|b| outcome.cpu_ns < b.cpu_ns) {
            best[i] = Some(outcome);
        }
    }
}

/// Serves `requests` in slices, stopping early when the run is cancelled (the caller discards
/// the result then). The slices are long enough that the check costs nothing measurable.
fn serve_in_slices<R>(worker: &mut (dyn Worker<R> + '_), requests: &[R]) -> u64 {
    let mut work = 0;
    for slice in requests.chunks(1 << 16) {
        if crate::cancel::requested() {
            break;
        }
        work += worker.serve_batch(slice);
    }
    work
}

#[cfg(test)]
mod tests {
    use super::super::tests::Spinner;
    use super::*;
    use crate::dispatch::{Dispatcher, KeyHashDispatcher, RoundRobinDispatcher};

    #[test]
    fn a_burst_in_one_worker_does_not_move_the_projection() {
        let requests: Vec<u64> = (0..8_000u64).collect();
        let streams = Streams { warmup: &[], counted: &requests };
        let k = 8;
        let first_build = std::sync::atomic::AtomicBool::new(true);
        let factory = |i: usize| -> Box<dyn Worker> {
            let burst = if i == 3 && first_build.swap(false, Ordering::Relaxed) { 80_000_000 } else { 0 };
            Box::new(Spinner { per_request: 2_000, burst })
        };
        let rr = || -> Box<dyn Dispatcher> { Box::new(RoundRobinDispatcher::new(k)) };
        let acc = run_projected(streams, &rr, k, &factory, 1, 1, Duration::ZERO);
        // The burst (about 40 times a worker's own time) made worker 3 a suspect, its re-run came
        // back without it, and the slowest worker's projected time is near its work at the
        // calibrated cost, not the burst. The margin is wide: under `cargo test` the other tests
        // spin beside this one, and a worker slowed by them in every one of its runs keeps its own
        // time (2.2 times the calibrated one has been seen on a 2-CPU CI machine).
        assert!(acc.worker_runs[3] >= 2, "runs {:?}", acc.worker_runs);
        assert_eq!(acc.worker_work, vec![1_000; k]);
        let cost = acc.cost_per_work_ns.expect("eight workers calibrate");
        let slowest = *acc.worker_estimate_ns.iter().max().unwrap() as f64;
        assert!(slowest <= cost * 1_000.0 * 5.0, "slowest {slowest}, cost {cost}");
        assert!(acc.projected_max_cpu_ns() >= acc.projected_ns());
    }

    #[test]
    fn idle_cores_run_copies_so_that_every_worker_is_timed_beside_others() {
        let requests: Vec<u64> = (0..3_000u64).collect();
        let streams = Streams { warmup: &[], counted: &requests };
        let factory = |_: usize| -> Box<dyn Worker> { Box::new(Spinner { per_request: 10, burst: 0 }) };
        let threads = 2.min(allowed_cpus().len());
        for k in [1usize, 3] {
            let rr = || -> Box<dyn Dispatcher> { Box::new(RoundRobinDispatcher::new(k)) };
            let acc = run_projected(streams, &rr, k, &factory, 2, 1, Duration::ZERO);
            // Each pass: k runs padded to a multiple of the pool's threads; too few workers to
            // calibrate, so UNCALIBRATED_PASSES passes.
            let runs = UNCALIBRATED_PASSES * k.div_ceil(threads) * threads;
            assert_eq!(acc.worker_runs.iter().sum::<u32>() as usize, runs, "k = {k}");
            assert_eq!(acc.worker_work.iter().sum::<u64>(), 3_000);
            assert_eq!(acc.workers_rerun, 0);
        }
    }

    #[test]
    fn a_short_run_gets_passes_until_they_span_the_timed_window() {
        let requests: Vec<u64> = (0..2_000u64).collect();
        let streams = Streams { warmup: &[], counted: &requests };
        let factory = |_: usize| -> Box<dyn Worker> { Box::new(Spinner { per_request: 10, burst: 0 }) };
        // Too few workers to calibrate (no re-runs of suspects), so passes alone set the runs.
        let k = 2;
        let rr = || -> Box<dyn Dispatcher> { Box::new(RoundRobinDispatcher::new(k)) };
        let threads = 2.min(allowed_cpus().len());
        let per_pass = k.div_ceil(threads) * threads;
        // Without a window: the least passes. With a window far longer than these passes
        // (microseconds each): passes are added up to the cap.
        let once = run_projected(streams, &rr, k, &factory, 2, 1, Duration::ZERO);
        assert_eq!(once.worker_runs.iter().sum::<u32>() as usize, UNCALIBRATED_PASSES * per_pass);
        let window = run_projected(streams, &rr, k, &factory, 2, 1, Duration::from_secs(3600));
        assert_eq!(window.worker_runs.iter().sum::<u32>() as usize, MAX_WINDOW_PASSES * per_pass);
        assert_eq!(window.worker_work, once.worker_work);
    }

    #[test]
    fn several_stateless_dispatchers_give_every_worker_the_same_stream() {
        let requests: Vec<u64> = (0..30_011u64).map(|i| i.wrapping_mul(0x9e37_79b9) % 7_000).collect();
        let streams = Streams { warmup: &requests[..1_000], counted: &requests[1_000..] };
        let factory = |_: usize| -> Box<dyn Worker> { Box::new(Spinner { per_request: 10, burst: 0 }) };
        let k = 6;
        let hash = || -> Box<dyn Dispatcher> { Box::new(KeyHashDispatcher::new(k, 5)) };
        let one = run_projected(streams, &hash, k, &factory, 2, 1, Duration::ZERO);
        assert_eq!((one.dispatchers, one.dispatcher_cpu_total_ns), (1, one.dispatcher_cpu_ns));
        let four = run_projected_dispatchers(streams, &hash, k, &factory, 2, 1, Duration::ZERO, 4);
        assert_eq!(four.dispatchers, 4);
        assert_eq!(four.worker_requests, one.worker_requests);
        assert_eq!(four.worker_work, one.worker_work);
        assert!(four.dispatcher_cpu_ns <= four.dispatcher_cpu_total_ns);
        // A dispatcher with state starts afresh on each share: round-robin restarts at worker 0.
        let rr = || -> Box<dyn Dispatcher> { Box::new(RoundRobinDispatcher::new(k)) };
        let counted = &requests[1_000..];
        let three = run_projected_dispatchers(streams, &rr, k, &factory, 2, 1, Duration::ZERO, 3);
        let mut expected = vec![0u64; k];
        for share in dispatcher_shares(counted, 3) {
            // After the warm-up (1,000 requests), each share's round-robin goes on from there.
            (0..share.len()).for_each(|i| expected[(1_000 + i) % k] += 1);
        }
        assert_eq!(three.worker_requests, expected);
    }
}
