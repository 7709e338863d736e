//! The SPSC rings of a threaded run and the waiting on them: [`Backoff`], the [`Message`]s a
//! ring carries, and [`Rings`], a routing thread's side of its rings to the workers.

use super::threaded::Tally;
use super::{route_into_batches, Batches, BATCH};
use crate::dispatch::Dispatcher;
use crate::worker::Worker;
use std::time::{Duration, Instant};

/// Batches a ring holds.
pub const RING_BATCHES: usize = 64;

/// Waits ever longer: spin briefly, then yield, then sleep, so that a waiting thread neither
/// adds latency on a dedicated core nor steals a shared one.
pub(super) struct Backoff {
    step: u32,
    shared: bool,
}

impl Backoff {
    pub(super) fn new() -> Self {
        Self { step: 0, shared: true }
    }
    /// A backoff that only spins: for a worker pinned to a core of its own, where sleeping would
    /// add wake-up latency to the measured wall clock, and a yield would hand the core to any
    /// other runnable task (a background job included) for a whole time slice. Only where the
    /// dispatcher has a core of its own as well: a dispatcher sharing the core is runnable
    /// whenever the worker waits for it, and a spinning worker takes its time.
    fn dedicated() -> Self {
        Self { step: 0, shared: false }
    }
    /// [`Backoff::dedicated`] for a thread with a core of its own (`spin`), else [`Backoff::new`].
    pub(super) fn waiting(spin: bool) -> Self {
        if spin {
            Self::dedicated()
        } else {
            Self::new()
        }
    }
    pub(super) fn reset(&mut self) {
        self.step = 0;
    }
    pub(super) fn snooze(&mut self) {
        if self.step < 6 || !self.shared {
            for _ in 0..(1u32 << self.step.min(6)) {
                std::hint::spin_loop();
            }
        } else if self.step < 12 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(20 << (self.step - 12).min(5)));
        }
        self.step = self.step.saturating_add(1);
    }
}

/// A worker's end of one dispatcher's ring: the batches in, the emptied vectors back.
pub(super) type Inbox<R> = (rtrb::Consumer<Message<R>>, rtrb::Producer<Vec<R>>);

pub(super) enum Message<R> {
    Batch(Vec<R>),
    Start,
    Stop,
}

/// Pushes `msg`, waiting while the ring is full; returns the nanoseconds it waited (0 without a
/// clock read when the ring had room). A full ring whose worker is gone (its thread panicked and
/// dropped its end) drops the message instead of waiting forever; the caller's join of that
/// worker then reports the panic.
fn push_blocking<R>(ring: &mut rtrb::Producer<Message<R>>, mut msg: Message<R>, mut backoff: Backoff) -> u64 {
    let mut blocked_since = None;
    let waited = |since: Option<Instant>| since.map_or(0, |t| t.elapsed().as_nanos() as u64);
    loop {
        match ring.push(msg) {
            Ok(()) => return waited(blocked_since),
            Err(rtrb::PushError::Full(_)) if ring.is_abandoned() => return waited(blocked_since),
            Err(rtrb::PushError::Full(m)) => {
                msg = m;
                blocked_since.get_or_insert_with(Instant::now);
                backoff.snooze();
            }
        }
    }
}

/// The dispatcher's side of the rings: one batch per worker being filled, and vectors coming back.
pub(super) struct Rings<R> {
    /// Ring i carries the batches of worker `dispatched.len() - producers.len() + i`: every
    /// worker's, or all but worker 0's where the routing thread serves worker 0 itself.
    producers: Vec<rtrb::Producer<Message<R>>>,
    recycled: Vec<rtrb::Consumer<Vec<R>>>,
    batches: Batches<R>,
    dispatched: Vec<u64>,
    /// Time blocked on full rings since the last reset.
    pub(super) blocked_ns: u64,
    /// Whether the routing thread spins while a ring is full (it has a core of its own).
    spin: bool,
}

/// The dispatcher's ends of rings to workers: batches out, emptied vectors back.
pub(super) type RingEnds<R> = (Vec<rtrb::Producer<Message<R>>>, Vec<rtrb::Consumer<Vec<R>>>);

/// `n` rings: the dispatcher's ends and each worker's inbox.
pub(super) fn rings<R>(n: usize) -> (RingEnds<R>, Vec<Inbox<R>>) {
    let (mut producers, mut recycled, mut inboxes) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        let (p, c) = rtrb::RingBuffer::<Message<R>>::new(RING_BATCHES);
        let (back_p, back_c) = rtrb::RingBuffer::<Vec<R>>::new(RING_BATCHES + 2);
        producers.push(p);
        recycled.push(back_c);
        inboxes.push((c, back_p));
    }
    ((producers, recycled), inboxes)
}

impl<R: Copy + Default> Rings<R> {
    /// A routing thread's side for k workers over `ends` (to the last of them); built in the
    /// thread that routes, so that its batches are that thread's memory.
    pub(super) fn new((producers, recycled): RingEnds<R>, k: usize, spin: bool) -> Self {
        Rings { producers, recycled, batches: Batches::new(k), dispatched: vec![0; k], blocked_ns: 0, spin }
    }

    /// Routes every request, pushing full batches as they fill, then flushes the rest; with
    /// `own`, worker 0's batches are served here on the spot
    /// ([`run_threaded_in_worker`](super::threaded::run_threaded_in_worker)).
    pub(super) fn send(
        &mut self,
        requests: &[R],
        dispatcher: &mut dyn Dispatcher<R>,
        mut own: Option<(&mut dyn Worker<R>, &mut Tally)>,
    ) {
        let Rings { producers, recycled, batches, dispatched, blocked_ns, spin } = self;
        let first_remote = dispatched.len() - producers.len();
        let mut full = |w: usize, batch: &[R]| match own.as_mut().filter(|_| w < first_remote) {
            Some((worker, tally)) => tally.serve(&mut **worker, batch),
            None => {
                let (producer, recycled) = (&mut producers[w - first_remote], &mut recycled[w - first_remote]);
                let mut vector = recycled.pop().unwrap_or_else(|_| Vec::with_capacity(BATCH));
                vector.extend_from_slice(batch);
                *blocked_ns += push_blocking(producer, Message::Batch(vector), Backoff::waiting(*spin));
            }
        };
        route_into_batches(dispatcher, requests, dispatched, batches, &mut full);
        batches.drain(full);
    }

    pub(super) fn broadcast(&mut self, message: impl Fn() -> Message<R>) {
        for p in self.producers.iter_mut() {
            self.blocked_ns += push_blocking(p, message(), Backoff::waiting(self.spin));
        }
    }

    /// Whether a worker's thread has ended early (it panicked and dropped its end of the ring):
    /// a routing thread waiting for the workers stops waiting then.
    pub(super) fn worker_gone(&self) -> bool {
        self.producers.iter().any(|p| p.is_abandoned())
    }
}
