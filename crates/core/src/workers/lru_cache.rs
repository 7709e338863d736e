//! placeholder (being written)
use crate::worker::Worker;
pub struct LruCache;
impl LruCache { pub fn new(_c: usize, _rho: u64) -> Self { Self } }
impl Worker for LruCache { fn serve(&mut self, _k: &u64) -> u64 { todo!() } }
