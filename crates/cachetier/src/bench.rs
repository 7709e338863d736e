//! The multithreaded benchmark driver (paper App. B's "custom multi-threaded client"): T client
//! threads, each a closed loop of cache-aside reads (and optionally writes) over the rows, bounded
//! in request count and in time. It reports the three things the honesty contract needs:
//!
//! * **measured**: wall-clock time and throughput of the run on this machine;
//! * the CPU time of every participant (each client thread's own clock, each memcached replica's
//!   rusage, each local PostgreSQL backend's /proc time), from which a **projected** completion
//!   time on ideal, uncontended cores ([`BenchReport::projected_ns`]): the busiest participant's
//!   CPU time or the client threads' mean request path, whichever is longer;
//! * exact counts: hits, misses, delayed hits, database reads, requests per replica.
//!
//! The deadline holds for requests that fail too: every request checks it, and the database
//! pool's retries stop there ([`crate::pg::PgPool::retry_until`]); a request that fails once the
//! deadline has passed was cut short by it, and counts as not done. A run also gives up early
//! when as many requests in a row as it has threads fail, none between reaching the database
//! (cache hits do not count: a cache can serve on with its database gone): each had the pool's
//! retries, so the database (or the table) is gone, and the rest of the budget would only repeat
//! the failure; the requests still retrying then are cut short, not done. Such a run ends with
//! fewer requests than asked and `timed_out` false.
//!
//! Every value read is checked against its key (values describe themselves, `store.rs`), so a
//! run also counts wrong values; with writes, every read is also checked against the last write
//! the bench finished for that key before the read began ([`Freshness`]), so it counts stale
//! values too.

use crate::client::{CacheAsideClient, Outcome, StatsSnapshot};
use crate::error::{Error, Result};
use crate::keys::{KeyDist, KeyStream};
use crate::procstat;
use crate::router::key_hash;
use crate::store;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};
use superlinear_core::cputime::thread_cpu_ns;
use superlinear_core::error::number_text;

/// One benchmark phase.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Client threads.
    pub threads: usize,
    /// Requests in all (split evenly over the threads).
    pub requests: u64,
    /// Rows in the table (keys 0..rows).
    pub rows: u64,
    /// Key distribution.
    pub dist: KeyDist,
    /// Seed (thread t uses seed + t; the hot-row permutation uses the seed itself).
    pub seed: u64,
    /// The phase stops after this long even if requests remain.
    pub max_duration: Duration,
    /// Fraction of requests that are writes (0 for the paper's read-only benchmark).
    pub write_fraction: f64,
}

/// What a phase did and cost.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct BenchReport {
    pub requests: u64,
    pub wall_ns: u64,
    /// The deadline stopped the run (requests were left, or one was cut short by it).
    pub timed_out: bool,
    /// The run gave up on failing requests before its requests were done (the module's doc).
    pub gave_up: bool,
    /// Each client thread's own CPU time.
    pub thread_cpu_ns: Vec<u64>,
    /// Each replica's CPU time during the phase (from its `stats`; `None` if unavailable).
    pub replica_cpu_ns: Vec<Option<u64>>,
    /// Each database connection's backend CPU time during the phase (local servers only).
    pub db_backend_cpu_ns: Vec<u64>,
    /// Requests each replica served (client-side count of replies).
    pub replica_requests: Vec<u64>,
    /// Fills (sets after misses) sent to each replica.
    pub replica_fills: Vec<u64>,
    /// Client counters for the phase.
    pub stats: StatsSnapshot,
    /// Database queries retried after transient failures.
    pub db_retries: u64,
    /// Requests that failed (first error kept).
    pub errors: u64,
    pub first_error: Option<String>,
    /// Values that were not the requested key's (must be 0).
    pub wrong_values: u64,
    /// Values older than the last write the bench finished for that key before the read began
    /// (must be 0; only runs with writes can see one).
    pub stale_values: u64,
    /// Keys the database did not have.
    pub missing: u64,
    /// Latency percentiles of requests, measured (ns).
    pub latency_p50_ns: u64,
    pub latency_p99_ns: u64,
}

/// A [`BenchReport`] as results carry it, with its derived figures.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BenchRecord<'a> {
    #[serde(flatten)]
    pub report: &'a BenchReport,
    pub projected_ns: Option<u64>,
    /// The two bounds of the projection ([`BenchReport::projection_bounds`]).
    pub projected_busiest_ns: Option<u64>,
    pub projected_client_path_ns: Option<u64>,
    pub hit_rate: f64,
}

impl BenchReport {
    /// The record of this report.
    pub fn record(&self) -> BenchRecord<'_> {
        let bounds = self.projection_bounds();
        BenchRecord {
            report: self,
            projected_ns: self.projected_ns(),
            projected_busiest_ns: bounds.map(|b| b.0),
            projected_client_path_ns: bounds.map(|b| b.1),
            hit_rate: self.hit_rate(),
        }
    }

    /// Hits / reads.
    pub fn hit_rate(&self) -> f64 {
        self.stats.hits as f64 / self.stats.reads.max(1) as f64
    }

    /// The projected completion time on ideal cores, one per participant, without contention:
    /// the larger of the two [`Self::projection_bounds`]. `None` if some replica's CPU time is
    /// unknown.
    pub fn projected_ns(&self) -> Option<u64> {
        self.projection_bounds().map(|(busiest, path)| busiest.max(path))
    }

    /// The two asymptotic bounds of a closed queueing network (Denning and Buzen 1978) on ideal
    /// cores, as (busiest, client path):
    ///
    /// * the busiest participant's CPU time (client thread, replica or database backend): no
    ///   participant finishes its share faster than it computes it;
    /// * the client threads' mean request path: every client thread is a closed loop that waits
    ///   for its get, its query and its fill, so it spends, per request, its own CPU plus the
    ///   servers' CPU for that request; all the run's CPU over the client threads.
    ///
    /// `None` if some replica's CPU time is unknown.
    pub fn projection_bounds(&self) -> Option<(u64, u64)> {
        let replicas = self.replica_cpu_ns.iter().copied().collect::<Option<Vec<u64>>>()?;
        let all = || self.thread_cpu_ns.iter().chain(&replicas).chain(&self.db_backend_cpu_ns).copied();
        let busiest = all().max().unwrap_or(0);
        let path = all().sum::<u64>() / self.thread_cpu_ns.len().max(1) as u64;
        Some((busiest, path))
    }
}

fn replica_cpu(client: &CacheAsideClient) -> Vec<Option<u64>> {
    client
        .replicas()
        .iter()
        .map(
            |r| {
                if r.is_up() {
                    r.with(|c| c.stats(None)).ok().and_then(|s| procstat::memcached_cpu_ns(&s))
                } else {
                    None
                }
            },
        )
        .collect()
}

fn backend_cpu(client: &CacheAsideClient) -> Vec<(i32, u64)> {
    if !client.db().dsn().endpoint().is_local() {
        return Vec::new();
    }
    client.db().backend_pids().into_iter().filter_map(|p| procstat::process_cpu_ns(p).map(|c| (p, c))).collect()
}

/// Lock stripes of [`Freshness`].
const STRIPES: usize = 64;

/// The stale-value check of a run with writes. Every write of the bench gets a fresh tag from one
/// counter (its value carries it, `store.rs`); writes of one key are serialised (a lock per
/// stripe of keys), so the key's tags grow in the order its writes reach the database. A read
/// notes the key's last finished write (`floor`) before it starts; the value it gets is fresh if
/// it is that write's, or a later write's of this run (tag above `floor`, below the counter).
/// Anything else (an older tag of this run, or a value from before the run once the key was
/// written) is stale. Tags start at a random base so a value left by an earlier run is not taken
/// for one of this run.
pub struct Freshness {
    next: AtomicU64,
    stripes: Vec<Mutex<HashMap<u64, u64>>>,
}

/// A write in progress: its tag, holding its key's stripe until [`WriteGuard::done`].
pub struct WriteGuard<'a> {
    tag: u64,
    id: u64,
    stripe: MutexGuard<'a, HashMap<u64, u64>>,
}

impl WriteGuard<'_> {
    /// The tag to write.
    pub fn tag(&self) -> u64 {
        self.tag
    }

    /// Records the write as finished (call only when the database took it).
    pub fn done(mut self) {
        self.stripe.insert(self.id, self.tag);
    }
}

/// Tags are printed with 10 digits (`store::value`); a run's tags stay below this.
const TAG_LIMIT: u64 = 10_000_000_000;

impl Freshness {
    /// A tracker whose tags start at a base drawn from `seed` (and the clock), in [2, 5e9].
    pub fn new(seed: u64) -> Self {
        let clock = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let base = 2 + superlinear_core::hash::fmix64(seed ^ clock) % (TAG_LIMIT / 2);
        Self::starting_at(base)
    }

    /// A tracker whose first tag is `base` (at least 2: the loader writes tag 1).
    pub fn starting_at(base: u64) -> Self {
        Self { next: AtomicU64::new(base.max(2)), stripes: (0..STRIPES).map(|_| Mutex::new(HashMap::new())).collect() }
    }

    fn stripe(&self, id: u64) -> MutexGuard<'_, HashMap<u64, u64>> {
        self.stripes[(superlinear_core::hash::fmix64(id) % STRIPES as u64) as usize]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Starts a write of row `id`: its tag, and the key's stripe held until it is done.
    pub fn write(&self, id: u64) -> WriteGuard<'_> {
        let stripe = self.stripe(id);
        let tag = self.next.fetch_add(1, Ordering::Relaxed) % TAG_LIMIT;
        WriteGuard { tag, id, stripe }
    }

    /// The tag of the last finished write of row `id` (0: none yet), noted before a read.
    pub fn floor(&self, id: u64) -> u64 {
        self.stripe(id).get(&id).copied().unwrap_or(0)
    }

    /// Whether a read that began after the write `floor` finished and returned `tag` is stale.
    pub fn is_stale(&self, floor: u64, tag: u64) -> bool {
        floor != 0 && tag != floor && !(floor < tag && tag < self.next.load(Ordering::Relaxed))
    }
}

/// Runs one phase with `client`. Counters are reset first.
pub fn run(client: &CacheAsideClient, cfg: &BenchConfig) -> Result<BenchReport> {
    if cfg.threads == 0 {
        return Err(Error::config("the benchmark needs at least one thread"));
    }
    if !(0.0..=1.0).contains(&cfg.write_fraction) {
        return Err(Error::config(format!(
            "write fraction must be in [0, 1], got {}",
            number_text(cfg.write_fraction)
        )));
    }
    raise_fd_limit();
    client.db().warm(cfg.threads.min(client.db().size()))?;
    // Marked before and after: the entries are this table's from the first request on, and the
    // mark set last is the one least likely to be evicted before the next bench reads it.
    client.mark_table();
    client.reset_stats();
    let retries0 = client.db().retries();
    let cpu0 = replica_cpu(client);
    let db0 = backend_cpu(client);
    // Set by a thread that reaches the deadline, or that sees the run give up; every thread
    // reads it before each request.
    let stop = AtomicBool::new(false);
    let timed_out = AtomicBool::new(false);
    let gave_up = AtomicBool::new(false);
    let failed_in_a_row = AtomicU64::new(0);
    let issued = AtomicU64::new(0);
    let errors = AtomicU64::new(0);
    let wrong = AtomicU64::new(0);
    let stale = AtomicU64::new(0);
    let fresh = (cfg.write_fraction > 0.0).then(|| Freshness::new(cfg.seed));
    let missing = AtomicU64::new(0);
    let first_error: Mutex<Option<String>> = Mutex::new(None);
    let per_thread = cfg.requests / cfg.threads as u64;
    let extra = cfg.requests % cfg.threads as u64;
    let started = Instant::now();
    let deadline = started + cfg.max_duration;
    let retry_deadline = client.db().retry_until(deadline);
    let results: Vec<(u64, Vec<u32>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.threads)
            .map(|t| {
                let (stop, timed_out, gave_up, failed_in_a_row, retry_deadline) =
                    (&stop, &timed_out, &gave_up, &failed_in_a_row, &retry_deadline);
                let (issued, errors, wrong, stale, missing, first_error) =
                    (&issued, &errors, &wrong, &stale, &missing, &first_error);
                let fresh = fresh.as_ref();
                s.spawn(move || -> Result<(u64, Vec<u32>)> {
                    let n = per_thread + u64::from((t as u64) < extra);
                    let mut keys = KeyStream::new(cfg.dist, cfg.rows, cfg.seed, cfg.seed.wrapping_add(1 + t as u64))?;
                    let mut rng = superlinear_core::hash::fmix64(cfg.seed ^ (t as u64 + 1) << 20);
                    let mut lat = Vec::with_capacity(n.min(1 << 20) as usize);
                    let cpu0 = thread_cpu_ns();
                    for _ in 0..n {
                        if superlinear_core::cancel::requested() || stop.load(Ordering::Relaxed) {
                            break;
                        }
                        // Every request: a clock read is cheap next to a round trip, and one
                        // failing request can take seconds.
                        if Instant::now() >= deadline {
                            timed_out.store(true, Ordering::Relaxed);
                            stop.store(true, Ordering::Relaxed);
                            break;
                        }
                        let id = keys.next_id();
                        let key = store::key(id);
                        let t0 = Instant::now();
                        rng = superlinear_core::hash::fmix64(rng.wrapping_add(0x9e37_79b9_7f4a_7c15));
                        let write =
                            cfg.write_fraction > 0.0 && (rng >> 11) as f64 / (1u64 << 53) as f64 <= cfg.write_fraction;
                        // Ok(whether the database answered it): a write, or a read past the cache.
                        let r = if write {
                            match fresh {
                                Some(f) => {
                                    let w = f.write(id);
                                    let r = client.put(&key, &store::value(id, w.tag())).map(|_| true);
                                    if r.is_ok() {
                                        w.done();
                                    }
                                    r
                                }
                                None => client.put(&key, &store::value(id, rng >> 40)).map(|_| true),
                            }
                        } else {
                            let floor = fresh.map_or(0, |f| f.floor(id));
                            client.get(&key, &mut rng).map(|(v, outcome)| {
                                match v {
                                    Some(v) => match store::check_value(id, &v.value) {
                                        Some(tag) => {
                                            if fresh.is_some_and(|f| f.is_stale(floor, tag)) {
                                                stale.fetch_add(1, Ordering::Relaxed);
                                            }
                                        }
                                        None => {
                                            wrong.fetch_add(1, Ordering::Relaxed);
                                        }
                                    },
                                    None => {
                                        missing.fetch_add(1, Ordering::Relaxed);
                                    }
                                }
                                outcome != Outcome::Hit
                            })
                        };
                        match r {
                            Err(_) if Instant::now() >= deadline => {
                                // Cut short by the deadline (the pool stops retrying there): not done.
                                timed_out.store(true, Ordering::Relaxed);
                                stop.store(true, Ordering::Relaxed);
                                break;
                            }
                            // Cut short by the run giving up (below, on another thread), or by a
                            // stop request that ended its retries: not done.
                            Err(_) if stop.load(Ordering::Relaxed) || superlinear_core::cancel::requested() => break,
                            Err(e) => {
                                errors.fetch_add(1, Ordering::Relaxed);
                                first_error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e.to_string());
                                if failed_in_a_row.fetch_add(1, Ordering::Relaxed) + 1 >= cfg.threads as u64 {
                                    // Gives up (see the module's doc), and so do the other threads'
                                    // requests still retrying.
                                    gave_up.store(true, Ordering::Relaxed);
                                    stop.store(true, Ordering::Relaxed);
                                    retry_deadline.end_now();
                                }
                            }
                            // Read before written: a store on every request would bounce the
                            // line between the threads' cores.
                            Ok(true) if failed_in_a_row.load(Ordering::Relaxed) != 0 => {
                                failed_in_a_row.store(0, Ordering::Relaxed)
                            }
                            Ok(_) => {}
                        }
                        lat.push(t0.elapsed().as_nanos().min(u32::MAX as u128) as u32);
                        issued.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok((thread_cpu_ns().saturating_sub(cpu0), lat))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Ok((0, Vec::new())))).collect::<Result<Vec<_>>>()
    })?;
    if superlinear_core::cancel::requested() {
        client.mark_table();
        return Err(crate::error::Error::config("interrupted"));
    }
    let wall_ns = started.elapsed().as_nanos() as u64;
    let cpu1 = replica_cpu(client);
    let db1 = backend_cpu(client);
    client.mark_table(); // after the servers' CPU times are read: not part of the run
    let mut lat: Vec<u32> = results.iter().flat_map(|(_, l)| l.iter().copied()).collect();
    lat.sort_unstable();
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1))).copied().unwrap_or(0) as u64
    };
    let db_backend_cpu_ns = db1
        .iter()
        .filter_map(|(p, c1)| db0.iter().find(|(q, _)| q == p).map(|(_, c0)| c1.saturating_sub(*c0)))
        .collect();
    Ok(BenchReport {
        requests: issued.load(Ordering::Relaxed),
        wall_ns,
        timed_out: timed_out.load(Ordering::Relaxed),
        gave_up: gave_up.load(Ordering::Relaxed),
        thread_cpu_ns: results.iter().map(|(c, _)| *c).collect(),
        replica_cpu_ns: cpu0.iter().zip(&cpu1).map(|(a, b)| Some(b.as_ref()?.saturating_sub((*a)?))).collect(),
        db_backend_cpu_ns,
        replica_requests: client.loads().totals(),
        replica_fills: client.loads().fill_totals(),
        stats: client.stats(),
        db_retries: client.db().retries() - retries0,
        errors: errors.load(Ordering::Relaxed),
        first_error: first_error.into_inner().unwrap_or_else(|p| p.into_inner()),
        wrong_values: wrong.load(Ordering::Relaxed),
        stale_values: stale.load(Ordering::Relaxed),
        missing: missing.load(Ordering::Relaxed),
        latency_p50_ns: pct(0.5),
        latency_p99_ns: pct(0.99),
    })
}

/// Key, value and flags of one pre-filled item.
type PrefillItem = (Vec<u8>, Vec<u8>, u32);

/// Pre-fills the replicas to the state a long run of reads leaves them in: every row is offered,
/// in one pass over the table, to its candidate replicas (its home under key hashing, both
/// layers' candidates under DistCache, one random replica under random routing) with pipelined
/// quiet sets; LRU keeps the most recent ones.
/// Values and versions come from the database. Run it only while nobody writes. Only rows that
/// `dist` can ask for are offered (a hot set's rows; every row otherwise), so the replicas hold
/// what a long run of that distribution's reads would leave there. Returns the rows offered.
pub fn prefill(client: &CacheAsideClient, rows: u64, seed: u64, dist: KeyDist) -> Result<u64> {
    let support = KeyStream::new(dist, rows.max(1), seed, seed)?;
    client.mark_table();
    const RANGE: u64 = 8192;
    const BATCH: usize = 256;
    let n = client.replicas().len();
    let mut batches: Vec<Vec<PrefillItem>> = vec![Vec::new(); n];
    let mut rng = superlinear_core::hash::fmix64(seed ^ 0xfeed);
    let mut offered = 0;
    let flush = |r: usize, batch: &mut Vec<PrefillItem>| -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let replica = &client.replicas()[r];
        replica.with(|c| c.ms_batch(batch.iter().map(|(k, v, f)| (k.as_slice(), v.as_slice(), *f))))?;
        batch.clear();
        Ok(())
    };
    let mut lo = 0;
    while lo < rows {
        if superlinear_core::cancel::requested() {
            return Err(Error::config("interrupted"));
        }
        let hi = (lo + RANGE).min(rows);
        let found = client.db().execute("sl_range", &[Some(&store::key(lo)), Some(&store::key(hi))])?;
        for row in found {
            let (Some(Some(k)), Some(Some(v))) = (row.0.first(), row.0.get(1)) else { continue };
            if !store::key_id(k).is_some_and(|id| support.in_support(id)) {
                continue;
            }
            let version = row.int(2).unwrap_or(1).max(1) as u64;
            let mut copies = client.router().copies(key_hash(k));
            if !client.router().caches_every_copy() {
                rng = superlinear_core::hash::fmix64(rng.wrapping_add(0x9e37_79b9_7f4a_7c15));
                copies = vec![copies[superlinear_core::hash::reduce(rng, copies.len())]];
            }
            let flags = crate::coherence::value_flags(version)?;
            for r in copies {
                batches[r].push((k.clone(), v.clone(), flags));
                if batches[r].len() >= BATCH {
                    let mut b = std::mem::take(&mut batches[r]);
                    flush(r, &mut b)?;
                    batches[r] = b;
                }
            }
            offered += 1;
        }
        lo = hi;
    }
    for (r, b) in batches.iter_mut().enumerate() {
        flush(r, b)?;
    }
    Ok(offered)
}

/// Raises the soft open-file limit to the hard one: k replicas × T threads of pooled sockets
/// can exceed the usual soft limit of 1024.
fn raise_fd_limit() {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit read and write only the rlimit struct passed by pointer.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max.min(65_536);
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{BenchReport, Freshness};

    #[test]
    fn projection_is_the_busiest_participant_or_the_client_path() {
        // The replica is busiest, and the client path (all CPU over the threads) is no longer.
        let busy = BenchReport {
            thread_cpu_ns: vec![100, 100],
            replica_cpu_ns: vec![Some(300)],
            db_backend_cpu_ns: vec![50, 50],
            ..BenchReport::default()
        };
        assert_eq!(busy.projected_ns(), Some(300));
        // Four closed-loop threads waiting on slow queries: the path (950 / 4) is the bound.
        let path = BenchReport {
            thread_cpu_ns: vec![100; 4],
            replica_cpu_ns: vec![Some(150)],
            db_backend_cpu_ns: vec![200, 200],
            ..BenchReport::default()
        };
        assert_eq!(path.projected_ns(), Some(237));
        assert_eq!(path.projection_bounds(), Some((200, 237)));
        let unknown = BenchReport { thread_cpu_ns: vec![1], replica_cpu_ns: vec![None], ..BenchReport::default() };
        assert_eq!(unknown.projected_ns(), None);
    }

    #[test]
    fn freshness_tells_stale_from_fresh_and_concurrent_values() {
        let f = Freshness::starting_at(100);
        // Nothing written yet: any value is fine (the loader's, or an earlier run's).
        assert_eq!(f.floor(7), 0);
        assert!(!f.is_stale(0, 1));
        let w = f.write(7);
        assert_eq!(w.tag(), 100);
        w.done();
        let floor = f.floor(7);
        assert_eq!(floor, 100);
        // The last finished write, and a later one of this run, are fresh.
        let later = f.write(7);
        let t = later.tag();
        later.done();
        assert!(!f.is_stale(floor, 100) && !f.is_stale(floor, t));
        // The loader's value, an older write and a tag this run never gave out are stale.
        assert!(f.is_stale(floor, 1) && f.is_stale(floor, 99) && f.is_stale(floor, 5_000));
        // A write that failed does not move the floor.
        let failed = f.write(7);
        drop(failed);
        assert_eq!(f.floor(7), t);
    }
}
