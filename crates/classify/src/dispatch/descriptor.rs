//! Descriptors: what a dispatcher hands a worker. A NIC's RSS does not copy packets to cores;
//! it writes a descriptor (where the packet lies in the receive buffer) into the chosen
//! queue's ring. Runs do the same: the request is a packet's index into the shared, read-only
//! trace (4 bytes), the dispatcher reads the header to route it, and the worker reads its
//! packets from the trace in its own CPU time. Only the routing and the 4-byte append are
//! serial.

use crate::packet::Packet;
use std::sync::Arc;
use superlinear_core::dispatch::{Dispatcher, WorkerLoads, NO_LOADS};
use superlinear_core::prefetch::prefetch;
use superlinear_core::Worker;

/// A packet's index in the shared trace.
pub type Descriptor = u32;

/// How many descriptors ahead the dispatcher prefetches a packet header.
const PREFETCH_AHEAD: usize = 64;

/// How a packet dispatcher routes a block of descriptors: one packet at a time unless it has
/// something faster (RSS: eight headers per SIMD step).
pub trait RouteDescriptors: Dispatcher<Packet> {
    /// Writes the worker of the packet each descriptor points to in `packets`.
    #[inline]
    fn route_descriptors(&mut self, packets: &[Packet], descriptors: &[Descriptor], workers: &mut [u32]) {
        for (d, slot) in descriptors.iter().zip(workers.iter_mut()) {
            *slot = self.route(&packets[*d as usize], &NO_LOADS) as u32;
        }
    }
}

/// Descriptors routed per [`RouteDescriptors`] call, after their headers' prefetches.
const BLOCK: usize = 8;

/// Routes descriptors by the packet they point to, with any packet dispatcher `D`.
pub struct DescriptorDispatcher<D> {
    inner: D,
    packets: Arc<[Packet]>,
}

impl<D> DescriptorDispatcher<D> {
    /// `inner` routing the packets of `packets`.
    pub fn new(inner: D, packets: Arc<[Packet]>) -> Self {
        Self { inner, packets }
    }
}

impl<D: RouteDescriptors> Dispatcher<Descriptor> for DescriptorDispatcher<D> {
    #[inline]
    fn route(&mut self, d: &Descriptor, loads: &WorkerLoads<'_>) -> usize {
        self.inner.route(&self.packets[*d as usize], loads)
    }

    fn load_aware(&self) -> bool {
        self.inner.load_aware()
    }

    /// Routes a chunk, prefetching the header of the packet [`PREFETCH_AHEAD`] descriptors
    /// ahead (as DPDK receive loops do): routing a packet takes less than a memory latency,
    /// so a header must be requested well before it is hashed.
    fn assign_chunk(&mut self, requests: &[Descriptor], workers: &mut [u32]) {
        for (b, (block, out)) in requests.chunks(BLOCK).zip(workers.chunks_mut(BLOCK)).enumerate() {
            let ahead = requests.iter().skip(b * BLOCK + PREFETCH_AHEAD).take(BLOCK);
            for p in ahead.filter_map(|&d| self.packets.get(d as usize)) {
                prefetch(p);
            }
            self.inner.route_descriptors(&self.packets, block, out);
        }
    }

    fn home(&self, d: &Descriptor) -> Option<usize> {
        self.inner.home(&self.packets[*d as usize])
    }
}

/// Boxes `inner` as a descriptor dispatcher (monomorphised: no virtual call per packet).
pub fn boxed<D: RouteDescriptors + 'static>(inner: D, packets: Arc<[Packet]>) -> Box<dyn Dispatcher<Descriptor>> {
    Box::new(DescriptorDispatcher::new(inner, packets))
}

/// Packets read per batch by a [`DescriptorWorker`].
const GATHER: usize = 256;

/// A packet worker serving descriptors: it gathers a batch of its packets from the trace and
/// hands them to the classifier in one call.
pub struct DescriptorWorker {
    inner: Box<dyn Worker<Packet>>,
    packets: Arc<[Packet]>,
    buf: Vec<Packet>,
}

impl DescriptorWorker {
    /// `inner` serving packets of `packets` by index.
    pub fn new(inner: Box<dyn Worker<Packet>>, packets: Arc<[Packet]>) -> Self {
        Self { inner, packets, buf: Vec::with_capacity(GATHER) }
    }
}

impl Worker<Descriptor> for DescriptorWorker {
    fn serve(&mut self, d: &Descriptor) -> u64 {
        self.inner.serve(&self.packets[*d as usize])
    }

    fn serve_batch(&mut self, requests: &[Descriptor]) -> u64 {
        let mut work = 0;
        for chunk in requests.chunks(GATHER) {
            self.buf.clear();
            self.buf.extend(chunk.iter().map(|&d| self.packets[d as usize]));
            work += self.inner.serve_batch(&self.buf);
        }
        work
    }

    fn hits(&self) -> Option<u64> {
        self.inner.hits()
    }

    fn entries_moved(&self) -> Option<u64> {
        self.inner.entries_moved()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::{FieldMask, RssToeplitzDispatcher};

    #[test]
    fn chunk_routing_routes_like_route() {
        // 1,003 descriptors: blocks of eight and a remainder; k above 256 takes the table path.
        let packets: Arc<[Packet]> = (0..1003u32)
            .map(|i| Packet::new(i.wrapping_mul(0x9e37_79b9), i * 7, i as u16, (i * 3) as u16, (i % 3 * 11) as u8))
            .collect();
        let ids: Vec<Descriptor> = (0..1003).rev().collect();
        for fields in ["sip,dip,sport,dport,proto", "dport", "dip/8,dport/8,proto"] {
            for k in [1, 5, 32, 300] {
                let rss = RssToeplitzDispatcher::new(FieldMask::parse(fields).unwrap(), k);
                let mut d = DescriptorDispatcher::new(rss, packets.clone());
                let mut workers = vec![0u32; ids.len()];
                let mut dispatched = vec![1u64; k];
                d.route_chunk(&ids, &mut dispatched, &mut workers);
                for (i, &w) in ids.iter().zip(&workers) {
                    assert_eq!(d.route(i, &NO_LOADS), w as usize, "{fields}, k = {k}");
                }
                for (w, &n) in dispatched.iter().enumerate() {
                    assert_eq!(n, 1 + workers.iter().filter(|&&x| x as usize == w).count() as u64);
                }
            }
        }
    }
}
