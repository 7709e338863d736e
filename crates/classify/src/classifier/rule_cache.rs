//! `rule-cache`: a self-adjusting front for the TupleMerge index. Each worker keeps a small
//! bounded list of recently matched rules (the *front*), ordered MRF-style (paper §4.1, Alg. 1),
//! and scans it first; a miss falls through to the tuple-space search
//! ([`TupleSpace`](super::tuple_merge::TupleSpace)) and promotes the matched rule into the front.
//! Optionally a direct-mapped exact-match flow cache (5-tuple → rule) sits before the front.
//!
//! **The cover-set invariant.** A rule sits in the front only together with its *cover set*:
//! every higher-priority rule that overlaps it, whatever its action (the dependencies of
//! `deps.rs` plus the same-action overlaps), and, recursively, their cover sets. Then a front
//! answer is the true first match: if the front's scan first matches `f`, the true first match
//! `t ≤ f` matches the packet too, so it overlaps `f` and is in the front. If `t`'s action
//! differed, `f` would depend on `t`, and MRF keeps every rule behind its dependencies, so the
//! scan would have met `t` first; hence `t` is one of `f`'s same-action overlaps behind `f`, and
//! checking those (as `mrf.rs` does) finds it. Same-action overlaps are in the cover set so that
//! the rule *index* — and with it every per-rule counter — is exact, not only the verdict.
//! A rule whose cover closure exceeds the front's capacity is never admitted (it is always
//! found by the fall-through).
//!
//! **Eviction** takes the rule nearest the tail that no front rule lists in its cover set (a
//! reference count per rule); such a rule always exists (the lowest-priority front rule outside
//! the closure being admitted), so admission never fails and the invariant holds after it.
//!
//! **Work units**: front rules compared (scan positions plus same-action checks) plus, on a
//! front miss, the tuple-space work (slots probed plus rules compared); a flow-cache hit costs 1
//! (one entry compared) and a flow-cache miss adds 1 to what follows. The second counter
//! (entries moved, as `mrf.rs` counts it): front positions rewritten by admissions, evictions and
//! MRF moves, plus dependency and same-action list entries read.

use super::flow_cache::{FlowCache, Probe, FLOW_ENTRY_BYTES};
use super::stats::StatsRecorder;
use super::tuple_merge::TupleSpace;
use super::{ClassifierOptions, FootprintModel, HotCount, Lookup, PacketClassifier};
use crate::packet::Packet;
use crate::rules::Action;
use crate::snapshot::Snapshot;
use crate::table::CompactRule;
use std::sync::Arc;
use superlinear_core::Worker;

/// Default front capacity in rules.
pub const DEFAULT_FRONT: usize = 8;
/// Default flow-cache entries when the flow cache is on (a power of two).
pub const DEFAULT_FLOW_ENTRIES: usize = 4096;

const ABSENT: u32 = u32::MAX;
/// Closure state markers in `closure_start`.
const UNKNOWN: u32 = u32::MAX;
const TOO_BIG: u32 = u32::MAX - 1;

/// The rule-cache classifier: one per worker, its front private, the index its own copy.
pub struct RuleCacheClassifier {
    snap: Arc<Snapshot>,
    space: TupleSpace,
    capacity: usize,
    /// Front rule ids, front first, and their compact forms (scanned contiguously).
    front: Vec<u32>,
    front_rules: Vec<CompactRule>,
    /// Per rule: its position in the front, or `ABSENT`.
    pos: Vec<u32>,
    /// Per rule: front rules whose direct cover set lists it (evictable at 0).
    refs: Vec<u32>,
    /// Per rule: its cover closure (ascending ids, itself last) in `closure_ids`, or a marker.
    closure_start: Vec<u32>,
    closure_len: Vec<u16>,
    closure_ids: Vec<u32>,
    /// Scratch for the closure search (a visit stamp per rule) and admissions.
    stamp: Vec<u32>,
    stamp_now: u32,
    scratch: Vec<u32>,
    /// Upkeep so far (the second work counter, `Lookup::moved`): front positions rewritten by
    /// inserts, removals and moves, plus dependency and same-action list entries read.
    moved_total: u64,
    flow: Option<FlowCache>,
    stats: StatsRecorder,
}

impl RuleCacheClassifier {
    /// A rule cache over `snap` with a front of `capacity` rules and, with `flow_entries > 0`,
    /// a flow cache of that many entries (rounded up to a power of two).
    pub fn new(snap: Arc<Snapshot>, capacity: usize, flow_entries: usize) -> Self {
        Self::with_options(snap, capacity, flow_entries, ClassifierOptions::default())
    }

    /// With statistics delivered to a sink on drop.
    pub fn with_options(snap: Arc<Snapshot>, capacity: usize, flow_entries: usize, opts: ClassifierOptions) -> Self {
        let n = snap.len();
        let stats = StatsRecorder::new(opts.stats, n, opts.window);
        let capacity = capacity.clamp(1, u16::MAX as usize);
        Self {
            space: TupleSpace::build(&snap),
            snap,
            capacity,
            front: Vec::with_capacity(capacity),
            front_rules: Vec::with_capacity(capacity),
            pos: vec![ABSENT; n],
            refs: vec![0; n],
            closure_start: vec![UNKNOWN; n],
            closure_len: vec![0; n],
            closure_ids: Vec::new(),
            stamp: vec![0; n],
            stamp_now: 0,
            scratch: Vec::new(),
            moved_total: 0,
            flow: (flow_entries > 0).then(|| FlowCache::new(flow_entries)),
            stats,
        }
    }

    /// Bytes this worker allocates for itself: its own tuple-space index, the front, the
    /// per-rule position, reference-count, closure and stamp arrays, the closures found so far
    /// and the flow cache (capacities, so the count does not depend on what was served).
    pub fn own_bytes(&self) -> usize {
        use std::mem::size_of;
        self.space.bytes()
            + self.front.capacity() * size_of::<u32>()
            + self.front_rules.capacity() * size_of::<CompactRule>()
            + (self.pos.len() + self.refs.len() + self.closure_start.len() + self.stamp.len()) * size_of::<u32>()
            + self.closure_len.len() * size_of::<u16>()
            + (self.closure_ids.capacity() + self.scratch.capacity()) * size_of::<u32>()
            + self.flow.as_ref().map_or(0, |f| f.len() * FLOW_ENTRY_BYTES)
    }

    /// Flow-cache entries (0: no flow cache).
    pub fn flow_entries(&self) -> usize {
        self.flow.as_ref().map_or(0, |f| f.len())
    }

    /// The front: rule ids, front first.
    pub fn front(&self) -> &[u32] {
        &self.front
    }

    /// Higher-priority rules overlapping `u`, any action: its direct cover set.
    fn cover(&self, u: u32) -> impl Iterator<Item = u32> + '_ {
        self.snap.deps.deps(u).iter().chain(self.snap.deps.same_action(u)).copied()
    }

    /// Whether the front holds every rule's cover set, MRF order (each rule behind its
    /// dependencies) and consistent positions and reference counts (tests).
    pub fn invariant_holds(&self) -> bool {
        let mut refs = vec![0u32; self.snap.len()];
        for (i, &u) in self.front.iter().enumerate() {
            if self.pos[u as usize] != i as u32 || self.front_rules[i] != self.snap.table[u as usize] {
                return false;
            }
            for v in self.cover(u) {
                refs[v as usize] += 1;
                if self.pos[v as usize] == ABSENT {
                    return false;
                }
            }
            if self.snap.deps.deps(u).iter().any(|&d| self.pos[d as usize] > i as u32) {
                return false;
            }
        }
        refs == self.refs && self.front.len() <= self.capacity
    }

    /// The cover closure of `t` (ascending, `t` last) if it fits the front, computed once.
    fn closure(&mut self, t: u32) -> Option<(usize, usize)> {
        let ti = t as usize;
        if self.closure_start[ti] == UNKNOWN {
            self.closure_start[ti] = TOO_BIG;
            self.stamp_now = self.stamp_now.wrapping_add(1).max(1);
            let stamp = self.stamp_now;
            let mut found = vec![t];
            self.stamp[ti] = stamp;
            let mut next = 0;
            while next < found.len() && found.len() <= self.capacity {
                let u = found[next];
                next += 1;
                for v in self.snap.deps.deps(u).iter().chain(self.snap.deps.same_action(u)).copied() {
                    if self.stamp[v as usize] != stamp {
                        self.stamp[v as usize] = stamp;
                        found.push(v);
                    }
                }
            }
            if found.len() <= self.capacity {
                found.sort_unstable();
                self.closure_start[ti] = self.closure_ids.len() as u32;
                self.closure_len[ti] = found.len() as u16;
                self.closure_ids.extend(found);
            }
        }
        match self.closure_start[ti] {
            TOO_BIG => None,
            s => Some((s as usize, self.closure_len[ti] as usize)),
        }
    }

    /// Inserts `rule` at front position `at`, shifting the rest back.
    fn insert_at(&mut self, at: usize, rule: u32) {
        self.front.insert(at, rule);
        self.front_rules.insert(at, self.snap.table[rule as usize]);
        self.moved_total += (self.front.len() - at) as u64;
        for (j, &r) in self.front.iter().enumerate().skip(at) {
            self.pos[r as usize] = j as u32;
        }
    }

    /// Removes the rule at front position `at`.
    fn remove_at(&mut self, at: usize) {
        let rule = self.front.remove(at);
        self.front_rules.remove(at);
        self.pos[rule as usize] = ABSENT;
        self.moved_total += (self.front.len() - at) as u64;
        for (j, &r) in self.front.iter().enumerate().skip(at) {
            self.pos[r as usize] = j as u32;
        }
        let (deps, same) = (self.snap.deps.deps(rule), self.snap.deps.same_action(rule));
        for &v in deps.iter().chain(same) {
            self.refs[v as usize] -= 1;
        }
    }

    /// Moves the front rule at `p` to `target` (≤ p), shifting the block in between back.
    fn shift(&mut self, target: usize, p: usize) {
        if target >= p {
            return;
        }
        let (moved, moved_rule) = (self.front[p], self.front_rules[p]);
        self.front.copy_within(target..p, target + 1);
        self.front_rules.copy_within(target..p, target + 1);
        self.front[target] = moved;
        self.front_rules[target] = moved_rule;
        self.moved_total += (p - target + 1) as u64;
        for (j, &r) in self.front.iter().enumerate().take(p + 1).skip(target) {
            self.pos[r as usize] = j as u32;
        }
    }

    /// MRF (Alg. 1) inside the front: the rule at `at` moves to just behind its nearest
    /// dependency, which then moves the same way; returns the chain levels touched.
    fn promote(&mut self, at: usize) -> u32 {
        let mut p = at;
        let mut y = self.front[at];
        let mut levels = 0;
        loop {
            levels += 1;
            self.moved_total += self.snap.deps.deps(y).len() as u64;
            // Every dependency of a front rule is in the front (cover-set invariant).
            let next = self.snap.deps.deps(y).iter().copied().max_by_key(|&v| self.pos[v as usize]);
            let target = next.map_or(0, |z| self.pos[z as usize] as usize + 1);
            self.shift(target, p);
            match next {
                None => return levels,
                Some(z) => {
                    y = z;
                    p = self.pos[z as usize] as usize;
                }
            }
        }
    }

    /// Admits `t` (the fall-through's answer) with its cover closure; returns the chain levels
    /// of its promotion (0 when it does not fit).
    fn admit(&mut self, t: u32) -> u32 {
        let Some((start, len)) = self.closure(t) else {
            return 0;
        };
        let mut needed = std::mem::take(&mut self.scratch);
        needed.clear();
        needed.extend(self.closure_ids[start..start + len].iter().copied().filter(|&u| self.pos[u as usize] == ABSENT));
        // Count the new rules' references first, so that eviction spares the closure members
        // already in the front (each is referenced by a new rule or a spared front rule).
        for &u in &needed {
            let (deps, same) = (self.snap.deps.deps(u), self.snap.deps.same_action(u));
            for &v in deps.iter().chain(same) {
                self.refs[v as usize] += 1;
            }
        }
        while self.front.len() + needed.len() > self.capacity {
            let victim = (0..self.front.len()).rev().find(|&j| self.refs[self.front[j] as usize] == 0);
            let victim = victim.expect("the lowest-priority front rule outside the closure is unreferenced");
            self.remove_at(victim);
        }
        // Ascending ids: each rule's dependencies are in the front before it; it goes just
        // behind the last of them (MRF order).
        for &u in &needed {
            let at = self.snap.deps.deps(u).iter().map(|&d| self.pos[d as usize] as usize + 1).max().unwrap_or(0);
            self.insert_at(at, u);
        }
        self.scratch = needed;
        self.promote(self.pos[t as usize] as usize)
    }

    /// Classifies one packet and self-adjusts.
    #[inline]
    pub fn classify(&mut self, p: &Packet) -> Lookup {
        let moved_before = self.moved_total;
        let mut work = 0u64;
        let mut flow_slot = None;
        if let Some(f) = &self.flow {
            work += 1;
            match f.probe(p) {
                Probe::Hit(rule) => {
                    let lookup =
                        Lookup { rule, action: self.snap.action_of(rule), work, position: 0, chain: 0, moved: 0 };
                    return self.finish(lookup);
                }
                Probe::Miss(s) => flow_slot = Some(s),
            }
        }
        let mut lookup = self.classify_front(p, work);
        lookup.moved = self.moved_total - moved_before;
        if let (Some(s), Some(f)) = (flow_slot, self.flow.as_mut()) {
            f.put(s, p, lookup.rule);
        }
        self.finish(lookup)
    }

    #[inline(always)]
    fn finish(&mut self, lookup: Lookup) -> Lookup {
        self.stats.record(&lookup);
        lookup
    }

    /// The front, then the fall-through. `position`: where the front scan stopped.
    #[inline]
    fn classify_front(&mut self, p: &Packet, mut work: u64) -> Lookup {
        let hit = self.front_rules.iter().position(|r| r.matches(p));
        let Some(i) = hit else {
            work += self.front.len() as u64;
            let position = self.front.len() as u32;
            let m = self.space.search(p);
            work += m.work;
            let chain = m.rule.map_or(0, |t| self.admit(t));
            return Lookup { rule: m.rule, action: self.snap.action_of(m.rule), work, position, chain, moved: 0 };
        };
        work += i as u64 + 1;
        let found = self.front[i];
        let mut best = found;
        self.moved_total += self.snap.deps.same_action(found).len() as u64;
        for &v in self.snap.deps.same_action(found) {
            // Same-action overlaps ahead of `found` were compared by the scan already.
            if self.pos[v as usize] as usize > i && v < best {
                work += 1;
                if self.snap.table[v as usize].matches(p) {
                    best = v;
                }
            }
        }
        let chain = self.promote(self.pos[best as usize] as usize);
        let action = Action::from_code(self.snap.table[best as usize].action_code());
        Lookup { rule: Some(best), action, work, position: i as u32, chain, moved: 0 }
    }
}

impl Worker<Packet> for RuleCacheClassifier {
    #[inline]
    fn serve(&mut self, p: &Packet) -> u64 {
        self.classify(p).work
    }

    fn entries_moved(&self) -> Option<u64> {
        Some(self.moved_total)
    }
}

impl PacketClassifier for RuleCacheClassifier {
    #[inline]
    fn classify(&mut self, p: &Packet) -> Lookup {
        RuleCacheClassifier::classify(self, p)
    }

    fn snapshot(&self) -> &Arc<Snapshot> {
        &self.snap
    }

    fn own_bytes(&self) -> usize {
        RuleCacheClassifier::own_bytes(self)
    }

    fn flow_entries(&self) -> usize {
        RuleCacheClassifier::flow_entries(self)
    }

    /// Without a flow cache: the whole index and front (the fall-through probes every table
    /// not cut off by priority). With one: the flow state a cache holding every flow of its
    /// stream needs (the real cache has a fixed number of entries, counted in own bytes).
    fn footprint_model(&self) -> FootprintModel {
        if self.flow.is_some() {
            FootprintModel {
                shared_bytes: 0,
                hot: "its flows x flow-cache entry",
                item_bytes: FLOW_ENTRY_BYTES,
                count: HotCount::Flows,
            }
        } else {
            FootprintModel {
                shared_bytes: 0,
                hot: "whole index and front (upper bound)",
                item_bytes: 0,
                count: HotCount::Own,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{native, ReadOptions};

    fn snap(text: &str) -> Arc<Snapshot> {
        Arc::new(Snapshot::new(native::parse(text, "t", &ReadOptions::default()).unwrap()))
    }

    #[test]
    fn a_front_hit_reports_the_exact_first_match() {
        // Rule 2 (wide accept) enters the front with its cover set {0, 1}; a packet matching
        // the narrow accept 1 must still report 1, found by the same-action check.
        let s = snap("drop dport 9\naccept src 10.0.0.1 dport 80\naccept dport 80-90\n");
        let mut c = RuleCacheClassifier::new(s, 8, 0);
        assert_eq!(c.classify(&Packet::new(0x0a00_0002, 1, 1, 85, 6)).rule, Some(2));
        assert_eq!(c.front().len(), 2, "rule 2 and its same-action cover 1 (0 does not overlap it)");
        assert!(c.invariant_holds());
        let l = c.classify(&Packet::new(0x0a00_0001, 1, 1, 80, 6));
        assert_eq!(l.rule, Some(1));
        assert!(l.position < 2, "a front hit");
    }

    #[test]
    fn a_rule_whose_closure_is_too_big_stays_out() {
        let s = snap("drop dport 1\ndrop dport 2\ndrop dport 3\naccept\n");
        let mut c = RuleCacheClassifier::new(s, 3, 0);
        assert_eq!(c.classify(&Packet::new(1, 1, 1, 7, 6)).rule, Some(3));
        assert!(c.front().is_empty(), "the catch-all needs 4 entries");
        assert_eq!(c.classify(&Packet::new(1, 1, 1, 2, 6)).rule, Some(1));
        assert_eq!(c.front(), &[1]);
    }
}
