//! The map layouts shared with `bpf/classifier.bpf.c`: constants and `#[repr(C)]` values,
//! field for field as the C side declares them (the C file is the reference; a test checks
//! the sizes).

/// Rules per generation (ids fit `u16`; a power of two for the kernel's index masks).
pub const MAX_RULES: usize = 16384;
/// Logical workers.
pub const MAX_WORKERS: usize = 1024;
/// Entries of the cpumap (CPU ids).
pub const MAX_CPUS: usize = 256;
/// Rule sets held at once: the one in force and the one being written.
pub const GENERATIONS: usize = 2;
/// Toeplitz byte slots (the 5-tuple, big-endian).
pub const HASH_SLOTS: usize = 13;
/// Match-position histogram buckets: 0, 1, 2–3, 4–7, …
pub const HIST_BUCKETS: usize = 16;
/// `rule_hits` slot of the default policy, per generation.
pub const DEFAULT_SLOT: usize = MAX_RULES;
/// Dispatcher counters, by index: why a frame was or was not redirected.
pub const REASONS: [&str; 6] = ["redirected", "not_ipv4", "truncated", "fragment", "vlan_depth", "redirect_failed"];
/// Entries of the dispatcher's counter map.
pub const REASON_SLOTS: usize = 8;

/// `struct sl_rule`: ranges as (low, span), as the user-space compact table.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelRule {
    pub src_lo: u32,
    pub src_span: u32,
    pub dst_lo: u32,
    pub dst_span: u32,
    pub sport_lo: u16,
    pub sport_span: u16,
    pub dport_lo: u16,
    pub dport_span: u16,
    pub proto: u8,
    pub proto_mask: u8,
    /// The rule's action code (dependencies compare these).
    pub action: u8,
    /// 0: pass, 1: drop.
    pub verdict: u8,
}

/// `struct sl_rule_table`: one generation's rules in one map value.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelRuleTable {
    pub r: [KernelRule; MAX_RULES],
}

impl KernelRuleTable {
    /// The table holding `rules` (the rest zero).
    pub fn of(rules: &[KernelRule]) -> Box<Self> {
        let mut t = Box::new(KernelRuleTable { r: [KernelRule::default(); MAX_RULES] });
        t.r[..rules.len()].copy_from_slice(rules);
        t
    }
}

/// `struct sl_settings`: fixed for the life of a loaded datapath.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelSettings {
    pub k: u32,
    pub reta_mask: u32,
    pub algo: u32,
    pub same_cap: u32,
    pub dep_cap: u32,
}

/// `struct sl_generation`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelGeneration {
    pub n_rules: u32,
    pub default_verdict: u32,
}

/// `LABEL_BASE` and `LABEL_GAP` of the C side: the order labels of a fresh order.
pub const LABEL_BASE: u32 = 1 << 31;
pub const LABEL_GAP: u32 = 1 << 16;

/// `struct sl_order`: one logical worker's order and each rule's order label (increasing front
/// to back; a move relabels only the moved rule, see the C side).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelOrder {
    pub order: [u16; MAX_RULES],
    pub label: [u32; MAX_RULES],
}

impl KernelOrder {
    /// Priority order (what every generation starts from).
    pub fn identity() -> Box<Self> {
        let mut o = Box::new(KernelOrder { order: [0; MAX_RULES], label: [0; MAX_RULES] });
        for i in 0..MAX_RULES {
            o.order[i] = i as u16;
            o.label[i] = LABEL_BASE + i as u32 * LABEL_GAP;
        }
        o
    }
}

/// `struct sl_worker_stats`: one logical worker's counters.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelWorkerStats {
    pub packets: u64,
    pub compared: u64,
    pub same_checks: u64,
    /// Order entries the MRF moves shifted.
    pub moved: u64,
    /// Times the order was relabelled (a gap between two neighbours' labels had closed).
    pub relabels: u64,
    pub hist: [u64; HIST_BUCKETS],
}

/// `struct sl_cpu_stats`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelCpuStats {
    pub packets: u64,
    pub compared: u64,
}

// SAFETY (all of them): `#[repr(C)]` structs of integers and integer arrays only, with no padding
// (sizes are multiples of their alignment and checked against the C layout in the tests), so
// every bit pattern is a valid value and copying them byte for byte to and from the kernel is
// sound, which is what `aya::Pod` requires.
unsafe impl aya::Pod for KernelRule {}
unsafe impl aya::Pod for KernelRuleTable {}
unsafe impl aya::Pod for KernelSettings {}
unsafe impl aya::Pod for KernelGeneration {}
unsafe impl aya::Pod for KernelOrder {}
unsafe impl aya::Pod for KernelWorkerStats {}
unsafe impl aya::Pod for KernelCpuStats {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    #[test]
    fn sizes_match_the_c_structs_and_have_no_padding() {
        assert_eq!(size_of::<KernelRule>(), 4 * 4 + 4 * 2 + 4);
        assert_eq!(size_of::<KernelRuleTable>(), 28 * MAX_RULES);
        assert_eq!(size_of::<KernelSettings>(), 20);
        assert_eq!(size_of::<KernelGeneration>(), 8);
        assert_eq!(size_of::<KernelOrder>(), 6 * MAX_RULES);
        assert_eq!(size_of::<KernelWorkerStats>(), 8 * (5 + HIST_BUCKETS));
        assert_eq!(size_of::<KernelCpuStats>(), 16);
    }

    #[test]
    fn identity_order() {
        let o = KernelOrder::identity();
        assert_eq!(o.order[5], 5);
        // Increasing front to back, and the last one still below 2^32.
        assert!(o.label.windows(2).all(|w| w[0] + LABEL_GAP == w[1]));
    }
}
