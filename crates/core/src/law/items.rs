//! The law's item sequence: which item each request asks for, as its position in the initial
//! order every worker starts from (replicated state), kept apart from how requests are dispatched.
//!
//! Keeping items and dispatch separate is what lets the law cover packet classification (paper
//! §4, Fig. 9d): there the self-adjusting item is the matched rule, while the dispatcher hashes
//! header fields of the packet. A key workload is the special case where both are the key.

use crate::error::Error;
use std::collections::HashMap;

/// Item ids per request.
///
/// An id below `m` is the item's position in the initial order (0 = front of every worker's
/// list). An id of `m` or more is a key outside the item set: a list scans it in full and finds
/// nothing (it changes no list), a cache stores it like any other key; distinct absent keys have
/// distinct ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemSequence {
    ids: Vec<u32>,
    m: usize,
    /// One more than the largest id (the size of per-id tables).
    id_space: usize,
}

impl ItemSequence {
    /// Item ids given directly (e.g. the matched rule of each packet, rules numbered in their
    /// initial order 0..m).
    pub fn new(ids: Vec<u32>, m: usize) -> Result<Self, Error> {
        if m > u32::MAX as usize {
            return Err(Error::config(format!("item universe of {m} items exceeds the 2^32 the law supports")));
        }
        if ids.len() >= u32::MAX as usize {
            return Err(Error::config(format!("{} requests exceed the 2^32 - 1 the law supports", ids.len())));
        }
        let id_space = ids.iter().map(|&i| i as usize + 1).max().unwrap_or(0).max(m);
        Ok(Self { ids, m, id_space })
    }

    /// Maps key requests onto the items of a workload, `items` in their initial order (the
    /// engine's order: ascending keys). Keys outside `items` get fresh ids from `m` upwards.
    pub fn from_keys(items: &[u64], requests: &[u64]) -> Result<Self, Error> {
        let m = items.len();
        if m > u32::MAX as usize {
            return Err(Error::config(format!("item universe of {m} items exceeds the 2^32 the law supports")));
        }
        let mut absent: HashMap<u64, u32> = HashMap::new();
        let mut fresh = |key: u64| -> u32 {
            let next = (m + absent.len()) as u32;
            *absent.entry(key).or_insert(next)
        };
        let ascending = items.windows(2).all(|w| w[0] < w[1]);
        let dense =
            ascending && items.first().is_none_or(|&f| f == 0) && items.last().is_none_or(|&l| l as usize == m - 1);
        let ids: Vec<u32> = if dense {
            // Generated workloads: items are 0..m, so the key is its own position.
            requests.iter().map(|&key| if (key as usize) < m { key as u32 } else { fresh(key) }).collect()
        } else if ascending {
            requests
                .iter()
                .map(|&key| items.binary_search(&key).map(|p| p as u32).unwrap_or_else(|_| fresh(key)))
                .collect()
        } else {
            let position: HashMap<u64, u32> = items.iter().enumerate().map(|(i, &key)| (key, i as u32)).collect();
            requests.iter().map(|key| position.get(key).copied().unwrap_or_else(|| fresh(*key))).collect()
        };
        Self::new(ids, m)
    }

    /// The item of each request.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// Items in the initial order (the list length).
    pub fn m(&self) -> usize {
        self.m
    }

    /// Number of requests.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there are no requests.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// One more than the largest id, at least `m`.
    pub fn id_space(&self) -> usize {
        self.id_space
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_to_initial_positions_and_absent_keys_get_fresh_ids() {
        let s = ItemSequence::from_keys(&[10, 20, 30], &[30, 10, 99, 20, 99, 7]).unwrap();
        assert_eq!(s.ids(), &[2, 0, 3, 1, 3, 4]);
        assert_eq!((s.m(), s.id_space(), s.len()), (3, 5, 6));
        let dense = ItemSequence::from_keys(&[0, 1, 2, 3], &[3, 0, 9]).unwrap();
        assert_eq!(dense.ids(), &[3, 0, 4]);
        let unordered = ItemSequence::from_keys(&[5, 1, 3], &[3, 5, 1]).unwrap();
        assert_eq!(unordered.ids(), &[2, 0, 1]);
    }
}
