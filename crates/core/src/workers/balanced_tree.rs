//! placeholder (being written)
use crate::worker::Worker;
pub struct BalancedSearchTree;
impl BalancedSearchTree { pub fn new(_items: &[u64], _w: u64) -> Self { Self } }
impl Worker for BalancedSearchTree { fn serve(&mut self, _k: &u64) -> u64 { todo!() } }
