//! `superlinear-cachetier`: a real distributed cache tier, Memcached in front of PostgreSQL
//! (paper App. B, Fig. 11), with DistCache routing (Liu et al., FAST 2019) and delayed-hit
//! coalescing (thesis ch. 2).
//!
//! * [`memcache`]: memcached text and meta protocol client, connection pool and health per
//!   replica.
//! * [`pg`]: PostgreSQL wire protocol client (prepared statements, COPY), DSNs, retrying pool.
//! * [`router`]: random, jump consistent hash, DistCache two-layer power-of-two-choices.
//! * [`client`]: the cache-aside client; [`coherence`]: the two-phase write protocol;
//!   [`coalesce`]: delayed hits.
//! * [`store`]: the N × (16-byte key, 48-byte value) table and its COPY loader; [`keys`]: key
//!   distributions; [`bench`]: the multithreaded benchmark driver with CPU accounting.
//!
//! Servers are reached on loopback or any host the user names, over TCP or unix sockets; every
//! connect, read and write has a timeout.

pub mod bench;
pub mod client;
pub mod coalesce;
pub mod coherence;
pub mod config;
pub mod endpoint;
pub mod error;
pub mod keys;
pub mod loads;
pub mod memcache;
pub mod pg;
pub mod procstat;
pub mod route_sim;
pub mod router;
pub mod store;

pub use client::{CacheAsideClient, ClientConfig, Outcome, Versioned};
pub use endpoint::Endpoint;
pub use error::{Error, Result};
