//! The wire forms of the cache tier's configs (client and benchmark), as Python spells them:
//! named fields with their one default each, durations in seconds, unknown fields rejected.

use crate::bench::BenchConfig;
use crate::client::ClientConfig;
use crate::endpoint::Endpoint;
use crate::error::Result;
use crate::keys::KeyDist;
use crate::pg::{Dsn, RetryPolicy};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Bound of each connect, read and write in the wire config, in seconds.
pub const WIRE_TIMEOUT_S: f64 = 5.0;

/// The cache-aside client: replicas, database and routing (see [`ClientConfig`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClientSettings {
    /// memcached replicas, `host:port` or socket paths.
    pub replicas: Vec<String>,
    /// PostgreSQL connection string.
    pub dsn: String,
    pub router: String,
    pub table: String,
    pub db_connections: usize,
    pub coalesce: bool,
    pub seed: u64,
    /// Bound of each connect, read and write.
    pub timeout_s: f64,
    /// Window of the per-replica load counters.
    pub load_window_s: f64,
    pub db_attempts: u32,
    pub db_backoff_s: f64,
    pub db_max_backoff_s: f64,
}

impl Default for ClientSettings {
    fn default() -> Self {
        let c = ClientConfig::new(Vec::new(), Dsn::parse("").expect("the empty DSN means the libpq defaults"));
        Self {
            replicas: Vec::new(),
            dsn: String::new(),
            router: c.router,
            table: c.table,
            db_connections: c.db_connections,
            coalesce: c.coalesce,
            seed: c.seed,
            // Longer than the library's 1 s: dozens of client threads and servers on a few cores
            // can keep a healthy server from answering within a second.
            timeout_s: WIRE_TIMEOUT_S,
            load_window_s: c.load_window.as_secs_f64(),
            db_attempts: c.retry.attempts,
            db_backoff_s: c.retry.backoff.as_secs_f64(),
            db_max_backoff_s: c.retry.max_backoff.as_secs_f64(),
        }
    }
}

impl ClientSettings {
    /// The client's config; bad replica addresses or DSN are errors.
    pub fn to_config(&self) -> Result<ClientConfig> {
        let mut cfg = ClientConfig::new(Endpoint::parse_list(&self.replicas.join(","))?, Dsn::parse(&self.dsn)?);
        cfg.router = self.router.clone();
        cfg.table = self.table.clone();
        cfg.db_connections = self.db_connections;
        cfg.coalesce = self.coalesce;
        cfg.seed = self.seed;
        cfg.timeout = Duration::from_secs_f64(self.timeout_s.max(0.001));
        cfg.load_window = Duration::from_secs_f64(self.load_window_s.max(0.001));
        cfg.retry = RetryPolicy {
            attempts: self.db_attempts,
            backoff: Duration::from_secs_f64(self.db_backoff_s.max(0.0)),
            max_backoff: Duration::from_secs_f64(self.db_max_backoff_s.max(0.0)),
        };
        Ok(cfg)
    }
}

/// One benchmark phase (see [`BenchConfig`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BenchSettings {
    pub threads: usize,
    pub requests: u64,
    pub rows: u64,
    /// Key distribution (`uniform`, `zipf:A`, ...).
    pub dist: String,
    pub seed: u64,
    /// The phase stops after this long even if requests are left.
    pub max_seconds: f64,
    pub write_fraction: f64,
}

impl Default for BenchSettings {
    fn default() -> Self {
        Self {
            threads: 4,
            requests: 10_000,
            rows: 1_000_000,
            dist: "uniform".into(),
            seed: 1,
            max_seconds: 60.0,
            write_fraction: 0.0,
        }
    }
}

impl BenchSettings {
    /// The benchmark's config; a bad distribution is an error.
    pub fn to_config(&self) -> Result<BenchConfig> {
        Ok(BenchConfig {
            threads: self.threads,
            requests: self.requests,
            rows: self.rows,
            dist: KeyDist::parse(&self.dist)?,
            seed: self.seed,
            max_duration: Duration::from_secs_f64(self.max_seconds.max(0.001)),
            write_fraction: self.write_fraction,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse<T: serde::de::DeserializeOwned>(json: &str) -> std::result::Result<T, String> {
        let de = &mut serde_json::Deserializer::from_str(json);
        serde_path_to_error::deserialize(de).map_err(|e| format!("{}: {}", e.path(), e.inner()))
    }

    #[test]
    fn configs_reject_unknown_and_mistyped_fields_by_name() {
        assert!(parse::<ClientSettings>(r#"{"replica": ["a:1"]}"#).unwrap_err().contains("unknown field `replica`"));
        assert!(parse::<ClientSettings>(r#"{"coalesce": "yes"}"#).unwrap_err().starts_with("coalesce: invalid type"));
        assert!(parse::<BenchSettings>(r#"{"thread": 2}"#).unwrap_err().contains("unknown field `thread`"));
        assert!(parse::<BenchSettings>(r#"{"rows": [1]}"#).unwrap_err().starts_with("rows: invalid type"));
    }

    #[test]
    fn defaults_match_the_client_and_convert() {
        let c = ClientSettings { replicas: vec!["127.0.0.1:11211".into()], ..Default::default() }.to_config().unwrap();
        let d = ClientConfig::new(c.replicas.clone(), c.dsn.clone());
        assert_eq!((c.router, c.table, c.db_connections), (d.router, d.table, d.db_connections));
        // The wire config's timeout is its own (longer than the library's).
        assert_eq!((c.timeout, d.timeout), (Duration::from_secs_f64(WIRE_TIMEOUT_S), Duration::from_secs(1)));
        assert_eq!((c.retry.attempts, c.retry.backoff), (d.retry.attempts, d.retry.backoff));
        let b = BenchSettings::default().to_config().unwrap();
        assert_eq!((b.threads, b.max_duration), (4, Duration::from_secs(60)));
        assert!(BenchSettings { dist: "pareto".into(), ..Default::default() }.to_config().is_err());
    }
}
