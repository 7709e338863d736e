//! Static balanced search tree: the non-adjusting baseline of the paper's tree panel (Fig. 5e),
//! where every key comparison is expensive (`w` cycles, e.g. comparing long strings).
//!
//! It uses the arena and the perfectly balanced initial shape of [`super::tree_arena`], the same
//! as [`super::SplayTree`], and never changes shape.

use super::tree_arena::{TreeArena, NIL};
use crate::busy::BusyLoop;
use crate::worker::Worker;
use std::cmp::Ordering;

/// A balanced binary search tree that never restructures.
///
/// Work of a lookup: the number of nodes whose key is compared with the request, i.e. the length
/// of the search path (`depth + 1` for a stored key; the whole path down to the missing child for
/// an absent one; 0 for an empty tree). Each comparison also burns `compare_cycles`.
pub struct BalancedSearchTree {
    tree: TreeArena,
    compare: BusyLoop,
}

impl BalancedSearchTree {
    /// A perfectly balanced tree over the distinct `items` (their order does not matter), with
    /// `compare_cycles` burnt per key comparison.
    pub fn new(items: &[u64], compare_cycles: u64) -> Self {
        Self { tree: TreeArena::balanced(items), compare: BusyLoop::new(compare_cycles) }
    }

    /// Depth of `key` (root = 0), or `None` if absent. Counts no work and burns nothing.
    pub fn depth_of(&self, key: u64) -> Option<usize> {
        self.tree.depth_of(key)
    }

    /// The keys in order (sorted). For tests.
    pub fn in_order(&self) -> Vec<u64> {
        self.tree.in_order()
    }

    /// The key at the root, if any.
    pub fn root_key(&self) -> Option<u64> {
        self.tree.root_key()
    }
}

impl Worker for BalancedSearchTree {
    #[inline]
    fn serve(&mut self, key: &u64) -> u64 {
        let key = *key;
        let nodes = &self.tree.nodes;
        let mut cur = self.tree.root;
        let mut work = 0;
        while cur != NIL {
            let node = &nodes[cur as usize];
            self.compare.burn();
            work += 1;
            match key.cmp(&node.key) {
                Ordering::Less => cur = node.left,
                Ordering::Greater => cur = node.right,
                Ordering::Equal => break,
            }
        }
        work
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_is_search_path_length() {
        let mut t = BalancedSearchTree::new(&[7, 6, 5, 4, 3, 2, 1], 0);
        assert_eq!(t.root_key(), Some(4));
        assert_eq!(t.serve(&4), 1);
        assert_eq!(t.serve(&2), 2);
        assert_eq!(t.serve(&7), 3);
        // Absent keys walk to a missing child: 0 < 1 visits 4, 2, 1.
        assert_eq!(t.serve(&0), 3);
        assert_eq!(t.root_key(), Some(4));
        assert_eq!(BalancedSearchTree::new(&[], 0).serve(&1), 0);
    }
}
