//! One memcached replica as the client sees it: its address, a pool of idle connections, and
//! its health. A replica that fails a request is marked down and skipped by the routers until a
//! probe finds it alive again; rejoining flushes it first (see `client.rs`: a replica that was
//! unreachable may hold copies that missed an invalidation) and bumps its epoch, so fills decided
//! before the rejoin are refused.

use super::conn::McConn;
use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Health of a replica as seen by this client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplicaState {
    Up,
    Down,
}

/// A memcached replica with its connection pool.
pub struct Replica {
    endpoint: Endpoint,
    name: String,
    timeout: Duration,
    idle: Mutex<Vec<McConn>>,
    down: AtomicBool,
    probing: AtomicBool,
    /// When the replica went down, and when to probe next (backoff doubles up to 1 s).
    down_info: Mutex<(Instant, Duration)>,
    epoch: AtomicU64,
    failures: AtomicU64,
}

impl Replica {
    /// A replica at `endpoint`; `timeout` bounds every connect, read and write.
    pub fn new(endpoint: Endpoint, timeout: Duration) -> Self {
        let name = endpoint.to_string();
        Self {
            endpoint,
            name,
            timeout,
            idle: Mutex::new(Vec::new()),
            down: AtomicBool::new(false),
            probing: AtomicBool::new(false),
            down_info: Mutex::new((Instant::now(), Duration::from_millis(20))),
            epoch: AtomicU64::new(0),
            failures: AtomicU64::new(0),
        }
    }

    /// The replica's address.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The replica's endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Up or down.
    pub fn state(&self) -> ReplicaState {
        if self.down.load(Ordering::Acquire) {
            ReplicaState::Down
        } else {
            ReplicaState::Up
        }
    }

    /// Whether requests may be sent to it.
    pub fn is_up(&self) -> bool {
        !self.down.load(Ordering::Acquire)
    }

    /// Incremented each time the replica rejoins: fills decided under an older epoch are refused.
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// Requests that failed on this replica (each marks it down).
    pub fn failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }

    /// Runs `f` on a pooled connection. A transport failure drops the connection and marks the
    /// replica down; a protocol error drops the connection only.
    pub fn with<T>(&self, f: impl FnOnce(&mut McConn) -> Result<T>) -> Result<T> {
        if !self.is_up() {
            return Err(Error::unavailable(&self.name, "marked down after a failure"));
        }
        self.with_any_state(f)
    }

    fn with_any_state<T>(&self, f: impl FnOnce(&mut McConn) -> Result<T>) -> Result<T> {
        let pooled = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut conn = match pooled {
            Some(c) => c,
            None => match McConn::connect(&self.endpoint, self.timeout) {
                Ok(c) => c,
                Err(e) => {
                    self.mark_down();
                    return Err(e);
                }
            },
        };
        match f(&mut conn) {
            Ok(v) => {
                self.idle.lock().unwrap_or_else(|p| p.into_inner()).push(conn);
                Ok(v)
            }
            Err(e) => {
                if matches!(e, Error::Unavailable { .. }) {
                    self.mark_down();
                }
                Err(e)
            }
        }
    }

    /// Marks the replica down and drops its idle connections (they point at a dead process).
    pub fn mark_down(&self) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        if !self.down.swap(true, Ordering::AcqRel) {
            *self.down_info.lock().unwrap_or_else(|p| p.into_inner()) = (Instant::now(), Duration::from_millis(20));
        }
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// If the replica is down and its next probe is due, one caller probes it: connect,
    /// `version`, `flush_all` (it may hold copies that missed invalidations while this client
    /// could not reach it), then marks it up with a new epoch. Returns true if it rejoined.
    pub fn try_rejoin(&self) -> bool {
        if self.is_up() {
            return false;
        }
        {
            let info = self.down_info.lock().unwrap_or_else(|p| p.into_inner());
            if info.0.elapsed() < info.1 {
                return false;
            }
        }
        if self.probing.swap(true, Ordering::AcqRel) {
            return false;
        }
        let ok = self.with_any_state(|c| {
            c.version()?;
            c.flush_all()
        });
        let rejoined = ok.is_ok();
        if rejoined {
            self.epoch.fetch_add(1, Ordering::AcqRel);
            self.down.store(false, Ordering::Release);
        } else {
            let mut info = self.down_info.lock().unwrap_or_else(|p| p.into_inner());
            *info = (Instant::now(), (info.1 * 2).min(Duration::from_secs(1)));
        }
        self.probing.store(false, Ordering::Release);
        rejoined
    }
}
