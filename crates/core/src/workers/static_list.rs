//! Static list: the items in a fixed order, searched front to back (the paper's baseline list).

use super::scan::position;
use crate::worker::Worker;

/// A list that never reorders. A lookup costs the position of the item plus one; a key that is
/// not stored costs a full scan.
pub struct StaticList {
    items: Vec<u64>,
}

impl StaticList {
    /// A list holding `items` in the given order.
    pub fn new(items: &[u64]) -> Self {
        Self { items: items.to_vec() }
    }
}

impl Worker for StaticList {
    #[inline]
    fn serve(&mut self, key: &u64) -> u64 {
        match position(&self.items, *key) {
            Some(i) => i as u64 + 1,
            None => self.items.len() as u64,
        }
    }
}
