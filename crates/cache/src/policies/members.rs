//! The cached objects as a dense array, for policies whose victim is found by a scan over the
//! cache (the MAD variants, Bélády-AD, flow-balance rounding): O(1) insert and removal.

const ABSENT: u32 = u32::MAX;

/// A set of objects stored contiguously.
#[derive(Clone, Debug)]
pub struct Members {
    items: Vec<u32>,
    slot: Vec<u32>,
}

impl Members {
    /// An empty set over objects `0..objects`.
    pub fn new(objects: usize) -> Self {
        Self { items: Vec::new(), slot: vec![ABSENT; objects] }
    }

    /// Whether `object` is in the set.
    #[inline]
    pub fn contains(&self, object: u32) -> bool {
        self.slot[object as usize] != ABSENT
    }

    /// Adds `object` (no-op if present).
    pub fn insert(&mut self, object: u32) {
        if !self.contains(object) {
            self.slot[object as usize] = self.items.len() as u32;
            self.items.push(object);
        }
    }

    /// Removes `object` (no-op if absent).
    pub fn remove(&mut self, object: u32) {
        let s = self.slot[object as usize];
        if s == ABSENT {
            return;
        }
        self.items.swap_remove(s as usize);
        if let Some(&moved) = self.items.get(s as usize) {
            self.slot[moved as usize] = s;
        }
        self.slot[object as usize] = ABSENT;
    }

    /// The members, in no particular order.
    #[inline]
    pub fn as_slice(&self) -> &[u32] {
        &self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_remove() {
        let mut m = Members::new(6);
        for o in [4, 1, 5] {
            m.insert(o);
        }
        m.insert(1);
        m.remove(4);
        m.remove(0);
        let mut v = m.as_slice().to_vec();
        v.sort();
        assert_eq!(v, vec![1, 5]);
        assert!(m.contains(5) && !m.contains(4));
    }
}
