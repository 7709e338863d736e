//! The dependency graph (paper §4.1): rule u depends on rule v when v has higher priority, they
//! overlap in every field and their actions differ. MRF never moves u ahead of v.
//!
//! Alongside, for each u, the higher-priority rules that overlap u with the *same* action:
//! reordering past them keeps every verdict, and the classifier uses them to report the exact
//! first-match rule too (see `classifier::mrf`).
//!
//! Built by one pass over all pairs with the compact overlap test: quadratic in the rules, but
//! a pair costs five range tests and no allocation.

use crate::table::CompactRule;

/// Compressed adjacency lists over rule ids (priority order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DependencyGraph {
    dep_start: Vec<u32>,
    dep_ids: Vec<u32>,
    same_start: Vec<u32>,
    same_ids: Vec<u32>,
    depth: Vec<u32>,
}

impl DependencyGraph {
    /// Bytes of the graph's arrays (dependency and same-action lists, their offsets, depths).
    pub fn bytes(&self) -> usize {
        4 * (self.dep_start.len() + self.dep_ids.len() + self.same_start.len() + self.same_ids.len() + self.depth.len())
    }

    /// Computes the graph of a compact rule table.
    pub fn build(table: &[CompactRule]) -> Self {
        let n = table.len();
        let mut g = DependencyGraph {
            dep_start: Vec::with_capacity(n + 1),
            same_start: Vec::with_capacity(n + 1),
            ..Default::default()
        };
        g.dep_start.push(0);
        g.same_start.push(0);
        g.depth = vec![0; n];
        for (u, ru) in table.iter().enumerate() {
            let mut depth = 0u32;
            for (v, rv) in table[..u].iter().enumerate() {
                if ru.overlaps(rv) {
                    if ru.action_code() != rv.action_code() {
                        g.dep_ids.push(v as u32);
                        depth = depth.max(g.depth[v] + 1);
                    } else {
                        g.same_ids.push(v as u32);
                    }
                }
            }
            g.depth[u] = depth;
            g.dep_start.push(g.dep_ids.len() as u32);
            g.same_start.push(g.same_ids.len() as u32);
        }
        g
    }

    /// Number of rules.
    pub fn len(&self) -> usize {
        self.depth.len()
    }

    /// Whether the graph has no rules.
    pub fn is_empty(&self) -> bool {
        self.depth.is_empty()
    }

    /// The rules `u` depends on (ascending ids).
    #[inline]
    pub fn deps(&self, u: u32) -> &[u32] {
        &self.dep_ids[self.dep_start[u as usize] as usize..self.dep_start[u as usize + 1] as usize]
    }

    /// Higher-priority rules overlapping `u` with the same action (ascending ids).
    #[inline]
    pub fn same_action(&self, u: u32) -> &[u32] {
        &self.same_ids[self.same_start[u as usize] as usize..self.same_start[u as usize + 1] as usize]
    }

    /// Length of the longest dependency chain starting at `u` (0: no dependencies).
    pub fn depth(&self, u: u32) -> u32 {
        self.depth[u as usize]
    }

    /// Total dependency edges.
    pub fn edges(&self) -> usize {
        self.dep_ids.len()
    }

    /// Total same-action overlap pairs.
    pub fn same_action_pairs(&self) -> usize {
        self.same_ids.len()
    }

    /// Rules with at least one dependency.
    pub fn dependent_rules(&self) -> usize {
        (0..self.len()).filter(|&u| !self.deps(u as u32).is_empty()).count()
    }

    /// Longest dependency chain.
    pub fn max_depth(&self) -> u32 {
        self.depth.iter().copied().max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::SyntheticSpec;
    use crate::rules::{native, ReadOptions, RuleSet};

    /// The paper's Fig. 6 rule set.
    const FIG6: &str = "accept src 192.168.178.33 dst 23.0.0.45 dport 53 proto udp\n\
        drop src 10.10.10.0/24 dst 23.0.0.45/32 dport 443 proto tcp\n\
        drop src 192.168.178.0/24 dst 23.0.0.45/32 dport 53 proto udp\n\
        accept src 10.10.10.10/32 dst 23.0.0.45/32 proto tcp\n\
        accept src 192.168.0.0/16 dst 23.0.0.0/8\n";

    fn graph(set: &RuleSet) -> DependencyGraph {
        DependencyGraph::build(&set.rules.iter().map(CompactRule::new).collect::<Vec<_>>())
    }

    #[test]
    fn figure_6_dependencies() {
        let set = native::parse(FIG6, "fig6", &ReadOptions::default()).unwrap();
        let g = graph(&set);
        // 5 -> 3 -> 1 and 4 -> 2 (1-based in the paper).
        assert_eq!(g.deps(4), &[2]);
        assert_eq!(g.deps(2), &[0]);
        assert_eq!(g.deps(3), &[1]);
        assert!(g.deps(0).is_empty() && g.deps(1).is_empty());
        assert_eq!(g.same_action(4), &[0]);
        assert_eq!((g.depth(4), g.max_depth(), g.edges()), (2, 2, 3));
    }

    #[test]
    fn synthetic_chains_have_the_requested_depth() {
        for d in [1usize, 2, 4, 8] {
            let spec = SyntheticSpec { rules: 50, depth: d, flows_per_rule: 3, catch_all_fraction: 0.0 };
            assert_eq!(graph(&spec.rule_set().unwrap()).max_depth() as usize, d, "chain of d dependencies");
        }
    }

    #[test]
    fn the_synthetic_catch_all_depends_on_every_rule() {
        let spec = SyntheticSpec { rules: 100, depth: 0, flows_per_rule: 500, catch_all_fraction: 0.1 };
        assert_eq!(graph(&spec.rule_set().unwrap()).deps(100).len(), 100, "catch-all depends on every rule");
    }
}
