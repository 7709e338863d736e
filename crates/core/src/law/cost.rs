//! Cost functions g (paper, Appendix A.3): the work a request costs as a function of what it met
//! on its worker, in exactly the engine's work units, so that the law's T(1) = Σ g(|W_t(x)|)
//! and T(k) = Σ g(|W_t(x) ∩ U_f(x)|) are the engine's work counts, not approximations of them.
//!
//! The paper states g_MTF(x) = |W_t(x)| + 1 and g_LRU = `[miss]`; both ignore cold starts. Here
//! state is replicated and starts in the engine's initial order, so a first access costs its
//! real list position (MTF) or a miss (LRU); see [`super::working_set::Access`].

use super::working_set::{Access, PassMode};
use crate::error::Error;
use crate::workers::AlgoSpec;

/// The work function g of one self-adjusting structure.
pub trait CostFunction: Send + Sync {
    /// The algorithm, as on the command line.
    fn name(&self) -> String;
    /// What the working-set pass must compute for [`CostFunction::cost`].
    fn mode(&self) -> PassMode;
    /// Work units of one request, given what it met and the item count m.
    fn cost(&self, access: Access, m: usize) -> u64;
    /// Whether the structure is a cache (then its points report hits).
    fn is_cache(&self) -> bool {
        false
    }
    /// Whether the request hit (caches; always false otherwise).
    fn hit(&self, _access: Access) -> bool {
        false
    }
}

/// Move-to-front list ([`crate::workers::MoveToFrontList`]): a lookup costs the positions
/// visited, |W| + 1 on a re-access; an absent key costs a full scan of m positions.
#[derive(Clone, Copy, Debug, Default)]
pub struct MtfCost;

impl CostFunction for MtfCost {
    fn name(&self) -> String {
        "mtf".into()
    }
    fn mode(&self) -> PassMode {
        PassMode { universe_bound: true, list_positions: true }
    }
    #[inline]
    fn cost(&self, access: Access, m: usize) -> u64 {
        match access {
            Access::Repeat { working_set } => working_set + 1,
            Access::First { position } => position + 1,
            Access::Absent => m as u64,
        }
    }
}

/// LRU cache of capacity c ([`crate::workers::LruCache`], starts cold): 1 per access, plus ρ
/// per miss; a request misses iff it is the item's first on this worker or |W| ≥ c (c other
/// distinct items since its last access pushed it out).
#[derive(Clone, Copy, Debug)]
pub struct LruCost {
    /// Capacity c in items.
    pub capacity: usize,
    /// Work units per miss (the engine's `miss_cycles`).
    pub rho: u64,
}

impl LruCost {
    #[inline]
    fn hits(&self, access: Access) -> bool {
        matches!(access, Access::Repeat { working_set } if working_set < self.capacity as u64)
    }
}

impl CostFunction for LruCost {
    fn name(&self) -> String {
        format!("lru:{}", self.capacity)
    }
    fn mode(&self) -> PassMode {
        PassMode { universe_bound: false, list_positions: false }
    }
    #[inline]
    fn cost(&self, access: Access, _m: usize) -> u64 {
        if self.hits(access) {
            1
        } else {
            1 + self.rho
        }
    }
    fn is_cache(&self) -> bool {
        true
    }
    fn hit(&self, access: Access) -> bool {
        self.hits(access)
    }
}

/// The cost function of an algorithm, for the algorithms whose cost is a function of the
/// working set (their registry entry's `law`: `mtf`, `lru:C`); `rho` is the work of a cache miss.
pub fn cost_function(algo: &str, rho: u64) -> Result<Box<dyn CostFunction>, Error> {
    let spec = AlgoSpec::parse(algo)?;
    let law = spec.entry().law.ok_or_else(|| {
        let covered: Vec<String> = crate::workers::REGISTRY
            .iter()
            .filter(|e| e.law.is_some())
            .map(|e| if e.takes_capacity { format!("'{}:C'", e.name) } else { format!("'{}'", e.name) })
            .collect();
        Error::config(format!(
            "the working-set law covers {} (costs that are functions of the working set); got '{}'",
            covered.join(" and "),
            spec.name
        ))
    })?;
    Ok(law(spec.capacity, rho))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_follow_the_engine() {
        let mtf = cost_function("mtf", 7).unwrap();
        assert_eq!(mtf.cost(Access::Repeat { working_set: 3 }, 10), 4);
        assert_eq!(mtf.cost(Access::First { position: 9 }, 10), 10);
        assert_eq!(mtf.cost(Access::Absent, 10), 10);
        assert!(!mtf.is_cache() && !mtf.hit(Access::Absent));
        let lru = cost_function("lru:2", 7).unwrap();
        assert_eq!(lru.name(), "lru:2");
        assert_eq!(lru.cost(Access::Repeat { working_set: 1 }, 10), 1);
        assert_eq!(lru.cost(Access::Repeat { working_set: 2 }, 10), 8);
        assert_eq!(lru.cost(Access::First { position: 0 }, 10), 8);
        assert!(lru.is_cache() && lru.hit(Access::Repeat { working_set: 0 }));
        assert!(cost_function("splay", 0).err().unwrap().to_string().contains("'splay'"));
        assert!(cost_function("bogus", 0).is_err());
    }
}
