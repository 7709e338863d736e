//! TupleMerge, a tuple-space classifier written from the paper (Daly, Liu, Torng, "TupleMerge:
//! Fast Software Packet Processing for Online Packet Classification", IEEE/ACM ToN 2019), and
//! the tuple-space index that the `rule-cache` front falls through to.
//!
//! * **Tuples** (paper §III): a rule's tuple is the length of the longest prefix that contains
//!   each of its fields: source and destination address (0..=32), source and destination port
//!   (coarse: 16 for one port, else 0) and protocol (8 exact, else 0). A non-prefix range has
//!   the length of the longest prefix around it, so every rule has a tuple.
//! * **Relaxed tuples** (§IV-A): a rule may sit in any table whose tuple is no longer than its
//!   own in every field; the table's hash key is the packet (or rule) masked to the table's
//!   lengths, so a packet the rule matches always lands in the rule's bucket. A new table takes
//!   the rule's tuple with its address lengths shortened ([`ADDR_RELAX`]) so that later rules of
//!   nearby lengths join it instead of adding tables (fewer tables, fewer probes per packet).
//!   A rule joins the most specific compatible table.
//! * **Collision limit** (§IV-B): when a bucket holds more than [`COLLISION_LIMIT`] rules, the
//!   rules in it that are more specific than the table move to a new table with the longest
//!   tuple they all fit (recursively, until buckets are small or no longer tuple exists).
//! * **Priority order** (§IV-C): tables are searched in order of their highest-priority rule,
//!   buckets hold their rules in priority order, and the search stops as soon as the best
//!   match so far outranks every rule of the remaining tables.
//!
//! The index is built offline from one [`Snapshot`] (rules inserted in priority order, as the
//! online algorithm would see them) into flat arrays: one slot array for all hash tables (open
//! addressing, linear probing, load ≤ 1/2) and one array of rules in bucket order, each rule a
//! copy of its [`CompactRule`] next to its id. A lookup allocates nothing.
//!
//! **Work units** (what `Lookup::work` counts): hash slots probed (one per table searched, plus
//! one per extra linear-probing step) plus rules compared in buckets. Exact first match: the
//! rule reported is the lowest index that matches, as the static list reports.

use super::stats::StatsRecorder;
use super::{ClassifierOptions, FootprintModel, HotCount, Lookup, PacketClassifier};
use crate::packet::Packet;
use crate::rules::Rule;
use crate::snapshot::Snapshot;
use crate::table::CompactRule;
use std::collections::HashMap;
use std::sync::Arc;
use superlinear_core::Worker;

/// Most rules a bucket holds before its table is split (paper §IV-B's collision limit `c`).
pub const COLLISION_LIMIT: usize = 24;
/// A new table's address lengths are the rule's rounded down to a multiple of this (§IV-A's
/// relaxation; 1 would give Tuple Space Search's exact tuples).
pub const ADDR_RELAX: u8 = 10;
/// New tables leave the ports out of their key (§IV-A).
pub const RELAX_PORTS: bool = true;
/// FxHash's multiplier (Firefox/rustc): one multiply per key, good enough for masked headers.
const FX: u64 = 0x517c_c1b7_2722_0a95;

/// The build's two knobs (paper §IV): the collision limit and the address relaxation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TupleParams {
    /// Most rules in a bucket before a split ([`COLLISION_LIMIT`]).
    pub collision_limit: usize,
    /// New tables round address lengths down to a multiple of this ([`ADDR_RELAX`]; ≥ 1).
    pub addr_relax: u8,
    /// Whether new tables leave ports out of the key ([`RELAX_PORTS`]); a split may bring
    /// them back.
    pub relax_ports: bool,
}

impl Default for TupleParams {
    fn default() -> Self {
        Self { collision_limit: COLLISION_LIMIT, addr_relax: ADDR_RELAX, relax_ports: RELAX_PORTS }
    }
}

/// Field lengths: (src, dst, sport, dport, proto).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Tuple([u8; 5]);

impl Tuple {
    /// The rule's own tuple: the longest prefix around each field.
    fn of(r: &Rule) -> Self {
        let addr = |lo: u32, hi: u32| (lo ^ hi).leading_zeros() as u8;
        // Ports are coarse (§III): an exact port or a wildcard-for-the-table.
        let port = |lo: u16, hi: u16| if lo == hi { 16 } else { 0 };
        let proto = if r.proto.mask == 0xff { 8 } else { 0 };
        Tuple([
            addr(r.src.lo, r.src.hi),
            addr(r.dst.lo, r.dst.hi),
            port(r.sport.lo, r.sport.hi),
            port(r.dport.lo, r.dport.hi),
            proto,
        ])
    }

    /// Whether a rule of tuple `self` may sit in a table of tuple `table`.
    fn fits(self, table: Tuple) -> bool {
        self.0.iter().zip(table.0).all(|(&r, t)| r >= t)
    }

    fn specificity(self) -> u32 {
        self.0.iter().map(|&l| l as u32).sum()
    }

    /// The tuple of a new table for a rule of this tuple (§IV-A).
    fn relaxed(self, relax: u8, ports: bool) -> Self {
        let relax = relax.max(1);
        let mut t = self.0;
        t[0] -= t[0] % relax;
        t[1] -= t[1] % relax;
        if ports {
            t[2] = 0;
            t[3] = 0;
        }
        Tuple(t)
    }

    fn masks(self) -> Masks {
        let m32 = |l: u8| if l == 0 { 0 } else { u32::MAX << (32 - l as u32) };
        let m16 = |l: u8| if l == 0 { 0u32 } else { (u16::MAX << (16 - l as u32)) as u32 };
        Masks {
            src: m32(self.0[0]),
            dst: m32(self.0[1]),
            ports: (m16(self.0[2]) << 16) | m16(self.0[3]),
            proto: if self.0[4] == 0 { 0 } else { 0xff },
        }
    }
}

/// A table's masks.
#[derive(Clone, Copy, Debug)]
struct Masks {
    src: u32,
    dst: u32,
    /// Source port in the high half, destination port in the low half.
    ports: u32,
    proto: u8,
}

impl Masks {
    /// The hash key of a header under these masks: (addresses, ports and protocol).
    #[inline(always)]
    fn key(&self, src: u32, dst: u32, sport: u16, dport: u16, proto: u8) -> (u64, u64) {
        let addrs = (((src & self.src) as u64) << 32) | (dst & self.dst) as u64;
        let rest = ((((sport as u32) << 16 | dport as u32) & self.ports) as u64) << 8 | (proto & self.proto) as u64;
        (addrs, rest)
    }
}

#[inline(always)]
fn hash(key: (u64, u64)) -> u64 {
    (key.0.wrapping_mul(FX).rotate_left(26) ^ key.1).wrapping_mul(FX)
}

/// One hash table of the search order.
#[derive(Clone, Copy, Debug)]
struct TupleTable {
    masks: Masks,
    /// First slot in [`TupleSpace::slots`].
    slot_base: u32,
    /// Slots − 1 (a power of two minus one).
    slot_mask: u32,
    /// `64 − log2(slots)`: the hash's top bits pick the home slot.
    shift: u32,
    /// Highest-priority (lowest) rule id in the table.
    min_rule: u32,
}

/// One hash slot: the bucket's key and where its rules lie; `len == 0` marks an empty slot.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    addrs: u64,
    rest: u64,
    start: u32,
    len: u32,
}

/// A rule in a bucket: its compact form next to its id (one 32-byte record per compare).
#[derive(Clone, Copy, Debug)]
struct BucketRule {
    rule: CompactRule,
    id: u32,
}

/// The result of a tuple-space search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TupleMatch {
    /// Lowest-index matching rule.
    pub rule: Option<u32>,
    /// Slots probed plus rules compared.
    pub work: u64,
    /// Tables searched.
    pub tables: u32,
}

/// The TupleMerge index over one snapshot: flat, read-only after the build.
#[derive(Clone, Debug)]
pub struct TupleSpace {
    tables: Vec<TupleTable>,
    slots: Vec<Slot>,
    rules: Vec<BucketRule>,
}

/// A table while building: its tuple and buckets of rule ids in priority order.
struct BuildTable {
    tuple: Tuple,
    masks: Masks,
    buckets: HashMap<(u64, u64), Vec<u32>>,
}

impl BuildTable {
    fn new(tuple: Tuple) -> Self {
        Self { tuple, masks: tuple.masks(), buckets: HashMap::new() }
    }

    fn key_of(&self, r: &Rule) -> (u64, u64) {
        // Any point of the rule: its fields share the prefixes the table masks to.
        self.masks.key(r.src.lo, r.dst.lo, r.sport.lo, r.dport.lo, r.proto.value)
    }
}

struct Builder<'a> {
    params: TupleParams,
    rules: &'a [Rule],
    tuples: Vec<Tuple>,
    tables: Vec<BuildTable>,
}

impl Builder<'_> {
    /// Inserts rule `id` into table `t`, splitting the bucket if it overflows.
    fn insert(&mut self, t: usize, id: u32) {
        let key = self.tables[t].key_of(&self.rules[id as usize]);
        let bucket = self.tables[t].buckets.entry(key).or_default();
        let at = bucket.partition_point(|&x| x < id);
        bucket.insert(at, id);
        if bucket.len() > self.params.collision_limit {
            self.split(t, key);
        }
    }

    /// §IV-B: moves the bucket's rules that are more specific than the table to a table with
    /// the longest tuple they all fit, if that is longer than this table's.
    fn split(&mut self, t: usize, key: (u64, u64)) {
        let table_tuple = self.tables[t].tuple;
        let bucket = &self.tables[t].buckets[&key];
        let movable: Vec<u32> = bucket.iter().copied().filter(|&r| self.tuples[r as usize] != table_tuple).collect();
        if movable.len() < 2 {
            return;
        }
        let mut common = self.tuples[movable[0] as usize].0;
        for &r in &movable[1..] {
            for (c, l) in common.iter_mut().zip(self.tuples[r as usize].0) {
                *c = (*c).min(l);
            }
        }
        let common = Tuple(common);
        if common == table_tuple {
            return; // no longer tuple holds them all: the collision stays
        }
        let bucket = self.tables[t].buckets.get_mut(&key).expect("present");
        bucket.retain(|r| !movable.contains(r));
        if bucket.is_empty() {
            self.tables[t].buckets.remove(&key);
        }
        let target = match self.tables.iter().position(|b| b.tuple == common) {
            Some(i) => i,
            None => {
                self.tables.push(BuildTable::new(common));
                self.tables.len() - 1
            }
        };
        for r in movable {
            self.insert(target, r);
        }
    }
}

impl TupleSpace {
    /// Builds the index of a snapshot's rules with the default parameters.
    pub fn build(snap: &Snapshot) -> Self {
        Self::build_with(snap, TupleParams::default())
    }

    /// Builds the index of a snapshot's rules.
    pub fn build_with(snap: &Snapshot, params: TupleParams) -> Self {
        let rules = &snap.rules.rules[..];
        let mut b = Builder { params, rules, tuples: rules.iter().map(Tuple::of).collect(), tables: Vec::new() };
        for id in 0..rules.len() as u32 {
            let tuple = b.tuples[id as usize];
            // The most specific compatible table (fewest collisions); else a new relaxed one.
            let best = (0..b.tables.len())
                .filter(|&t| tuple.fits(b.tables[t].tuple))
                .max_by_key(|&t| (b.tables[t].tuple.specificity(), std::cmp::Reverse(t)));
            let t = best.unwrap_or_else(|| {
                let relaxed = tuple.relaxed(params.addr_relax, params.relax_ports);
                b.tables.iter().position(|x| x.tuple == relaxed).unwrap_or_else(|| {
                    b.tables.push(BuildTable::new(relaxed));
                    b.tables.len() - 1
                })
            });
            b.insert(t, id);
        }
        Self::flatten(&snap.table, b.tables)
    }

    /// Lays the tables out flat, in search order.
    fn flatten(table: &[CompactRule], built: Vec<BuildTable>) -> Self {
        let mut built: Vec<(u32, BuildTable)> = built
            .into_iter()
            .filter(|t| !t.buckets.is_empty())
            .map(|t| (t.buckets.values().map(|b| b[0]).min().unwrap_or(u32::MAX), t))
            .collect();
        built.sort_by_key(|(min, _)| *min);
        let mut out = Self { tables: Vec::with_capacity(built.len()), slots: Vec::new(), rules: Vec::new() };
        for (min_rule, t) in built {
            let slots = (2 * t.buckets.len()).next_power_of_two().max(2);
            let base = out.slots.len();
            out.slots.resize(base + slots, Slot::default());
            let shift = 64 - slots.trailing_zeros();
            // Buckets in a fixed order (by their first rule) so the layout is deterministic.
            let mut buckets: Vec<_> = t.buckets.into_iter().collect();
            buckets.sort_by_key(|(_, ids)| ids[0]);
            for (key, ids) in buckets {
                let mut i = (hash(key) >> shift) as usize;
                while out.slots[base + i].len != 0 {
                    i = (i + 1) & (slots - 1);
                }
                out.slots[base + i] =
                    Slot { addrs: key.0, rest: key.1, start: out.rules.len() as u32, len: ids.len() as u32 };
                out.rules.extend(ids.iter().map(|&id| BucketRule { rule: table[id as usize], id }));
            }
            out.tables.push(TupleTable {
                masks: t.masks,
                slot_base: base as u32,
                slot_mask: slots as u32 - 1,
                shift,
                min_rule,
            });
        }
        out
    }

    /// Bytes of the index: table headers, hash slots and bucket records.
    pub fn bytes(&self) -> usize {
        self.tables.len() * std::mem::size_of::<TupleTable>()
            + self.slots.len() * std::mem::size_of::<Slot>()
            + self.rules.len() * std::mem::size_of::<BucketRule>()
    }

    /// Number of hash tables.
    pub fn tables(&self) -> usize {
        self.tables.len()
    }

    /// The largest bucket.
    pub fn largest_bucket(&self) -> usize {
        self.slots.iter().map(|s| s.len as usize).max().unwrap_or(0)
    }

    /// The lowest-index rule matching `p`, searching tables in priority order.
    #[inline]
    pub fn search(&self, p: &Packet) -> TupleMatch {
        let mut best = u32::MAX;
        let mut work = 0u64;
        let mut searched = 0u32;
        for t in &self.tables {
            if best <= t.min_rule {
                break; // §IV-C: the match found outranks every remaining table
            }
            searched += 1;
            let key = t.masks.key(p.src, p.dst, p.sport, p.dport, p.proto);
            let slots = &self.slots[t.slot_base as usize..=(t.slot_base + t.slot_mask) as usize];
            let mut i = (hash(key) >> t.shift) as usize;
            loop {
                work += 1;
                let s = &slots[i];
                if s.len == 0 {
                    break;
                }
                if s.addrs == key.0 && s.rest == key.1 {
                    for r in &self.rules[s.start as usize..(s.start + s.len) as usize] {
                        if r.id >= best {
                            break; // buckets are in priority order: nothing better follows
                        }
                        work += 1;
                        if r.rule.matches(p) {
                            best = r.id;
                            break;
                        }
                    }
                    break;
                }
                i = (i + 1) & t.slot_mask as usize;
            }
        }
        TupleMatch { rule: (best != u32::MAX).then_some(best), work, tables: searched }
    }
}

/// The `tuple-merge` classifier worker: a static tuple-space search (no self-adjustment).
pub struct TupleMergeClassifier {
    snap: Arc<Snapshot>,
    space: TupleSpace,
    stats: StatsRecorder,
}

impl TupleMergeClassifier {
    /// A TupleMerge index over `snap`.
    pub fn new(snap: Arc<Snapshot>) -> Self {
        Self::with_options(snap, ClassifierOptions::default())
    }

    /// With statistics delivered to a sink on drop.
    pub fn with_options(snap: Arc<Snapshot>, opts: ClassifierOptions) -> Self {
        let stats = StatsRecorder::new(opts.stats, snap.len(), opts.window);
        Self { space: TupleSpace::build(&snap), snap, stats }
    }

    /// Bytes this worker allocates for itself: its index (which holds its own copy of every
    /// rule's compact form).
    pub fn own_bytes(&self) -> usize {
        self.space.bytes()
    }

    /// The index.
    pub fn space(&self) -> &TupleSpace {
        &self.space
    }

    /// Classifies one packet. `position` is the number of tables searched.
    #[inline]
    pub fn classify(&mut self, p: &Packet) -> Lookup {
        let m = self.space.search(p);
        let lookup = Lookup {
            rule: m.rule,
            action: self.snap.action_of(m.rule),
            work: m.work,
            position: m.tables,
            chain: 0,
            moved: 0,
        };
        self.stats.record(&lookup);
        lookup
    }
}

impl Worker<Packet> for TupleMergeClassifier {
    #[inline]
    fn serve(&mut self, p: &Packet) -> u64 {
        self.classify(p).work
    }

    fn entries_moved(&self) -> Option<u64> {
        Some(0)
    }
}

impl PacketClassifier for TupleMergeClassifier {
    #[inline]
    fn classify(&mut self, p: &Packet) -> Lookup {
        TupleMergeClassifier::classify(self, p)
    }

    fn snapshot(&self) -> &Arc<Snapshot> {
        &self.snap
    }

    fn own_bytes(&self) -> usize {
        TupleMergeClassifier::own_bytes(self)
    }

    /// Its index is its own (rules copied in); the search probes every table not cut off by
    /// priority, so the hot state is bounded by the whole index.
    fn footprint_model(&self) -> FootprintModel {
        FootprintModel { shared_bytes: 0, hot: "whole index (upper bound)", item_bytes: 0, count: HotCount::Own }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{native, ReadOptions};

    #[test]
    fn tuples_of_prefixes_ranges_and_wildcards() {
        let text = "accept src 10.0.0.0/8 dst 1.2.3.4 dport 80 proto tcp\naccept sport 1-3 dport 0-65535\n";
        let set = native::parse(text, "t", &ReadOptions::default()).unwrap();
        assert_eq!(Tuple::of(&set.rules[0]).0, [8, 32, 0, 16, 8]);
        assert_eq!(Tuple::of(&set.rules[1]).0, [0, 0, 0, 0, 0]);
        assert_eq!(Tuple([31, 9, 16, 0, 8]).relaxed(4, false).0, [28, 8, 16, 0, 8]);
    }

    #[test]
    fn colliding_bucket_splits_into_a_longer_tuple() {
        // Twenty /32 sources inside one /28: the first opens a /32 table... so make the first
        // a /28 that opens a /28 table, and the /32s collide in its one bucket until split.
        let mut text = String::from("drop src 10.0.0.0/28\n");
        for i in 0..16 {
            text.push_str(&format!("accept src 10.0.0.{i}/32 dport {}\n", 100 + i));
        }
        let snap = Snapshot::new(native::parse(&text, "t", &ReadOptions::default()).unwrap());
        let space =
            TupleSpace::build_with(&snap, TupleParams { collision_limit: 8, addr_relax: 4, relax_ports: false });
        assert!(space.largest_bucket() <= 8, "largest bucket {}", space.largest_bucket());
        assert_eq!(space.tables(), 2);
        for i in 0..16u32 {
            let p = Packet::new(0x0a00_0000 + i, 1, 1, 100 + i as u16, 6);
            assert_eq!(space.search(&p).rule, Some(0), "the /28 drop outranks them all");
        }
    }
}
