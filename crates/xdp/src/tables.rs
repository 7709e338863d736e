//! What one generation of rules becomes in the kernel's maps: the compact rules, the
//! same-action overlap lists (compressed, from the dependency graph of `crates/classify`) and
//! the Toeplitz byte tables of the dispatcher's field set.

use crate::layout::{KernelRule, HASH_SLOTS, MAX_RULES};
use superlinear_classify::dispatch::rss::{FieldHasher, FieldMask};
use superlinear_classify::rules::Action;
use superlinear_classify::snapshot::Snapshot;
use superlinear_core::Error;
use superlinear_nftbench::chain::kernel_action;

/// One generation's tables, ready to copy into the maps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenerationTables {
    pub rules: Vec<KernelRule>,
    /// `same_start[u]..same_start[u + 1]` indexes rule u's same-action list in `same_ids`.
    pub same_start: Vec<u32>,
    pub same_ids: Vec<u16>,
    /// Dependency lists, compressed the same way.
    pub dep_start: Vec<u32>,
    pub dep_ids: Vec<u16>,
    pub default_verdict: u32,
}

/// The kernel verdict of an action: 0 passes, 1 drops (reject and queue drop, as nftables).
pub fn verdict(a: Action) -> u8 {
    if kernel_action(a) == Action::Accept {
        0
    } else {
        1
    }
}

impl GenerationTables {
    /// The tables of `snap`; refuses rule sets larger than the kernel's order arrays.
    pub fn build(snap: &Snapshot) -> Result<Self, Error> {
        let n = snap.len();
        if n == 0 {
            return Err(Error::config("the rule set has no rules".to_string()));
        }
        if n > MAX_RULES {
            return Err(Error::config(format!(
                "{n} rules: the XDP datapath holds at most {MAX_RULES} rules per generation"
            )));
        }
        let rules = snap
            .rules
            .rules
            .iter()
            .map(|r| KernelRule {
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
                verdict: verdict(r.action),
            })
            .collect();
        let (same_start, same_ids) = compressed(n, |u| snap.deps.same_action(u));
        let (dep_start, dep_ids) = compressed(n, |u| snap.deps.deps(u));
        let default_verdict = verdict(snap.rules.default_action) as u32;
        Ok(Self { rules, same_start, same_ids, dep_start, dep_ids, default_verdict })
    }
}

/// Per-rule lists as (start offsets, ids): rule u's list is `ids[start[u]..start[u + 1]]`.
fn compressed<'a>(n: usize, list: impl Fn(u32) -> &'a [u32]) -> (Vec<u32>, Vec<u16>) {
    let mut start = Vec::with_capacity(n + 1);
    let mut ids = Vec::new();
    start.push(0);
    for u in 0..n as u32 {
        ids.extend(list(u).iter().map(|&v| v as u16));
        start.push(ids.len() as u32);
    }
    (start, ids)
}

/// The dispatcher's Toeplitz tables for `fields`: slot-major, 256 entries per byte slot.
pub fn hash_tables(fields: FieldMask) -> Vec<u32> {
    let hasher = FieldHasher::new(fields);
    let tables = hasher.tables();
    (0..HASH_SLOTS).flat_map(|s| tables[s].iter().copied()).collect()
}

/// The indirection-table mask RSS uses for k workers (`RssToeplitzDispatcher`): the table has
/// max(128, next power of two ≥ k) entries and entry i names worker i mod k.
pub fn reta_mask(k: usize) -> u32 {
    (128usize.max(k.next_power_of_two()) - 1) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use superlinear_classify::dispatch::RssToeplitzDispatcher;
    use superlinear_classify::packet::Packet;
    use superlinear_classify::rules::{native, ReadOptions};
    use superlinear_core::dispatch::{Dispatcher, NO_LOADS};

    #[test]
    fn tables_and_worker_choice_agree_with_user_space_rss() {
        let fields = FieldMask::parse("sip/16,dport").unwrap();
        let t = hash_tables(fields);
        for k in [1usize, 3, 7, 200] {
            let mut d = RssToeplitzDispatcher::new(fields, k);
            for i in 0..500u32 {
                let p =
                    Packet::new(i.wrapping_mul(2654435761), !i, i as u16, (i * 7) as u16, [6, 17, 1][i as usize % 3]);
                let bytes: Vec<u8> = [
                    p.src.to_be_bytes().to_vec(),
                    p.dst.to_be_bytes().to_vec(),
                    p.sport.to_be_bytes().to_vec(),
                    p.dport.to_be_bytes().to_vec(),
                    vec![p.proto],
                ]
                .concat();
                let h = bytes.iter().enumerate().fold(0u32, |h, (s, &b)| h ^ t[s * 256 + b as usize]);
                let w = (h & reta_mask(k)) as usize % k;
                assert_eq!(w, d.route(&p, &NO_LOADS), "k={k} packet {i}");
            }
        }
    }

    #[test]
    fn same_action_lists_and_verdicts() {
        let text = "drop dport 9\naccept src 10.0.0.1 dport 80\naccept dport 80-90\nreject dport 85\n";
        let snap = Snapshot::new(native::parse(text, "t", &ReadOptions::default()).unwrap());
        let g = GenerationTables::build(&snap).unwrap();
        assert_eq!(g.same_start, vec![0, 0, 0, 1, 1]);
        assert_eq!(g.same_ids, vec![1]);
        assert_eq!((g.dep_start.clone(), g.dep_ids.clone()), (vec![0, 0, 0, 0, 1], vec![2]));
        assert_eq!(g.rules.iter().map(|r| r.verdict).collect::<Vec<_>>(), vec![1, 0, 0, 1]);
        assert_eq!((g.rules[2].dport_lo, g.rules[2].dport_span), (80, 10));
    }
}
