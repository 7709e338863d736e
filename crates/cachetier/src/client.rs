//! The cache-aside client (paper App. B): a read goes to the replica the router picks; on a miss
//! it reads PostgreSQL with a prepared statement and sets the value back into that replica.
//! Concurrent misses on one key share one database read (delayed hits, `coalesce.rs`); writes go
//! to PostgreSQL and then through the two-phase coherence protocol (`coherence.rs`).
//!
//! Failures: a replica that fails is marked down; keys whose candidates are all down are served
//! straight from the database (and not cached), the other keys keep using their replicas; a down
//! replica is probed with backoff and rejoins after a flush. The database pool retries transient
//! failures with backoff, a bounded number of times, then reports one clear error.

use crate::coalesce::{Flights, Joined};
use crate::coherence::{self, Cached};
use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::loads::LoadCounters;
use crate::memcache::{McConn, Replica, SetMode};
use crate::pg::{Dsn, PgPool, RetryPolicy};
use crate::router::{self, key_hash, Router, View};
use crate::store;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use superlinear_core::cputime::thread_cpu_ns;

/// The key under which a replica records the table its entries came from. Every table holds the
/// same keys (row ids), so without it a bench of one table would be served another's entries.
/// The mark is an item of a row's size ([`table_mark`]): in memcached's slab class of the rows,
/// not one of its own, which would take a slab page (1 MB) of a small replica's memory.
pub const TABLE_MARK_KEY: &[u8; store::KEY_LEN] = b"~sl-table-mark~~";

/// The mark of `table`: its name padded with spaces to a row's value length, or, for a longer
/// name, its start, `~` and a hash of the whole name.
pub fn table_mark(table: &str) -> [u8; store::VALUE_LEN] {
    let mut out = [b' '; store::VALUE_LEN];
    let name = table.as_bytes();
    if name.len() <= out.len() {
        out[..name.len()].copy_from_slice(name);
    } else {
        let tail = format!("~{:016x}", key_hash(name));
        let head = out.len() - tail.len();
        out[..head].copy_from_slice(&name[..head]);
        out[head..].copy_from_slice(tail.as_bytes());
    }
    out
}

/// Everything a client needs.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// The memcached replicas.
    pub replicas: Vec<Endpoint>,
    /// Router name (`random`, `hash`, `distcache`).
    pub router: String,
    /// The database.
    pub dsn: Dsn,
    /// The table holding the rows.
    pub table: String,
    /// Database connections (the paper's "PostgreSQL client threads").
    pub db_connections: usize,
    /// Coalesce concurrent misses on a key into one database read.
    pub coalesce: bool,
    /// Bound on each connect, read and write.
    pub timeout: Duration,
    /// Database retries.
    pub retry: RetryPolicy,
    /// Seed of the routers' hash functions (all clients of one tier must agree on it).
    pub seed: u64,
    /// Aging window of the load counters.
    pub load_window: Duration,
}

impl ClientConfig {
    /// A configuration with the defaults: key hashing, 4 connections, coalescing on, 1 s
    /// timeouts, seed 1.
    pub fn new(replicas: Vec<Endpoint>, dsn: Dsn) -> Self {
        Self {
            replicas,
            router: "hash".into(),
            dsn,
            table: "superlinear_kv".into(),
            db_connections: 4,
            coalesce: true,
            timeout: Duration::from_secs(1),
            retry: RetryPolicy::default(),
            seed: 1,
            load_window: Duration::from_secs(1),
        }
    }
}

/// A value with its row version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Versioned {
    pub value: Vec<u8>,
    pub version: u64,
}

/// How a read was served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// From the cache.
    Hit,
    /// From the database (this read's own query); the value was offered back to the cache.
    Miss,
    /// From another read's database query in flight (coalesced).
    DelayedHit,
    /// From the database because no candidate replica was up.
    Bypass,
}

/// Counters of a client (all since creation or the last [`CacheAsideClient::reset_stats`]).
#[derive(Default)]
pub struct Stats {
    pub reads: AtomicU64,
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    pub delayed_hits: AtomicU64,
    pub bypass: AtomicU64,
    pub db_reads: AtomicU64,
    pub fills: AtomicU64,
    pub replica_errors: AtomicU64,
    pub writes: AtomicU64,
    pub invalidations: AtomicU64,
    pub updates: AtomicU64,
    /// Client CPU (ns, each thread's own clock) spent on reads past the cache: the database read
    /// and the fill of a miss, the wait of a delayed hit, a bypass. What a hit costs the client
    /// is the rest; the work kind of `reproduce fig11` needs the two apart (a closed-loop client
    /// thread's request path is longer on a miss). Two clock reads per read past the cache, none
    /// per hit, so hits keep their cost.
    pub miss_cpu_ns: AtomicU64,
}

/// A snapshot of [`Stats`].
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct StatsSnapshot {
    pub reads: u64,
    pub hits: u64,
    pub misses: u64,
    pub delayed_hits: u64,
    pub bypass: u64,
    pub db_reads: u64,
    pub fills: u64,
    pub replica_errors: u64,
    pub writes: u64,
    pub invalidations: u64,
    pub updates: u64,
    pub miss_cpu_ns: u64,
}

impl Stats {
    fn snapshot(&self) -> StatsSnapshot {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        StatsSnapshot {
            reads: g(&self.reads),
            hits: g(&self.hits),
            misses: g(&self.misses),
            delayed_hits: g(&self.delayed_hits),
            bypass: g(&self.bypass),
            db_reads: g(&self.db_reads),
            fills: g(&self.fills),
            replica_errors: g(&self.replica_errors),
            writes: g(&self.writes),
            invalidations: g(&self.invalidations),
            updates: g(&self.updates),
            miss_cpu_ns: g(&self.miss_cpu_ns),
        }
    }

    fn reset(&self) {
        for a in [
            &self.reads,
            &self.hits,
            &self.misses,
            &self.delayed_hits,
            &self.bypass,
            &self.db_reads,
            &self.fills,
            &self.replica_errors,
            &self.writes,
            &self.invalidations,
            &self.updates,
            &self.miss_cpu_ns,
        ] {
            a.store(0, Ordering::Relaxed);
        }
    }
}

fn bump(a: &AtomicU64) {
    a.fetch_add(1, Ordering::Relaxed);
}

type Fetch = std::result::Result<Option<Versioned>, Error>;

/// The multithreaded cache-aside client; share it between threads by reference or `Arc`.
pub struct CacheAsideClient {
    replicas: Vec<Replica>,
    router: Box<dyn Router>,
    db: PgPool,
    loads: LoadCounters,
    flights: Flights<Fetch>,
    coalesce: bool,
    stats: Stats,
    table: String,
}

impl CacheAsideClient {
    /// Connects to the database (failing fast on a bad DSN or a missing table's statements) and
    /// sets up the replicas (connected lazily).
    pub fn new(cfg: &ClientConfig) -> Result<Self> {
        store::check_table(&cfg.table)?;
        if cfg.replicas.is_empty() {
            return Err(Error::config("the cache tier needs at least one memcached replica"));
        }
        let router = router::build(&cfg.router, cfg.replicas.len(), cfg.seed)?;
        let statements = store::statements(&cfg.table);
        let refs: Vec<(&str, &str)> = statements.iter().map(|(n, s)| (*n, s.as_str())).collect();
        let db = PgPool::new(cfg.dsn.clone(), cfg.db_connections, cfg.timeout, cfg.retry, &refs)?;
        Ok(Self {
            replicas: cfg.replicas.iter().map(|e| Replica::new(e.clone(), cfg.timeout)).collect(),
            loads: LoadCounters::new(cfg.replicas.len(), cfg.load_window),
            router,
            db,
            flights: Flights::new(),
            coalesce: cfg.coalesce,
            stats: Stats::default(),
            table: cfg.table.clone(),
        })
    }

    /// The replicas.
    pub fn replicas(&self) -> &[Replica] {
        &self.replicas
    }

    /// The router.
    pub fn router(&self) -> &dyn Router {
        self.router.as_ref()
    }

    /// The database pool.
    pub fn db(&self) -> &PgPool {
        &self.db
    }

    /// The table name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// Load counters (requests served per replica).
    pub fn loads(&self) -> &LoadCounters {
        &self.loads
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> StatsSnapshot {
        self.stats.snapshot()
    }

    /// Zeroes the counters and the per-replica totals (start of a measured phase).
    pub fn reset_stats(&self) {
        self.stats.reset();
        self.loads.reset_totals();
    }

    fn pick(&self, hash: u64, rng: &mut u64) -> Option<usize> {
        for r in &self.replicas {
            if !r.is_up() {
                r.try_rejoin();
            }
        }
        let up = |i: usize| self.replicas[i].is_up();
        if self.router.load_aware() {
            self.loads.maybe_decay();
        }
        self.router.route(hash, &mut View { up: &up, loads: &self.loads, rng })
    }

    fn db_read(&self, key: &[u8]) -> Fetch {
        bump(&self.stats.db_reads);
        let rows = self.db.execute("sl_get", &[Some(key)])?;
        Ok(match rows.first() {
            None => None,
            Some(row) => {
                let value = row.0.first().cloned().flatten().unwrap_or_default();
                let version = row.int(1).unwrap_or(0).max(0) as u64;
                Some(Versioned { value, version })
            }
        })
    }

    /// Reads `key` from the database, sharing a read in flight when coalescing is on, and never
    /// accepting a version below `min_version`. Returns the row and whether this call queried.
    fn fetch(&self, key: &[u8], hash: u64, min_version: u64) -> Result<(Option<Versioned>, bool)> {
        if !self.coalesce {
            return Ok((self.db_read(key)?, true));
        }
        match self.flights.run(key, hash, || self.db_read(key)) {
            Joined::Leader(r) => Ok((r?, true)),
            Joined::Waiter(Ok(v)) if v.as_ref().map_or(0, |v| v.version) >= min_version => Ok((v, false)),
            // The shared read predates the write whose tombstone this reader saw: read again.
            Joined::Waiter(_) => Ok((self.db_read(key)?, true)),
        }
    }

    /// Reads a key: cache first, database on a miss. `rng` is the calling thread's random state
    /// (any u64; the random and DistCache routers draw from it). `None`: no such row.
    pub fn get(&self, key: &[u8], rng: &mut u64) -> Result<(Option<Versioned>, Outcome)> {
        let mut past_cache = None;
        let read = self.get_inner(key, rng, &mut past_cache);
        if let Some(cpu0) = past_cache {
            self.stats.miss_cpu_ns.fetch_add(thread_cpu_ns().saturating_sub(cpu0), Ordering::Relaxed);
        }
        read
    }

    /// [`Self::get`]; `past_cache` is set to the thread's CPU clock where the read leaves the
    /// cache for the database.
    fn get_inner(
        &self,
        key: &[u8],
        rng: &mut u64,
        past_cache: &mut Option<u64>,
    ) -> Result<(Option<Versioned>, Outcome)> {
        crate::memcache::check_key(key)?;
        bump(&self.stats.reads);
        let hash = key_hash(key);
        let Some(r) = self.pick(hash, rng) else {
            *past_cache = Some(thread_cpu_ns());
            bump(&self.stats.bypass);
            return Ok((self.fetch(key, hash, 0)?.0, Outcome::Bypass));
        };
        let replica = &self.replicas[r];
        let epoch = replica.epoch();
        let item = match replica.with(|c| c.mg(key)) {
            Ok(item) => item,
            Err(Error::Unavailable { .. }) => {
                // It is marked down now; this read is served by the database.
                *past_cache = Some(thread_cpu_ns());
                bump(&self.stats.replica_errors);
                bump(&self.stats.bypass);
                return Ok((self.fetch(key, hash, 0)?.0, Outcome::Bypass));
            }
            Err(e) => return Err(e),
        };
        self.loads.record(r);
        let seen = Cached::of(item.as_ref());
        if let (Some(item), Cached::Value { version, .. }) = (item, seen) {
            bump(&self.stats.hits);
            return Ok((Some(Versioned { value: item.data, version }), Outcome::Hit));
        }
        *past_cache = Some(thread_cpu_ns());
        let min_version = seen.version();
        let (row, queried) = self.fetch(key, hash, min_version)?;
        if !queried {
            bump(&self.stats.delayed_hits);
            return Ok((row, Outcome::DelayedHit));
        }
        bump(&self.stats.misses);
        if let Some(v) = &row {
            // A fill decided before the replica rejoined (and was flushed) is refused.
            if replica.epoch() == epoch && v.version >= min_version {
                self.loads.record_fill(r);
                match coherence::fill(replica, key, seen, &v.value, v.version) {
                    Ok(true) => bump(&self.stats.fills),
                    Ok(false) => {}
                    Err(_) => bump(&self.stats.replica_errors),
                }
            }
        }
        Ok((row, Outcome::Miss))
    }

    /// Writes a key: updates PostgreSQL (the row's version goes up by one), invalidates every
    /// copy (phase 1), calls `on_ack` with the new version (the write is acknowledged: no read
    /// that starts now returns an older value), then installs the new value in the copies
    /// (phase 2). Returns the new version.
    pub fn put_with(&self, key: &[u8], value: &[u8], on_ack: impl FnOnce(u64)) -> Result<u64> {
        crate::memcache::check_key(key)?;
        if std::str::from_utf8(value).is_err() || value.contains(&0) {
            return Err(Error::config("values must be UTF-8 text without NUL bytes (the table column is text)"));
        }
        bump(&self.stats.writes);
        let hash = key_hash(key);
        let rows = self.db.execute("sl_put", &[Some(key), Some(value)])?;
        let version = rows
            .first()
            .and_then(|r| r.int(0))
            .ok_or_else(|| Error::protocol(self.db.dsn().redacted(), "the upsert returned no version"))?
            as u64;
        coherence::value_flags(version)?;
        self.flights.detach(key, hash);
        let mut tombstones = Vec::new();
        for r in self.router.copies(hash) {
            let replica = &self.replicas[r];
            if !replica.is_up() {
                continue; // flushed before it rejoins
            }
            match coherence::invalidate(replica, key, version) {
                Ok(Some(cas)) => {
                    bump(&self.stats.invalidations);
                    tombstones.push((r, cas));
                }
                Ok(None) => {}
                // Unreachable now: it is marked down, and flushed before it serves again.
                Err(Error::Unavailable { .. }) => bump(&self.stats.replica_errors),
                Err(e) => return Err(e),
            }
        }
        on_ack(version);
        for (r, cas) in tombstones {
            match coherence::update(&self.replicas[r], key, value, version, cas) {
                Ok(true) => bump(&self.stats.updates),
                Ok(false) => {}
                Err(_) => bump(&self.stats.replica_errors),
            }
        }
        Ok(version)
    }

    /// [`put_with`](Self::put_with) without a callback.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<u64> {
        self.put_with(key, value, |_| {})
    }

    /// Flushes every live replica (the start of a cold run).
    pub fn flush_all(&self) -> Result<()> {
        for r in &self.replicas {
            r.with(|c| c.flush_all())?;
        }
        self.mark_table();
        Ok(())
    }

    /// Records on every live replica that its entries come from this client's table (see
    /// [`TABLE_MARK_KEY`]). Best effort: a replica that fails is marked down as by any request.
    pub fn mark_table(&self) {
        let mark = table_mark(&self.table);
        // Flags of a loaded row (version 1): memcached stores non-zero flags in the item.
        for r in self.replicas.iter().filter(|r| r.is_up()) {
            let _ = r.with(|c| c.ms(TABLE_MARK_KEY, &mark, 1, SetMode::Set, None));
        }
    }

    /// For each replica whose mark names another table than this client's, that table (as its
    /// mark holds it); None where the mark names this table, where there is none, or where the
    /// replica does not answer.
    pub fn other_tables(&self) -> Vec<Option<String>> {
        let mine = mark_text(&table_mark(&self.table));
        self.replicas.iter().map(|r| r.with(held_table).ok().flatten().filter(|t| *t != mine)).collect()
    }
}

/// The table whose entries a memcached server holds, as its mark says (the name, or for a long
/// one its start and a hash); None without a mark.
pub fn held_table(conn: &mut McConn) -> Result<Option<String>> {
    Ok(conn.mg(TABLE_MARK_KEY)?.map(|item| mark_text(&item.data)))
}

/// A mark's text: the name without its padding.
fn mark_text(mark: &[u8]) -> String {
    String::from_utf8_lossy(mark).trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_mark_is_a_rows_size_and_tells_long_names_apart() {
        assert_eq!(TABLE_MARK_KEY.len(), store::KEY_LEN);
        assert!(crate::memcache::check_key(TABLE_MARK_KEY).is_ok() && store::key_id(TABLE_MARK_KEY).is_none());
        let short = table_mark("superlinear_kv");
        assert_eq!(String::from_utf8_lossy(&short).trim_end(), "superlinear_kv");
        let a = table_mark(&format!("{}a", "t".repeat(60)));
        let b = table_mark(&format!("{}b", "t".repeat(60)));
        assert!(a != b && a.len() == store::VALUE_LEN && a.starts_with(b"ttt"));
    }
}
