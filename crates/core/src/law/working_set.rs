//! Working-set sizes of a request stream (paper, Appendix A.3): for a request to x at time t,
//! W_t(x) is the set of distinct other items requested since the last request to x.
//!
//! One pass in O(n log n): a [`Fenwick`] tree over request times holds a mark at the latest
//! access of every item seen so far, so the distinct items requested after x's previous access
//! p are the marks after p, i.e. (items seen) − (marks at times ≤ p). A first access has no
//! working set; for a replicated move-to-front list its cost is still exact, because the list's
//! order is known: every item accessed so far sits in front (most recent first), followed by the
//! never-accessed items in their initial order. A second Fenwick tree over initial positions
//! counts the accessed items that precede x there.

use super::fenwick::Fenwick;

/// What a request met on its worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// x was requested before on this worker; `working_set` = |W_t(x)|, which is also x's
    /// 0-based position in a move-to-front list and its recency rank in an LRU cache.
    Repeat { working_set: u64 },
    /// First request of x on this worker. `position`: x's 0-based position in a move-to-front
    /// list that started in the initial order, i.e. the distinct items this worker accessed so
    /// far plus the never-accessed items before x in the initial order, when the pass was asked
    /// for list positions; otherwise only the first term.
    First { position: u64 },
    /// x is outside the item set of a structure that holds a fixed universe (a list): a full
    /// scan that finds nothing and changes nothing.
    Absent,
}

/// What the structure behind the stream is, as far as the pass needs to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassMode {
    /// Ids ≥ m are absent keys that leave the structure unchanged (lists); otherwise every id
    /// is an item like any other (caches).
    pub universe_bound: bool,
    /// Compute exact initial-order positions of first accesses (needs `universe_bound`).
    pub list_positions: bool,
}

const NEVER: u32 = u32::MAX;

/// Requests between two reads of the stop request (Ctrl-C): a pass over 10⁸ requests takes
/// seconds, and a stopped pass ends early (its caller reports the run interrupted).
pub(crate) const STOP_EVERY: usize = 1 << 16;

/// Reusable state of the pass: run it over one worker's stream after another.
pub struct WorkingSetPass {
    /// Time of each id's latest access in the current stream, or [`NEVER`].
    last: Vec<u32>,
    /// Marks at the latest access time of every item seen in the current stream.
    times: Fenwick,
    /// Marks at the initial position of every item seen in the current stream.
    seen: Fenwick,
    /// Ids seen in the current stream, to reset `last` and `seen` in O(distinct).
    touched: Vec<u32>,
}

impl WorkingSetPass {
    /// A pass for ids below `id_space`.
    pub fn new(id_space: usize) -> Self {
        Self { last: vec![NEVER; id_space], times: Fenwick::new(0), seen: Fenwick::new(0), touched: Vec::new() }
    }

    /// Visits every request of `stream` in order with what it met, as if served by a fresh
    /// worker holding the `m` items in their initial order. Ids must be below the `id_space`
    /// given at construction.
    pub fn run(&mut self, stream: &[u32], m: usize, mode: PassMode, mut visit: impl FnMut(Access)) {
        assert!(stream.len() < NEVER as usize, "stream too long for u32 times");
        let positions = mode.list_positions && mode.universe_bound;
        self.times.clear(stream.len());
        if positions && self.seen.len() != m {
            self.seen = Fenwick::new(m);
        }
        let mut distinct: u32 = 0;
        for (t, &x) in stream.iter().enumerate() {
            if t % STOP_EVERY == STOP_EVERY - 1 && crate::cancel::requested() {
                break; // the state is reset below as after a whole pass
            }
            let xi = x as usize;
            if mode.universe_bound && xi >= m {
                visit(Access::Absent);
                continue;
            }
            let previous = self.last[xi];
            if previous == NEVER {
                let mut position = distinct as u64;
                if positions {
                    // Never-accessed items before x keep their initial order behind the accessed.
                    position += xi as u64 - self.seen.prefix(xi) as u64;
                    self.seen.increment(xi);
                }
                self.touched.push(x);
                distinct += 1;
                visit(Access::First { position });
            } else {
                // Marks after `previous` = distinct items requested since (x itself excluded:
                // its own mark is at `previous`).
                let working_set = distinct - self.times.prefix(previous as usize + 1);
                self.times.decrement(previous as usize);
                visit(Access::Repeat { working_set: working_set as u64 });
            }
            self.times.increment(t);
            self.last[xi] = t as u32;
        }
        let zero_seen = positions && self.touched.len() * 16 > m;
        for &x in &self.touched {
            self.last[x as usize] = NEVER;
            if positions && !zero_seen {
                self.seen.decrement(x as usize);
            }
        }
        if zero_seen {
            self.seen.clear(m);
        }
        self.touched.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::Worker;
    use crate::workers::MoveToFrontList;

    /// Brute force from the definition: distinct other items since the previous request.
    fn brute(stream: &[u32]) -> Vec<Option<u64>> {
        (0..stream.len())
            .map(|t| {
                let x = stream[t];
                let p = stream[..t].iter().rposition(|&y| y == x)?;
                let mut w: Vec<u32> = stream[p + 1..t].to_vec();
                w.sort_unstable();
                w.dedup();
                Some(w.len() as u64)
            })
            .collect()
    }

    fn lcg(seed: u64, n: usize, m: u32) -> Vec<u32> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((x >> 33) % m as u64) as u32
            })
            .collect()
    }

    #[test]
    fn working_sets_match_the_definition() {
        let mut pass = WorkingSetPass::new(50);
        let mode = PassMode { universe_bound: false, list_positions: false };
        for seed in 0..5 {
            let stream = lcg(seed, 400, 13 + seed as u32 * 9);
            let mut got = Vec::new();
            pass.run(&stream, 50, mode, |a| {
                got.push(match a {
                    Access::Repeat { working_set } => Some(working_set),
                    _ => None,
                })
            });
            assert_eq!(got, brute(&stream));
        }
    }

    #[test]
    fn list_cost_equals_a_real_move_to_front_list() {
        let m = 40;
        let items: Vec<u64> = (0..m as u64).collect();
        let mut pass = WorkingSetPass::new(m + 5);
        let mode = PassMode { universe_bound: true, list_positions: true };
        for seed in 0..6 {
            // Some ids ≥ m: absent keys.
            let stream = lcg(seed, 500, m as u32 + 5);
            let mut list = MoveToFrontList::new(&items);
            let mut costs = Vec::new();
            pass.run(&stream, m, mode, |a| {
                costs.push(match a {
                    Access::Repeat { working_set } => working_set + 1,
                    Access::First { position } => position + 1,
                    Access::Absent => m as u64,
                })
            });
            let real: Vec<u64> = stream.iter().map(|&x| list.serve(&(x as u64))).collect();
            assert_eq!(costs, real, "seed {seed}");
        }
    }
}
