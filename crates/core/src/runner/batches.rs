//! Request batching: the dispatch loop every runner shares, routing requests a chunk at a time
//! into per-worker batches ([`Batches`], [`route_into_batches`]).

use crate::dispatch::Dispatcher;
use crate::prefetch::prefetch_slice;

/// Requests per batch pushed through a ring.
pub const BATCH: usize = 256;

/// Requests routed per call of [`Dispatcher::route_chunk`].
pub(super) const CHUNK: usize = 1024;

/// The per-worker batches a dispatcher appends to: one flat array, worker w's batch of [`BATCH`]
/// requests at `w * STRIDE`, and the index of each batch's next free slot. An append is one
/// store and one index update (a `Vec::push` would also check capacity on every request).
pub struct Batches<R> {
    slots: Vec<R>,
    next: Vec<u32>,
}

impl<R: Copy + Default> Batches<R> {
    /// Empty batches for k workers.
    pub fn new(k: usize) -> Self {
        assert!(k * Self::STRIDE < u32::MAX as usize, "too many workers for one dispatcher's batches");
        Self { slots: vec![R::default(); k * Self::STRIDE], next: (0..k).map(|w| (w * Self::STRIDE) as u32).collect() }
    }

    /// A batch and one cache line: batches a power of two apart would put every worker's next
    /// slot in the same few L1 sets when they fill in step (round-robin).
    const STRIDE: usize = BATCH + 64 / if std::mem::size_of::<R>() == 0 { 1 } else { std::mem::size_of::<R>() };

    /// Requests waiting in worker w's batch.
    fn len(&self, w: usize) -> usize {
        self.next[w] as usize - w * Self::STRIDE
    }

    /// Hands every non-empty batch to `full` and empties it.
    pub fn drain(&mut self, mut full: impl FnMut(usize, &[R])) {
        for w in 0..self.next.len() {
            let start = w * Self::STRIDE;
            if self.len(w) > 0 {
                full(w, &self.slots[start..self.next[w] as usize]);
                self.next[w] = start as u32;
            }
        }
    }
}

/// The dispatcher's serial work, the same in every runner: routes `requests` a chunk at a time
/// and appends each to its worker's batch, handing a batch to `full` as soon as it holds
/// [`BATCH`] requests (the threaded runner pushes it through the worker's ring; the projected
/// runner and the benchmark drop it at once). Batches are reused memory, as ring slots are, so
/// the dispatcher is charged for routing and a cache-resident append, not for writing whole
/// materialised streams out to DRAM. Batches left partly filled stay for the next call.
///
/// The next chunk of requests is prefetched while one is routed, as a receive loop prefetches
/// its ring ([`crate::prefetch`]). A dispatcher that does not read loads routes a chunk with
/// [`Dispatcher::assign_chunk`] and `dispatched` is derived from the batches (each count is
/// exact when this returns).
pub fn route_into_batches<R: Copy + Default>(
    dispatcher: &mut dyn Dispatcher<R>,
    requests: &[R],
    dispatched: &mut [u64],
    batches: &mut Batches<R>,
    mut full: impl FnMut(usize, &[R]),
) {
    let load_aware = dispatcher.load_aware();
    if !load_aware {
        // Counted below as batches fill: take off what the batches already hold, add it back
        // (with what was appended) at the end.
        for (w, d) in dispatched.iter_mut().enumerate() {
            *d = d.wrapping_sub(batches.len(w) as u64);
        }
    }
    let mut workers = [0u32; CHUNK];
    let mut chunks = requests.chunks(CHUNK).peekable();
    while let Some(chunk) = chunks.next() {
        if crate::cancel::requested() {
            break;
        }
        if let Some(ahead) = chunks.peek() {
            prefetch_slice(ahead);
        }
        let workers = &mut workers[..chunk.len()];
        if load_aware {
            dispatcher.route_chunk(chunk, dispatched, workers);
        } else {
            dispatcher.assign_chunk(chunk, workers);
        }
        for (&r, &w) in chunk.iter().zip(workers.iter()) {
            let w = w as usize;
            let at = batches.next[w] as usize;
            batches.slots[at] = r;
            let start = w * Batches::<R>::STRIDE;
            if at + 1 - start == BATCH {
                full(w, &batches.slots[start..=at]);
                batches.next[w] = start as u32;
                if !load_aware {
                    dispatched[w] = dispatched[w].wrapping_add(BATCH as u64);
                }
            } else {
                batches.next[w] = at as u32 + 1;
            }
        }
    }
    if !load_aware {
        for (w, d) in dispatched.iter_mut().enumerate() {
            *d = d.wrapping_add(batches.len(w) as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::{KeyHashDispatcher, RoundRobinDispatcher, WorkerLoads};

    /// Sends each request to the least-loaded worker: reads the counts while routing.
    struct LeastLoaded;
    impl Dispatcher for LeastLoaded {
        fn route(&mut self, _: &u64, loads: &WorkerLoads<'_>) -> usize {
            (0..loads.dispatched.len()).min_by_key(|&w| loads.dispatched[w]).unwrap_or(0)
        }
        fn load_aware(&self) -> bool {
            true
        }
    }

    /// Streams of `requests` in the order `route_into_batches` hands them on, over two calls of
    /// odd lengths (batches left partly filled in between), with the counts it kept.
    fn batched(d: &mut dyn Dispatcher, k: usize, requests: &[u64]) -> (Vec<Vec<u64>>, Vec<u64>) {
        let mut streams = vec![Vec::new(); k];
        let mut dispatched = vec![0u64; k];
        let mut batches = Batches::new(k);
        let (a, b) = requests.split_at(requests.len() / 3);
        for part in [a, b] {
            route_into_batches(d, part, &mut dispatched, &mut batches, |w, batch| {
                assert_eq!(batch.len(), BATCH);
                streams[w].extend_from_slice(batch);
            });
        }
        batches.drain(|w, batch| streams[w].extend_from_slice(batch));
        (streams, dispatched)
    }

    /// Each request to `route` in turn, counting as a reference.
    fn one_by_one(d: &mut dyn Dispatcher, k: usize, requests: &[u64]) -> (Vec<Vec<u64>>, Vec<u64>) {
        let mut streams = vec![Vec::new(); k];
        let mut dispatched = vec![0u64; k];
        for r in requests {
            let w = d.route(r, &WorkerLoads { dispatched: &dispatched });
            dispatched[w] += 1;
            streams[w].push(*r);
        }
        (streams, dispatched)
    }

    #[test]
    fn batching_routes_and_counts_like_routing_one_by_one() {
        let requests: Vec<u64> = (0..20_011u64).map(|i| i.wrapping_mul(0x9e37_79b9) % 5_000).collect();
        for k in [1, 2, 7, 48] {
            let builds: [fn(usize) -> Box<dyn Dispatcher>; 3] = [
                |k| Box::new(KeyHashDispatcher::new(k, 3)),
                |k| Box::new(RoundRobinDispatcher::new(k)),
                |_| Box::new(LeastLoaded),
            ];
            for build in builds {
                let (streams, counts) = batched(build(k).as_mut(), k, &requests);
                let (expected, expected_counts) = one_by_one(build(k).as_mut(), k, &requests);
                assert_eq!(counts, expected_counts, "k = {k}");
                assert_eq!(streams, expected, "k = {k}");
                assert_eq!(counts.iter().sum::<u64>(), requests.len() as u64);
            }
        }
    }
}
