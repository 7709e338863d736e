//! Every eviction policy of the simulator, and the registry that builds one from its name.
//!
//! Adding a policy means one new file here and one line in [`REGISTRY`].

mod arc;
mod arc_mad;
mod belady;
mod belady_ad;
mod lfu;
mod lfu_mad;
pub(crate) mod lists;
mod lru;
mod lru_mad;
mod mad_table;
pub(crate) mod members;

pub use arc::{Arc, ArcCache, LeastRecent, ListVictim};
pub use arc_mad::{arc_mad, ArcMad, LowestRank};
pub use belady::Belady;
pub use belady_ad::BeladyAd;
pub use lfu::Lfu;
pub use lfu_mad::LfuMad;
pub use lru::Lru;
pub use lru_mad::LruMad;

use crate::policy::{EvictionPolicy, PolicyContext};
use superlinear_core::Error;

/// Builds a policy for one simulation.
pub type PolicyConstructor = fn(&PolicyContext<'_>) -> Box<dyn EvictionPolicy>;

/// One registry entry.
pub struct PolicyEntry {
    /// The name used on the command line and in result rows.
    pub name: &'static str,
    /// Whether the policy reads the future (an oracle, not deployable).
    pub offline: bool,
    /// Whether the policy ranks by aggregate delay (MAD, Bélády-AD).
    pub latency_aware: bool,
    /// One line for `--help` and listings.
    pub summary: &'static str,
    /// The constructor.
    pub build: PolicyConstructor,
}

/// The policy registry.
pub const REGISTRY: &[PolicyEntry] = &[
    PolicyEntry {
        name: "lru",
        offline: false,
        latency_aware: false,
        summary: "least recently used",
        build: |c| Box::new(Lru::new(c)),
    },
    PolicyEntry {
        name: "lfu",
        offline: false,
        latency_aware: false,
        summary: "least frequently used (all requests count)",
        build: |c| Box::new(Lfu::new(c)),
    },
    PolicyEntry {
        name: "arc",
        offline: false,
        latency_aware: false,
        summary: "adaptive replacement cache (Megiddo-Modha)",
        build: |c| Box::new(Arc::new(c)),
    },
    PolicyEntry {
        name: "lru-mad",
        offline: false,
        latency_aware: true,
        summary: "LRU-MAD: aggregate-delay estimate / time since last access (Alg. 1, Eq. 2.45)",
        build: |c| Box::new(LruMad::new(c)),
    },
    PolicyEntry {
        name: "lfu-mad",
        offline: false,
        latency_aware: true,
        summary: "LFU-MAD: aggregate-delay estimate x request count",
        build: |c| Box::new(LfuMad::new(c)),
    },
    PolicyEntry {
        name: "arc-mad",
        offline: false,
        latency_aware: true,
        summary: "ARC-MAD: ARC picks the list, the lowest MAD rank in it leaves",
        build: |c| Box::new(arc_mad(c)),
    },
    PolicyEntry {
        name: "belady",
        offline: true,
        latency_aware: false,
        summary: "Belady (offline): the farthest next request leaves; hit-rate optimal",
        build: |c| Box::new(Belady::new(c)),
    },
    PolicyEntry {
        name: "belady-ad",
        offline: true,
        latency_aware: true,
        summary: "Belady-AD (offline): lowest aggregate delay / time to next access leaves (Eq. 2.45)",
        build: |c| Box::new(BeladyAd::new(c)),
    },
];

/// The registry entry called `name`.
pub fn lookup(name: &str) -> Result<&'static PolicyEntry, Error> {
    REGISTRY.iter().find(|e| e.name == name).ok_or_else(|| {
        let known: Vec<&str> = REGISTRY.iter().map(|e| e.name).collect();
        Error::config(format!("unknown policy '{name}' (known: {})", known.join(", ")))
    })
}

/// Builds the policy called `name` for a cache of `ctx.capacity` objects.
pub fn build(name: &str, ctx: &PolicyContext<'_>) -> Result<Box<dyn EvictionPolicy>, Error> {
    let entry = lookup(name)?;
    if ctx.capacity == 0 {
        return Err(Error::config("cache size must be at least 1 object"));
    }
    Ok((entry.build)(ctx))
}
