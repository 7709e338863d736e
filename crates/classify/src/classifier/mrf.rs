//! Move-Recursively-Forward (paper §4.1, Alg. 1): after a hit, the rule moves forward until
//! just behind its nearest dependency ahead of it; that dependency then moves the same way,
//! recursively, up to the head of the list. Without dependencies MRF is move-to-front; a
//! single dependency chain never moves.
//!
//! Two variants produce the same order after every lookup (tested) at different costs:
//!
//! * [`MrfVariant::Precomputed`], the optimisation the paper leaves for further study: the
//!   nearest dependency ahead is the one at the largest position among the rule's precomputed
//!   dependencies (an order label per rule, below); when a rule has more dependencies than
//!   rules ahead of it, a backward scan with the exact dependency test is cheaper and used
//!   instead. The moved block shifts by one with a `memmove`.
//! * [`MrfVariant::Swap`], the paper's iterative kernel variant: swap the rule with its
//!   predecessor unless it depends on it, in which case continue with the predecessor; one
//!   overlap test per position down to the head.
//!
//! **Order labels instead of positions** (issue 17). Comparing two rules' places in the order
//! is all the dependency walk and the exact-rule check need, and an order label answers it: a
//! `u64` per rule, increasing front to back. A move gives the moved rule a label between its new
//! neighbours' (or below the front's) and leaves every other label alone, since the shifted
//! block keeps its relative order; only when two neighbours' labels are adjacent is the whole
//! order relabelled (every 32 moves to one spot at worst, far rarer in practice). A position
//! array instead had to be rewritten for the whole shifted block on every hit, a scattered
//! store per shifted rule: that rewrite was the largest part of MRF's cost per packet at k = 1
//! on the ClassBench sets, more than the scan. The two indices a move needs (where the exact
//! rule and the nearest dependency stand) are found by a sequential search of the order, over
//! at most the block the move shifts anyway.
//!
//! A copy of the rules' compact bodies laid out in scan order (so the scan streams without the
//! `order[i]` indirection) was measured too and left out: moving 28-byte bodies with the order
//! cost more than the indirection (see docs/classification.md). What the order carries instead
//! is an 8-byte prefilter key per entry ([`prefilter`]): the scan streams the keys and reads
//! the table only for the rules whose key passes, and a move shifts the keys with the ids.
//!
//! **The second work counter** ([`Lookup::moved`]): the upkeep that "rules compared" leaves
//! out. `Precomputed` counts every position rewritten in the order by a move (the moved rule
//! and each rule of the block shifted behind it), every dependency-list entry read to find the
//! nearest dependency ahead, every rule tested by the backward-scan fallback, and every
//! same-action-list entry read by the exact-rule check in `find` (the entries that are then
//! compared are work as well). `Swap` counts one dependency test per position it passes and
//! two positions rewritten per swap, plus the same `find` walk.
//!
//! The order invariant (every rule behind all of its dependencies) keeps every verdict equal
//! to the static list's. The dependency definition ignores overlaps with equal actions, so the
//! first rule found in the current order may be a lower-priority rule with the right verdict;
//! the exact first-match rule is then the highest-priority rule among those same-action
//! overlaps that sit *behind* the found one and match the packet (the others were already
//! compared). Those extra comparisons count as work. That rule is the one moved forward.

use super::prefilter;
use super::stats::StatsRecorder;
use super::updates::RuleUpdates;
use super::{ClassifierOptions, FootprintModel, HotCount, Lookup, PacketClassifier};
use crate::packet::Packet;
use crate::rules::Action;
use crate::snapshot::Snapshot;
use crate::table::CompactRule;
use std::sync::Arc;
use superlinear_core::Worker;

/// How MRF finds the dependency a rule stops behind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MrfVariant {
    /// Precomputed dependency lists (with a backward-scan fallback).
    Precomputed,
    /// The paper's iterative swap with an overlap test per step.
    Swap,
}

/// A self-adjusting MRF classifier: one per worker, its order private, the rules shared.
pub struct MrfClassifier {
    snap: Arc<Snapshot>,
    /// Rule ids in this worker's order, front first.
    order: Vec<u32>,
    /// The prefilter key of each rule in `order`, in the same order (moved with it), so that
    /// the scan streams ([`prefilter`]).
    keys: Vec<prefilter::Key>,
    /// Each rule id's order label: increasing front to back (maintained only when `track`).
    label: Vec<u64>,
    /// Second work counter so far (see the module documentation).
    moved_total: u64,
    /// Times the whole order was relabelled (a closed label gap).
    relabels: u64,
    variant: MrfVariant,
    /// Whether order labels are read at all (some rule has dependencies or same-action
    /// overlaps); without, they are not maintained.
    track: bool,
    updates: Option<Arc<RuleUpdates>>,
    stats: StatsRecorder,
}

fn tracks_positions(snap: &Snapshot) -> bool {
    snap.deps.edges() > 0 || snap.deps.same_action_pairs() > 0
}

/// Label of the front of a fresh or relabelled order: room for 2^62 / LABEL_GAP moves to the
/// front before the labels run out (and the order is relabelled).
const LABEL_BASE: u64 = 1 << 62;
/// Distance of neighbouring labels after (re)labelling: 32 moves into one gap before it closes.
const LABEL_GAP: u64 = 1 << 32;

fn fresh_order(n: usize) -> (Vec<u32>, Vec<u64>) {
    // Rule ids are u32; labels up to LABEL_BASE + 2^32 · LABEL_GAP fit a u64.
    let order: Vec<u32> = (0..n as u32).collect();
    let label = (0..n as u64).map(|j| LABEL_BASE + j * LABEL_GAP).collect();
    (order, label)
}

/// Ids searched per step by [`position_of_id`] and [`last_position_of_id`].
const SEARCH_BLOCK: usize = 16;

/// The first index of `id` in `ids`. A block of ids is compared at once (an OR of equalities,
/// which vectorises) before it is searched one by one: the moves search the order over the
/// whole block they shift, about as many entries as the scan compares rules.
#[inline]
fn position_of_id(ids: &[u32], id: u32) -> Option<usize> {
    let blocks = ids.chunks_exact(SEARCH_BLOCK);
    let done = ids.len() - blocks.remainder().len();
    for (b, block) in blocks.enumerate() {
        if block.iter().fold(0u32, |any, &r| any | u32::from(r == id)) != 0 {
            return block.iter().position(|&r| r == id).map(|j| b * SEARCH_BLOCK + j);
        }
    }
    ids[done..].iter().position(|&r| r == id).map(|j| done + j)
}

/// The last index of `id` in `ids` (blocks from the end, as [`position_of_id`]).
#[inline]
fn last_position_of_id(ids: &[u32], id: u32) -> Option<usize> {
    let blocks = ids.rchunks_exact(SEARCH_BLOCK);
    let head = blocks.remainder().len();
    for (b, block) in blocks.enumerate() {
        if block.iter().fold(0u32, |any, &r| any | u32::from(r == id)) != 0 {
            let start = ids.len() - (b + 1) * SEARCH_BLOCK;
            return block.iter().rposition(|&r| r == id).map(|j| start + j);
        }
    }
    ids[..head].iter().rposition(|&r| r == id)
}

/// Entries of an upkeep pass, for the second work counter.
#[inline(always)]
fn count(n: usize) -> u64 {
    n as u64
}

impl MrfClassifier {
    /// An MRF list over `snap`, starting in priority order.
    pub fn new(snap: Arc<Snapshot>, variant: MrfVariant) -> Self {
        Self::with_options(snap, variant, ClassifierOptions::default())
    }

    /// With statistics delivered to a sink on drop.
    pub fn with_options(snap: Arc<Snapshot>, variant: MrfVariant, opts: ClassifierOptions) -> Self {
        let (order, label) = fresh_order(snap.len());
        let stats = StatsRecorder::new(opts.stats, snap.len(), opts.window);
        let track = tracks_positions(&snap);
        let keys = snap.table.iter().map(prefilter::key).collect();
        Self { snap, order, keys, label, moved_total: 0, relabels: 0, variant, track, updates: None, stats }
    }

    /// A classifier following a [`RuleUpdates`] handle: before each lookup it checks (one
    /// atomic load) whether a new rule set was published and, if so, switches to it with a
    /// fresh order in priority order. A packet is always classified against one whole
    /// generation.
    pub fn following(updates: Arc<RuleUpdates>, variant: MrfVariant) -> Self {
        Self::following_with_options(updates, variant, ClassifierOptions::default())
    }

    /// Following a [`RuleUpdates`] handle, with statistics delivered to a sink on drop.
    pub fn following_with_options(updates: Arc<RuleUpdates>, variant: MrfVariant, opts: ClassifierOptions) -> Self {
        let mut c = Self::with_options(updates.current(), variant, opts);
        c.updates = Some(updates);
        c
    }

    /// The rule set in force.
    pub fn snapshot(&self) -> &Arc<Snapshot> {
        &self.snap
    }

    /// Bytes a worker allocates for itself per rule: an order entry (4), its prefilter key (8)
    /// and its order label (8). The rule table and dependency lists it reads are the snapshot's.
    pub const OWN_BYTES_PER_RULE: usize =
        std::mem::size_of::<u32>() + std::mem::size_of::<prefilter::Key>() + std::mem::size_of::<u64>();

    /// Bytes this worker allocates for itself ([`Self::OWN_BYTES_PER_RULE`] a rule).
    pub fn own_bytes(&self) -> usize {
        self.order.len() * Self::OWN_BYTES_PER_RULE
    }

    /// The current order: rule ids, front first.
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    /// Where rule `rule` stands in this worker's order now (0 = front).
    pub fn position_of(&self, rule: u32) -> usize {
        self.order.iter().position(|&r| r == rule).unwrap_or(self.order.len())
    }

    /// The work `p` would cost now, without reordering: rules compared until the first match
    /// in the current order (plus the same-action check), or the whole list.
    pub fn cost_now(&self, p: &Packet) -> u64 {
        self.find(p).2
    }

    /// The second work counter so far: entries moved and list entries walked (see the module
    /// documentation).
    pub fn moved(&self) -> u64 {
        self.moved_total
    }

    /// Times this worker relabelled its whole order (bookkeeping, not counted as work).
    pub fn relabels(&self) -> u64 {
        self.relabels
    }

    /// (position where the scan stopped, exact first-match rule, work, entries walked) without
    /// reordering.
    #[inline(always)]
    fn find(&self, p: &Packet) -> (usize, Option<u32>, u64, u64) {
        let (i, mut work) = self.scan(p);
        let Some(&found) = self.order.get(i) else {
            return (i, None, work, 0);
        };
        let mut best = found;
        let table = &self.snap.table;
        let same = self.snap.deps.same_action(found);
        let here = if same.is_empty() { 0 } else { self.label[found as usize] };
        for &v in same {
            if self.label[v as usize] > here && v < best {
                work += 1;
                if table[v as usize].matches(p) {
                    best = v;
                }
            }
        }
        (i, Some(best), work, count(same.len()))
    }

    fn maybe_reload(&mut self) {
        if let Some(u) = &self.updates {
            if u.version() != self.snap.generation {
                let snap = u.current();
                let (order, label) = fresh_order(snap.len());
                self.stats.resize(snap.len());
                self.track = tracks_positions(&snap);
                self.keys = snap.table.iter().map(prefilter::key).collect();
                self.snap = snap;
                self.order = order;
                self.label = label;
            }
        }
    }

    /// Scans the current order: (position of the first match or n, work). The prefilter keys
    /// stream in order and only the rules that pass them are read from the table; work counts
    /// every rule up to the match, as a plain scan of the order would ([`prefilter`]).
    #[inline(always)]
    fn scan(&self, p: &Packet) -> (usize, u64) {
        match prefilter::first_match(&self.keys, &self.order, &self.snap.table, p) {
            Some(i) => (i, i as u64 + 1),
            None => (self.order.len(), self.order.len() as u64),
        }
    }

    /// Classifies one packet and self-adjusts.
    #[inline]
    pub fn classify(&mut self, p: &Packet) -> Lookup {
        self.maybe_reload();
        let (i, best, work, walked) = self.find(p);
        let Some(best) = best else {
            let lookup = Lookup {
                rule: None,
                action: Action::from_code(self.snap.default_code),
                work,
                position: i as u32,
                chain: 0,
                moved: 0,
            };
            self.stats.record(&lookup);
            return lookup;
        };
        let action = self.snap.table[best as usize].action();
        // The exact rule sits behind the one found, if it is another one.
        let at = if best == self.order[i] { i } else { i + self.index_from(i, best) };
        let (chain, moved) = match self.variant {
            MrfVariant::Precomputed => self.move_precomputed(best, at),
            MrfVariant::Swap => self.move_swap(at),
        };
        let moved = moved + walked;
        self.moved_total += moved;
        let lookup = Lookup { rule: Some(best), action, work, position: i as u32, chain, moved };
        self.stats.record(&lookup);
        lookup
    }

    /// Where `rule` stands at or behind position `from` (it must be there).
    #[inline]
    fn index_from(&self, from: usize, rule: u32) -> usize {
        position_of_id(&self.order[from..], rule).expect("the rule stands behind")
    }

    /// Moves the rule at `p` to `target` (≤ p), shifting the block in between back by one;
    /// returns the positions rewritten. Only the moved rule's label changes (a relabelling of
    /// the whole order aside, when its new neighbours' labels are adjacent).
    #[inline]
    fn shift(&mut self, target: usize, p: usize) -> u64 {
        if target >= p {
            return 0;
        }
        let moved = self.order[p];
        if self.track {
            // Between the new neighbours: the rule ahead (if any) and the one now at `target`.
            let behind = self.label[self.order[target] as usize];
            let ahead = if target == 0 {
                behind.saturating_sub(2 * LABEL_GAP)
            } else {
                self.label[self.order[target - 1] as usize]
            };
            if behind - ahead >= 2 {
                self.label[moved as usize] = ahead + (behind - ahead) / 2;
            } else {
                self.move_entry(target, p);
                self.relabel();
                return count(p - target + 1);
            }
        }
        self.move_entry(target, p);
        count(p - target + 1)
    }

    /// Moves the entry at `p` (rule and prefilter key) to `target` < `p`, shifting the block in
    /// between back by one.
    #[inline(always)]
    fn move_entry(&mut self, target: usize, p: usize) {
        let (moved, key) = (self.order[p], self.keys[p]);
        self.order.copy_within(target..p, target + 1);
        self.order[target] = moved;
        self.keys.copy_within(target..p, target + 1);
        self.keys[target] = key;
    }

    /// Spreads the labels evenly again, front to back (when a gap between two neighbours has
    /// closed, or the front has reached label 0).
    #[cold]
    fn relabel(&mut self) {
        self.relabels += 1;
        for (j, &r) in self.order.iter().enumerate() {
            self.label[r as usize] = LABEL_BASE + j as u64 * LABEL_GAP;
        }
    }

    /// MRF with precomputed dependencies; returns (chain levels touched, entries moved and
    /// walked).
    fn move_precomputed(&mut self, rule: u32, at: usize) -> (u32, u64) {
        let mut y = rule;
        let mut p = at;
        let mut levels = 0;
        let mut moved = 0;
        loop {
            levels += 1;
            let deps = self.snap.deps.deps(y);
            let next = if deps.is_empty() {
                None
            } else if deps.len() <= p {
                moved += count(deps.len());
                let z = deps.iter().copied().max_by_key(|&v| self.label[v as usize]).expect("not empty");
                // Its index: the nearest place ahead of `p` holding it.
                last_position_of_id(&self.order[..p], z)
            } else {
                // More dependencies than rules ahead: scan back with the exact test.
                let found = (0..p).rev().find(|&j| self.snap.depends(y, self.order[j]));
                moved += count(found.map_or(p, |j| p - j));
                found
            };
            let target = next.map_or(0, |j| j + 1);
            moved += self.shift(target, p);
            match next {
                None => return (levels, moved),
                Some(j) => {
                    // The dependency stays where it was: the shifted block lies behind it.
                    y = self.order[j];
                    p = j;
                }
            }
        }
    }

    /// The paper's iterative swap variant; returns (chain levels touched, dependency tests
    /// plus positions rewritten).
    fn move_swap(&mut self, at: usize) -> (u32, u64) {
        let mut cur = at;
        let mut levels = 1;
        let mut moved = count(at);
        while cur > 0 {
            let (a, b) = (self.order[cur - 1], self.order[cur]);
            if self.snap.depends(b, a) {
                levels += 1;
            } else {
                self.order.swap(cur - 1, cur);
                self.keys.swap(cur - 1, cur);
                moved += 2;
                if self.track {
                    self.label.swap(a as usize, b as usize);
                }
            }
            cur -= 1;
        }
        (levels, moved)
    }
}

impl Worker<Packet> for MrfClassifier {
    #[inline]
    fn serve(&mut self, p: &Packet) -> u64 {
        self.classify(p).work
    }

    fn entries_moved(&self) -> Option<u64> {
        Some(self.moved_total)
    }
}

impl PacketClassifier for MrfClassifier {
    #[inline]
    fn classify(&mut self, p: &Packet) -> Lookup {
        MrfClassifier::classify(self, p)
    }

    fn snapshot(&self) -> &Arc<Snapshot> {
        &self.snap
    }

    fn own_bytes(&self) -> usize {
        MrfClassifier::own_bytes(self)
    }

    /// Reads the snapshot's table and dependency and same-action lists; hot: its active rules.
    fn footprint_model(&self) -> FootprintModel {
        let rule = std::mem::size_of::<CompactRule>();
        FootprintModel {
            shared_bytes: self.snap.table.len() * rule + self.snap.deps.bytes(),
            hot: "active rules (compact rule, order entry, prefilter key, label)",
            item_bytes: rule + Self::OWN_BYTES_PER_RULE,
            count: HotCount::ActiveRules,
        }
    }

    fn position_of(&self, rule: u32) -> Option<usize> {
        Some(MrfClassifier::position_of(self, rule))
    }

    fn cost_now(&self, p: &Packet) -> Option<u64> {
        Some(MrfClassifier::cost_now(self, p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::SyntheticSpec;
    use crate::rules::{native, ReadOptions};

    #[test]
    fn block_searches_find_the_first_and_the_last_occurrence() {
        for n in [0usize, 1, 15, 16, 17, 33, 100] {
            let ids: Vec<u32> = (0..n as u32).map(|i| i % 7).collect();
            for id in 0..9u32 {
                assert_eq!(position_of_id(&ids, id), ids.iter().position(|&r| r == id), "n = {n}, id = {id}");
                assert_eq!(last_position_of_id(&ids, id), ids.iter().rposition(|&r| r == id), "n = {n}, id = {id}");
            }
        }
    }

    fn fig6() -> Arc<Snapshot> {
        let text = "accept src 192.168.178.33 dst 23.0.0.45 dport 53 proto udp\n\
            drop src 10.10.10.0/24 dst 23.0.0.45/32 dport 443 proto tcp\n\
            drop src 192.168.178.0/24 dst 23.0.0.45/32 dport 53 proto udp\n\
            accept src 10.10.10.10/32 dst 23.0.0.45/32 proto tcp\n\
            accept src 192.168.0.0/16 dst 23.0.0.0/8\n";
        Arc::new(Snapshot::new(native::parse(text, "fig6", &ReadOptions::default()).unwrap()))
    }

    #[test]
    fn reproduces_the_papers_example() {
        for variant in [MrfVariant::Precomputed, MrfVariant::Swap] {
            let mut c = MrfClassifier::new(fig6(), variant);
            // A packet matching rule 5 only (192.168.0.1 -> 23.0.0.45 UDP 1 -> 3478).
            let p5 = Packet::new(0xc0a8_0001, 0x1700_002d, 1, 3478, 17);
            let l = c.classify(&p5);
            assert_eq!((l.rule, l.action, l.work), (Some(4), Action::Accept, 5));
            assert_eq!(c.order(), &[0, 2, 1, 4, 3], "{variant:?}");
            assert_eq!(c.classify(&p5).work, 4);
            assert_eq!(c.order(), &[0, 2, 4, 1, 3]);
            assert_eq!(c.classify(&p5).work, 3);
            // Rule 4 moves independently: <2,1,4,3,5> then <2,4,1,3,5> from the initial order.
            let mut c = MrfClassifier::new(fig6(), variant);
            let p4 = Packet::new(0x0a0a_0a0a, 0x1700_002d, 1, 22, 6);
            assert_eq!(c.classify(&p4).rule, Some(3));
            assert_eq!(c.order(), &[1, 0, 3, 2, 4]);
            c.classify(&p4);
            assert_eq!(c.order(), &[1, 3, 0, 2, 4]);
            assert_eq!(c.position_of(3), 1);
        }
    }

    #[test]
    fn reports_the_exact_rule_past_same_action_overlaps() {
        // Rule 1 (accept, narrow) sits behind rule 2 (accept, wide) after 2 moves forward;
        // a packet matching both must still report rule 1... after 2 moved ahead of it.
        let text = "drop dport 9\naccept src 10.0.0.1 dport 80\naccept dport 80-90\n";
        let snap = Arc::new(Snapshot::new(native::parse(text, "t", &ReadOptions::default()).unwrap()));
        let mut c = MrfClassifier::new(snap, MrfVariant::Precomputed);
        let wide = Packet::new(0x0a00_0002, 1, 1, 85, 6);
        assert_eq!(c.classify(&wide).rule, Some(2));
        assert_eq!(c.order()[0], 2);
        let narrow = Packet::new(0x0a00_0001, 1, 1, 80, 6);
        let l = c.classify(&narrow);
        assert_eq!(l.rule, Some(1));
        assert_eq!(l.work, 2, "one scan step plus one same-action check");
    }

    /// Both variants, the brute-force first match and the order invariant, packet by packet.
    fn agree(snap: &Arc<Snapshot>, packets: &[Packet]) -> (MrfClassifier, MrfClassifier) {
        let mut pre = MrfClassifier::new(snap.clone(), MrfVariant::Precomputed);
        let mut swap = MrfClassifier::new(snap.clone(), MrfVariant::Swap);
        for p in packets {
            let want = snap.rules.first_match(p).map(|r| r as u32);
            let (a, b) = (pre.classify(p), swap.classify(p));
            assert_eq!((a.rule, a.work, a.chain), (want, b.work, b.chain), "{p}");
            assert_eq!(pre.order(), swap.order(), "{p}");
        }
        for u in 0..snap.len() as u32 {
            for &v in snap.deps.deps(u) {
                assert!(pre.position_of(v) < pre.position_of(u), "rule {u} ahead of its dependency {v}");
            }
        }
        (pre, swap)
    }

    #[test]
    fn deep_dependency_chains_keep_both_variants_exact_and_equal() {
        for (depth, seed) in [(4, 1), (12, 2), (31, 3)] {
            let spec = SyntheticSpec { rules: 40, depth, flows_per_rule: 3, catch_all_fraction: 0.05 };
            let snap = Arc::new(Snapshot::new(spec.rule_set().unwrap()));
            assert!(snap.deps.max_depth() >= depth as u32, "depth {depth}");
            let (pre, _) = agree(&snap, &spec.trace(4_000, seed).unwrap());
            assert!(pre.moved() > 0);
        }
    }

    #[test]
    fn closed_label_gaps_relabel_without_changing_the_order() {
        // Rule 0 is a dependency of every other rule; hitting rules 200, 199, ... moves each
        // right behind rule 0, into the one gap between rule 0 and the rule moved before: the
        // gap closes after about 32 moves and the order is relabelled, more than once.
        let mut text = String::from("drop src 10.0.0.1 dport 0-1000\n");
        for i in 1..=200 {
            text.push_str(&format!("accept dport {i}\n"));
        }
        let snap = Arc::new(Snapshot::new(native::parse(&text, "t", &ReadOptions::default()).unwrap()));
        let packets: Vec<Packet> = (1..=200u16).rev().map(|i| Packet::new(0x0a00_0002, 1, 1, i, 6)).collect();
        let (pre, _) = agree(&snap, &[packets.clone(), packets].concat());
        assert!(pre.relabels() >= 2, "{} relabels", pre.relabels());
        assert_eq!(pre.order()[0], 0);
    }

    #[test]
    fn the_second_counter_counts_moves_and_walks() {
        // Fig. 6, rule 5 hit from the initial order: the exact-rule check reads its one
        // same-action overlap (rule 1); its one dependency (rule 3) is read, and it moves from
        // position 4 to 3 (2 positions rewritten); rule 3's one dependency (rule 1) is read and
        // it moves from 2 to 1 (2 positions); rule 1 has none and stays at the front.
        let mut c = MrfClassifier::new(fig6(), MrfVariant::Precomputed);
        let l = c.classify(&Packet::new(0xc0a8_0001, 0x1700_002d, 1, 3478, 17));
        assert_eq!(l.moved, 1 + (1 + 2) + (1 + 2));
        assert_eq!(c.order(), &[0, 2, 1, 4, 3]);
        assert_eq!(c.moved(), l.moved);
        assert_eq!(c.entries_moved(), Some(l.moved));
    }
}
