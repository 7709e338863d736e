//! The node arena shared by the static balanced tree and the splay tree (paper §3.4, Fig. 5e).
//!
//! Both trees are binary search trees stored in the same layout (a `Vec` of 16-byte nodes linked
//! by `u32` indices) and both start from exactly the same perfectly balanced shape, built here
//! from the sorted, deduplicated items. Every worker therefore starts from the same replicated
//! state, and a measured difference between the two trees comes from self-adjustment alone, never
//! from memory layout or from a different starting shape.

/// The "no child" index.
pub(crate) const NIL: u32 = u32::MAX;

/// One tree node: a key and the indices of its children ([`NIL`] where there is none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Node {
    pub key: u64,
    pub left: u32,
    pub right: u32,
}

/// A binary search tree stored in a node arena.
#[derive(Clone, Debug)]
pub(crate) struct TreeArena {
    /// The nodes; a tree owner may append scratch nodes it never links from `root`.
    pub nodes: Vec<Node>,
    /// Index of the root, or [`NIL`] for an empty tree.
    pub root: u32,
}

impl TreeArena {
    /// A perfectly balanced tree over the distinct keys of `items`, whatever their order: the
    /// middle key is the root and each half is built the same way, so every leaf lies at depth
    /// `floor(log2(n))` or one above.
    ///
    /// Node `i` holds the `i`-th smallest key. Built with an explicit stack (no recursion).
    pub fn balanced(items: &[u64]) -> Self {
        let mut keys = items.to_vec();
        keys.sort_unstable();
        keys.dedup();
        assert!(keys.len() < NIL as usize, "too many items for u32 node indices");
        let mut nodes: Vec<Node> = keys.iter().map(|&key| Node { key, left: NIL, right: NIL }).collect();

        // Half-open rank ranges still to be placed, with the parent slot each one hangs from.
        enum Slot {
            Root,
            Left(u32),
            Right(u32),
        }
        let mut root = NIL;
        let mut stack = vec![(0usize, nodes.len(), Slot::Root)];
        while let Some((lo, hi, slot)) = stack.pop() {
            if lo >= hi {
                continue;
            }
            let mid = lo + (hi - lo) / 2;
            let m = mid as u32;
            match slot {
                Slot::Root => root = m,
                Slot::Left(p) => nodes[p as usize].left = m,
                Slot::Right(p) => nodes[p as usize].right = m,
            }
            stack.push((lo, mid, Slot::Left(m)));
            stack.push((mid + 1, hi, Slot::Right(m)));
        }
        Self { nodes, root }
    }

    /// Depth of `key` (the root has depth 0), or `None` if it is not stored. Burns nothing.
    pub fn depth_of(&self, key: u64) -> Option<usize> {
        let mut cur = self.root;
        let mut depth = 0;
        while cur != NIL {
            let node = &self.nodes[cur as usize];
            match key.cmp(&node.key) {
                std::cmp::Ordering::Less => cur = node.left,
                std::cmp::Ordering::Greater => cur = node.right,
                std::cmp::Ordering::Equal => return Some(depth),
            }
            depth += 1;
        }
        None
    }

    /// The keys in symmetric (in-order) order, iteratively; sorted if the tree is a valid BST.
    pub fn in_order(&self) -> Vec<u64> {
        let mut out = Vec::new();
        let mut stack = Vec::new();
        let mut cur = self.root;
        while cur != NIL || !stack.is_empty() {
            while cur != NIL {
                stack.push(cur);
                cur = self.nodes[cur as usize].left;
            }
            let top = stack.pop().expect("stack is non-empty here");
            out.push(self.nodes[top as usize].key);
            cur = self.nodes[top as usize].right;
        }
        out
    }

    /// The key at the root, if any.
    pub fn root_key(&self) -> Option<u64> {
        (self.root != NIL).then(|| self.nodes[self.root as usize].key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_a_perfectly_balanced_tree_independent_of_input_order() {
        let a = TreeArena::balanced(&[5, 1, 4, 2, 3, 7, 6, 3, 1]);
        let b = TreeArena::balanced(&[1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(a.nodes, b.nodes);
        assert_eq!(a.root, b.root);
        assert_eq!(a.root_key(), Some(4));
        assert_eq!(a.in_order(), vec![1, 2, 3, 4, 5, 6, 7]);
        let depths: Vec<_> = (1..=7).map(|k| a.depth_of(k).unwrap()).collect();
        assert_eq!(depths, vec![2, 1, 2, 0, 2, 1, 2]);
        assert_eq!(a.depth_of(8), None);
    }

    #[test]
    fn empty_and_single() {
        let e = TreeArena::balanced(&[]);
        assert_eq!(e.root, NIL);
        assert_eq!(e.in_order(), Vec::<u64>::new());
        assert_eq!(e.root_key(), None);
        let s = TreeArena::balanced(&[9]);
        assert_eq!(s.depth_of(9), Some(0));
    }

    #[test]
    fn height_is_floor_log2() {
        for n in 1..300u64 {
            let items: Vec<u64> = (0..n).collect();
            let t = TreeArena::balanced(&items);
            let max = items.iter().map(|&k| t.depth_of(k).unwrap()).max().unwrap();
            assert_eq!(max, n.ilog2() as usize, "n = {n}");
        }
    }
}
