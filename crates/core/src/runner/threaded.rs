//! The threaded runs ([`run_threaded`] and the rest of `run_threaded*`): real dispatcher and
//! worker threads connected by SPSC rings, timed by the wall clock; a worker thread's loop
//! ([`serve_inboxes`]) and its counts ([`Tally`]).

use super::rings::{rings, Backoff, Inbox, Message, Rings};
use super::{
    counter_delta, dispatcher_shares, into_accounting, route_into_batches, Batches, DispatcherFactory, Outcome,
    Placement, Streams, Threaded, WorkerFactory, MAX_WINDOW_PASSES,
};
use crate::accounting::Accounting;
use crate::cputime::{allowed_cpus, pin_current_thread, thread_cpu_ns};
use crate::dispatch::Dispatcher;
use crate::worker::Worker;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Threaded runs, one after another, until they span `min_timed` of wall-clock time (at least
/// one, at most [`MAX_WINDOW_PASSES`]), each from a fresh dispatcher and fresh workers, run r
/// with the CPUs shifted by r (worker i on the (i + r)-th allowed CPU); the run
/// of least wall-clock time is kept, with the number of runs in `worker_runs`. The same least-
/// over-a-window rule as the projected runner's passes, so that measured and projected figures
/// are taken alike and a gap between them is the model's, not the estimators'.
pub fn run_threaded_within<R: Copy + Default + Send + Sync>(
    streams: Streams<'_, R>,
    dispatcher: &DispatcherFactory<'_, R>,
    k: usize,
    factory: &WorkerFactory<'_, R>,
    placement: Placement,
    min_timed: Duration,
) -> Accounting {
    run_threaded_dispatchers_within(streams, dispatcher, k, factory, placement, min_timed, 1)
}

/// [`run_threaded_within`] with `dispatchers` dispatcher threads (see
/// [`run_threaded_dispatchers`]).
pub fn run_threaded_dispatchers_within<R: Copy + Default + Send + Sync>(
    streams: Streams<'_, R>,
    dispatcher: &DispatcherFactory<'_, R>,
    k: usize,
    factory: &WorkerFactory<'_, R>,
    placement: Placement,
    min_timed: Duration,
    dispatchers: usize,
) -> Accounting {
    let started = Instant::now();
    let mut runs = 0u32;
    let mut best: Option<Accounting> = None;
    loop {
        let mut built: Vec<Box<dyn Dispatcher<R>>> = (0..dispatchers.max(1)).map(|_| dispatcher()).collect();
        // Each reference shortens the boxes' 'static object bound to its own borrow.
        let mut refs: Vec<&mut dyn Dispatcher<R>> = built
            .iter_mut()
            .map(|d| {
                let r: &mut dyn Dispatcher<R> = d.as_mut();
                r
            })
            .collect();
        // Each run shifts the CPUs by one, so that a window's runs try different placements: on
        // a virtual machine some vCPUs can run the same worker slower than others for a whole
        // window, and a worker pinned to one would stay there. The projected runner's pool moves
        // workers between CPUs from pass to pass and keeps each one's least time; the least wall
        // clock over placements takes the measured kind alike.
        let acc = run_threaded_placed(streams, &mut refs, k, factory, placement, runs as usize);
        runs += 1;
        if best.as_ref().is_none_or(|b| acc.wall_ns < b.wall_ns) {
            best = Some(acc);
        }
        if crate::cancel::requested() || runs as usize >= MAX_WINDOW_PASSES || started.elapsed() >= min_timed {
            break;
        }
    }
    let mut best = best.expect("at least one run");
    best.worker_runs = vec![runs; best.worker_cpu_ns.len()];
    best
}

/// Threaded run: a dispatcher thread and k worker threads with SPSC rings of batches.
pub fn run_threaded<R: Copy + Default + Send + Sync>(
    streams: Streams<'_, R>,
    dispatcher: &mut dyn Dispatcher<R>,
    k: usize,
    factory: &WorkerFactory<'_, R>,
    placement: Placement,
) -> Accounting {
    run_threaded_dispatchers(streams, &mut [dispatcher], k, factory, placement)
}

/// Threaded run with D = `dispatchers.len()` dispatcher threads (a NIC's receive queues, each
/// with its own dispatching core, the model [`run_projected_dispatchers`] projects): dispatcher
/// j routes the j-th contiguous share of the counted stream ([`dispatcher_shares`]) into its own
/// SPSC ring to each of the k workers, and each worker polls its D rings in turn. Dispatcher 0
/// sends the warm-up to the workers; the others route it too, untimed and into nothing, so that
/// every dispatcher starts warm. The clock starts when every worker has drained its warm-up and
/// every dispatcher is ready, and stops at the last request served. The dispatch time reported
/// is the slowest dispatcher's CPU time (`dispatcher_cpu_total_ns`: all of theirs). A worker's
/// stream interleaves the dispatchers' batches as they arrive, so its work can differ slightly
/// from the projected run's, which serves the shares one after another.
///
/// [`run_projected_dispatchers`]: super::run_projected_dispatchers
pub fn run_threaded_dispatchers<R: Copy + Default + Send + Sync>(
    streams: Streams<'_, R>,
    dispatchers: &mut [&mut dyn Dispatcher<R>],
    k: usize,
    factory: &WorkerFactory<'_, R>,
    placement: Placement,
) -> Accounting {
    run_threaded_placed(streams, dispatchers, k, factory, placement, 0)
}

/// [`run_threaded_dispatchers`] with the allowed CPUs rotated left by `shift` before the
/// placement picks worker i's and dispatcher j's CPU.
fn run_threaded_placed<R: Copy + Default + Send + Sync>(
    streams: Streams<'_, R>,
    dispatchers: &mut [&mut dyn Dispatcher<R>],
    k: usize,
    factory: &WorkerFactory<'_, R>,
    placement: Placement,
    shift: usize,
) -> Accounting {
    let k = k.max(1);
    assert!(!dispatchers.is_empty(), "a threaded run needs a dispatcher");
    let shares = dispatcher_shares(streams.counted, dispatchers.len());
    // Fewer shares than dispatchers only when there are fewer requests: the rest stay idle.
    let d = shares.len();
    let mut cpus = allowed_cpus();
    let n = cpus.len().max(1);
    cpus.rotate_left(shift % n);
    if placement == Placement::OneCorePerWorker && d == 1 && k == cpus.len() {
        return run_threaded_in_worker(streams, &mut *dispatchers[0], k, factory, &cpus);
    }
    let worker_cpu = |i: usize| -> Option<usize> {
        match placement {
            Placement::SingleCore => Some(cpus[0]),
            Placement::OneCorePerWorker if k <= cpus.len() => Some(cpus[i]),
            Placement::OneCorePerWorker => None,
        }
    };
    let dispatcher_cpu = |j: usize| -> Option<usize> {
        match placement {
            Placement::SingleCore => cpus.get(1 + j).copied(),
            Placement::OneCorePerWorker => cpus.get(k + j).copied(),
        }
    };
    let dedicated = placement == Placement::OneCorePerWorker && dispatcher_cpu(d - 1).is_some();

    // Ring (j, i) carries dispatcher j's batches to worker i; its recycle ring brings the vectors back.
    let mut inboxes: Vec<Vec<Inbox<R>>> = (0..k).map(|_| Vec::with_capacity(d)).collect();
    let mut all_ends = Vec::with_capacity(d);
    for _ in 0..d {
        let (ends, worker_ends) = rings(k);
        all_ends.push(ends);
        for (inbox, end) in inboxes.iter_mut().zip(worker_ends) {
            inbox.push(end);
        }
    }

    let ready = Barrier::new(k + d);
    let started = AtomicUsize::new(0);
    let wait_for_workers = !streams.warmup.is_empty() || d > 1;

    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(k);
        for (i, mut inbox) in inboxes.into_iter().enumerate() {
            let (ready, started, cpu) = (&ready, &started, worker_cpu(i));
            handles.push(s.spawn(move || {
                if let Some(c) = cpu {
                    pin_current_thread(c);
                }
                let mut worker = factory(i);
                ready.wait();
                serve_inboxes(worker.as_mut(), &mut inbox, started, dedicated)
            }));
        }

        let mut sides = Vec::with_capacity(d);
        for (j, ((dispatcher, share), ends)) in dispatchers.iter_mut().zip(&shares).zip(all_ends).enumerate() {
            let (ready, started, cpu) = (&ready, &started, dispatcher_cpu(j));
            let dispatcher: &mut dyn Dispatcher<R> = &mut **dispatcher;
            sides.push(s.spawn(move || {
                if let Some(c) = cpu {
                    pin_current_thread(c);
                }
                ready.wait();
                let mut rings = Rings::new(ends, k, false);
                if j == 0 {
                    rings.send(streams.warmup, dispatcher, None);
                } else {
                    // Only this dispatcher's own state warms up; the workers get dispatcher 0's.
                    let (mut dispatched, mut batches) = (vec![0u64; k], Batches::new(k));
                    route_into_batches(dispatcher, streams.warmup, &mut dispatched, &mut batches, |_, _| {});
                }
                rings.broadcast(|| Message::Start);
                if wait_for_workers {
                    // The clock starts once every worker has drained its warm-up.
                    let mut backoff = Backoff::new();
                    while started.load(Ordering::Acquire) < k && !rings.worker_gone() {
                        backoff.snooze();
                    }
                }
                let t_start = Instant::now();
                let c0 = thread_cpu_ns();
                rings.blocked_ns = 0;
                rings.send(share, dispatcher, None);
                let dispatcher_cpu_ns = thread_cpu_ns() - c0;
                let dispatcher_blocked_ns = rings.blocked_ns;
                rings.broadcast(|| Message::Stop);
                (t_start, dispatcher_cpu_ns, dispatcher_blocked_ns)
            }));
        }

        let sides: Vec<(Instant, u64, u64)> =
            sides.into_iter().map(|h| h.join().expect("dispatcher thread panicked")).collect();
        let t_start = sides.iter().map(|s| s.0).min().expect("at least one dispatcher");
        let outcomes: Vec<Outcome> = handles.into_iter().map(|h| h.join().expect("worker thread panicked")).collect();
        let end = outcomes.iter().filter_map(|o| o.end).max().unwrap_or(t_start);
        let wall_ns = end.saturating_duration_since(t_start).as_nanos() as u64;
        let mut accounting = into_accounting(
            k,
            streams.counted.len(),
            sides.iter().map(|s| s.1).max().unwrap_or(0),
            outcomes,
            Some(Threaded {
                wall_ns,
                dispatcher_blocked_ns: sides.iter().map(|s| s.2).max().unwrap_or(0),
                dispatcher_shares_core: dispatcher_cpu(d - 1).is_none(),
            }),
        );
        accounting.dispatchers = d;
        accounting.dispatcher_cpu_total_ns = sides.iter().map(|s| s.1).sum();
        accounting
    })
}

/// A worker's counts over the counted requests, kept alike by every worker thread.
#[derive(Default)]
pub(super) struct Tally {
    measuring: bool,
    work: u64,
    served: u64,
    /// Wall-clock time inside `serve_batch`.
    serve_wall_ns: u64,
    last_served: Option<Instant>,
    hits0: Option<u64>,
    moved0: Option<u64>,
}

impl Tally {
    /// Counting begins: the worker's cumulative counters are read as the zero.
    fn start<R>(&mut self, worker: &dyn Worker<R>) {
        self.measuring = true;
        self.hits0 = worker.hits();
        self.moved0 = worker.entries_moved();
    }

    pub(super) fn serve<R>(&mut self, worker: &mut dyn Worker<R>, batch: &[R]) {
        if !self.measuring {
            worker.serve_batch(batch);
            return;
        }
        let began = Instant::now();
        self.work += worker.serve_batch(batch);
        let now = Instant::now();
        self.serve_wall_ns += now.duration_since(began).as_nanos() as u64;
        self.served += batch.len() as u64;
        self.last_served = Some(now);
    }

    fn outcome<R>(&self, worker: &dyn Worker<R>, cpu_ns: u64) -> Outcome {
        Outcome {
            cpu_ns,
            work: self.work,
            served: self.served,
            hits: counter_delta(worker.hits(), self.hits0),
            moved: counter_delta(worker.entries_moved(), self.moved0),
            end: self.last_served,
            serve_wall_ns: self.serve_wall_ns,
        }
    }
}

/// A worker thread's loop in a threaded run: serves the batches of its D rings (one per
/// dispatcher) as they arrive, counting from the D-th `Start` (every dispatcher's warm-up served)
/// to the D-th `Stop`.
fn serve_inboxes<R>(
    worker: &mut dyn Worker<R>,
    inbox: &mut [Inbox<R>],
    started: &AtomicUsize,
    dedicated: bool,
) -> Outcome {
    let d = inbox.len();
    let (mut tally, mut t0, mut starts, mut stops) = (Tally::default(), 0, 0, 0);
    // Per dispatcher: whether its Start and its Stop have come (each is counted once).
    let (mut started_by, mut stopped_by) = (vec![false; d], vec![false; d]);
    // Spinning only where the worker and the dispatchers each have a core: with k ≥ CPUs a
    // dispatcher thread shares a worker's core, and a worker spinning on an empty ring would take
    // the dispatcher's time (halving the measured speedup of workers faster than the dispatcher).
    let mut backoff = Backoff::waiting(dedicated);
    loop {
        let mut idle = true;
        for (j, (rx, back)) in inbox.iter_mut().enumerate() {
            let (start, stop) = match rx.pop() {
                Ok(Message::Batch(mut batch)) => {
                    idle = false;
                    tally.serve(worker, &batch);
                    batch.clear();
                    let _ = back.push(batch);
                    (false, false)
                }
                Ok(Message::Start) => (true, false),
                Ok(Message::Stop) => (false, true),
                // A dispatcher gone without its Stop (its thread panicked): nothing more comes
                // once its ring, abandoned, is empty. It counts as started and stopped, so that
                // neither this worker nor the other dispatchers wait for it forever.
                Err(_) if !stopped_by[j] && rx.is_abandoned() && rx.is_empty() => (true, true),
                Err(_) => (false, false),
            };
            if start && !started_by[j] {
                idle = false;
                started_by[j] = true;
                starts += 1;
                // Measuring begins once every dispatcher's warm-up is served.
                if starts == d {
                    tally.start(worker);
                    t0 = thread_cpu_ns();
                    started.fetch_add(1, Ordering::Release);
                }
            }
            if stop && !stopped_by[j] {
                idle = false;
                stopped_by[j] = true;
                stops += 1;
            }
        }
        if stops == d {
            // Idle waiting after the last batch is not part of the run.
            return tally.outcome(worker, thread_cpu_ns() - t0);
        }
        if idle {
            backoff.snooze();
        } else {
            backoff.reset();
        }
    }
}

/// Threaded run for k workers on k CPUs with one dispatcher and no CPU left for it: the
/// dispatcher routes inside worker 0's thread, serving worker 0's batches itself as they fill
/// and pushing the others' through their rings, as a receive core that also serves does. A
/// dispatcher thread of its own would share a worker's core, and the CPUs would idle in the
/// scheduler's hand-overs between three threads on two of them (docs/design.md); this gives
/// each worker a core of its own and adds the dispatch to worker 0's, the projection's serial
/// dispatch plus the slowest worker when worker 0 is the slowest.
/// Every thread spins while it waits (each has its core). The thread's CPU time over the counted
/// requests is shared out between worker 0's serving, the waits on full rings and the dispatch
/// in proportion to the wall clock each took: worker 0's CPU time is its serving's share, the
/// dispatcher's what is left.
pub(super) fn run_threaded_in_worker<R: Copy + Default + Send + Sync>(
    streams: Streams<'_, R>,
    dispatcher: &mut dyn Dispatcher<R>,
    k: usize,
    factory: &WorkerFactory<'_, R>,
    cpus: &[usize],
) -> Accounting {
    let (ends, inboxes) = rings(k - 1);
    let ready = Barrier::new(k);
    let started = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(k - 1);
        for (i, inbox) in inboxes.into_iter().enumerate() {
            let (ready, started, cpu) = (&ready, &started, cpus.get(i + 1).copied());
            handles.push(s.spawn(move || {
                if let Some(c) = cpu {
                    pin_current_thread(c);
                }
                let mut worker = factory(i + 1);
                ready.wait();
                serve_inboxes(worker.as_mut(), &mut [inbox], started, true)
            }));
        }
        // Worker 0's thread, which routes: spawned like the others, so that the caller's own
        // CPU affinity is left as it was.
        let (ready, started) = (&ready, &started);
        let side = s.spawn(move || {
            if let Some(&c) = cpus.first() {
                pin_current_thread(c);
            }
            let mut worker = factory(0);
            let mut tally = Tally::default();
            ready.wait();
            let mut rings = Rings::new(ends, k, true);
            // A panic while routing or serving still sends every other worker its Stop, so that
            // they end (each spins on its core until then) and the panic reaches the caller.
            let routed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                rings.send(streams.warmup, dispatcher, Some((worker.as_mut(), &mut tally)));
                rings.broadcast(|| Message::Start);
                if !streams.warmup.is_empty() {
                    // The clock starts once every other worker has drained its warm-up.
                    while started.load(Ordering::Acquire) < k - 1 && !rings.worker_gone() {
                        std::hint::spin_loop();
                    }
                }
                tally.start(worker.as_ref());
                rings.blocked_ns = 0;
                let t_start = Instant::now();
                let c0 = thread_cpu_ns();
                rings.send(streams.counted, dispatcher, Some((worker.as_mut(), &mut tally)));
                (thread_cpu_ns() - c0, t_start.elapsed().as_nanos() as u64, rings.blocked_ns, t_start)
            }));
            rings.broadcast(|| Message::Stop);
            let (thread_ns, thread_wall_ns, blocked_ns, t_start) =
                routed.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            // Worker 0's serving and the waits on full rings are timed by the wall clock (a CPU
            // clock read per batch would cost a system call per 256 requests). The thread's CPU
            // time is shared out in proportion to the wall clock of each part, so that a
            // preemption falls on each alike: taken whole off the dispatch, one inside a batch
            // left the dispatch 0 ns.
            let on_cpu = |wall: u64| (wall as u128 * thread_ns as u128 / thread_wall_ns.max(1) as u128) as u64;
            let serve_ns = on_cpu(tally.serve_wall_ns).min(thread_ns);
            let dispatcher_cpu_ns = thread_ns.saturating_sub(serve_ns).saturating_sub(on_cpu(blocked_ns));
            let first = tally.outcome(worker.as_ref(), serve_ns);
            (first, dispatcher_cpu_ns, blocked_ns, t_start)
        });
        let (first, dispatcher_cpu_ns, blocked_ns, t_start) = side.join().expect("dispatching worker thread panicked");
        let mut outcomes = vec![first];
        outcomes.extend(handles.into_iter().map(|h| h.join().expect("worker thread panicked")));
        let end = outcomes.iter().filter_map(|o| o.end).max().unwrap_or(t_start);
        let wall_ns = end.saturating_duration_since(t_start).as_nanos() as u64;
        into_accounting(
            k,
            streams.counted.len(),
            dispatcher_cpu_ns,
            outcomes,
            Some(Threaded { wall_ns, dispatcher_blocked_ns: blocked_ns, dispatcher_shares_core: true }),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::Spinner;
    use super::*;
    use crate::dispatch::{RoundRobinDispatcher, WorkerLoads};
    use std::sync::Mutex;

    /// Panics on its `after`-th request.
    struct PanicsAfter {
        after: u64,
    }
    impl Worker for PanicsAfter {
        fn serve(&mut self, _: &u64) -> u64 {
            self.after = self.after.checked_sub(1).expect("this worker fails on purpose");
            1
        }
    }
    impl Dispatcher for PanicsAfter {
        fn route(&mut self, _: &u64, _: &WorkerLoads<'_>) -> usize {
            self.after = self.after.checked_sub(1).expect("this dispatcher fails on purpose");
            0
        }
    }

    /// Runs k workers, worker `failing` of which panics on its `after`-th request, with
    /// `dispatchers` round-robin dispatchers, or one that panics on its `after`-th request when
    /// `failing` is `None`; true when the panic reached the caller, false when the run ended
    /// without one; a run still going after a minute fails the test (it hangs).
    fn panic_reaches_the_caller(k: usize, dispatchers: usize, failing: Option<usize>, after: u64) -> bool {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let warmup: Vec<u64> = (0..2_000u64).collect();
            let requests: Vec<u64> = (0..50_000u64).collect();
            let streams = Streams { warmup: &warmup, counted: &requests };
            let factory = |i: usize| -> Box<dyn Worker> {
                if Some(i) == failing {
                    Box::new(PanicsAfter { after })
                } else {
                    Box::new(Spinner { per_request: 10, burst: 0 })
                }
            };
            let make = || -> Box<dyn Dispatcher> {
                match failing {
                    Some(_) => Box::new(RoundRobinDispatcher::new(k)),
                    None => Box::new(PanicsAfter { after }),
                }
            };
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let (placement, window) = (Placement::OneCorePerWorker, Duration::ZERO);
                run_threaded_dispatchers_within(streams, &make, k, &factory, placement, window, dispatchers)
            }));
            let _ = tx.send(run.is_err());
        });
        rx.recv_timeout(Duration::from_secs(60)).expect("the run ended within a minute")
    }

    #[test]
    fn a_panic_in_any_thread_of_a_measured_run_ends_the_run_instead_of_leaving_the_others_waiting() {
        let n = allowed_cpus().len();
        // k = n: worker 0's thread routes; k = n - 1: a dispatcher thread of its own; k = n + 1:
        // more workers than CPUs. Worker 0 (which routes at k = n), the last worker (whose full
        // ring the router waits on), in the warm-up (while the router waits for every worker to
        // start) or after it, and the dispatcher itself.
        for k in [n, n - 1, n + 1].into_iter().filter(|&k| k >= 1) {
            for after in [1_000, 30_000 / k as u64] {
                assert!(panic_reaches_the_caller(k, 1, Some(0), after), "worker 0 of {k}, after {after}");
                assert!(panic_reaches_the_caller(k, 1, Some(k - 1), after), "worker {} of {k}, after {after}", k - 1);
                assert!(panic_reaches_the_caller(k, 1, None, after), "the dispatcher of {k}, after {after}");
            }
        }
        // Two dispatchers: one fails before its Start, and the other waits for every worker.
        assert!(panic_reaches_the_caller(2, 2, None, 100), "one of two dispatchers");
        assert!(panic_reaches_the_caller(2, 2, Some(1), 1_000), "a worker of two dispatchers");
    }

    #[test]
    fn a_windows_threaded_runs_place_each_worker_on_the_allowed_cpus_in_turn() {
        let cpus = allowed_cpus();
        if cpus.len() < 2 {
            return; // one CPU: every placement is the same
        }
        let requests: Vec<u64> = (0..2_000u64).collect();
        let streams = Streams { warmup: &[], counted: &requests };
        // The factory runs in the worker's thread after it is pinned: record where worker 0 is.
        let seen = Mutex::new(Vec::new());
        let factory = |i: usize| -> Box<dyn Worker> {
            if i == 0 {
                // SAFETY: sched_getcpu takes no arguments and only reads the calling thread's CPU.
                let cpu = unsafe { libc::sched_getcpu() };
                seen.lock().expect("no poisoned lock").push(cpu as usize);
            }
            Box::new(Spinner { per_request: 10, burst: 0 })
        };
        let rr = || -> Box<dyn Dispatcher> { Box::new(RoundRobinDispatcher::new(1)) };
        let acc =
            run_threaded_within(streams, &rr, 1, &factory, Placement::OneCorePerWorker, Duration::from_secs(3600));
        assert_eq!(acc.worker_runs, vec![MAX_WINDOW_PASSES as u32]);
        // Run r puts worker 0 on the r-th allowed CPU (modulo their number).
        let want: Vec<usize> = (0..MAX_WINDOW_PASSES).map(|r| cpus[r % cpus.len()]).collect();
        assert_eq!(seen.into_inner().expect("no poisoned lock"), want);
    }
}
