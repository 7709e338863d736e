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
