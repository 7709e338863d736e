//! The latency-optimal schedule of tiny instances, by exhaustive search: the ground truth the
//! tests hold Belatedly's bound and the rounded schedule against.
//!
//! A forward dynamic program over time: a state says, for every object, whether it is cached,
//! out, or being fetched (and when the fill arrives); equal states keep the cheaper history.
//! Two decision spaces:
//!
//! * [`Model::AtFills`]: evictions only when a fill arrives (any cached objects), the arriving
//!   object admitted or not: everything an online policy of the simulator can do;
//! * [`Model::AnyTime`], the thesis' §2.3.2: at every step any cached objects may be evicted
//!   (Eq. 2.6), arriving objects admitted or not (Eq. 2.5); the simulator plays it for policies
//!   that [evict any time](crate::EvictionPolicy::evicts_any_time). Belatedly's flow network
//!   is this model (Theorem 1): its integral optimum equals this one (tested against HiGHS's
//!   MIP solver in `tests/test_latency.py`).

use crate::trace::MissLatency;
use std::collections::HashMap;
use superlinear_core::Error;

/// Which decisions a schedule may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// Only when a fill arrives: evict any cached objects, admit or bypass the arriving one.
    AtFills,
    /// At any step: evict any cached objects; admit arriving ones or not.
    AnyTime,
}

const OUT: u32 = 0;
const CACHED: u32 = 1;
// A state value v >= 2 means: being fetched, the fill arrives at time v - 2.

/// Most states the search keeps at one step before giving up.
pub const MAX_STATES: usize = 2_000_000;

/// The minimum total latency of any schedule of `requests` in the given model.
pub fn optimal_latency(
    requests: &[u32],
    objects: usize,
    z: &MissLatency,
    capacity: usize,
    model: Model,
) -> Result<u64, Error> {
    if capacity == 0 {
        return Err(Error::config("cache size must be at least 1 object"));
    }
    let mut states: HashMap<Vec<u32>, u64> = HashMap::from([(vec![OUT; objects], 0)]);
    for (t, &req) in requests.iter().enumerate() {
        let now = t as u64;
        let mut next: HashMap<Vec<u32>, u64> = HashMap::new();
        for (state, &cost) in &states {
            for decided in decisions(state, now, capacity, model) {
                let mut s = decided;
                let o = req as usize;
                let c = match s[o] {
                    CACHED => 0,
                    OUT => {
                        let zo = z.of(req);
                        s[o] = (now + zo + 2) as u32;
                        zo
                    }
                    v => v as u64 - 2 - now,
                };
                let total = cost + c;
                next.entry(s).and_modify(|e| *e = (*e).min(total)).or_insert(total);
            }
        }
        if next.len() > MAX_STATES {
            return Err(Error::config("instance too large for exhaustive search"));
        }
        states = next;
    }
    Ok(states.values().copied().min().unwrap_or(0))
}

/// Every state reachable at the start of step `now` by the model's decisions (fills arrive).
fn decisions(state: &[u32], now: u64, capacity: usize, model: Model) -> Vec<Vec<u32>> {
    let arriving: Vec<usize> = (0..state.len()).filter(|&o| state[o] >= 2 && (state[o] - 2) as u64 == now).collect();
    let mut base = state.to_vec();
    for &o in &arriving {
        base[o] = OUT; // decided below
    }
    match model {
        Model::AtFills => {
            // Fills in object order, each: any subset of the cached objects stays, the arriving
            // object is admitted or not.
            let mut frontier = vec![base];
            for &f in &arriving {
                let mut grown = Vec::new();
                for s in frontier {
                    let cached: Vec<usize> = (0..s.len()).filter(|&o| s[o] == CACHED).collect();
                    for keep in 0u64..(1 << cached.len()) {
                        for admit in [false, true] {
                            let mut n = s.clone();
                            for (bit, &o) in cached.iter().enumerate() {
                                if keep >> bit & 1 == 0 {
                                    n[o] = OUT;
                                }
                            }
                            if admit {
                                n[f] = CACHED;
                            }
                            if n.iter().filter(|&&x| x == CACHED).count() <= capacity {
                                grown.push(n);
                            }
                        }
                    }
                }
                frontier = grown;
            }
            frontier
        }
        Model::AnyTime => {
            // Any subset of the cached objects stays, any subset of the arrivals is admitted.
            let choosers: Vec<usize> = (0..state.len()).filter(|&o| state[o] == CACHED).chain(arriving).collect();
            let mut out = Vec::new();
            for mask in 0u64..(1 << choosers.len()) {
                if (mask.count_ones() as usize) > capacity {
                    continue;
                }
                let mut n = base.clone();
                for (bit, &o) in choosers.iter().enumerate() {
                    n[o] = if mask >> bit & 1 == 1 { CACHED } else { OUT };
                }
                out.push(n);
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_object_pays_its_first_window_only() {
        // Z = 3: A at 0, 1, 5: miss (3) + delayed hit (2), then cached: 5.
        let z = MissLatency::Global(3);
        for model in [Model::AtFills, Model::AnyTime] {
            assert_eq!(optimal_latency(&[0, 0, 0, 0, 0, 0], 1, &z, 1, model).unwrap(), 3 + 2 + 1);
        }
    }

    #[test]
    fn forgoing_a_hit_can_pay_in_the_thesis_model() {
        // The thesis (§2.3.1, [97]): latency is not antimonotone in hits. Any-time eviction is
        // never worse than evicting only at fills.
        let z = MissLatency::Global(4);
        let req = [0, 1, 2, 0, 0, 0, 1, 2, 1, 2, 0, 0];
        let at_fills = optimal_latency(&req, 3, &z, 1, Model::AtFills).unwrap();
        let any = optimal_latency(&req, 3, &z, 1, Model::AnyTime).unwrap();
        assert!(any <= at_fills);
    }

    #[test]
    fn zero_capacity_is_an_error() {
        assert!(optimal_latency(&[0], 1, &MissLatency::Global(1), 0, Model::AtFills).is_err());
    }
}
