//! Splay tree (Sleator & Tarjan, "Self-Adjusting Binary Search Trees", J. ACM 32(3), 1985): the
//! self-adjusting tree of the paper's tree panel (Fig. 5e), where every key comparison is
//! expensive (`w` cycles).
//!
//! Splaying is the *simplified top-down splay* of Sleator & Tarjan §4 (Fig. 12; Sleator's
//! reference `top-down-splay.c`): one iterative pass down the search path that splits the tree
//! into a left tree L, a right tree R and a middle tree, with zig and zig-zig steps and a zig-zag
//! done as a zig, then reassembles the three. No recursion, no allocation, `u32` node indices.
//!
//! It starts from the same balanced shape and node layout as [`super::BalancedSearchTree`]
//! (see [`super::tree_arena`]), so the two differ only in self-adjustment.

use super::tree_arena::{Node, TreeArena, NIL};
use crate::busy::BusyLoop;
use crate::worker::Worker;
use std::cmp::Ordering;

/// A splay tree. Every access splays the requested key to the root; an absent key splays the
/// last node on its search path (its predecessor or successor) to the root.
///
/// Work of an access: the number of three-way key comparisons the splay makes, each burning
/// `compare_cycles`. Each node on the search path is compared with the request exactly once:
/// the zig-zag step reuses the comparison it made at the child instead of repeating it, as an
/// implementation of an expensive comparison would. So the work equals the length of the search
/// path in the tree *before* the splay: `depth + 1` for a stored key, the nodes down to the missing
/// child for an absent one, 0 for an empty tree. Pointer rotations and links cost no work units.
pub struct SplayTree {
    tree: TreeArena,
    /// Scratch node past the real ones: its `right` is the root of L, its `left` the root of R
    /// during a splay (the "N" header node of Sleator's code, so that linking needs no branch).
    header: u32,
    compare: BusyLoop,
}

impl SplayTree {
    /// A splay tree over the distinct `items`, starting from the perfectly balanced shape (their
    /// order does not matter), with `compare_cycles` burnt per key comparison.
    pub fn new(items: &[u64], compare_cycles: u64) -> Self {
        let mut tree = TreeArena::balanced(items);
        let header = tree.nodes.len() as u32;
        tree.nodes.push(Node { key: 0, left: NIL, right: NIL });
        Self { tree, header, compare: BusyLoop::new(compare_cycles) }
    }

    /// The key at the root (the last key accessed, once anything has been), if any.
    pub fn root_key(&self) -> Option<u64> {
        self.tree.root_key()
    }

    /// The keys in order; always the sorted, distinct items. For tests.
    pub fn in_order(&self) -> Vec<u64> {
        self.tree.in_order()
    }

    /// Depth of `key` (root = 0), or `None` if absent. Counts no work, burns nothing, and does
    /// not splay.
    pub fn depth_of(&self, key: u64) -> Option<usize> {
        self.tree.depth_of(key)
    }

    /// Splays `key` (or the last node of its search path) to the root; returns the comparisons.
    fn splay(&mut self, key: u64) -> u64 {
        let mut t = self.tree.root;
        if t == NIL {
            return 0;
        }
        let h = self.header;
        let compare = self.compare;
        let nodes = &mut self.tree.nodes;
        nodes[h as usize].left = NIL;
        nodes[h as usize].right = NIL;
        // l: largest node of L (new nodes go to its right); r: smallest of R (new go left).
        let mut l = h;
        let mut r = h;

        compare.burn();
        let mut work = 1;
        // Invariant at the top of the loop: `c` is the comparison of `key` with `t`'s key.
        let mut c = key.cmp(&nodes[t as usize].key);
        loop {
            match c {
                Ordering::Less => {
                    let y = nodes[t as usize].left;
                    if y == NIL {
                        break;
                    }
                    compare.burn();
                    work += 1;
                    let cy = key.cmp(&nodes[y as usize].key);
                    if cy == Ordering::Less {
                        // Zig-zig: rotate right at t, then link the new top (y) into R.
                        nodes[t as usize].left = nodes[y as usize].right;
                        nodes[y as usize].right = t;
                        t = y;
                        let z = nodes[t as usize].left;
                        if z == NIL {
                            break;
                        }
                        nodes[r as usize].left = t;
                        r = t;
                        t = z;
                        compare.burn();
                        work += 1;
                        c = key.cmp(&nodes[t as usize].key);
                    } else {
                        // Zig (or zig-zag done as a zig): link t into R, go on at y, whose
                        // comparison we already have.
                        nodes[r as usize].left = t;
                        r = t;
                        t = y;
                        c = cy;
                    }
                }
                Ordering::Greater => {
                    let y = nodes[t as usize].right;
                    if y == NIL {
                        break;
                    }
                    compare.burn();
                    work += 1;
                    let cy = key.cmp(&nodes[y as usize].key);
                    if cy == Ordering::Greater {
                        // Zag-zag: rotate left at t, then link the new top (y) into L.
                        nodes[t as usize].right = nodes[y as usize].left;
                        nodes[y as usize].left = t;
                        t = y;
                        let z = nodes[t as usize].right;
                        if z == NIL {
                            break;
                        }
                        nodes[l as usize].right = t;
                        l = t;
                        t = z;
                        compare.burn();
                        work += 1;
                        c = key.cmp(&nodes[t as usize].key);
                    } else {
                        // Zag (or zag-zig done as a zag): link t into L, go on at y.
                        nodes[l as usize].right = t;
                        l = t;
                        t = y;
                        c = cy;
                    }
                }
                Ordering::Equal => break,
            }
        }
        // Assemble: t's subtrees close off L and R, which become t's subtrees.
        let (tl, tr) = (nodes[t as usize].left, nodes[t as usize].right);
        nodes[l as usize].right = tl;
        nodes[r as usize].left = tr;
        nodes[t as usize].left = nodes[h as usize].right;
        nodes[t as usize].right = nodes[h as usize].left;
        self.tree.root = t;
        work
    }
}

impl Worker for SplayTree {
    #[inline]
    fn serve(&mut self, key: &u64) -> u64 {
        self.splay(*key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splays_to_root_and_counts_search_path() {
        let items: Vec<u64> = (1..=15).collect();
        let mut t = SplayTree::new(&items, 0);
        assert_eq!(t.root_key(), Some(8));
        assert_eq!(t.depth_of(1), Some(3));
        assert_eq!(t.serve(&1), 4);
        assert_eq!(t.root_key(), Some(1));
        assert_eq!(t.serve(&1), 1);
        assert_eq!(t.in_order(), items);
        // Sleator-Tarjan's simplified top-down splay of 1 in 8-4-2-1: a zig-zig then a zig.
        let depths: Vec<_> = [1, 4, 2, 8, 3, 6, 12].iter().map(|&k| t.depth_of(k).unwrap()).collect();
        assert_eq!(depths, vec![0, 1, 2, 2, 3, 3, 3]);
        // Absent key: the last node on the path becomes the root.
        let d = t.depth_of(15).unwrap();
        assert_eq!(t.serve(&16), d as u64 + 1);
        assert_eq!(t.root_key(), Some(15));
        assert_eq!(t.in_order(), items);
    }

    #[test]
    fn empty_tree_costs_nothing() {
        let mut t = SplayTree::new(&[], 0);
        assert_eq!(t.serve(&3), 0);
        assert_eq!(t.root_key(), None);
        assert!(t.in_order().is_empty());
    }
}
