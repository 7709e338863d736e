//! Intrusive doubly linked recency lists over dense object ids: O(1) push to the most recent
//! end, removal from anywhere, and the least recent end. An object is in at most one of the
//! `L` lists at a time (LRU uses one, ARC four), so the links are shared.

const NIL: u32 = u32::MAX;
const NOWHERE: u8 = u8::MAX;

/// `L` recency lists over objects `0..objects`.
#[derive(Clone, Debug)]
pub struct Lists<const L: usize> {
    prev: Vec<u32>,
    next: Vec<u32>,
    list_of: Vec<u8>,
    head: [u32; L],
    tail: [u32; L],
    len: [usize; L],
}

impl<const L: usize> Lists<L> {
    /// Empty lists.
    pub fn new(objects: usize) -> Self {
        Self {
            prev: vec![NIL; objects],
            next: vec![NIL; objects],
            list_of: vec![NOWHERE; objects],
            head: [NIL; L],
            tail: [NIL; L],
            len: [0; L],
        }
    }

    /// The list holding `object`, if any.
    #[inline]
    pub fn list_of(&self, object: u32) -> Option<usize> {
        match self.list_of[object as usize] {
            NOWHERE => None,
            l => Some(l as usize),
        }
    }

    /// Length of list `l`.
    #[inline]
    pub fn len(&self, l: usize) -> usize {
        self.len[l]
    }

    /// Makes `object` the most recent entry of list `l` (taking it out of its list first).
    #[inline]
    pub fn push_front(&mut self, l: usize, object: u32) {
        self.remove(object);
        let o = object as usize;
        let old = self.head[l];
        self.prev[o] = NIL;
        self.next[o] = old;
        match old {
            NIL => self.tail[l] = object,
            h => self.prev[h as usize] = object,
        }
        self.head[l] = object;
        self.list_of[o] = l as u8;
        self.len[l] += 1;
    }

    /// Takes `object` out of whatever list holds it.
    #[inline]
    pub fn remove(&mut self, object: u32) {
        let o = object as usize;
        let Some(l) = self.list_of(object) else { return };
        let (p, n) = (self.prev[o], self.next[o]);
        match p {
            NIL => self.head[l] = n,
            p => self.next[p as usize] = n,
        }
        match n {
            NIL => self.tail[l] = p,
            n => self.prev[n as usize] = p,
        }
        self.list_of[o] = NOWHERE;
        self.len[l] -= 1;
    }

    /// The least recent entry of list `l`.
    #[inline]
    pub fn back(&self, l: usize) -> Option<u32> {
        (self.tail[l] != NIL).then_some(self.tail[l])
    }

    /// The entries of list `l`, most recent first.
    pub fn iter(&self, l: usize) -> impl Iterator<Item = u32> + '_ {
        let mut cur = self.head[l];
        std::iter::from_fn(move || {
            (cur != NIL).then(|| {
                let o = cur;
                cur = self.next[o as usize];
                o
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_remove_back() {
        let mut l: Lists<2> = Lists::new(5);
        for o in [0, 1, 2] {
            l.push_front(0, o);
        }
        l.push_front(1, 3);
        assert_eq!(l.iter(0).collect::<Vec<_>>(), vec![2, 1, 0]);
        l.push_front(0, 0);
        assert_eq!((l.back(0), l.len(0)), (Some(1), 3));
        l.push_front(1, 1);
        assert_eq!(l.iter(1).collect::<Vec<_>>(), vec![1, 3]);
        assert_eq!((l.list_of(1), l.list_of(4), l.len(0)), (Some(1), None, 2));
        l.remove(0);
        l.remove(2);
        l.remove(4);
        assert_eq!((l.back(0), l.len(0)), (None, 0));
    }
}
