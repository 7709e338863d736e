//! Every worker the engine can run, and the registry that builds one from its name.
//!
//! Adding a worker means one new file here and one line in [`REGISTRY`].

mod balanced_tree;
mod delayed_hits_cache;
mod hash_map;
mod lru_cache;
mod move_to_front;
mod no_cache;
mod recency_list;
mod scan;
mod splay_tree;
mod static_list;
mod tree_arena;

pub use balanced_tree::BalancedSearchTree;
pub use delayed_hits_cache::{DelayedHitsCache, Eviction};
pub use hash_map::HashMapWorker;
pub use lru_cache::LruCache;
pub use move_to_front::MoveToFrontList;
pub use no_cache::NoCache;
pub use splay_tree::SplayTree;
pub use static_list::StaticList;

use crate::error::Error;
use crate::law::cost::{CostFunction, LruCost, MtfCost};
use crate::worker::{Worker, WorkerParams};

/// Builds a worker over the initial item set (in its initial order) with the given parameters.
pub type WorkerConstructor = fn(items: &[u64], params: &WorkerParams) -> Box<dyn Worker>;

/// The cost of a worker as a function of the working set (paper App. A), for the working-set
/// law: (capacity of `name:C`, work units per miss ρ).
pub type LawCostConstructor = fn(capacity: Option<usize>, rho: u64) -> Box<dyn CostFunction>;

/// One registry entry.
pub struct WorkerEntry {
    /// The name used on the command line and in result rows.
    pub name: &'static str,
    /// Whether the algorithm reorganises itself around its input (for labels and tests).
    pub self_adjusting: bool,
    /// Whether the name takes a `:C` capacity suffix (caches).
    pub takes_capacity: bool,
    /// One line for `--help` and error messages.
    pub summary: &'static str,
    /// The [`WorkerParams`] cost fields its constructor reads (`compare_cycles`, `miss_cycles`):
    /// a run giving it another is refused rather than ignored.
    pub reads: &'static [&'static str],
    /// The constructor.
    pub build: WorkerConstructor,
    /// Its cost as a function of the working set, where it has one (the law covers it; other
    /// workers are simulated).
    pub law: Option<LawCostConstructor>,
}

/// The worker registry: name, kind and constructor of every algorithm.
pub const REGISTRY: &[WorkerEntry] = &[
    WorkerEntry {
        name: "static",
        self_adjusting: false,
        takes_capacity: false,
        summary: "static list, fixed order (array)",
        reads: &[],
        build: |i, _| Box::new(StaticList::new(i)),
        law: None,
    },
    WorkerEntry {
        name: "mtf",
        self_adjusting: true,
        takes_capacity: false,
        summary: "move-to-front list (array)",
        reads: &[],
        build: |i, _| Box::new(MoveToFrontList::new(i)),
        law: Some(|_, _| Box::new(MtfCost)),
    },
    WorkerEntry {
        name: "tree",
        self_adjusting: false,
        takes_capacity: false,
        summary: "static balanced search tree, w cycles per comparison",
        reads: &["compare_cycles"],
        build: |i, p| Box::new(BalancedSearchTree::new(i, p.compare_cycles)),
        law: None,
    },
    WorkerEntry {
        name: "splay",
        self_adjusting: true,
        takes_capacity: false,
        summary: "splay tree (Sleator-Tarjan), w cycles per comparison",
        reads: &["compare_cycles"],
        build: |i, p| Box::new(SplayTree::new(i, p.compare_cycles)),
        law: None,
    },
    WorkerEntry {
        name: "lru",
        self_adjusting: true,
        takes_capacity: true,
        summary: "LRU cache of capacity C, rho cycles per miss (lru:C)",
        reads: &["miss_cycles"],
        build: |_, p| Box::new(LruCache::new(p.capacity.unwrap_or(1), p.miss_cycles)),
        law: Some(|c, rho| Box::new(LruCost { capacity: c.unwrap_or(1), rho })),
    },
    WorkerEntry {
        name: "lru-mad",
        self_adjusting: true,
        takes_capacity: true,
        summary: "MAD cache (delayed hits: fills arrive Z = max(rho,1) own requests later)",
        reads: &["miss_cycles"],
        build: |_, p| Box::new(DelayedHitsCache::new(p.capacity.unwrap_or(1), p.miss_cycles, Eviction::Mad)),
        law: None,
    },
    WorkerEntry {
        name: "lru-dh",
        self_adjusting: true,
        takes_capacity: true,
        summary: "LRU under lru-mad's delayed-hits model (its baseline)",
        reads: &["miss_cycles"],
        build: |_, p| Box::new(DelayedHitsCache::new(p.capacity.unwrap_or(1), p.miss_cycles, Eviction::Recency)),
        law: None,
    },
    WorkerEntry {
        name: "nocache",
        self_adjusting: false,
        takes_capacity: false,
        summary: "no cache: every request pays rho cycles",
        reads: &["miss_cycles"],
        build: |_, p| Box::new(NoCache::new(p.miss_cycles)),
        law: None,
    },
    WorkerEntry {
        name: "hashmap",
        self_adjusting: false,
        takes_capacity: false,
        summary: "plain hash map over all items (the k = m limit)",
        reads: &[],
        build: |i, _| Box::new(HashMapWorker::new(i)),
        law: None,
    },
];

/// A parsed algorithm name such as `mtf` or `lru:2500`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlgoSpec {
    /// Registry name.
    pub name: String,
    /// Capacity for caches (`lru:C`).
    pub capacity: Option<usize>,
}

impl AlgoSpec {
    /// Parses `NAME` or `NAME:CAPACITY`, checking the name against the registry.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let (name, cap) = match text.split_once(':') {
            Some((n, c)) => (n.trim(), Some(c.trim())),
            None => (text.trim(), None),
        };
        let entry = lookup(name)?;
        let capacity = match cap {
            None if entry.takes_capacity => {
                return Err(Error::config(format!("algorithm '{name}' needs a capacity, e.g. '{name}:1000'")))
            }
            None => None,
            Some(_) if !entry.takes_capacity => {
                return Err(Error::config(format!("algorithm '{name}' takes no ':' parameter")))
            }
            // Caches index their slots with u32, u32::MAX marking "none"; a count past usize is
            // too large too, not "not a positive integer".
            Some(c) => match c.parse::<usize>().map_err(|e| *e.kind()) {
                Ok(v) if v > 0 && v < u32::MAX as usize => Some(v),
                Ok(v) if v > 0 => return Err(too_large(text)),
                Err(std::num::IntErrorKind::PosOverflow) => return Err(too_large(text)),
                _ => return Err(Error::config(format!("capacity in '{text}' must be a positive integer"))),
            },
        };
        Ok(Self { name: name.to_string(), capacity })
    }

    /// The registry entry of this algorithm.
    pub fn entry(&self) -> &'static WorkerEntry {
        lookup(&self.name).expect("AlgoSpec is validated on parse")
    }

    /// Builds one worker holding `items` in their initial order.
    pub fn build(&self, items: &[u64], params: &WorkerParams) -> Box<dyn Worker> {
        let params = WorkerParams { capacity: self.capacity.or(params.capacity), ..params.clone() };
        (self.entry().build)(items, &params)
    }
}

impl std::fmt::Display for AlgoSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.capacity {
            Some(c) => write!(f, "{}:{}", self.name, c),
            None => write!(f, "{}", self.name),
        }
    }
}

/// The refusal of a cache capacity above what a cache indexes (`lru:C`, as `text` gave it).
fn too_large(text: &str) -> Error {
    Error::config(format!("capacity in '{text}': at most {} items", u32::MAX - 1))
}

fn lookup(name: &str) -> Result<&'static WorkerEntry, Error> {
    REGISTRY.iter().find(|e| e.name == name).ok_or_else(|| {
        let known: Vec<&str> = REGISTRY.iter().map(|e| e.name).collect();
        Error::config(format!("unknown algorithm '{name}' (known: {})", known.join(", ")))
    })
}
