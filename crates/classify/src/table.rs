//! The compact rule table every worker's matching loop scans: each rule in the form that makes
//! a match and an overlap test cheap.
//!
//! A field test is one subtraction and one comparison: `x - lo <= span` (wrapping), so a
//! rule costs five branch-free tests combined with `&` and a single branch.

use crate::packet::Packet;
use crate::rules::{Action, Rule};

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

    /// The source and destination address ranges, each as (low, high).
    pub fn address_ranges(&self) -> ((u32, u32), (u32, u32)) {
        ((self.src_lo, self.src_lo + self.src_span), (self.dst_lo, self.dst_lo + self.dst_span))
    }

    /// The source and destination port ranges, each as (low, high).
    pub fn port_ranges(&self) -> ((u16, u16), (u16, u16)) {
        ((self.sport_lo, self.sport_lo + self.sport_span), (self.dport_lo, self.dport_lo + self.dport_span))
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
