//! Two-choice flow pinning (`two-choice:FIELDS`): RSS's flow affinity, with heavy flows spread.
//!
//! A 5-tuple RSS hash keeps every packet of a flow on one worker, but it places flows blindly:
//! on the ClassBench traces, whose flow sizes are heavy-tailed, a few large flows meeting on one
//! worker make it carry several times the mean load at k = 32, and the busiest worker sets the
//! projected throughput (paper §4.2: the dispatcher must keep locality *and* balance). This
//! dispatcher routes as the power of two choices does for DistCache's hot keys
//! (seeds/distcache-provable-load-balancing.txt, §4: each object has a candidate in each of two
//! independently hashed layers and a query goes to the less loaded one): each flow has two
//! candidate workers, from two independent hashes of the chosen header fields, and is pinned to
//! whichever of the two had been given fewer packets when the flow's first packet arrived.
//! Every later packet of the flow finds the pin in a small flow table and goes to the same
//! worker, so locality for MRF is the same as RSS's over the same fields.
//!
//! The flow table is set-associative: 2^16 entries in buckets of four (256 KiB), the bucket
//! chosen by the low 14 bits of the flow's Toeplitz hash, each entry 16 more bits of the hash as
//! a tag and the worker (4 bytes). A flow is known by those 30 bits (two flows that share them
//! are one flow here, which only ever puts them on one worker). Entries are
//! never evicted: a flow whose bucket is full when it first arrives is not pinned and always goes
//! to its first candidate, the plain RSS choice, so flow affinity holds strictly, for every flow,
//! for the whole run (tested). A deployment would age idle entries out, re-placing a flow only
//! after it went idle; the replayed traces here hold far fewer flows than the table (under 20,000
//! on the 5k ClassBench sets).
//!
//! Serial cost: the Toeplitz hash (the tables RSS uses), one bucket read and, for a new flow,
//! a second hash for the other candidate, a load compare and a write. Descriptors are routed
//! eight at a time, hashing all eight and prefetching their buckets before the lookups, so the
//! bucket reads overlap. The dispatch is timed like every other dispatcher's (serial dispatcher CPU time).

use super::descriptor::{Descriptor, RouteDescriptors};
use super::rss::{FieldHasher, FieldMask};
use crate::packet::Packet;
use superlinear_core::dispatch::{Dispatcher, WorkerLoads};
use superlinear_core::hash::fmix64;
use superlinear_core::prefetch::prefetch;

/// Entries per bucket of the flow table.
pub const BUCKET: usize = 4;
/// Entries in the flow table (a power of two).
pub const TABLE_ENTRIES: usize = 1 << 16;
/// Packets hashed (and their buckets prefetched) before their lookups.
const BLOCK: usize = 8;

/// Power-of-two-choices flow pinning over the hashed fields; see the module documentation.
pub struct TwoChoiceDispatcher {
    fields: FieldMask,
    hasher: FieldHasher,
    k: u64,
    salt: u64,
    /// `(tag << 16) | (worker + 1)`, 0 = free.
    table: Vec<u32>,
    /// Packets given to each worker so far (the load the choice compares).
    load: Vec<u64>,
}

impl TwoChoiceDispatcher {
    /// Two-choice pinning over `fields` for `k` workers; `seed` picks the second hash.
    pub fn new(fields: FieldMask, k: usize, seed: u64) -> Self {
        let k = k.clamp(1, u16::MAX as usize);
        Self {
            fields,
            hasher: FieldHasher::new(fields),
            k: k as u64,
            salt: fmix64(seed ^ 0x7c0f_fee0_2c40_1ce5),
            table: vec![0; TABLE_ENTRIES],
            load: vec![0; k],
        }
    }

    /// The hashed fields.
    pub fn fields(&self) -> FieldMask {
        self.fields
    }

    /// The flow's two candidate workers: the first from the Toeplitz hash (as RSS picks), the
    /// second from an independent mix of it.
    #[inline(always)]
    pub fn candidates(&self, hash: u32) -> (usize, usize) {
        // Multiply-shift maps a 32-bit value onto 0..k without a division.
        let first = (hash as u64 * self.k) >> 32;
        let second = ((fmix64(hash as u64 ^ self.salt) >> 32) * self.k) >> 32;
        (first as usize, second as usize)
    }

    /// The first entry of the flow's bucket: the hash's low bits (the first candidate is taken
    /// from its high bits by multiply-shift, so the two are independent).
    #[inline(always)]
    fn bucket(&self, hash: u32) -> usize {
        (hash as usize & (TABLE_ENTRIES / BUCKET - 1)) * BUCKET
    }

    /// The worker of a flow with this hash: its pin, or a new pin to the less loaded candidate.
    #[inline(always)]
    fn place(&mut self, hash: u32) -> usize {
        let b = self.bucket(hash);
        // The 16 hash bits above the bucket index's 14.
        let key = (hash >> 14) << 16;
        let mut free = None;
        for slot in b..b + BUCKET {
            let e = self.table[slot];
            if e == 0 {
                free = free.or(Some(slot));
            } else if e & 0xffff_0000 == key {
                let w = (e & 0xffff) as usize - 1;
                self.load[w] += 1;
                return w;
            }
        }
        let (first, second) = self.candidates(hash);
        let w = match free {
            // A new flow: the less loaded candidate (the first on a tie), pinned.
            Some(slot) => {
                let w = if self.load[second] < self.load[first] { second } else { first };
                self.table[slot] = key | (w as u32 + 1);
                w
            }
            // Its bucket is full: never pinned, so always the first candidate.
            None => first,
        };
        self.load[w] += 1;
        w
    }
}

impl Dispatcher<Packet> for TwoChoiceDispatcher {
    #[inline]
    fn route(&mut self, p: &Packet, _: &WorkerLoads<'_>) -> usize {
        let h = self.hasher.hash(p);
        self.place(h)
    }
}

impl RouteDescriptors for TwoChoiceDispatcher {
    /// Eight at a time: hash them, prefetch their buckets, then place them in order (the same
    /// workers as routing one by one: tested).
    fn route_descriptors(&mut self, packets: &[Packet], descriptors: &[Descriptor], workers: &mut [u32]) {
        for (block, out) in descriptors.chunks(BLOCK).zip(workers.chunks_mut(BLOCK)) {
            let mut hashes = [0u32; BLOCK];
            for (h, d) in hashes.iter_mut().zip(block) {
                *h = self.hasher.hash(&packets[*d as usize]);
                prefetch(&self.table[self.bucket(*h)]);
            }
            for (slot, &h) in out.iter_mut().zip(&hashes) {
                *slot = self.place(h) as u32;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::RssToeplitzDispatcher;
    use rand::{Rng, SeedableRng};
    use std::collections::HashMap;
    use std::sync::Arc;
    use superlinear_core::dispatch::NO_LOADS;

    /// A skewed trace: `flows` flows with Pareto-like sizes (flow i has about
    /// `scale / (i + 1)^0.9` packets, the largest under a twentieth of the trace), their packets
    /// interleaved in a seeded random order.
    fn skewed(flows: u32, seed: u64) -> Vec<Packet> {
        let mut packets = Vec::new();
        for f in 0..flows {
            let size = (4000.0 / ((f + 1) as f64).powf(0.9)).ceil() as usize;
            let p = Packet::new(0x0a00_0000 | f, 0xc0a8_0001, 1024 + (f % 50_000) as u16, 443, 6);
            packets.extend(std::iter::repeat_n(p, size));
        }
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        for i in (1..packets.len()).rev() {
            packets.swap(i, rng.gen_range(0..=i));
        }
        packets
    }

    fn imbalance(workers: &[usize], k: usize) -> f64 {
        let mut load = vec![0u64; k];
        workers.iter().for_each(|&w| load[w] += 1);
        *load.iter().max().unwrap() as f64 * k as f64 / workers.len() as f64
    }

    fn route_all(d: &mut dyn Dispatcher<Packet>, packets: &[Packet]) -> Vec<usize> {
        packets.iter().map(|p| d.route(p, &NO_LOADS)).collect()
    }

    #[test]
    fn every_packet_of_a_flow_goes_to_one_worker() {
        let packets = skewed(3000, 1);
        for k in [2, 7, 32] {
            let mut d = TwoChoiceDispatcher::new(FieldMask::FIVE_TUPLE, k, 9);
            let mut pinned: HashMap<Packet, usize> = HashMap::new();
            for p in &packets {
                let w = d.route(p, &NO_LOADS);
                assert!(w < k);
                assert_eq!(*pinned.entry(*p).or_insert(w), w, "k = {k}: flow {p} moved");
            }
        }
    }

    #[test]
    fn a_full_bucket_leaves_new_flows_on_their_first_choice_for_good() {
        // Far more flows than the table holds: the unpinned ones must still stay put.
        let packets: Vec<Packet> =
            (0..3u32).flat_map(|_| (0..(TABLE_ENTRIES as u32 * 2)).map(|f| Packet::new(f, 7, 1, 2, 17))).collect();
        let mut d = TwoChoiceDispatcher::new(FieldMask::FIVE_TUPLE, 8, 1);
        let mut pinned: HashMap<Packet, usize> = HashMap::new();
        for p in &packets {
            let w = d.route(p, &NO_LOADS);
            assert_eq!(*pinned.entry(*p).or_insert(w), w, "flow {p} moved");
        }
    }

    #[test]
    fn spreads_a_skewed_trace_far_better_than_plain_rss() {
        let packets = skewed(3000, 2);
        for k in [8, 16, 32] {
            let rss = imbalance(&route_all(&mut RssToeplitzDispatcher::new(FieldMask::FIVE_TUPLE, k), &packets), k);
            let two = imbalance(&route_all(&mut TwoChoiceDispatcher::new(FieldMask::FIVE_TUPLE, k, 3), &packets), k);
            // The largest flow alone sets a floor for any flow-affine dispatcher; two-choice
            // comes within 10 % of it (or of perfect balance), RSS stays far above.
            let floor = (4000.0 * k as f64 / packets.len() as f64).max(1.0);
            assert!(two < 1.1 * floor, "k = {k}: two-choice {two:.3}, floor {floor:.3}");
            assert!(
                rss - floor > 5.0 * (two - floor),
                "k = {k}: rss {rss:.3} vs two-choice {two:.3}, floor {floor:.3}"
            );
        }
    }

    #[test]
    fn deterministic_and_chunk_routing_routes_like_route() {
        let packets = skewed(500, 3);
        let shared: Arc<[Packet]> = packets.clone().into();
        let ids: Vec<Descriptor> = (0..packets.len() as u32).collect();
        let one = route_all(&mut TwoChoiceDispatcher::new(FieldMask::FIVE_TUPLE, 12, 5), &packets);
        assert_eq!(one, route_all(&mut TwoChoiceDispatcher::new(FieldMask::FIVE_TUPLE, 12, 5), &packets));
        let mut d = TwoChoiceDispatcher::new(FieldMask::FIVE_TUPLE, 12, 5);
        let mut chunked = vec![0u32; ids.len()];
        d.route_descriptors(&shared, &ids, &mut chunked);
        assert!(chunked.iter().zip(&one).all(|(&a, &b)| a as usize == b));
    }

    #[test]
    fn candidates_are_independent_of_each_other() {
        let d = TwoChoiceDispatcher::new(FieldMask::FIVE_TUPLE, 16, 0);
        let same = (0..10_000u32).filter(|&h| {
            let (a, b) = d.candidates(h.wrapping_mul(0x9e37_79b9));
            a == b
        });
        // About 1 in 16 by chance.
        assert!((400..900).contains(&same.count()));
    }
}
