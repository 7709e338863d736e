//! What offline policies know about the future of a trace: each request's next request for the
//! same object, and each request's aggregate delay if it were a miss (Eq. 2.13: Z for the miss
//! plus Z − t for every request of the same object t < Z steps later).

use crate::trace::MissLatency;

/// "No further request".
pub const NEVER: u64 = u64::MAX;

/// Per-request future knowledge of a trace.
#[derive(Clone, Debug)]
pub struct Future {
    next_use: Vec<u64>,
    aggregate_delay: Vec<u64>,
    first_use: Vec<u64>,
}

impl Future {
    /// Computes both tables in O(N) (a sliding window per object over prefix sums).
    pub fn new(requests: &[u32], objects: usize, z: &MissLatency) -> Self {
        let mut next_use = vec![NEVER; requests.len()];
        let mut first_use = vec![NEVER; objects];
        for (t, &o) in requests.iter().enumerate().rev() {
            next_use[t] = first_use[o as usize];
            first_use[o as usize] = t as u64;
        }
        // Per object, its request times t_a < t_{a+1} < ... reached by following next_use.
        let mut aggregate_delay = vec![0u64; requests.len()];
        let mut times: Vec<u64> = Vec::new();
        for (o, &first) in first_use.iter().enumerate() {
            times.clear();
            let mut t = first;
            while t != NEVER {
                times.push(t);
                t = next_use[t as usize];
            }
            let zo = z.of(o as u32);
            // Sum over the requests a..end inside a's window of (Z − (t_c − t_a))
            // = (end − a)(Z + t_a) − Σ t_c.
            let mut end = 0usize;
            let mut window_sum: u64 = 0; // Σ t_c for c in a..end
            for a in 0..times.len() {
                while end < times.len() && times[end] < times[a] + zo {
                    window_sum += times[end];
                    end += 1;
                }
                aggregate_delay[times[a] as usize] = (end - a) as u64 * (zo + times[a]) - window_sum;
                window_sum -= times[a];
            }
        }
        Self { next_use, aggregate_delay, first_use }
    }

    /// The next request for the same object after request `t`, or [`NEVER`].
    #[inline]
    pub fn next_use(&self, t: u64) -> u64 {
        self.next_use[t as usize]
    }

    /// Eq. 2.13 for request `t`: its aggregate delay if it were a miss.
    #[inline]
    pub fn aggregate_delay(&self, t: u64) -> u64 {
        self.aggregate_delay[t as usize]
    }

    /// The first request for `object`, or [`NEVER`].
    pub fn first_use(&self, object: u32) -> u64 {
        self.first_use[object as usize]
    }
}

/// Each object's next request at or after the current step, kept current by [`Self::advance`].
#[derive(Clone, Debug)]
pub struct NextRequests {
    next: Vec<u64>,
}

impl NextRequests {
    /// Before any request: every object's first request.
    pub fn new(future: &Future, objects: usize) -> Self {
        Self { next: (0..objects as u32).map(|o| future.first_use(o)).collect() }
    }

    /// Request `now` for `object` was served: its next one is the one after.
    #[inline]
    pub fn advance(&mut self, future: &Future, object: u32, now: u64) {
        self.next[object as usize] = future.next_use(now);
    }

    /// The next request for `object` (at or after the current step), or [`NEVER`].
    #[inline]
    pub fn of(&self, object: u32) -> u64 {
        self.next[object as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregate_delay_matches_the_definition() {
        // Z = 10: request 3 with followers at 5 and 11 (and 13, outside its window).
        let mut req = vec![1u32; 14];
        for t in [3, 5, 11, 13] {
            req[t] = 0;
        }
        let f = Future::new(&req, 2, &MissLatency::Global(10));
        assert_eq!(f.aggregate_delay(3), 10 + 8 + 2);
        assert_eq!(f.aggregate_delay(5), 10 + 4 + 2);
        assert_eq!(f.aggregate_delay(13), 10);
        assert_eq!((f.next_use(3), f.next_use(13), f.first_use(0)), (5, NEVER, 3));
        // Object 1 at 0, 1, 2, 4, 6, 7, 8, 9 inside the first window.
        assert_eq!(f.aggregate_delay(0), 10 + 9 + 8 + 6 + 4 + 3 + 2 + 1);
    }

    #[test]
    fn brute_force_agrees() {
        let req: Vec<u32> = (0..300u64).map(|i| ((i * 7919) % 13 % 4) as u32).collect();
        let z = MissLatency::PerObject(vec![1, 3, 8, 20]);
        let f = Future::new(&req, 4, &z);
        for t in 0..req.len() {
            let zo = z.of(req[t]);
            let brute: u64 = (t..req.len())
                .filter(|&s| req[s] == req[t] && ((s - t) as u64) < zo)
                .map(|s| zo - (s - t) as u64)
                .sum();
            assert_eq!(f.aggregate_delay(t as u64), brute, "t = {t}");
        }
    }
}
