//! Flow-balance rounding (§2.4.3): a fractional Belatedly solution becomes a schedule the
//! simulator replays and scores.
//!
//! At a fill the policy admits the object with the probability that the flow arriving at that
//! node stays cached (randomised rounding), or when that probability is at least ½ (threshold
//! rounding). Cached objects that the fractional schedule no longer caches at all leave. When
//! the cache is still full, of the cached objects and the arriving one the object with the least
//! cached flow at this moment (the most unbalanced against the fractional schedule) does not
//! stay; ties go to the later next request. Every decision happens at a fill, so the schedule is
//! feasible in the simulator's model by construction, and an integral flow that a simulated
//! schedule induces is replayed with that schedule's latency.

use super::network::FlowNetwork;
use crate::future::{Future, NextRequests};
use crate::policies::members::Members;
use crate::policy::{EvictionPolicy, Outcome};
use crate::sim::{simulate, SimReport, Timing};
use crate::trace::MissLatency;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::cmp::Reverse;

/// Cached flow below this is none (solver tolerance).
const FLOW_EPSILON: f64 = 1e-9;

/// How admission probabilities become decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// Admit when the probability is at least ½.
    Threshold,
    /// Admit with the probability, drawn from a generator with this seed.
    Random(u64),
}

/// One rounded schedule and its simulated latency.
#[derive(Clone, Copy, Debug)]
pub struct RoundingOutcome {
    /// The rounding used.
    pub rounding: Rounding,
    /// The simulator's count of the schedule (kind: simulated).
    pub report: SimReport,
}

/// The rounding policy over one fractional solution `x` of `net`.
pub struct FlowBalance<'a> {
    net: &'a FlowNetwork,
    x: &'a [f64],
    rounding: Rounding,
    rng: Pcg64Mcg,
    /// Per object, the node interval holding the current time.
    cursor: Vec<usize>,
    cached: Members,
    future: Future,
    next: NextRequests,
}

impl<'a> FlowBalance<'a> {
    /// A policy replaying `x` (one value per variable of `net`).
    pub fn new(net: &'a FlowNetwork, x: &'a [f64], requests: &[u32], z: &MissLatency, rounding: Rounding) -> Self {
        let objects = net.objects.len();
        let future = Future::new(requests, objects, z);
        let next = NextRequests::new(&future, objects);
        let seed = match rounding {
            Rounding::Threshold => 0,
            Rounding::Random(s) => s,
        };
        Self {
            net,
            x,
            rounding,
            rng: Pcg64Mcg::seed_from_u64(seed),
            cursor: vec![0; objects],
            cached: Members::new(objects),
            future,
            next,
        }
    }

    /// The flow of `object` cached during step `t` (time only moves forward).
    fn cached_flow(&mut self, object: u32, t: u64) -> f64 {
        let nodes = &self.net.objects[object as usize];
        let before_first = match nodes.times.first() {
            Some(&p) => t < p,
            None => true,
        };
        if before_first || t >= nodes.end {
            return 0.0;
        }
        let mut k = self.cursor[object as usize];
        while k + 1 < nodes.times.len() && nodes.times[k + 1] <= t {
            k += 1;
        }
        self.cursor[object as usize] = k;
        self.x[nodes.first_var + 2 * k]
    }

    /// Of the flow at `object`'s node at `t`, the share that stays cached (0 without a node).
    fn admit_probability(&self, object: u32, t: u64) -> f64 {
        let nodes = &self.net.objects[object as usize];
        match nodes.times.binary_search(&t) {
            Ok(k) => {
                let (y, e) = (self.x[nodes.first_var + 2 * k], self.x[nodes.first_var + 2 * k + 1]);
                if y + e > 1e-9 {
                    (y / (y + e)).clamp(0.0, 1.0)
                } else {
                    0.0
                }
            }
            Err(_) => 0.0,
        }
    }
}

impl EvictionPolicy for FlowBalance<'_> {
    fn on_request(&mut self, object: u32, now: u64, _outcome: Outcome) {
        self.next.advance(&self.future, object, now);
    }

    fn on_fill(&mut self, object: u32, now: u64, full: bool, evict: &mut Vec<u32>) -> bool {
        let p = self.admit_probability(object, now);
        let admit = match self.rounding {
            Rounding::Threshold => p >= 0.5,
            Rounding::Random(_) => self.rng.gen::<f64>() < p,
        };
        // Flow balance: the cached flow of every cached object now, and the arriving one's.
        let mut keyed: Vec<(f64, Reverse<u64>, u32)> = Vec::with_capacity(self.cached.as_slice().len() + 1);
        for i in 0..self.cached.as_slice().len() {
            let o = self.cached.as_slice()[i];
            keyed.push((self.cached_flow(o, now), Reverse(self.next.of(o)), o));
        }
        for &(flow, _, o) in &keyed {
            if flow <= FLOW_EPSILON {
                evict.push(o);
            }
        }
        keyed.retain(|k| k.0 > FLOW_EPSILON);
        if !admit {
            for &o in evict.iter() {
                self.cached.remove(o);
            }
            return false;
        }
        let mut stays = true;
        if full && evict.is_empty() {
            keyed.push((self.cached_flow(object, now), Reverse(self.next.of(object)), object));
            let victim = keyed
                .iter()
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)))
                .expect("candidates include the arriving object")
                .2;
            if victim == object {
                stays = false;
            } else {
                evict.push(victim);
            }
        }
        for &o in evict.iter() {
            self.cached.remove(o);
        }
        if stays {
            self.cached.insert(object);
        }
        stays
    }
}

/// Rounds `x` once by threshold and `random` times at random (seeds `seed`, `seed + 1`, ...),
/// replaying each schedule in the simulator.
pub fn round_schedules(
    net: &FlowNetwork,
    x: &[f64],
    requests: &[u32],
    z: &MissLatency,
    random: usize,
    seed: u64,
) -> Vec<RoundingOutcome> {
    let objects = net.objects.len();
    std::iter::once(Rounding::Threshold)
        .chain((0..random as u64).map(|i| Rounding::Random(seed + i)))
        .map(|rounding| {
            let mut policy = FlowBalance::new(net, x, requests, z, rounding);
            let report = simulate(requests, objects, z, net.capacity(), &mut policy, Timing::Delayed);
            RoundingOutcome { rounding, report }
        })
        .collect()
}
