//! One generation of a rule set, shared read-only by every worker: the rules as read, their
//! compact table and their dependency graph, computed once per rule-set change (paper §4.1).
//! Whatever is derived from it for a particular use (a dispatcher's field choice, say) is
//! kept by that user, not here.

use crate::deps::DependencyGraph;
use crate::packet::Packet;
use crate::rules::{Action, RuleSet};
use crate::table::CompactRule;

/// One generation of a rule set: the rules, their compact table and their dependencies.
/// Shared read-only by every worker (`Arc<Snapshot>`); a rule change builds a new one.
#[derive(Debug)]
pub struct Snapshot {
    /// The rules as read.
    pub rules: RuleSet,
    /// Compact rules, same order.
    pub table: Vec<CompactRule>,
    /// Dependencies (paper §4.1) and same-action overlaps.
    pub deps: DependencyGraph,
    /// The default action's code.
    pub default_code: u8,
    /// Generation number (0 for the first; rule updates count up).
    pub generation: u64,
}

impl Snapshot {
    /// Compiles a rule set (computes its dependency graph).
    pub fn new(rules: RuleSet) -> Self {
        Self::with_generation(rules, 0)
    }

    /// Compiles a rule set as generation `generation`.
    pub fn with_generation(rules: RuleSet, generation: u64) -> Self {
        let table: Vec<CompactRule> = rules.rules.iter().map(CompactRule::new).collect();
        let deps = DependencyGraph::build(&table);
        let default_code = rules.default_action.code();
        Self { rules, table, deps, default_code, generation }
    }

    /// Number of rules.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// First match by a linear scan of the table (the static list's lookup).
    #[inline]
    pub fn first_match(&self, p: &Packet) -> Option<u32> {
        self.table.iter().position(|r| r.matches(p)).map(|i| i as u32)
    }

    /// The first-match rule of every packet (the working-set law's item sequence); `len()` when
    /// no rule matches (the default policy, a full scan).
    pub fn first_match_ids(&self, packets: &[Packet]) -> Vec<u32> {
        packets.iter().map(|p| self.first_match(p).unwrap_or(self.len() as u32)).collect()
    }

    /// The action of a rule id, or the default for `None`.
    pub fn action_of(&self, rule: Option<u32>) -> Action {
        Action::from_code(rule.map_or(self.default_code, |r| self.table[r as usize].action_code()))
    }

    /// Whether `u` depends on `v`: `v` has higher priority, they overlap, their actions differ.
    #[inline]
    pub fn depends(&self, u: u32, v: u32) -> bool {
        let (a, b) = (&self.table[u as usize], &self.table[v as usize]);
        v < u && a.action_code() != b.action_code() && a.overlaps(b)
    }
}
