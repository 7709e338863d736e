//! A bounded pool of PostgreSQL connections with prepared statements on each, and bounded
//! retries with exponential backoff when the database is unreachable or restarting. A pool of
//! n connections is "n PostgreSQL client threads" of the paper: at most n queries run at once;
//! further callers wait for a free connection. A timed run bounds the retries by its deadline
//! ([`PgPool::retry_until`]).

use super::conn::{PgConn, Row};
use super::dsn::Dsn;
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How often and how patiently to retry a query whose server is unreachable.
#[derive(Clone, Copy, Debug)]
pub struct RetryPolicy {
    /// Attempts in all (≥ 1).
    pub attempts: u32,
    /// First pause; doubled after every failed attempt.
    pub backoff: Duration,
    /// Longest pause.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self { attempts: 8, backoff: Duration::from_millis(25), max_backoff: Duration::from_millis(1000) }
    }
}

struct Slots {
    idle: Vec<PgConn>,
    open: usize,
}

/// A pool of at most `size` connections.
pub struct PgPool {
    dsn: Dsn,
    size: usize,
    timeout: Duration,
    retry: RetryPolicy,
    statements: Vec<(String, String)>,
    slots: Mutex<Slots>,
    freed: Condvar,
    retries: AtomicU64,
    queries: AtomicU64,
    /// Where retries stop, whatever attempts are left ([`PgPool::retry_until`]).
    retry_deadline: Mutex<Option<Instant>>,
}

/// Holds a pool's retry deadline; dropping it lifts the deadline.
pub struct RetryDeadline<'a> {
    pool: &'a PgPool,
}

impl RetryDeadline<'_> {
    /// Moves the deadline to now: the queries retrying stop at their next pause.
    pub fn end_now(&self) {
        *self.pool.retry_deadline.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
    }
}

impl Drop for RetryDeadline<'_> {
    fn drop(&mut self) {
        *self.pool.retry_deadline.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

impl PgPool {
    /// A pool for `dsn` of up to `size` connections, each preparing `statements` (name, SQL)
    /// when it opens. Opens one connection right away so that a bad DSN fails here.
    pub fn new(
        dsn: Dsn,
        size: usize,
        timeout: Duration,
        retry: RetryPolicy,
        statements: &[(&str, &str)],
    ) -> Result<Self> {
        if size == 0 {
            return Err(Error::config("a PostgreSQL pool needs at least one connection"));
        }
        let pool = Self {
            dsn,
            size,
            timeout,
            retry: RetryPolicy { attempts: retry.attempts.max(1), ..retry },
            statements: statements.iter().map(|(n, s)| (n.to_string(), s.to_string())).collect(),
            slots: Mutex::new(Slots { idle: Vec::new(), open: 0 }),
            freed: Condvar::new(),
            retries: AtomicU64::new(0),
            queries: AtomicU64::new(0),
            retry_deadline: Mutex::new(None),
        };
        let first = pool.open()?;
        let mut s = pool.slots.lock().unwrap_or_else(|p| p.into_inner());
        s.idle.push(first);
        s.open = 1;
        drop(s);
        Ok(pool)
    }

    /// The DSN (for messages).
    pub fn dsn(&self) -> &Dsn {
        &self.dsn
    }

    /// Connections at most.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Queries retried after a transient failure so far.
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }

    /// Queries run so far.
    pub fn queries(&self) -> u64 {
        self.queries.load(Ordering::Relaxed)
    }

    /// Stops every query's retries at `deadline` until the guard is dropped (one timed run at a
    /// time): a query still failing then fails at `deadline`, instead of spending the rest of its
    /// backoff (seconds) past the end of the run.
    pub fn retry_until(&self, deadline: Instant) -> RetryDeadline<'_> {
        *self.retry_deadline.lock().unwrap_or_else(|p| p.into_inner()) = Some(deadline);
        RetryDeadline { pool: self }
    }

    fn open_once(&self) -> Result<PgConn> {
        let mut c = PgConn::connect(&self.dsn, self.timeout)?;
        for (name, sql) in &self.statements {
            c.prepare(name, sql)?;
        }
        Ok(c)
    }

    /// Opens a connection, retrying transient failures (a busy or restarting server) with the
    /// pool's backoff.
    fn open(&self) -> Result<PgConn> {
        let mut pause = self.retry.backoff;
        let mut attempt = 1;
        loop {
            match self.open_once() {
                Err(e) if e.is_transient() && attempt < self.retry.attempts => {
                    self.retries.fetch_add(1, Ordering::Relaxed);
                    if !sleep_unless_stopped(pause) {
                        return Err(stopped(&self.dsn, attempt, e));
                    }
                    pause = (pause * 2).min(self.retry.max_backoff);
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    /// Opens connections until the pool holds `n` (≤ size), so that timed runs do not pay for
    /// connection setup.
    pub fn warm(&self, n: usize) -> Result<()> {
        let mut opened = Vec::new();
        loop {
            {
                let s = self.slots.lock().unwrap_or_else(|p| p.into_inner());
                if s.open + opened.len() >= n.min(self.size) {
                    break;
                }
            }
            opened.push(self.open()?);
        }
        let mut s = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        s.open += opened.len();
        s.idle.extend(opened);
        Ok(())
    }

    /// Backend process ids of the idle connections (all of them when nobody is querying).
    pub fn backend_pids(&self) -> Vec<i32> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner()).idle.iter().map(PgConn::backend_pid).collect()
    }

    fn checkout(&self) -> Result<PgConn> {
        let mut s = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(c) = s.idle.pop() {
                return Ok(c);
            }
            if s.open < self.size {
                s.open += 1;
                drop(s);
                // `with` retries a failed attempt as a whole: no retries of its own here.
                return self.open_once().inspect_err(|_| self.release(None));
            }
            s = self.freed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn release(&self, conn: Option<PgConn>) {
        let mut s = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        match conn {
            Some(c) if !c.is_broken() => s.idle.push(c),
            _ => s.open -= 1,
        }
        drop(s);
        self.freed.notify_one();
    }

    /// Runs `f` on a connection, retrying transient failures (unreachable server, restart,
    /// shutdown in progress) on fresh connections with exponential backoff, at most
    /// `retry.attempts` times in all; then fails with the last error and the attempt count.
    pub fn with<T>(&self, mut f: impl FnMut(&mut PgConn) -> Result<T>) -> Result<T> {
        let mut pause = self.retry.backoff;
        let started = Instant::now();
        let mut attempt = 1;
        loop {
            let result = match self.checkout() {
                Ok(mut c) => {
                    // After an error the server reported, the connection is back in sync and
                    // goes back to the pool; after a transport error it is broken and dropped.
                    let r = f(&mut c);
                    self.release(Some(c));
                    r
                }
                Err(e) => Err(e),
            };
            self.queries.fetch_add(1, Ordering::Relaxed);
            match result {
                Err(e) if e.is_transient() && attempt < self.retry.attempts => {
                    self.retries.fetch_add(1, Ordering::Relaxed);
                    self.drop_idle();
                    let deadline = *self.retry_deadline.lock().unwrap_or_else(|p| p.into_inner());
                    if let Some(end) = deadline.filter(|end| Instant::now() + pause >= *end) {
                        // Fails at the deadline, not before: a timed run counts a query that
                        // fails from then on as cut short by its end, not as failed.
                        sleep_unless_stopped(end.saturating_duration_since(Instant::now()));
                        return Err(Error::unavailable(
                            self.dsn.redacted(),
                            format!("stopped retrying at the run's deadline after {attempt} attempts: {e}"),
                        ));
                    }
                    if !sleep_unless_stopped(pause) {
                        return Err(stopped(&self.dsn, attempt, e));
                    }
                    pause = (pause * 2).min(self.retry.max_backoff);
                    attempt += 1;
                }
                Err(e) if e.is_transient() => {
                    return Err(Error::unavailable(
                        self.dsn.redacted(),
                        format!("gave up after {attempt} attempts in {:.1} s: {e}", started.elapsed().as_secs_f64()),
                    ))
                }
                other => return other,
            }
        }
    }

    /// Drops every idle connection (after a failure they may all point at a dead server).
    fn drop_idle(&self) {
        let mut s = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let n = s.idle.len();
        s.idle.clear();
        s.open -= n;
        drop(s);
        self.freed.notify_all();
    }

    /// Executes a prepared statement (see [`PgConn::execute`]) with retries.
    pub fn execute(&self, name: &str, params: &[Option<&[u8]>]) -> Result<Vec<Row>> {
        self.with(|c| c.execute(name, params))
    }
}

/// Slices of a backoff pause between two reads of the stop request.
const STOP_POLL: Duration = Duration::from_millis(50);

/// Sleeps `pause` unless a stop (Ctrl-C, SIGTERM) is requested meanwhile: false then, at most
/// [`STOP_POLL`] after it. A pause is up to the policy's `max_backoff` (1 s by default), and a run
/// must stop within a fraction of a second.
fn sleep_unless_stopped(pause: Duration) -> bool {
    sleep_unless(pause, superlinear_core::cancel::requested)
}

fn sleep_unless(pause: Duration, stop: impl Fn() -> bool) -> bool {
    let end = Instant::now() + pause;
    loop {
        if stop() {
            return false;
        }
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(STOP_POLL));
    }
}

/// The error of a query whose retries a stop request ended.
fn stopped(dsn: &Dsn, attempt: u32, last: Error) -> Error {
    Error::unavailable(dsn.redacted(), format!("stopped retrying after {attempt} attempts (interrupted): {last}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_ends_within_a_poll_of_a_stop_request() {
        let started = Instant::now();
        let calls = std::cell::Cell::new(0);
        // The stop arrives after the second read: the 10 s pause ends at about 50 ms.
        let slept = sleep_unless(Duration::from_secs(10), || {
            calls.set(calls.get() + 1);
            calls.get() > 2
        });
        assert!(!slept);
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        assert!(sleep_unless(Duration::from_millis(20), || false));
    }
}
