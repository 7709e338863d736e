//! Delayed-hit coalescing (thesis ch. 2, "delayed hits"): while one request for a key is
//! fetching it from the database, later requests for the same key do not send their own query;
//! they wait for the fetch in flight and are served when it returns. They are neither plain hits
//! (they wait) nor misses (they cost the backend nothing): the statistics count them as delayed
//! hits.
//!
//! Coherence: a waiter states the oldest version it may accept (the version of the tombstone it
//! saw in the cache, see `coherence.rs`); a fetch that returns something older is not good enough
//! and the waiter reads the database itself. A writer detaches the key's flight before it
//! acknowledges, so requests arriving after the acknowledgement never join a fetch that may have
//! read the old row.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};

/// One fetch in flight; `T` is what it produces.
struct Flight<T> {
    result: Mutex<Option<T>>,
    done: Condvar,
}

/// How a caller was served by [`Flights::run`].
pub enum Joined<T> {
    /// This caller ran the fetch.
    Leader(T),
    /// This caller waited for another caller's fetch (a delayed hit).
    Waiter(T),
}

const SHARDS: usize = 64;

/// The flights of one shard of the key space.
type Shard<T> = Mutex<HashMap<Vec<u8>, Arc<Flight<T>>>>;

/// The fetches in flight, by key, sharded to keep the lock short and uncontended.
pub struct Flights<T> {
    shards: Vec<Shard<T>>,
}

impl<T: Clone> Default for Flights<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Clone> Flights<T> {
    /// No flights.
    pub fn new() -> Self {
        Self { shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect() }
    }

    fn shard(&self, hash: u64) -> &Shard<T> {
        &self.shards[(hash as usize) % SHARDS]
    }

    /// Runs `fetch` for `key` unless a fetch for it is already in flight, in which case waits for
    /// that one's result. `hash` is the key's hash (picks the shard).
    pub fn run(&self, key: &[u8], hash: u64, fetch: impl FnOnce() -> T) -> Joined<T> {
        let (flight, leader) = {
            let mut map = self.shard(hash).lock().unwrap_or_else(|p| p.into_inner());
            match map.get(key) {
                Some(f) => (f.clone(), false),
                None => {
                    let f = Arc::new(Flight { result: Mutex::new(None), done: Condvar::new() });
                    map.insert(key.to_vec(), f.clone());
                    (f, true)
                }
            }
        };
        if leader {
            let value = fetch();
            *flight.result.lock().unwrap_or_else(|p| p.into_inner()) = Some(value.clone());
            flight.done.notify_all();
            let mut map = self.shard(hash).lock().unwrap_or_else(|p| p.into_inner());
            if map.get(key).is_some_and(|f| Arc::ptr_eq(f, &flight)) {
                map.remove(key);
            }
            return Joined::Leader(value);
        }
        let mut slot = flight.result.lock().unwrap_or_else(|p| p.into_inner());
        while slot.is_none() {
            slot = flight.done.wait(slot).unwrap_or_else(|p| p.into_inner());
        }
        Joined::Waiter(slot.as_ref().cloned().expect("set before notify"))
    }

    /// Detaches the key's flight (a write to the key is about to be acknowledged): later callers
    /// start a fresh fetch; callers already waiting still get the detached one's result.
    pub fn detach(&self, key: &[u8], hash: u64) {
        self.shard(hash).lock().unwrap_or_else(|p| p.into_inner()).remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Barrier;

    #[test]
    fn concurrent_misses_share_one_fetch() {
        let flights = Arc::new(Flights::<u64>::new());
        let fetches = Arc::new(AtomicUsize::new(0));
        let barrier = Arc::new(Barrier::new(8));
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let (flights, fetches, barrier, gate) =
                    (flights.clone(), fetches.clone(), barrier.clone(), gate.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let r = flights.run(b"k", 1, || {
                        fetches.fetch_add(1, Ordering::SeqCst);
                        // Hold the fetch open until every thread has had time to join it.
                        let (m, cv) = &*gate;
                        let mut open = m.lock().unwrap();
                        while !*open {
                            open = cv.wait(open).unwrap();
                        }
                        42
                    });
                    matches!(r, Joined::Waiter(42))
                })
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(200));
        {
            let (m, cv) = &*gate;
            *m.lock().unwrap() = true;
            cv.notify_all();
        }
        let waiters = handles.into_iter().map(|h| h.join().unwrap()).filter(|&w| w).count();
        let fetched = fetches.load(Ordering::SeqCst);
        assert_eq!(fetched + waiters, 8);
        assert_eq!(fetched, 1, "all eight arrived while the first fetch was open");
    }

    #[test]
    fn detach_starts_a_new_fetch() {
        let flights = Flights::<u64>::new();
        assert!(matches!(flights.run(b"a", 0, || 1), Joined::Leader(1)));
        flights.detach(b"a", 0);
        assert!(matches!(flights.run(b"a", 0, || 2), Joined::Leader(2)));
    }
}
