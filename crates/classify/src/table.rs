//! The shared, immutable rule table every worker indexes into: rules in a compact form for
//! fast matching, with the dependency graph computed once per rule-set change (paper §4.1).
//!
//! A field test is one subtraction and one comparison: `x - lo <= span` (wrapping), so a
//! rule costs five branch-free tests combined with `&` and a single branch.

use crate::deps::DependencyGraph;
use crate::dispatch::rule_aware::SIMULATED_SHORTLIST;
use crate::dispatch::{score_with_law, score_with_mrf, FieldMask, RuleAwarePlan};
use crate::packet::Packet;
use crate::rules::{Action, Rule, RuleSet};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// A rule as the matching loop sees it: 28 bytes, ranges as (low, span).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompactRule {
    src_lo: u32,
    src_span: u32,
    dst_lo: u32,
    dst_span: u32,
    sport_lo: u16,
    sport_span: u16,
    dport_lo: u16,
    dport_span: u16,
    proto: u8,
    proto_mask: u8,
    action: u8,
}

impl CompactRule {
    /// The compact form of `r`.
    pub fn new(r: &Rule) -> Self {
        Self {
            src_lo: r.src.lo,
            src_span: r.src.hi - r.src.lo,
            dst_lo: r.dst.lo,
            dst_span: r.dst.hi - r.dst.lo,
            sport_lo: r.sport.lo,
            sport_span: r.sport.hi - r.sport.lo,
            dport_lo: r.dport.lo,
            dport_span: r.dport.hi - r.dport.lo,
            proto: r.proto.value & r.proto.mask,
            proto_mask: r.proto.mask,
            action: r.action.code(),
        }
    }

    /// Whether the rule matches `p`.
    #[inline(always)]
    pub fn matches(&self, p: &Packet) -> bool {
        (p.src.wrapping_sub(self.src_lo) <= self.src_span)
            && (p.dst.wrapping_sub(self.dst_lo) <= self.dst_span)
            && (p.sport.wrapping_sub(self.sport_lo) <= self.sport_span)
            && (p.dport.wrapping_sub(self.dport_lo) <= self.dport_span)
            && ((p.proto ^ self.proto) & self.proto_mask == 0)
    }

    /// Whether some packet matches both rules.
    #[inline(always)]
    pub fn overlaps(&self, o: &CompactRule) -> bool {
        #[inline(always)]
        fn ov32(a: u32, asp: u32, b: u32, bsp: u32) -> bool {
            (a <= b + bsp) & (b <= a + asp)
        }
        #[inline(always)]
        fn ov16(a: u16, asp: u16, b: u16, bsp: u16) -> bool {
            (a as u32 <= b as u32 + bsp as u32) & (b as u32 <= a as u32 + asp as u32)
        }
        ov32(self.src_lo, self.src_span, o.src_lo, o.src_span)
            & ov32(self.dst_lo, self.dst_span, o.dst_lo, o.dst_span)
            & ov16(self.sport_lo, self.sport_span, o.sport_lo, o.sport_span)
            & ov16(self.dport_lo, self.dport_span, o.dport_lo, o.dport_span)
            & ((self.proto ^ o.proto) & self.proto_mask & o.proto_mask == 0)
    }

    /// The action code.
    #[inline(always)]
    pub fn action_code(&self) -> u8 {
        self.action
    }

    /// The action.
    pub fn action(&self) -> Action {
        Action::from_code(self.action)
    }
}

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
    rule_aware: OnceLock<RuleAwarePlan>,
    calibration: OnceLock<Vec<Packet>>,
    rule_aware_choice: Mutex<HashMap<usize, FieldMask>>,
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
        Self {
            rules,
            table,
            deps,
            default_code,
            generation,
            rule_aware: OnceLock::new(),
            calibration: OnceLock::new(),
            rule_aware_choice: Mutex::new(HashMap::new()),
        }
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

    /// The action of a rule id, or the default for `None`.
    pub fn action_of(&self, rule: Option<u32>) -> Action {
        Action::from_code(rule.map_or(self.default_code, |r| self.table[r as usize].action))
    }

    /// The rule-aware dispatcher's field choices, scored once per rule set.
    pub fn rule_aware_plan(&self) -> &RuleAwarePlan {
        self.rule_aware.get_or_init(|| RuleAwarePlan::new(&self.rules.rules))
    }

    /// Gives the rule-aware dispatcher a calibration sample of traffic (once; later calls are
    /// ignored). Without one it generates headers inside the rules.
    pub fn calibrate(&self, sample: &[Packet]) {
        let _ = self.calibration.set(sample.to_vec());
    }

    /// The fields the rule-aware dispatcher hashes at k (scored once per k, then cached).
    pub fn rule_aware_fields(self: &Arc<Self>, k: usize) -> FieldMask {
        if let Some(m) = self.rule_aware_choice.lock().unwrap_or_else(|e| e.into_inner()).get(&k) {
            return *m;
        }
        let generated;
        let sample: &[Packet] = match self.calibration.get() {
            Some(s) if !s.is_empty() => s,
            _ => {
                generated =
                    crate::generate::headers_for_rules(&self.rules, crate::dispatch::rule_aware::GENERATED_SAMPLE, 1)
                        .unwrap_or_default();
                &generated
            }
        };
        let choice = if sample.is_empty() {
            FieldMask::FIVE_TUPLE
        } else {
            let shortlist: Vec<FieldMask> =
                score_with_law(self, sample, k).iter().take(SIMULATED_SHORTLIST).map(|s| s.mask).collect();
            score_with_mrf(self, sample, k, &shortlist).first().map_or(FieldMask::FIVE_TUPLE, |s| s.mask)
        };
        self.rule_aware_choice.lock().unwrap_or_else(|e| e.into_inner()).insert(k, choice);
        choice
    }

    /// Whether `u` depends on `v`: `v` has higher priority, they overlap, their actions differ.
    #[inline]
    pub fn depends(&self, u: u32, v: u32) -> bool {
        let (a, b) = (&self.table[u as usize], &self.table[v as usize]);
        v < u && a.action != b.action && a.overlaps(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{AddrRange, PortRange, ProtoMatch};
    use proptest::prelude::*;

    fn arb_rule() -> impl Strategy<Value = Rule> {
        (
            any::<u32>(),
            0u8..=32,
            any::<u32>(),
            0u8..=32,
            any::<u16>(),
            any::<u16>(),
            any::<u16>(),
            any::<u16>(),
            any::<u8>(),
            prop::bool::ANY,
        )
            .prop_map(|(s, sl, d, dl, a, b, c, e, pr, pm)| Rule {
                src: AddrRange::prefix(s, sl % 4 * 8 + sl / 8),
                dst: AddrRange::prefix(d, dl),
                sport: PortRange { lo: a.min(b), hi: a.max(b) },
                dport: PortRange { lo: c.min(e), hi: c.max(e) },
                proto: if pm { ProtoMatch::exact(pr % 3) } else { ProtoMatch::ANY },
                action: Action::Accept,
            })
    }

    proptest! {
        #[test]
        fn compact_agrees_with_reference(r in arb_rule(), o in arb_rule(), s in any::<u32>(), d in any::<u32>(),
                                         sp in any::<u16>(), dp in any::<u16>(), pr in 0u8..3) {
            let p = Packet::new(s, d, sp, dp, pr);
            let (cr, co) = (CompactRule::new(&r), CompactRule::new(&o));
            prop_assert_eq!(cr.matches(&p), r.matches(&p));
            prop_assert_eq!(cr.overlaps(&co), r.overlaps(&o));
            prop_assert_eq!(cr.overlaps(&co), co.overlaps(&cr));
            let lo = Packet::new(r.src.lo, r.dst.lo, r.sport.lo, r.dport.lo, r.proto.value);
            prop_assert!(cr.matches(&lo));
        }
    }
}
