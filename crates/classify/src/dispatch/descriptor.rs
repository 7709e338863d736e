//! Descriptors: what a dispatcher hands a worker. A NIC's RSS does not copy packets to cores;
//! it writes a descriptor (where the packet lies in the receive buffer) into the chosen
//! queue's ring. Runs do the same: the request is a packet's index into the shared, read-only
//! trace (4 bytes), the dispatcher reads the header to route it, and the worker reads its
//! packets from the trace in its own CPU time. Only the routing and the 4-byte append are
//! serial.

use crate::packet::Packet;
use std::sync::Arc;
use superlinear_core::dispatch::{Dispatcher, WorkerLoads};
use superlinear_core::Worker;

/// A packet's index in the shared trace.
pub type Descriptor = u32;

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

impl<D: Dispatcher<Packet>> Dispatcher<Descriptor> for DescriptorDispatcher<D> {
    #[inline]
    fn route(&mut self, d: &Descriptor, loads: &WorkerLoads<'_>) -> usize {
        self.inner.route(&self.packets[*d as usize], loads)
    }

    fn load_aware(&self) -> bool {
        self.inner.load_aware()
    }

    /// Routes a stream into per-worker queues through small per-worker staging buffers that
    /// stay in L1 and are appended a cache line's worth at a time (as a NIC writes descriptors
    /// in bursts): with k queues, writing one descriptor at a time into k separate memory
    /// streams would wait for a cache-line fill on most writes.
    fn split_into(&mut self, requests: &[Descriptor], dispatched: &mut [u64], queues: &mut [Vec<Descriptor>]) {
        if self.inner.load_aware() {
            for d in requests {
                let w = self.inner.route(&self.packets[*d as usize], &WorkerLoads { dispatched });
                dispatched[w] += 1;
                queues[w].push(*d);
            }
            return;
        }
        const STAGE: usize = 16;
        let k = queues.len();
        let before: Vec<usize> = queues.iter().map(Vec::len).collect();
        let mut stage = vec![[0 as Descriptor; STAGE]; k];
        let mut fill = vec![0usize; k];
        let none = WorkerLoads { dispatched: &[] };
        for d in requests {
            let w = self.inner.route(&self.packets[*d as usize], &none);
            let f = fill[w];
            stage[w][f] = *d;
            if f + 1 == STAGE {
                queues[w].extend_from_slice(&stage[w]);
                fill[w] = 0;
            } else {
                fill[w] = f + 1;
            }
        }
        for w in 0..k {
            queues[w].extend_from_slice(&stage[w][..fill[w]]);
        }
        for ((count, q), b) in dispatched.iter_mut().zip(queues.iter()).zip(before) {
            *count += (q.len() - b) as u64;
        }
    }

    fn home(&self, d: &Descriptor) -> Option<usize> {
        self.inner.home(&self.packets[*d as usize])
    }
}

/// Boxes `inner` as a descriptor dispatcher (monomorphised: no virtual call per packet).
pub fn boxed<D: Dispatcher<Packet> + 'static>(inner: D, packets: Arc<[Packet]>) -> Box<dyn Dispatcher<Descriptor>> {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::{FieldMask, RssToeplitzDispatcher};

    #[test]
    fn staged_split_routes_like_route() {
        let packets: Arc<[Packet]> =
            (0..1000u32).map(|i| Packet::new(i * 7, i, i as u16, (i * 3) as u16, 17)).collect();
        let mut d = DescriptorDispatcher::new(RssToeplitzDispatcher::new(FieldMask::FIVE_TUPLE, 5), packets.clone());
        let ids: Vec<Descriptor> = (0..1000).collect();
        let mut queues = vec![vec![7u32]; 5];
        let mut dispatched = vec![1u64; 5];
        d.split_into(&ids, &mut dispatched, &mut queues);
        let none = WorkerLoads { dispatched: &[] };
        for (w, q) in queues.iter().enumerate() {
            assert_eq!(dispatched[w], q.len() as u64);
            assert!(q[1..].windows(2).all(|p| p[0] < p[1]), "order kept");
            assert!(q[1..].iter().all(|&i| d.route(&i, &none) == w));
        }
        assert_eq!(dispatched.iter().sum::<u64>(), 1005);
    }
}
