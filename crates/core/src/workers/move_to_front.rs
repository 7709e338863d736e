//! Move-to-front list (paper §3.2, Fig. 3): after each access the item moves to the front.
//!
//! Array-backed like [`super::StaticList`]: both scan the same contiguous memory, so a measured
//! difference comes from self-adjustment alone. Moving to the front shifts the prefix by one
//! (a `memmove`), which costs no more than the scan that found the item.

use super::scan::position;
use crate::worker::Worker;

/// A self-adjusting list. A lookup costs the position of the item plus one (positions visited);
/// a key that is not stored costs a full scan and changes nothing.
pub struct MoveToFrontList {
    items: Vec<u64>,
}

impl MoveToFrontList {
    /// A list holding `items` in the given initial order.
    pub fn new(items: &[u64]) -> Self {
        Self { items: items.to_vec() }
    }

    /// The current order, front first.
    pub fn order(&self) -> &[u64] {
        &self.items
    }
}

impl Worker for MoveToFrontList {
    #[inline]
    fn serve(&mut self, key: &u64) -> u64 {
        match position(&self.items, *key) {
            Some(i) => {
                self.items[..=i].rotate_right(1);
                i as u64 + 1
            }
            None => self.items.len() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_accessed_item_to_front_and_counts_positions() {
        let mut l = MoveToFrontList::new(&[1, 2, 3, 4]);
        assert_eq!(l.serve(&3), 3);
        assert_eq!(l.order(), &[3, 1, 2, 4]);
        assert_eq!(l.serve(&3), 1);
        assert_eq!(l.serve(&4), 4);
        assert_eq!(l.order(), &[4, 3, 1, 2]);
        assert_eq!(l.serve(&99), 4);
        assert_eq!(l.order(), &[4, 3, 1, 2]);
    }
}
