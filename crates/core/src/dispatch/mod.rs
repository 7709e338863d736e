//! Dispatchers (load balancers): which worker serves a request.
//!
//! One trait, generic over the request type so that packet dispatchers (RSS over header fields,
//! rule-aware partitioning) and load-aware ones (two-choice) plug into the same runner. Adding a
//! dispatcher means one new file here and one line in [`REGISTRY`].

mod key_hash;
mod random;
mod round_robin;

pub use key_hash::KeyHashDispatcher;
pub use random::RandomDispatcher;
pub use round_robin::RoundRobinDispatcher;

use crate::error::Error;

/// What a dispatcher may know about the workers when it decides: how many requests each has been
/// given so far. Load-aware dispatchers (two-choice) read it; the others ignore it.
pub struct WorkerLoads<'a> {
    /// Requests dispatched to each worker so far in this run.
    pub dispatched: &'a [u64],
}

/// The loads given to dispatchers that do not read them.
pub const NO_LOADS: WorkerLoads<'static> = WorkerLoads { dispatched: &[] };

/// A dispatcher splits one request stream into `k` streams.
pub trait Dispatcher<R = u64>: Send {
    /// The worker (in `0..k`) that serves `request`.
    fn route(&mut self, request: &R, loads: &WorkerLoads<'_>) -> usize;

    /// Routes a chunk of requests: `workers[i]` receives the worker of `requests[i]` and
    /// `dispatched` is kept up to date. The provided body is monomorphised per dispatcher, so
    /// runners pay one virtual call per chunk and `route` is inlined (the dispatcher is the
    /// serial fraction of every run: each nanosecond here caps the speedup). Dispatchers that
    /// are not load aware route through [`Dispatcher::assign_chunk`].
    fn route_chunk(&mut self, requests: &[R], dispatched: &mut [u64], workers: &mut [u32]) {
        if self.load_aware() {
            for (r, slot) in requests.iter().zip(workers.iter_mut()) {
                let w = self.route(r, &WorkerLoads { dispatched });
                dispatched[w] += 1;
                *slot = w as u32;
            }
        } else {
            self.assign_chunk(requests, workers);
            for &w in &workers[..requests.len()] {
                dispatched[w as usize] += 1;
            }
        }
    }

    /// Routes a chunk without counting: `workers[i]` receives the worker of `requests[i]`. Only
    /// for dispatchers that are not [load aware](Dispatcher::load_aware): `route` is given no
    /// loads. The runners' dispatch loop calls this and derives the counts from its batches, so
    /// a dispatcher that routes a chunk faster (vectorised hashing, prefetching) overrides it.
    fn assign_chunk(&mut self, requests: &[R], workers: &mut [u32]) {
        for (r, slot) in requests.iter().zip(workers.iter_mut()) {
            *slot = self.route(r, &NO_LOADS) as u32;
        }
    }

    /// Whether `route` reads [`WorkerLoads`] (two-choice and other load-aware dispatchers);
    /// the others let the runners skip per-request bookkeeping.
    fn load_aware(&self) -> bool {
        false
    }

    /// The worker that always receives `request`, if this dispatcher is key-affine (the same key
    /// always goes to the same worker). Sharded state is defined through it: a worker holds
    /// exactly the items whose home it is.
    fn home(&self, _request: &R) -> Option<usize> {
        None
    }
}

/// Builds a dispatcher for `k` workers from a seed.
pub type DispatcherConstructor = fn(k: usize, seed: u64) -> Box<dyn Dispatcher>;

/// One registry entry.
pub struct DispatcherEntry {
    /// Name on the command line and in result rows.
    pub name: &'static str,
    /// Other accepted spellings.
    pub aliases: &'static [&'static str],
    /// One line for `--help`.
    pub summary: &'static str,
    /// Whether the same key always goes to the same worker (locality-boosting).
    pub key_affine: bool,
    /// Whether its assignment draws on the run's seed.
    pub seeded: bool,
    /// The constructor.
    pub build: DispatcherConstructor,
}

/// Every key dispatcher.
pub const REGISTRY: &[DispatcherEntry] = &[
    DispatcherEntry {
        name: "rr",
        aliases: &["round-robin"],
        summary: "round-robin",
        key_affine: false,
        seeded: false,
        build: |k, _| Box::new(RoundRobinDispatcher::new(k)),
    },
    DispatcherEntry {
        name: "random",
        aliases: &["rand"],
        summary: "uniform random worker per request",
        key_affine: false,
        seeded: true,
        build: |k, s| Box::new(RandomDispatcher::new(k, s)),
    },
    DispatcherEntry {
        name: "hash",
        aliases: &["key-hash"],
        summary: "64-bit key hash (locality-boosting)",
        key_affine: true,
        seeded: true,
        build: |k, s| Box::new(KeyHashDispatcher::new(k, s)),
    },
];

/// Looks up a dispatcher by name or alias.
pub fn lookup(name: &str) -> Result<&'static DispatcherEntry, Error> {
    let name = name.trim();
    REGISTRY.iter().find(|e| e.name == name || e.aliases.contains(&name)).ok_or_else(|| {
        let known: Vec<&str> = REGISTRY.iter().map(|e| e.name).collect();
        Error::config(format!("unknown dispatcher '{name}' (known: {})", known.join(", ")))
    })
}
