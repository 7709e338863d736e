//! `flow-cache`: a per-worker exact-match flow cache (5-tuple → first-match rule) in front of
//! the TupleMerge index, the first level of a production software switch's datapath (a
//! per-thread exact-match cache before the tuple-space search, as Open vSwitch's EMC). It adjusts
//! itself to the traffic: each miss writes the flow's answer over whatever flow held its slot,
//! so the slots hold the flows that came last; RSS gives each worker fewer flows to hold as k
//! grows, which is where it gains from locality.
//!
//! Where the traffic has no locality the cache only costs (a probe and a write per packet), so it
//! also adjusts whether it is used at all: over each window of
//! [`WINDOW`] lookups it counts its hits, and below [`MIN_HIT_SHARE`] of them (where a hit's
//! saving, a tuple-space search, no longer pays for the misses' extra cost) it stands aside for
//! [`BYPASS_WINDOWS`] windows, then tries a window again.
//!
//! A hit is exact: the cache is keyed by the whole 5-tuple, which decides the first match, and a
//! worker's cache lives as long as its rule snapshot (a rule update builds new workers, with
//! empty caches). Per-rule counters count hits like any other answer.
//!
//! **Work units**: 1 for the cache entry compared, plus on a miss the tuple-space work (slots
//! probed plus rules compared); only the latter while the cache stands aside. The second counter
//! (entries moved): cache entries written.

use super::stats::StatsRecorder;
use super::tuple_merge::TupleSpace;
use super::{ClassifierOptions, FootprintModel, HotCount, Lookup, PacketClassifier};
use crate::packet::Packet;
use crate::snapshot::Snapshot;
use std::sync::Arc;
use superlinear_core::Worker;

/// Default entries of the `flow-cache` classifier's cache (a power of two; 20 bytes each, so
/// 320 KiB: within a core's L2 on current x86 servers).
pub const DEFAULT_FLOW_CACHE_ENTRIES: usize = 16_384;
/// Bytes of one flow-cache entry (the 5-tuple and the rule id, padded).
pub const FLOW_ENTRY_BYTES: usize = std::mem::size_of::<(Packet, u32)>();

/// Lookups per window of the hit count.
pub const WINDOW: u32 = 4096;
/// A window with fewer hits than this share of its lookups turns the cache off: 1/8 (a hit
/// saves a tuple-space search, several times what a miss adds: docs/results/classification.md).
pub const MIN_HIT_SHARE: (u32, u32) = (1, 8);
/// Windows the cache stays off before it tries again.
pub const BYPASS_WINDOWS: u32 = 16;

const EMPTY_FLOW: u32 = u32::MAX;
const DEFAULT_RULE: u32 = u32::MAX - 1;

/// A direct-mapped exact-match cache: 5-tuple → first-match rule (or the default policy).
pub(super) struct FlowCache {
    entries: Vec<(Packet, u32)>,
    shift: u32,
}

/// What the cache knows about a packet.
pub(super) enum Probe {
    /// The packet's flow is cached: its first-match rule (`None`: the default policy).
    Hit(Option<u32>),
    /// Not cached; [`FlowCache::put`] with this slot stores the answer.
    Miss(usize),
}

impl FlowCache {
    /// A cache of `entries` slots, rounded up to a power of two.
    pub(super) fn new(entries: usize) -> Self {
        let n = entries.next_power_of_two().max(2);
        Self { entries: vec![(Packet::default(), EMPTY_FLOW); n], shift: 64 - n.trailing_zeros() }
    }

    /// Slots in the cache.
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    #[inline(always)]
    fn slot(&self, p: &Packet) -> usize {
        const FX: u64 = 0x517c_c1b7_2722_0a95;
        let a = ((p.src as u64) << 32 | p.dst as u64).wrapping_mul(FX);
        let b = (p.sport as u64) << 24 | (p.dport as u64) << 8 | p.proto as u64;
        ((a.rotate_left(26) ^ b).wrapping_mul(FX) >> self.shift) as usize
    }

    #[inline(always)]
    pub(super) fn probe(&self, p: &Packet) -> Probe {
        let s = self.slot(p);
        let (key, rule) = self.entries[s];
        if rule != EMPTY_FLOW && key == *p {
            Probe::Hit((rule != DEFAULT_RULE).then_some(rule))
        } else {
            Probe::Miss(s)
        }
    }

    #[inline(always)]
    pub(super) fn put(&mut self, slot: usize, p: &Packet, rule: Option<u32>) {
        self.entries[slot] = (*p, rule.unwrap_or(DEFAULT_RULE));
    }
}

/// The flow-cache classifier: one per worker, its cache private, the index its own copy.
pub struct FlowCacheClassifier {
    snap: Arc<Snapshot>,
    space: TupleSpace,
    cache: FlowCache,
    written: u64,
    /// Whether lookups use the cache now; lookups and hits in the current window; windows off.
    on: bool,
    window_lookups: u32,
    window_hits: u32,
    windows_off: u32,
    stats: StatsRecorder,
}

impl FlowCacheClassifier {
    /// A flow cache of `entries` slots (rounded up to a power of two) over a TupleMerge index.
    pub fn new(snap: Arc<Snapshot>, entries: usize) -> Self {
        Self::with_options(snap, entries, ClassifierOptions::default())
    }

    /// With statistics delivered to a sink on drop.
    pub fn with_options(snap: Arc<Snapshot>, entries: usize, opts: ClassifierOptions) -> Self {
        let stats = StatsRecorder::new(opts.stats, snap.len(), opts.window);
        Self {
            space: TupleSpace::build(&snap),
            snap,
            cache: FlowCache::new(entries),
            written: 0,
            on: true,
            window_lookups: 0,
            window_hits: 0,
            windows_off: 0,
            stats,
        }
    }

    /// Bytes this worker allocates for itself: its index and its cache.
    pub fn own_bytes(&self) -> usize {
        self.space.bytes() + self.cache.len() * FLOW_ENTRY_BYTES
    }

    /// Slots in the cache.
    pub fn entries(&self) -> usize {
        self.cache.len()
    }

    /// Whether lookups go through the cache now (it stands aside where it does not pay).
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// Classifies one packet; `position` is 0 on a hit, 1 + the tables searched on a miss (the
    /// tables searched while the cache stands aside).
    #[inline]
    pub fn classify(&mut self, p: &Packet) -> Lookup {
        let lookup = if self.on {
            match self.cache.probe(p) {
                Probe::Hit(rule) => {
                    self.window_hits += 1;
                    Lookup { rule, action: self.snap.action_of(rule), work: 1, position: 0, chain: 0, moved: 0 }
                }
                Probe::Miss(slot) => {
                    let m = self.space.search(p);
                    self.cache.put(slot, p, m.rule);
                    self.written += 1;
                    let action = self.snap.action_of(m.rule);
                    Lookup { rule: m.rule, action, work: 1 + m.work, position: 1 + m.tables, chain: 0, moved: 1 }
                }
            }
        } else {
            let m = self.space.search(p);
            let action = self.snap.action_of(m.rule);
            Lookup { rule: m.rule, action, work: m.work, position: m.tables, chain: 0, moved: 0 }
        };
        self.window_lookups += 1;
        if self.window_lookups == WINDOW {
            self.end_window();
        }
        self.stats.record(&lookup);
        lookup
    }
}

impl FlowCacheClassifier {
    /// Turns the cache off after a window of too few hits, on again after BYPASS_WINDOWS.
    #[cold]
    fn end_window(&mut self) {
        if self.on {
            let (num, den) = MIN_HIT_SHARE;
            if self.window_hits * den < WINDOW * num {
                self.on = false;
                self.windows_off = 0;
            }
        } else {
            self.windows_off += 1;
            self.on = self.windows_off == BYPASS_WINDOWS;
        }
        self.window_lookups = 0;
        self.window_hits = 0;
    }
}

impl Worker<Packet> for FlowCacheClassifier {
    #[inline]
    fn serve(&mut self, p: &Packet) -> u64 {
        self.classify(p).work
    }

    fn entries_moved(&self) -> Option<u64> {
        Some(self.written)
    }
}

impl PacketClassifier for FlowCacheClassifier {
    #[inline]
    fn classify(&mut self, p: &Packet) -> Lookup {
        FlowCacheClassifier::classify(self, p)
    }

    fn snapshot(&self) -> &Arc<Snapshot> {
        &self.snap
    }

    fn own_bytes(&self) -> usize {
        FlowCacheClassifier::own_bytes(self)
    }

    fn flow_entries(&self) -> usize {
        self.entries()
    }

    /// Hot: the flow state a cache holding every flow of its stream needs (the real cache has
    /// a fixed number of entries, counted in own bytes).
    fn footprint_model(&self) -> FootprintModel {
        FootprintModel {
            shared_bytes: 0,
            hot: "its flows x flow-cache entry",
            item_bytes: FLOW_ENTRY_BYTES,
            count: HotCount::Flows,
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
    fn a_hit_gives_the_first_match_and_costs_one_entry() {
        let s = snap("drop dport 9\naccept src 10.0.0.1 dport 80\naccept dport 80-90\n");
        let mut c = FlowCacheClassifier::new(s, 64);
        let (a, b, none) =
            (Packet::new(0x0a00_0001, 1, 1, 80, 6), Packet::new(2, 1, 1, 85, 6), Packet::new(2, 1, 1, 7, 6));
        let first: Vec<_> = [a, b, none].iter().map(|p| c.classify(p)).collect();
        assert_eq!(first.iter().map(|l| l.rule).collect::<Vec<_>>(), [Some(1), Some(2), None]);
        assert!(first.iter().all(|l| l.work > 1 && l.moved == 1), "misses search the index");
        for (p, want) in [(a, Some(1)), (b, Some(2)), (none, None)] {
            let l = c.classify(&p);
            assert_eq!((l.rule, l.work, l.position, l.moved), (want, 1, 0, 0), "a hit");
        }
        assert_eq!(c.entries_moved(), Some(3));
    }

    #[test]
    fn without_locality_it_stands_aside_and_tries_again() {
        let s = snap("accept dport 1-100\ndrop\n");
        let mut c = FlowCacheClassifier::new(s, 1024);
        // Every packet a new flow: no hits, so the first window turns the cache off.
        let mut flow = 0u32;
        let mut next = |c: &mut FlowCacheClassifier| {
            flow += 1;
            c.classify(&Packet::new(flow, flow.rotate_left(7), 1, (flow % 150) as u16, 6))
        };
        for _ in 0..WINDOW {
            assert!(next(&mut c).work > 1, "probe and search while on");
        }
        assert!(!c.is_on());
        let off = next(&mut c);
        assert_eq!(off.moved, 0, "nothing written while off");
        for _ in 1..WINDOW * BYPASS_WINDOWS {
            next(&mut c);
        }
        assert!(c.is_on(), "a trial window after {BYPASS_WINDOWS} off");
        // With locality (one flow repeated) it stays on.
        let p = Packet::new(1, 2, 3, 4, 6);
        for _ in 0..WINDOW * 3 {
            c.classify(&p);
        }
        assert!(c.is_on());
    }

    #[test]
    fn a_flow_that_lost_its_slot_is_searched_again() {
        // Two slots: of many flows, most collide; every answer stays the index's.
        let s = snap("accept dport 1-100\ndrop\n");
        let mut c = FlowCacheClassifier::new(s.clone(), 2);
        let space = FlowCacheClassifier::new(s, 2);
        for i in 0..1000u32 {
            let p = Packet::new(i % 37, i % 11, 1, (i % 150) as u16, 6);
            assert_eq!(c.classify(&p).rule, space.space.search(&p).rule);
        }
        assert!(c.entries_moved().unwrap() > 37, "collisions evict");
    }
}
