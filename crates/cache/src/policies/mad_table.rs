//! Algorithm 1's state for every object (the thesis' "faithful" variant that keeps counters for
//! objects that are not cached, §2.6.2), updated on every request with the object's own Z.

use crate::trace::MissLatency;
use superlinear_core::mad::MadRecord;

/// One [`MadRecord`] per object.
#[derive(Clone, Debug)]
pub struct MadTable {
    records: Vec<MadRecord>,
    z: MissLatency,
}

impl MadTable {
    /// No request seen yet.
    pub fn new(objects: usize, z: &MissLatency) -> Self {
        Self { records: vec![MadRecord::default(); objects], z: z.clone() }
    }

    /// ONACCESS for a request of `object` at `now`.
    #[inline]
    pub fn on_request(&mut self, object: u32, now: u64) {
        let z = self.z.of(object);
        self.records[object as usize].on_access(now, z);
    }

    /// The record of `object`.
    #[inline]
    pub fn get(&self, object: u32) -> &MadRecord {
        &self.records[object as usize]
    }
}
