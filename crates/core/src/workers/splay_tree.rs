//! placeholder (being written)
use crate::worker::Worker;
pub struct SplayTree;
impl SplayTree { pub fn new(_items: &[u64], _w: u64) -> Self { Self } }
impl Worker for SplayTree { fn serve(&mut self, _k: &u64) -> u64 { todo!() } }
