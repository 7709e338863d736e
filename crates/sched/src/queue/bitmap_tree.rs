//! The priority index of an HFFS queue / BBQ: a perfect w-ary tree of w-bit bitmaps.
//!
//! Thesis §3.5.4 (Fig. 3.12) and §4.2.2 (Fig. 4.2): with `w`-bit bitmaps and `D` levels the tree
//! covers `P = w^D` priority buckets. At the leaf level each bit stands for one bucket; at every
//! level above, each bit stands for one child bitmap. The invariant is the paper's: a bit is 1
//! if and only if some bucket below it is non-empty. The minimum (maximum) non-empty bucket is
//! found by following the lowest (highest) set bit from the root down: find-first-set (BSF,
//! `trailing_zeros`) for EXTRACT-MIN, bit-scan-reverse (BSR, `leading_zeros`) for EXTRACT-MAX,
//! one bitmap per level, so every operation is O(D) whatever the number of queued elements.
//!
//! BBQ's hardware pipeline also keeps a subtree occupancy counter per bit (§4.2.2) so that
//! concurrent in-flight operations never stall; a sequential software queue does not need them:
//! a leaf bit is cleared when its bucket empties and a parent bit when its child bitmap becomes
//! zero, which is the same invariant.
//!
//! Bucket `b` lives at leaf node `b / w`, bit `b % w`; node `n` of level `l` is bit `n % w` of
//! node `n / w` of level `l − 1`. Widths that are powers of two use shifts and masks instead of
//! division (a branch that is the same for the whole life of the tree, so it predicts perfectly).

/// Most priority buckets a tree may index (2 GiB of bucket heads and tails in a queue).
pub const MAX_SPAN: u64 = 1 << 28;

/// The bitmap tree over `width^levels` priority buckets.
#[derive(Clone, Debug)]
pub struct BitmapTree {
    width: u32,
    levels: u32,
    /// log2(width) when the width is a power of two.
    shift: u32,
    pow2: bool,
    /// Start of each level's bitmaps in `maps`, root (level 0) first.
    offsets: Vec<usize>,
    /// Number of bitmaps at each level (`width^level`).
    nodes: Vec<usize>,
    maps: Vec<u64>,
    span: u64,
}

impl BitmapTree {
    /// A tree of `levels` levels of `width`-bit bitmaps. Panics outside `2 ≤ width ≤ 64`,
    /// `levels ≥ 1`, `width^levels ≤ 2^28`: callers validate user input first
    /// ([`BitmapTree::check`]).
    pub fn new(width: u32, levels: u32) -> Self {
        if let Err(e) = Self::check(width, levels) {
            panic!("{e}");
        }
        let mut offsets = Vec::with_capacity(levels as usize);
        let mut nodes = Vec::with_capacity(levels as usize);
        let mut total = 0usize;
        let mut count = 1usize;
        for _ in 0..levels {
            offsets.push(total);
            nodes.push(count);
            total += count;
            count *= width as usize;
        }
        let pow2 = width.is_power_of_two();
        Self {
            width,
            levels,
            shift: if pow2 { width.trailing_zeros() } else { 0 },
            pow2,
            offsets,
            nodes,
            maps: vec![0; total],
            span: (width as u64).pow(levels),
        }
    }

    /// Checks a (width, levels) configuration, naming the problem.
    pub fn check(width: u32, levels: u32) -> Result<(), String> {
        if !(2..=64).contains(&width) {
            return Err(format!("bitmap width must be between 2 and 64 bits, got {width}"));
        }
        if levels == 0 {
            return Err("the bitmap tree needs at least one level".into());
        }
        match (width as u64).checked_pow(levels) {
            Some(p) if p <= MAX_SPAN => Ok(()),
            _ => Err(format!(
                "{width}^{levels} priorities exceed the 2^28 buckets a queue may have (8 bytes of bucket memory each)"
            )),
        }
    }

    /// Number of priority buckets, `width^levels`.
    #[inline]
    pub fn span(&self) -> u64 {
        self.span
    }

    /// Bitmap width `w`.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Number of levels `D`.
    pub fn levels(&self) -> u32 {
        self.levels
    }

    /// Whether every bucket is empty (the root bitmap is zero).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.maps[0] == 0
    }

    /// `(n / w, n % w)`: parent node and bit of node (or bucket) `n`.
    #[inline(always)]
    fn split(&self, n: usize) -> (usize, u32) {
        if self.pow2 {
            (n >> self.shift, (n & (self.width as usize - 1)) as u32)
        } else {
            (n / self.width as usize, (n % self.width as usize) as u32)
        }
    }

    /// `n · w + bit`: child `bit` of node `n`.
    #[inline(always)]
    fn child(&self, n: usize, bit: u32) -> usize {
        if self.pow2 {
            (n << self.shift) | bit as usize
        } else {
            n * self.width as usize + bit as usize
        }
    }

    /// Marks bucket `b` non-empty. Walks up only while bitmaps were zero: above a bitmap that
    /// already had a bit set, every ancestor bit is already 1.
    #[inline]
    pub fn set(&mut self, b: usize) {
        let mut n = b;
        for level in (0..self.levels as usize).rev() {
            let (node, bit) = self.split(n);
            let word = &mut self.maps[self.offsets[level] + node];
            let was_zero = *word == 0;
            *word |= 1u64 << bit;
            if !was_zero {
                return;
            }
            n = node;
        }
    }

    /// Marks bucket `b` empty. Walks up only while bitmaps become zero.
    #[inline]
    pub fn clear(&mut self, b: usize) {
        let mut n = b;
        for level in (0..self.levels as usize).rev() {
            let (node, bit) = self.split(n);
            let word = &mut self.maps[self.offsets[level] + node];
            *word &= !(1u64 << bit);
            if *word != 0 {
                return;
            }
            n = node;
        }
    }

    /// Whether bucket `b` is marked non-empty.
    pub fn contains(&self, b: usize) -> bool {
        let (node, bit) = self.split(b);
        self.maps[self.offsets[self.levels as usize - 1] + node] >> bit & 1 == 1
    }

    /// The lowest non-empty bucket: FFS (BSF) on one bitmap per level, root first.
    #[inline]
    pub fn min(&self) -> Option<usize> {
        if self.maps[0] == 0 {
            return None;
        }
        Some(self.descend_min(0, 0))
    }

    /// The highest non-empty bucket: BSR on one bitmap per level, root first.
    #[inline]
    pub fn max(&self) -> Option<usize> {
        if self.maps[0] == 0 {
            return None;
        }
        Some(self.descend_max(0, 0))
    }

    /// From non-zero node `n` of `level`, follows the lowest set bits down to a bucket.
    #[inline(always)]
    fn descend_min(&self, level: usize, mut n: usize) -> usize {
        for l in level..self.levels as usize {
            n = self.child(n, self.maps[self.offsets[l] + n].trailing_zeros());
        }
        n
    }

    /// From non-zero node `n` of `level`, follows the highest set bits down to a bucket.
    #[inline(always)]
    fn descend_max(&self, level: usize, mut n: usize) -> usize {
        for l in level..self.levels as usize {
            n = self.child(n, 63 - self.maps[self.offsets[l] + n].leading_zeros());
        }
        n
    }

    /// The lowest non-empty bucket `≥ lo` (successor query): up from the leaf holding `lo`
    /// until a bitmap has a set bit at or right of the path, then down along lowest bits.
    /// At most 2·D bitmaps are read. This is the general form of the masked FFS that logical
    /// partitioning uses (§4.4.2): for partitions aligned to subtrees it reads the same bitmaps.
    pub fn first_at_or_after(&self, lo: usize) -> Option<usize> {
        if lo as u64 >= self.span {
            return None;
        }
        let mut n = lo;
        for level in (0..self.levels as usize).rev() {
            let (node, bit) = self.split(n);
            let bits = self.maps[self.offsets[level] + node] & (!0u64 << bit);
            if bits != 0 {
                return Some(self.descend_min(level + 1, self.child(node, bits.trailing_zeros())));
            }
            // Nothing at or after `lo` in this node: go on with the next node of this level,
            // which is the next bit one level up.
            if level == 0 {
                return None;
            }
            n = node + 1;
            if n >= self.nodes[level] {
                return None;
            }
        }
        None
    }

    /// The highest non-empty bucket `≤ hi` (predecessor query), symmetric to
    /// [`BitmapTree::first_at_or_after`].
    pub fn last_at_or_before(&self, hi: usize) -> Option<usize> {
        let mut n = hi.min(self.span as usize - 1);
        for level in (0..self.levels as usize).rev() {
            let (node, bit) = self.split(n);
            let mask = if bit == 63 { !0u64 } else { (1u64 << (bit + 1)) - 1 };
            let bits = self.maps[self.offsets[level] + node] & mask;
            if bits != 0 {
                return Some(self.descend_max(level + 1, self.child(node, 63 - bits.leading_zeros())));
            }
            if node == 0 || level == 0 {
                return None;
            }
            n = node - 1;
        }
        None
    }

    /// Bytes of bitmap memory.
    pub fn bytes(&self) -> usize {
        self.maps.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_max_follow_set_and_clear() {
        for (w, d) in [(2, 3), (3, 2), (4, 2), (64, 2), (5, 3)] {
            let mut t = BitmapTree::new(w, d);
            let span = t.span() as usize;
            assert_eq!(t.min(), None);
            for b in [span - 1, 0, span / 2, 7 % span] {
                t.set(b);
            }
            assert_eq!(t.min(), Some(0));
            assert_eq!(t.max(), Some(span - 1));
            t.clear(0);
            t.clear(span - 1);
            let mut rest = vec![span / 2, 7 % span];
            rest.sort();
            rest.dedup();
            rest.retain(|&b| b != 0 && b != span - 1);
            assert_eq!(t.min(), rest.first().copied());
            assert_eq!(t.max(), rest.last().copied());
        }
    }

    #[test]
    fn successor_and_predecessor_match_a_scan() {
        for (w, d) in [(2, 4), (3, 3), (4, 2), (64, 2), (7, 2)] {
            let mut t = BitmapTree::new(w, d);
            let span = t.span() as usize;
            let set: Vec<usize> = (0..span).filter(|b| (b * 7 + 3) % 11 == 0).collect();
            for &b in &set {
                t.set(b);
            }
            for q in 0..span {
                assert_eq!(t.first_at_or_after(q), set.iter().copied().find(|&b| b >= q), "w={w} d={d} q={q}");
                assert_eq!(t.last_at_or_before(q), set.iter().rev().copied().find(|&b| b <= q), "w={w} d={d} q={q}");
            }
        }
    }

    #[test]
    fn rejects_bad_shapes() {
        assert!(BitmapTree::check(1, 2).is_err());
        assert!(BitmapTree::check(65, 1).is_err());
        assert!(BitmapTree::check(4, 0).is_err());
        assert!(BitmapTree::check(64, 5).is_err());
        assert!(BitmapTree::check(2, 29).is_err());
        assert!(BitmapTree::check(2, 28).is_ok());
        assert!(BitmapTree::check(64, 4).is_ok());
    }
}
