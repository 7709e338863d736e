//! A Fenwick (binary indexed) tree of `u32` counts: point increments and decrements, prefix
//! sums, both in O(log n) (Fenwick 1994). The working-set pass keeps one over request times (a
//! mark at each item's latest access) and one over initial list positions (which items a worker
//! has already touched).

/// Counts at positions `0..n` with O(log n) update and prefix sum.
#[derive(Clone, Debug, Default)]
pub struct Fenwick {
    /// 1-based implicit tree: `tree[i]` holds the sum of the `i & -i` positions ending at `i`.
    tree: Vec<u32>,
}

impl Fenwick {
    /// All-zero counts at `n` positions.
    pub fn new(n: usize) -> Self {
        Self { tree: vec![0; n + 1] }
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.tree.len().saturating_sub(1)
    }

    /// Whether there are no positions.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Resets to all-zero counts at `n` positions, reusing the allocation (O(n) writes, no
    /// allocation once the tree has been that large).
    pub fn clear(&mut self, n: usize) {
        self.tree.clear();
        self.tree.resize(n + 1, 0);
    }

    /// Adds one at position `i`.
    #[inline]
    pub fn increment(&mut self, i: usize) {
        let mut j = i + 1;
        while j < self.tree.len() {
            self.tree[j] += 1;
            j += j & j.wrapping_neg();
        }
    }

    /// Takes one away at position `i`, which must hold at least one.
    #[inline]
    pub fn decrement(&mut self, i: usize) {
        let mut j = i + 1;
        while j < self.tree.len() {
            self.tree[j] -= 1;
            j += j & j.wrapping_neg();
        }
    }

    /// Sum of the counts at positions `0..i` (`i` ≤ len).
    #[inline]
    pub fn prefix(&self, i: usize) -> u32 {
        let mut j = i;
        let mut sum = 0;
        while j > 0 {
            sum += self.tree[j];
            j &= j - 1;
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_sums_match_a_plain_array() {
        let n = 37;
        let mut f = Fenwick::new(n);
        let mut plain = vec![0u32; n];
        let mut x = 12345u64;
        for step in 0..2000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let i = (x >> 33) as usize % n;
            if step % 3 == 2 && plain[i] > 0 {
                f.decrement(i);
                plain[i] -= 1;
            } else {
                f.increment(i);
                plain[i] += 1;
            }
            let q = (x >> 13) as usize % (n + 1);
            assert_eq!(f.prefix(q), plain[..q].iter().sum::<u32>());
        }
        f.clear(5);
        assert_eq!((f.len(), f.prefix(5)), (5, 0));
        assert!(Fenwick::new(0).is_empty());
    }
}
