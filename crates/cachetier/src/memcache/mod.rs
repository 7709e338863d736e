//! Memcached: a client for the text protocol (get/gets/set/add/cas/delete/stats/flush_all) and
//! the meta protocol (mg/ms/md/mn, memcached ≥ 1.6), and a pool of connections per replica that
//! tracks whether the replica is up.
//!
//! The cache-aside client uses meta commands on its hot path because one `mg` returns value,
//! client flags and CAS in one round trip, and one `ms` can both compare a CAS and return the new
//! one: exactly what the two-phase coherence protocol needs. Text commands serve the pipelined
//! multi-key `gets`, statistics and administration, and older servers.

mod conn;
mod parse;
mod pool;

pub use conn::{McConn, SetMode};
pub use parse::{Item, StoreStatus};
pub use pool::{Replica, ReplicaState};

/// The longest key memcached accepts.
pub const MAX_KEY_LEN: usize = 250;

/// Checks that a key is valid for the text and meta protocols: 1–250 bytes, no whitespace or
/// control characters.
pub fn check_key(key: &[u8]) -> crate::error::Result<()> {
    if key.is_empty() || key.len() > MAX_KEY_LEN || key.iter().any(|&b| b <= b' ' || b == 0x7f) {
        return Err(crate::error::Error::config(format!(
            "invalid memcached key {:?}: 1 to {MAX_KEY_LEN} bytes without spaces or control characters",
            String::from_utf8_lossy(key)
        )));
    }
    Ok(())
}
