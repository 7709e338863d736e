//! The recency list shared by the cache workers (`lru`, `lru-dh`, `lru-mad`): a fixed number of
//! slots, each holding a value, threaded on an intrusive doubly linked list from most to least
//! recently used.
//!
//! Slots live in one preallocated `Vec` with `u32` links stored next to their value (16 bytes
//! per slot for a `u64` key), so a hit moves its slot to the front in O(1) without allocating,
//! and an eviction reuses the victim's slot for the new value.

/// The "no neighbour" link.
const NIL: u32 = u32::MAX;

/// One slot: its value and its neighbours in recency order (`prev` is more recent).
#[derive(Clone, Copy, Debug)]
struct Slot<T> {
    value: T,
    prev: u32,
    next: u32,
}

/// Up to `capacity` values in recency order, addressed by slot index.
#[derive(Clone, Debug)]
pub(crate) struct RecencyList<T> {
    slots: Vec<Slot<T>>,
    /// Most recently used slot, or [`NIL`] when empty.
    head: u32,
    /// Least recently used slot, or [`NIL`] when empty.
    tail: u32,
}

impl<T: Copy> RecencyList<T> {
    /// An empty list with room for `capacity` slots.
    ///
    /// # Panics
    /// If `capacity` does not fit the `u32` slot indices.
    pub fn with_capacity(capacity: usize) -> Self {
        assert!(capacity < NIL as usize, "capacity {capacity} too large");
        Self { slots: Vec::with_capacity(capacity), head: NIL, tail: NIL }
    }

    /// Slots in use.
    #[inline]
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether no slot is in use.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The value in slot `i`.
    #[inline]
    pub fn get(&self, i: u32) -> &T {
        &self.slots[i as usize].value
    }

    /// The value in slot `i`, to change in place.
    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut T {
        &mut self.slots[i as usize].value
    }

    /// The least recently used slot, if any.
    #[inline]
    pub fn least_recent(&self) -> Option<u32> {
        (self.tail != NIL).then_some(self.tail)
    }

    /// Adds `value` in a new slot at the most recent end; returns the slot.
    #[inline]
    pub fn push(&mut self, value: T) -> u32 {
        self.slots.push(Slot { value, prev: NIL, next: NIL });
        let i = (self.slots.len() - 1) as u32;
        self.push_front(i);
        i
    }

    /// Makes slot `i` the most recently used.
    #[inline]
    pub fn touch(&mut self, i: u32) {
        if i != self.head {
            self.unlink(i);
            self.push_front(i);
        }
    }

    /// Puts `value` into slot `i` in place of its value, as the most recently used; returns the
    /// value it replaced.
    #[inline]
    pub fn replace(&mut self, i: u32, value: T) -> T {
        self.unlink(i);
        let old = std::mem::replace(&mut self.slots[i as usize].value, value);
        self.push_front(i);
        old
    }

    /// The values from most to least recently used.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        let mut cur = self.head;
        std::iter::from_fn(move || {
            (cur != NIL).then(|| {
                let slot = &self.slots[cur as usize];
                cur = slot.next;
                &slot.value
            })
        })
    }

    /// Takes slot `i` out of the list.
    #[inline]
    fn unlink(&mut self, i: u32) {
        let Slot { prev, next, .. } = self.slots[i as usize];
        match prev {
            NIL => self.head = next,
            p => self.slots[p as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.slots[n as usize].prev = prev,
        }
    }

    /// Puts (unlinked) slot `i` at the most recent end.
    #[inline]
    fn push_front(&mut self, i: u32) {
        let old = self.head;
        self.slots[i as usize].prev = NIL;
        self.slots[i as usize].next = old;
        match old {
            NIL => self.tail = i,
            o => self.slots[o as usize].prev = i,
        }
        self.head = i;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_touch_replace() {
        let mut l = RecencyList::with_capacity(3);
        assert_eq!(l.least_recent(), None);
        let a = l.push('a');
        let b = l.push('b');
        let c = l.push('c');
        assert_eq!(l.iter().copied().collect::<String>(), "cba");
        l.touch(a);
        assert_eq!(l.iter().copied().collect::<String>(), "acb");
        assert_eq!(l.least_recent(), Some(b));
        assert_eq!(l.replace(b, 'd'), 'b');
        assert_eq!(l.iter().copied().collect::<String>(), "dac");
        l.touch(l.least_recent().unwrap());
        assert_eq!(l.iter().copied().collect::<String>(), "cda");
        *l.get_mut(c) = 'e';
        assert_eq!((*l.get(c), l.len()), ('e', 3));
    }
}
