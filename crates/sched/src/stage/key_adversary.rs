//! The adversary against key workers (lists, trees): cheap requests that are expensive to
//! serve, each in a minimum-size packet from its own spoofed flow (thesis §3.4: against FCFS
//! and FQ the optimal attack is the smallest packet with the largest job).
//!
//! * `deep`: always the last item of the initial order: the worst case of a static list, but
//!   a move-to-front list moves it to the front after one access (self-adjustment defeats it).
//! * `rotate[:N]`: round robin over the N items innocent traffic uses least (default: half of
//!   them). Every access finds its item behind the other N − 1 and everything innocent traffic
//!   touched since, so move-forward never catches up: the classic adversary of self-adjusting
//!   lists (Sleator & Tarjan), and the analogue of rotating over deep rules of an MRF
//!   classifier.
//! * `absent`: keys the worker does not hold: a full scan that reorders nothing, the analogue of
//!   traffic to a classifier's catch-all rule, which can never move forward.

use crate::job::Class;
use crate::stage::StageRequest;
use std::collections::HashMap;
use superlinear_core::Error;

/// Adversaries: name and one-line description.
pub const ADVERSARIES: &[(&str, &str)] = &[
    ("deep", "always the last item of the initial order (defeated by move-to-front)"),
    ("rotate", "round robin over the N least popular items, rotate[:N] (defeats move-forward)"),
    ("absent", "keys the worker does not hold: a full scan, no reordering (the catch-all rule)"),
];

/// A configured adversary for key workers.
#[derive(Clone, Debug)]
pub struct KeyAdversary {
    name: String,
    keys: Vec<u64>,
    bits: u32,
    absent_base: u64,
}

impl KeyAdversary {
    /// Parses `deep`, `rotate[:N]` or `absent` for a worker holding `items` (initial order),
    /// choosing targets from the innocent `requests`; attack packets have `bits` bits.
    pub fn new(spec: &str, items: &[u64], requests: &[u64], bits: u32) -> Result<Self, Error> {
        if items.is_empty() {
            return Err(Error::config("the adversary needs a worker with at least one item"));
        }
        let (name, arg) = match spec.trim().split_once(':') {
            Some((n, a)) => (n.trim(), Some(a.trim())),
            None => (spec.trim(), None),
        };
        let keys = match (name, arg) {
            ("deep", None) => vec![*items.last().expect("non-empty")],
            ("rotate", _) => {
                let n = match arg {
                    None => (items.len() / 2).max(1),
                    Some(a) => a.parse::<usize>().ok().filter(|&n| n >= 1 && n <= items.len()).ok_or_else(|| {
                        Error::config(format!("rotate:N needs 1 <= N <= {} items, got '{a}'", items.len()))
                    })?,
                };
                let mut freq: HashMap<u64, u64> = HashMap::new();
                for r in requests {
                    *freq.entry(*r).or_default() += 1;
                }
                // Least used first; among equals, the deepest in the initial order first.
                let mut order: Vec<(u64, usize, u64)> = items
                    .iter()
                    .enumerate()
                    .map(|(i, &k)| (freq.get(&k).copied().unwrap_or(0), usize::MAX - i, k))
                    .collect();
                order.sort_unstable();
                order.into_iter().take(n).map(|x| x.2).collect()
            }
            ("absent", None) => Vec::new(),
            _ => {
                let known: Vec<&str> = ADVERSARIES.iter().map(|a| a.0).collect();
                return Err(Error::config(format!("unknown adversary '{spec}' (known: {})", known.join(", "))));
            }
        };
        let max_item = items.iter().copied().max().unwrap_or(0);
        Ok(Self { name: name.to_string(), keys, bits, absent_base: max_item.saturating_add(1).max(1 << 62) })
    }

    /// The adversary's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The n-th attack packet: one minimum-size packet from its own flow.
    pub fn request(&self, n: u64) -> StageRequest<u64> {
        let key = if self.keys.is_empty() {
            self.absent_base.wrapping_add(n)
        } else {
            self.keys[(n % self.keys.len() as u64) as usize]
        };
        StageRequest { request: key, bits: self.bits, flow: (1 << 31) | (n as u32 & 0x7fff_ffff), class: Class::Attack }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        let items: Vec<u64> = (0..10).collect();
        let requests = vec![0, 1, 1, 2, 9, 9, 9];
        let deep = KeyAdversary::new("deep", &items, &requests, 512).unwrap();
        assert_eq!(deep.request(5).request, 9);
        let rot = KeyAdversary::new("rotate:3", &items, &requests, 512).unwrap();
        let got: Vec<u64> = (0..4).map(|n| rot.request(n).request).collect();
        assert_eq!(got, vec![8, 7, 6, 8]);
        let absent = KeyAdversary::new("absent", &items, &requests, 512).unwrap();
        assert!(absent.request(0).request > 9 && absent.request(1).request != absent.request(0).request);
        assert_eq!(absent.request(3).class, Class::Attack);
        assert!(KeyAdversary::new("rotate:0", &items, &requests, 512).is_err());
        assert!(KeyAdversary::new("flood", &items, &requests, 512).is_err());
    }
}
