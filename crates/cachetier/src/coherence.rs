//! Cache coherence for writes: DistCache's two-phase update (§4.3) over memcached.
//!
//! A cached copy is a memcached item whose 32-bit client flags hold the row version. Phase 1
//! replaces every copy of the key (at every replica that may hold one, `Router::copies`) by a
//! *tombstone*: an empty item whose flags are the new version with [`TOMBSTONE`] set. Only then
//! is the write acknowledged. Phase 2 swaps each tombstone for the new value, by CAS, so it never
//! overwrites anything newer.
//!
//! Readers keep it safe (`client.rs`): a read that finds a tombstone of version v reads the
//! database and accepts only a row of version ≥ v, and fills the cache only by CAS on that very
//! tombstone; a read that finds nothing fills only with `add`, which fails once a tombstone is
//! there. Versions of a key's cached item therefore never go down, and once phase 1 has run no
//! replica can serve a version older than the acknowledged one. What the protocol assumes:
//! tombstones are not evicted within the few microseconds of a read-fill race (give replicas more
//! memory than the hot set), and a replica this client could not reach is flushed before it
//! rejoins (`memcache::Replica::try_rejoin`), since it may hold a copy that missed phase 1.

use crate::error::{Error, Result};
use crate::memcache::{Item, Replica, SetMode, StoreStatus};

/// Flag bit of a tombstone; the low 31 bits are the version.
pub const TOMBSTONE: u32 = 1 << 31;

/// The largest version that fits the flags.
pub const MAX_VERSION: u64 = (TOMBSTONE - 1) as u64;

/// What a replica holds for a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cached {
    /// Nothing.
    Absent,
    /// A value of this version.
    Value { version: u64, cas: u64 },
    /// An invalidated copy: a write of this version is in progress or done.
    Tombstone { version: u64, cas: u64 },
}

impl Cached {
    /// Classifies an item (or its absence).
    pub fn of(item: Option<&Item>) -> Self {
        match item {
            None => Cached::Absent,
            Some(i) if i.flags & TOMBSTONE != 0 => {
                Cached::Tombstone { version: (i.flags & !TOMBSTONE) as u64, cas: i.cas }
            }
            Some(i) => Cached::Value { version: i.flags as u64, cas: i.cas },
        }
    }

    /// The version held (0 when absent).
    pub fn version(&self) -> u64 {
        match *self {
            Cached::Absent => 0,
            Cached::Value { version, .. } | Cached::Tombstone { version, .. } => version,
        }
    }
}

/// Flags of a value of `version`.
pub fn value_flags(version: u64) -> Result<u32> {
    if version == 0 || version > MAX_VERSION {
        return Err(Error::config(format!("row version {version} does not fit memcached's 31-bit flags")));
    }
    Ok(version as u32)
}

/// Phase 1 at one replica: makes sure it holds no copy older than `version`. Returns the CAS of
/// the tombstone it installed, or `None` when the replica already holds `version` or newer.
pub fn invalidate(replica: &Replica, key: &[u8], version: u64) -> Result<Option<u64>> {
    let flags = value_flags(version)? | TOMBSTONE;
    // Each round either succeeds or lost a race to another writer or filler; the item changes at
    // most a few times in a race, so a few rounds suffice.
    for _ in 0..32 {
        let current = Cached::of(replica.with(|c| c.mg(key))?.as_ref());
        if current.version() >= version && current != Cached::Absent {
            return Ok(None);
        }
        let status = replica.with(|c| match current {
            Cached::Absent => c.ms(key, b"", flags, SetMode::Add, None),
            Cached::Value { cas, .. } | Cached::Tombstone { cas, .. } => c.ms(key, b"", flags, SetMode::Set, Some(cas)),
        })?;
        if let StoreStatus::Stored(cas) = status {
            return Ok(Some(cas));
        }
    }
    // The copy could not be invalidated (the key kept changing, or the server kept refusing to
    // store the tombstone): take the replica out of service. It is flushed before it serves
    // again, so the copy cannot outlive the acknowledgement.
    replica.mark_down();
    Err(Error::unavailable(replica.name(), "could not invalidate a copy; marked down until flushed"))
}

/// Phase 2 at one replica: swaps the tombstone installed in phase 1 (its CAS) for the value.
/// Returns true if the value was installed (false: something newer or a reader's fill got there
/// first, which is just as good).
pub fn update(replica: &Replica, key: &[u8], value: &[u8], version: u64, tombstone_cas: u64) -> Result<bool> {
    let flags = value_flags(version)?;
    let status = replica.with(|c| c.ms(key, value, flags, SetMode::Set, Some(tombstone_cas)))?;
    Ok(matches!(status, StoreStatus::Stored(_)))
}

/// A reader's fill after a miss: installs `value` of `version` if the replica still holds what
/// the reader saw (`seen`): `add` after an absence, CAS on a tombstone of version ≤ `version`.
/// Returns true if installed.
pub fn fill(replica: &Replica, key: &[u8], seen: Cached, value: &[u8], version: u64) -> Result<bool> {
    let flags = value_flags(version)?;
    let status = match seen {
        Cached::Absent => replica.with(|c| c.ms(key, value, flags, SetMode::Add, None))?,
        Cached::Tombstone { version: tv, cas } if version >= tv => {
            replica.with(|c| c.ms(key, value, flags, SetMode::Set, Some(cas)))?
        }
        _ => return Ok(false),
    };
    Ok(matches!(status, StoreStatus::Stored(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_items() {
        let v = Item { data: b"x".to_vec(), flags: 7, cas: 3 };
        assert_eq!(Cached::of(Some(&v)), Cached::Value { version: 7, cas: 3 });
        let t = Item { data: vec![], flags: 9 | TOMBSTONE, cas: 4 };
        assert_eq!(Cached::of(Some(&t)), Cached::Tombstone { version: 9, cas: 4 });
        assert_eq!(Cached::of(None).version(), 0);
        assert!(value_flags(0).is_err());
        assert!(value_flags(MAX_VERSION + 1).is_err());
    }
}
