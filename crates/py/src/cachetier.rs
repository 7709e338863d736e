//! Bindings of `superlinear-cachetier`: the cache-aside client as a Python class, the loader, the
//! benchmark driver and a routing simulation. Config dicts in, dicts out, no logic.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::sync::Arc;
use std::time::Duration;
use superlinear_cachetier::bench::{self, BenchConfig, BenchReport};
use superlinear_cachetier::client::{CacheAsideClient, ClientConfig, Outcome, StatsSnapshot};
use superlinear_cachetier::keys::{KeyDist, KeyStream};
use superlinear_cachetier::loads::LoadCounters;
use superlinear_cachetier::memcache::{McConn, ReplicaState};
use superlinear_cachetier::pg::{Dsn, PgConn, RetryPolicy};
use superlinear_cachetier::router::{self, key_hash, View};
use superlinear_cachetier::{store, Endpoint};

use crate::convert::{dict_list, get, to_py};

fn client_config(d: &Bound<'_, PyDict>) -> PyResult<ClientConfig> {
    let replicas: Vec<String> = get(d, "replicas", Vec::new())?;
    let endpoints = Endpoint::parse_list(&replicas.join(",")).map_err(to_py)?;
    let dsn = Dsn::parse(&get::<String>(d, "dsn", String::new())?).map_err(to_py)?;
    let mut cfg = ClientConfig::new(endpoints, dsn);
    cfg.router = get(d, "router", cfg.router)?;
    cfg.table = get(d, "table", cfg.table)?;
    cfg.db_connections = get(d, "db_connections", cfg.db_connections)?;
    cfg.coalesce = get(d, "coalesce", cfg.coalesce)?;
    cfg.seed = get(d, "seed", cfg.seed)?;
    cfg.timeout = Duration::from_secs_f64(get(d, "timeout_s", 1.0f64)?.max(0.001));
    cfg.load_window = Duration::from_secs_f64(get(d, "load_window_s", 1.0f64)?.max(0.001));
    cfg.retry = RetryPolicy {
        attempts: get(d, "db_attempts", cfg.retry.attempts)?,
        backoff: Duration::from_secs_f64(get(d, "db_backoff_s", cfg.retry.backoff.as_secs_f64())?),
        max_backoff: Duration::from_secs_f64(get(d, "db_max_backoff_s", cfg.retry.max_backoff.as_secs_f64())?),
    };
    Ok(cfg)
}

fn stats_dict<'py>(py: Python<'py>, s: &StatsSnapshot) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("reads", s.reads)?;
    d.set_item("hits", s.hits)?;
    d.set_item("misses", s.misses)?;
    d.set_item("delayed_hits", s.delayed_hits)?;
    d.set_item("bypass", s.bypass)?;
    d.set_item("db_reads", s.db_reads)?;
    d.set_item("fills", s.fills)?;
    d.set_item("replica_errors", s.replica_errors)?;
    d.set_item("writes", s.writes)?;
    d.set_item("invalidations", s.invalidations)?;
    d.set_item("updates", s.updates)?;
    Ok(d)
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
        let cfg = client_config(config)?;
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
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = stats_dict(py, &self.inner.stats())?;
        d.set_item("replica_requests", self.inner.loads().totals())?;
        d.set_item("db_retries", self.inner.db().retries())?;
        Ok(d)
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

    /// Flushes every live replica.
    fn flush_all(&self, py: Python<'_>) -> PyResult<()> {
        py.allow_threads(|| self.inner.flush_all()).map_err(to_py)
    }

    /// Pre-fills the replicas from the table (see the crate's `bench::prefill`); returns rows offered.
    #[pyo3(signature = (rows, seed = 1))]
    fn prefill(&self, py: Python<'_>, rows: u64, seed: u64) -> PyResult<u64> {
        py.allow_threads(|| bench::prefill(&self.inner, rows, seed)).map_err(to_py)
    }

    /// Runs one benchmark phase with this client (config: threads, requests, rows, dist, seed,
    /// max_seconds, write_fraction).
    fn bench<'py>(&self, py: Python<'py>, config: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyDict>> {
        let cfg = BenchConfig {
            threads: get(config, "threads", 4usize)?,
            requests: get(config, "requests", 10_000u64)?,
            rows: get(config, "rows", 1_000_000u64)?,
            dist: KeyDist::parse(&get::<String>(config, "dist", "uniform".into())?).map_err(to_py)?,
            seed: get(config, "seed", 1u64)?,
            max_duration: Duration::from_secs_f64(get(config, "max_seconds", 60.0f64)?.max(0.001)),
            write_fraction: get(config, "write_fraction", 0.0f64)?,
        };
        let inner = self.inner.clone();
        let report = py.allow_threads(move || bench::run(&inner, &cfg)).map_err(to_py)?;
        report_dict(py, &report)
    }
}

fn report_dict<'py>(py: Python<'py>, r: &BenchReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("requests", r.requests)?;
    d.set_item("wall_ns", r.wall_ns)?;
    d.set_item("timed_out", r.timed_out)?;
    d.set_item("thread_cpu_ns", r.thread_cpu_ns.clone())?;
    d.set_item("replica_cpu_ns", r.replica_cpu_ns.clone())?;
    d.set_item("db_backend_cpu_ns", r.db_backend_cpu_ns.clone())?;
    d.set_item("replica_requests", r.replica_requests.clone())?;
    d.set_item("replica_fills", r.replica_fills.clone())?;
    d.set_item("projected_ns", r.projected_ns())?;
    d.set_item("hit_rate", r.hit_rate())?;
    d.set_item("stats", stats_dict(py, &r.stats)?)?;
    d.set_item("db_retries", r.db_retries)?;
    d.set_item("errors", r.errors)?;
    d.set_item("first_error", r.first_error.clone())?;
    d.set_item("wrong_values", r.wrong_values)?;
    d.set_item("missing", r.missing)?;
    d.set_item("latency_p50_ns", r.latency_p50_ns)?;
    d.set_item("latency_p99_ns", r.latency_p99_ns)?;
    Ok(d)
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
) -> PyResult<Bound<'py, PyDict>> {
    let dsn = Dsn::parse(dsn).map_err(to_py)?;
    let report = py
        .allow_threads(|| {
            let mut conn = PgConn::connect(&dsn, Duration::from_secs_f64(timeout_s.max(0.001)))?;
            store::load(&mut conn, &table, rows, force)
        })
        .map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("rows", report.rows)?;
    d.set_item("loaded", report.loaded)?;
    d.set_item("table", table)?;
    Ok(d)
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

/// The router registry: name, key_affine, summary.
#[pyfunction]
fn cache_routers(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    dict_list(py, router::REGISTRY, |d, e| {
        d.set_item("name", e.name)?;
        d.set_item("key_affine", e.key_affine)?;
        d.set_item("summary", e.summary)
    })
}

/// Routes `requests` keys of a distribution with a router over `n` replicas, without servers,
/// counting reads per replica (load counters as the client keeps them). Deterministic.
#[pyfunction]
#[pyo3(signature = (router, n, dist, rows, requests, seed = 1))]
fn cache_route_sim(router: &str, n: usize, dist: &str, rows: u64, requests: u64, seed: u64) -> PyResult<Vec<u64>> {
    let r = router::build(router, n, seed).map_err(to_py)?;
    let mut keys = KeyStream::new(KeyDist::parse(dist).map_err(to_py)?, rows, seed, seed + 1).map_err(to_py)?;
    let loads = LoadCounters::new(n, Duration::from_secs(3600));
    let up = |_: usize| true;
    let mut rng = seed;
    for _ in 0..requests {
        let h = key_hash(&store::key(keys.next_id()));
        if let Some(i) = r.route(h, &mut View { up: &up, loads: &loads, rng: &mut rng }) {
            loads.record(i);
        }
    }
    Ok(loads.totals())
}

/// Adds the cache tier's classes and functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CacheClient>()?;
    m.add_function(wrap_pyfunction!(cache_load, m)?)?;
    m.add_function(wrap_pyfunction!(cache_sql, m)?)?;
    m.add_function(wrap_pyfunction!(cache_memcached_stats, m)?)?;
    m.add_function(wrap_pyfunction!(cache_routers, m)?)?;
    m.add_function(wrap_pyfunction!(cache_route_sim, m)?)?;
    Ok(())
}
