//! Heavy-flow spraying (`spray:FIELDS`): RSS's flow affinity for every flow but the heavy ones,
//! whose packets are spread over all workers.
//!
//! Any flow-affine dispatcher gives a flow's packets to one worker, so a flow that alone carries
//! a large share of the traffic sets the busiest worker's load whatever else is balanced: on the
//! ClassBench fw1 trace one 5-tuple is 33.5 % of the packets, so at k = 32 its worker carries
//! about 11× the mean, and the projected throughput is that worker's. A classifier's verdict
//! depends on the packet and the rules only, not on which worker saw the flow's earlier packets,
//! so a heavy flow can be spread: each worker then learns it (a move to the front, an entry of
//! a flow cache), its state replicated as DistCache replicates hot objects over its cache layers
//! (seeds/distcache-provable-load-balancing.txt, §3). Every other flow keeps its RSS worker and
//! with it the locality that self-adjusting workers need (paper §4.2).
//!
//! Heavy is decided on the packets the dispatcher has seen: a table of 2^14 packet counters
//! indexed by a hash of the chosen fields is halved every [`EPOCH`] packets, so a flow's counter
//! holds between one and two epochs' worth of its packets; a packet whose flow's counter has
//! reached `EPOCH / k` (a flow of at least 1/k of the recent packets, and part of the time those
//! between 1/(2k) and 1/k) goes to the next worker in round-robin order, every other packet to
//! its RSS worker. Two flows on one counter are counted as one (with 2^14 counters and the
//! ClassBench traces' 13–19 thousand flows that only rarely spreads a light flow). A flow is
//! spread from its `EPOCH / k`-th recent packet on (256 at k = 32).
//!
//! The price: the packets of a sprayed flow are classified on several workers, so they may
//! leave in another order than they came. That is harmless for a classifier's verdicts and
//! per-rule counters, not for a worker that keeps per-flow state (connection tracking, a
//! stateful firewall); those need a flow-affine dispatcher (`rss`, `two-choice`, `rule`).
//!
//! Serial cost: RSS's own routing (eight headers per GFNI step where the CPU has it), one
//! multiply-mix of the fields, a counter increment, and every [`EPOCH`] packets a pass that
//! halves the 32 KiB table (two counters per packet).

use super::descriptor::{Descriptor, RouteDescriptors};
use super::rss::{mask16, mask32, FieldMask, RssToeplitzDispatcher};
use crate::packet::Packet;
use superlinear_core::dispatch::{Dispatcher, WorkerLoads};

/// Packets between two halvings of the counters.
pub const EPOCH: u32 = 1 << 13;
/// Packet counters (a power of two).
pub const COUNTERS: usize = 1 << 14;

/// RSS over the fields, with heavy flows sprayed round-robin; see the module documentation.
pub struct HeavyFlowSprayDispatcher {
    rss: RssToeplitzDispatcher,
    /// Per-field masks of the chosen fields (what a flow is here).
    src: u32,
    dst: u32,
    sport: u16,
    dport: u16,
    proto: u8,
    counts: Vec<u16>,
    /// A flow whose counter reaches this is heavy.
    threshold: u16,
    /// Packets since the last halving.
    seen: u32,
    /// The worker of the next sprayed packet.
    next: usize,
    k: usize,
}

impl HeavyFlowSprayDispatcher {
    /// RSS over `fields` for `k` workers, heavy flows sprayed.
    pub fn new(fields: FieldMask, k: usize) -> Self {
        let k = k.clamp(1, u16::MAX as usize);
        Self {
            rss: RssToeplitzDispatcher::new(fields, k),
            src: mask32(fields.src),
            dst: mask32(fields.dst),
            sport: mask16(fields.sport),
            dport: mask16(fields.dport),
            proto: if fields.proto > 0 { u8::MAX } else { 0 },
            counts: vec![0; COUNTERS],
            threshold: (EPOCH as usize / k).clamp(1, u16::MAX as usize) as u16,
            seen: 0,
            next: 0,
            k,
        }
    }

    /// The flow's counter: a multiply-mix of its masked fields (cheaper than a second Toeplitz
    /// hash; it only has to tell flows apart, not match a NIC).
    #[inline(always)]
    fn counter(&self, p: &Packet) -> usize {
        let addresses = ((p.src & self.src) as u64) << 32 | (p.dst & self.dst) as u64;
        let rest = ((p.sport & self.sport) as u64) << 24
            | ((p.dport & self.dport) as u64) << 8
            | (p.proto & self.proto) as u64;
        let mixed = (addresses ^ rest.rotate_left(29)).wrapping_mul(0xff51_afd7_ed55_8ccd);
        (mixed >> (64 - COUNTERS.trailing_zeros())) as usize
    }

    /// Counts the packet and returns its worker, given its RSS worker. Without branches on the
    /// flow's weight: on fw1 a third of the packets are heavy, in no order a predictor learns.
    #[inline(always)]
    fn place(&mut self, p: &Packet, home: usize) -> usize {
        let i = self.counter(p);
        let c = self.counts[i].saturating_add(1);
        self.counts[i] = c;
        let heavy = c >= self.threshold;
        let w = if heavy { self.next } else { home };
        let next = self.next + usize::from(heavy);
        self.next = if next == self.k { 0 } else { next };
        self.seen += 1;
        if self.seen == EPOCH {
            self.seen = 0;
            self.counts.iter_mut().for_each(|c| *c >>= 1);
        }
        w
    }
}

impl Dispatcher<Packet> for HeavyFlowSprayDispatcher {
    #[inline]
    fn route(&mut self, p: &Packet, loads: &WorkerLoads<'_>) -> usize {
        let home = self.rss.route(p, loads);
        self.place(p, home)
    }
}

impl RouteDescriptors for HeavyFlowSprayDispatcher {
    /// RSS's workers for the whole block first (its GFNI path), then the counters in order (the
    /// same workers as routing one by one: tested).
    fn route_descriptors(&mut self, packets: &[Packet], descriptors: &[Descriptor], workers: &mut [u32]) {
        self.rss.route_descriptors(packets, descriptors, workers);
        for (d, slot) in descriptors.iter().zip(workers.iter_mut()) {
            *slot = self.place(&packets[*d as usize], *slot as usize) as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::Arc;
    use superlinear_core::dispatch::NO_LOADS;

    /// One flow carrying a third of the packets among `light` flows of equal size, interleaved.
    fn elephant(light: u32, per_light: usize) -> Vec<Packet> {
        let heavy = Packet::new(0x0a00_0001, 0xc0a8_0001, 40_000, 443, 6);
        let mut packets = Vec::new();
        for round in 0..per_light {
            for f in 0..light {
                packets.push(Packet::new(0x0b00_0000 | f, 0xc0a8_0002, 1024 + (f % 50_000) as u16, 80, 6));
                if (f as usize + round).is_multiple_of(2) {
                    packets.push(heavy);
                }
            }
        }
        packets
    }

    fn loads(workers: &[usize], k: usize) -> Vec<u64> {
        let mut load = vec![0u64; k];
        workers.iter().for_each(|&w| load[w] += 1);
        load
    }

    #[test]
    fn light_flows_keep_their_rss_worker_and_the_heavy_one_is_spread() {
        let packets = elephant(2000, 30);
        let heavy = packets.iter().copied().max_by_key(|p| p.src == 0x0a00_0001).unwrap();
        for k in [4, 16, 32] {
            let mut rss = RssToeplitzDispatcher::new(FieldMask::FIVE_TUPLE, k);
            let mut spray = HeavyFlowSprayDispatcher::new(FieldMask::FIVE_TUPLE, k);
            let mut heavy_on: HashMap<usize, u64> = HashMap::new();
            let mut routed = Vec::new();
            for p in &packets {
                let w = spray.route(p, &NO_LOADS);
                assert!(w < k);
                if *p == heavy {
                    *heavy_on.entry(w).or_default() += 1;
                } else {
                    assert_eq!(w, rss.route(p, &NO_LOADS), "k = {k}: light flow {p} left its RSS worker");
                }
                routed.push(w);
            }
            assert_eq!(heavy_on.len(), k, "k = {k}: the heavy flow reached {} workers", heavy_on.len());
            let load = loads(&routed, k);
            let imbalance = *load.iter().max().unwrap() as f64 * k as f64 / packets.len() as f64;
            let rss_load = loads(&packets.iter().map(|p| rss.route(p, &NO_LOADS)).collect::<Vec<_>>(), k);
            let rss_imbalance = *rss_load.iter().max().unwrap() as f64 * k as f64 / packets.len() as f64;
            // A third of the packets on one worker under RSS: k / 3 times the mean at least.
            assert!(rss_imbalance > k as f64 / 3.0, "k = {k}: rss {rss_imbalance:.2}");
            assert!(imbalance < 1.6, "k = {k}: spray {imbalance:.2} (rss {rss_imbalance:.2})");
        }
    }

    #[test]
    fn without_a_heavy_flow_it_routes_as_rss() {
        let packets: Vec<Packet> =
            (0..50u32).flat_map(|_| (0..5000u32).map(|f| Packet::new(f, 7, (f % 1000) as u16, 53, 17))).collect();
        let mut rss = RssToeplitzDispatcher::new(FieldMask::FIVE_TUPLE, 8);
        let mut spray = HeavyFlowSprayDispatcher::new(FieldMask::FIVE_TUPLE, 8);
        assert!(packets.iter().all(|p| spray.route(p, &NO_LOADS) == rss.route(p, &NO_LOADS)));
    }

    #[test]
    fn deterministic_and_chunk_routing_routes_like_route() {
        let packets = elephant(700, 40);
        let shared: Arc<[Packet]> = packets.clone().into();
        let ids: Vec<Descriptor> = (0..packets.len() as u32).collect();
        let mut one = HeavyFlowSprayDispatcher::new(FieldMask::FIVE_TUPLE, 12);
        let by_one: Vec<usize> = packets.iter().map(|p| one.route(p, &NO_LOADS)).collect();
        let mut d = HeavyFlowSprayDispatcher::new(FieldMask::FIVE_TUPLE, 12);
        let mut chunked = vec![0u32; ids.len()];
        for (ids, out) in ids.chunks(8).zip(chunked.chunks_mut(8)) {
            d.route_descriptors(&shared, ids, out);
        }
        assert!(chunked.iter().zip(&by_one).all(|(&a, &b)| a as usize == b));
        assert!(by_one.iter().any(|&w| w != by_one[0]));
    }

    #[test]
    fn the_fields_define_the_flow() {
        // Over the destination port only, every packet to port 443 is one flow: a heavy one.
        let packets: Vec<Packet> =
            (0..40_000u32).map(|i| Packet::new(i, i ^ 0x55, (i % 60_000) as u16, 443, 6)).collect();
        let mut d = HeavyFlowSprayDispatcher::new(FieldMask::parse("dport").unwrap(), 8);
        let routed: Vec<usize> = packets.iter().map(|p| d.route(p, &NO_LOADS)).collect();
        let load = loads(&routed, 8);
        assert!(load.iter().all(|&l| l > 0), "{load:?}");
    }
}
