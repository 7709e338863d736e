//! Bindings of `superlinear-cachetier`: the cache-aside client as a Python class, the loader, the
//! benchmark driver and a routing simulation. Config dicts in as the crate's typed settings, records out as dicts, no logic.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;
use superlinear_cachetier::bench;
use superlinear_cachetier::client::{held_table, CacheAsideClient, Outcome, StatsSnapshot};
use superlinear_cachetier::config::{BenchSettings, ClientSettings};
use superlinear_cachetier::keys::KeyDist;
use superlinear_cachetier::memcache::{McConn, ReplicaState};
use superlinear_cachetier::pg::{Dsn, PgConn};
use superlinear_cachetier::route_sim::{lru_hit_rates, lru_hit_rates_of_trace, route_loads};
use superlinear_cachetier::router::{self, key_hash};
use superlinear_cachetier::store::{self, LoadReport};
use superlinear_cachetier::Endpoint;

use crate::convert::{dict_list, record, settings, to_py};

/// The client's counters with its per-replica reads and database retries.
#[derive(Serialize)]
struct ClientStatsRecord<'a> {
    #[serde(flatten)]
    stats: &'a StatsSnapshot,
    replica_requests: Vec<u64>,
    db_retries: u64,
}

/// A load's report with its table.
#[derive(Serialize)]
struct LoadRecord<'a> {
    #[serde(flatten)]
    report: &'a LoadReport,
    table: &'a str,
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Hit => "hit",
        Outcome::Miss => "miss",
        Outcome::DelayedHit => "delayed_hit",
        Outcome::Bypass => "bypass",
    }
}

/// The cache-aside client over memcached replicas and PostgreSQL (thread-safe; releases the GIL).
#[pyclass(frozen, module = "superlinear._native")]
struct CacheClient {
    inner: Arc<CacheAsideClient>,
}

#[pymethods]
impl CacheClient {
    #[new]
    fn new(py: Python<'_>, config: &Bound<'_, PyDict>) -> PyResult<Self> {
        let cfg = settings::<ClientSettings>(config)?.to_config().map_err(to_py)?;
        let inner = py.allow_threads(|| CacheAsideClient::new(&cfg)).map_err(to_py)?;
        Ok(Self { inner: Arc::new(inner) })
    }

    /// Reads a key: (value, version, outcome) or None if the row does not exist.
    #[pyo3(signature = (key, seed = 0))]
    fn get(&self, py: Python<'_>, key: &str, seed: u64) -> PyResult<Option<(String, u64, &'static str)>> {
        let mut rng = seed ^ 0x5151;
        let (v, o) = py.allow_threads(|| self.inner.get(key.as_bytes(), &mut rng)).map_err(to_py)?;
        Ok(v.map(|v| (String::from_utf8_lossy(&v.value).into_owned(), v.version, outcome_name(o))))
    }

    /// Writes a key (two-phase coherent); returns the new version.
    fn put(&self, py: Python<'_>, key: &str, value: &str) -> PyResult<u64> {
        py.allow_threads(|| self.inner.put(key.as_bytes(), value.as_bytes())).map_err(to_py)
    }

    /// The client's counters.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let stats = self.inner.stats();
        record(
            py,
            &ClientStatsRecord {
                stats: &stats,
                replica_requests: self.inner.loads().totals(),
                db_retries: self.inner.db().retries(),
            },
        )
    }

    /// Zeroes the counters.
    fn reset_stats(&self) {
        self.inner.reset_stats();
    }

    /// Each replica: address, up, epoch (rejoins), failures.
    fn replicas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        dict_list(py, self.inner.replicas(), |d, r| {
            d.set_item("address", r.name())?;
            d.set_item("up", r.state() == ReplicaState::Up)?;
            d.set_item("epoch", r.epoch())?;
            d.set_item("failures", r.failures())
        })
    }

    /// The replicas that may cache `key` (its candidates under the router).
    fn copies(&self, key: &str) -> Vec<usize> {
        self.inner.router().copies(key_hash(key.as_bytes()))
    }

    /// For each replica, the other table its entries come from, as the mark a bench, pre-fill or
    /// flush of this tool leaves says (None: this client's table, no mark, or no answer).
    fn other_tables(&self, py: Python<'_>) -> Vec<Option<String>> {
        py.allow_threads(|| self.inner.other_tables())
    }

    /// Flushes every live replica.
    fn flush_all(&self, py: Python<'_>) -> PyResult<()> {
        py.allow_threads(|| self.inner.flush_all()).map_err(to_py)
    }

    /// Pre-fills the replicas from the table (see the crate's `bench::prefill`) with the rows
    /// `dist` can ask for; returns rows offered.
    #[pyo3(signature = (rows, seed = 1, dist = "uniform"))]
    fn prefill(&self, py: Python<'_>, rows: u64, seed: u64, dist: &str) -> PyResult<u64> {
        let dist = KeyDist::parse(dist).map_err(to_py)?;
        py.allow_threads(|| bench::prefill(&self.inner, rows, seed, dist)).map_err(to_py)
    }

    /// Runs one benchmark phase with this client (config: threads, requests, rows, dist, seed,
    /// max_seconds, write_fraction).
    fn bench<'py>(&self, py: Python<'py>, config: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyAny>> {
        let cfg = settings::<BenchSettings>(config)?.to_config().map_err(to_py)?;
        let inner = self.inner.clone();
        let report = py.allow_threads(move || bench::run(&inner, &cfg)).map_err(to_py)?;
        record(py, &report.record())
    }
}

/// Loads `rows` rows into `table` with COPY (idempotent unless `force`): {rows, loaded}.
#[pyfunction]
#[pyo3(signature = (dsn, rows, table = "superlinear_kv".to_string(), force = false, timeout_s = 600.0))]
fn cache_load<'py>(
    py: Python<'py>,
    dsn: &str,
    rows: u64,
    table: String,
    force: bool,
    timeout_s: f64,
) -> PyResult<Bound<'py, PyAny>> {
    let dsn = Dsn::parse(dsn).map_err(to_py)?;
    let report = py
        .allow_threads(|| {
            let mut conn = PgConn::connect(&dsn, Duration::from_secs_f64(timeout_s.max(0.001)))?;
            store::load(&mut conn, &table, rows, force)
        })
        .map_err(to_py)?;
    record(py, &LoadRecord { report: &report, table: &table })
}

/// Runs SQL on `dsn` with the simple query protocol; returns the last statement's rows as text.
#[pyfunction]
fn cache_sql(py: Python<'_>, dsn: &str, sql: &str) -> PyResult<Vec<Vec<Option<String>>>> {
    let dsn = Dsn::parse(dsn).map_err(to_py)?;
    let rows = py.allow_threads(|| PgConn::connect(&dsn, Duration::from_secs(10))?.simple(sql)).map_err(to_py)?;
    Ok(rows
        .into_iter()
        .map(|r| r.0.into_iter().map(|c| c.map(|b| String::from_utf8_lossy(&b).into_owned())).collect())
        .collect())
}

/// `stats` of one memcached server (name → value).
#[pyfunction]
fn cache_memcached_stats(py: Python<'_>, address: &str) -> PyResult<std::collections::HashMap<String, String>> {
    let ep = Endpoint::parse(address).map_err(to_py)?;
    py.allow_threads(|| McConn::connect(&ep, Duration::from_secs(2))?.stats(None)).map_err(to_py)
}

/// The table whose entries a memcached server holds, as the mark a bench, pre-fill or flush of
/// this tool leaves says ([`held_table`]); None without a mark.
#[pyfunction]
fn cache_table_mark(py: Python<'_>, address: &str) -> PyResult<Option<String>> {
    let ep = Endpoint::parse(address).map_err(to_py)?;
    py.allow_threads(|| held_table(&mut McConn::connect(&ep, Duration::from_secs(2))?)).map_err(to_py)
}

/// The router registry: name, aliases, key_affine, summary.
#[pyfunction]
fn cache_routers(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    dict_list(py, router::REGISTRY, |d, e| {
        d.set_item("name", e.name)?;
        d.set_item("aliases", e.aliases.to_vec())?;
        d.set_item("key_affine", e.key_affine)?;
        d.set_item("summary", e.summary)
    })
}

/// Routes `requests` keys of a distribution with a router over `n` replicas, without servers,
/// counting reads per replica (load counters as the client keeps them). Deterministic.
#[pyfunction]
#[pyo3(signature = (router, n, dist, rows, requests, seed = 1))]
fn cache_route_sim(router: &str, n: usize, dist: &str, rows: u64, requests: u64, seed: u64) -> PyResult<Vec<u64>> {
    route_loads(router, n, dist, rows, requests, seed).map_err(to_py)
}

/// Hits and reads per replica of `n` LRU replicas of `capacity` items each, fed `requests`
/// reads of a distribution by a router after `warmup` uncounted reads; no servers. Deterministic.
#[pyfunction]
#[pyo3(signature = (router, n, dist, rows, capacity, requests, warmup, seed = 1))]
#[allow(clippy::too_many_arguments)]
fn cache_lru_sim(
    py: Python<'_>,
    router: &str,
    n: usize,
    dist: &str,
    rows: u64,
    capacity: usize,
    requests: u64,
    warmup: u64,
    seed: u64,
) -> PyResult<Vec<(u64, u64)>> {
    py.allow_threads(|| lru_hit_rates(router, n, dist, rows, capacity, requests, warmup, seed)).map_err(to_py)
}

/// Hits and reads of each replica.
type HitsAndReads = Vec<(u64, u64)>;

/// [`cache_lru_sim`] for a key trace (text `KEY ...` lines or the engine's binary key trace; keys
/// numbered densely in order of first appearance, read as rows `0..objects`), read once: the
/// number of distinct keys, and per router (in `routers`' order) the hits and reads per replica
/// at every k in `ks`.
#[pyfunction]
#[pyo3(signature = (routers, ks, path, capacity, seed = 1))]
fn cache_lru_sim_trace(
    py: Python<'_>,
    routers: Vec<String>,
    ks: Vec<usize>,
    path: &str,
    capacity: usize,
    seed: u64,
) -> PyResult<(usize, Vec<Vec<HitsAndReads>>)> {
    py.allow_threads(|| {
        let trace = superlinear_cache::LatencyTrace::read(path).map_err(to_py)?;
        let ids: Vec<u64> = trace.requests.iter().map(|&o| u64::from(o)).collect();
        let per_router = routers
            .iter()
            .map(|router| {
                ks.iter().map(|&k| lru_hit_rates_of_trace(router, k, &ids, capacity, seed).map_err(to_py)).collect()
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok((trace.objects, per_router))
    })
}

/// Adds the cache tier's classes and functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CacheClient>()?;
    m.add_function(wrap_pyfunction!(cache_load, m)?)?;
    m.add_function(wrap_pyfunction!(cache_lru_sim, m)?)?;
    m.add_function(wrap_pyfunction!(cache_lru_sim_trace, m)?)?;
    m.add_function(wrap_pyfunction!(cache_sql, m)?)?;
    m.add_function(wrap_pyfunction!(cache_memcached_stats, m)?)?;
    m.add_function(wrap_pyfunction!(cache_table_mark, m)?)?;
    m.add_function(wrap_pyfunction!(cache_routers, m)?)?;
    m.add_function(wrap_pyfunction!(cache_route_sim, m)?)?;
    Ok(())
}
