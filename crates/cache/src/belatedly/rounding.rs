//! Flow-balance rounding (§2.4.3): a fractional Belatedly solution becomes a schedule the
//! simulator replays and scores.
//!
//! At a fill the policy admits the object with the probability that the flow arriving at that
//! node stays cached (randomised rounding), or when that probability is at least ½ (threshold
//! rounding). A cached object leaves as soon as the fractional schedule no longer caches any of
//! it (at its own nodes, at any step, as Eq. 2.6 allows: this is how the optimum forgoes a hit
//! to start a fetch early). When a fill finds the cache full, of the cached objects and the
//! arriving one the object with the least cached flow at this moment (the most unbalanced
//! against the fractional schedule) does not stay; ties go to Bélády-AD's lowest rank. The
//! schedule is feasible by construction, and an integral flow is replayed exactly: its latency
//! is the flow's.

use super::network::FlowNetwork;
use crate::future::{Future, NextRequests, NEVER};
use crate::policies::members::Members;
use crate::policy::{EvictionPolicy, Outcome};
use crate::sim::{simulate, SimReport, Timing};
use crate::trace::MissLatency;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use superlinear_core::mad::Rank;

/// Flows are compared in units of this (solver tolerance): closer flows are equal.
const FLOW_QUANTUM: f64 = 1e-6;

/// Eviction order, lowest first: cached flow in quanta, then Bélády-AD's rank (Eq. 2.45), the
/// later next request, the object.
type Balance = (u64, Rank, Reverse<u64>, u32);

/// How admission probabilities become decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// Admit when the probability is at least ½; evict by the flow, then Bélády-AD's rank.
    Threshold,
    /// Admit whatever the flow admits in part; evict objects with no flow, then those with part
    /// of it by Bélády-AD's rank, then whole ones: the fractional part decided by the offline
    /// proxy of §2.5.1 instead of by flow sizes.
    Classes,
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
    /// Cached objects' next node times, earliest first (stale once the object left).
    nodes_ahead: BinaryHeap<Reverse<(u64, u32)>>,
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
            Rounding::Threshold | Rounding::Classes => 0,
            Rounding::Random(s) => s,
        };
        Self {
            net,
            x,
            rounding,
            rng: Pcg64Mcg::seed_from_u64(seed),
            cursor: vec![0; objects],
            cached: Members::new(objects),
            nodes_ahead: BinaryHeap::new(),
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

    /// Watches `object`'s next node after `t`, where its cached flow may drop.
    fn watch(&mut self, object: u32, t: u64) {
        let times = &self.net.objects[object as usize].times;
        if let Some(&p) = times.get(times.partition_point(|&p| p <= t)) {
            self.nodes_ahead.push(Reverse((p, object)));
        }
    }

    /// The eviction order of `object` at `t`.
    fn balance(&mut self, object: u32, t: u64) -> Balance {
        let mut flow = (self.cached_flow(object, t) / FLOW_QUANTUM).round().max(0.0) as u64;
        if self.rounding == Rounding::Classes {
            let whole = (1.0 / FLOW_QUANTUM) as u64;
            flow = if flow == 0 {
                0
            } else if flow >= whole {
                2
            } else {
                1
            };
        }
        let next = self.next.of(object);
        let rank = if next == NEVER { Rank::ZERO } else { Rank::new(self.future.aggregate_delay(next), next - t) };
        (flow, rank, Reverse(next), object)
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
            Rounding::Classes => p > 0.0,
            Rounding::Random(_) => self.rng.gen::<f64>() < p,
        };
        // Flow balance: the cached flow of every cached object now, and the arriving one's.
        let mut keyed: Vec<Balance> = Vec::with_capacity(self.cached.as_slice().len() + 1);
        for i in 0..self.cached.as_slice().len() {
            let o = self.cached.as_slice()[i];
            keyed.push(self.balance(o, now));
        }
        for b in &keyed {
            if b.0 == 0 {
                evict.push(b.3);
            }
        }
        keyed.retain(|b| b.0 > 0);
        if !admit {
            for &o in evict.iter() {
                self.cached.remove(o);
            }
            return false;
        }
        let mut stays = true;
        if full && evict.is_empty() {
            keyed.push(self.balance(object, now));
            let victim = keyed.iter().min().expect("candidates include the arriving object").3;
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
            self.watch(object, now);
        }
        stays
    }

    fn evicts_any_time(&self) -> bool {
        true
    }

    fn on_step(&mut self, now: u64, evict: &mut Vec<u32>) {
        while let Some(&Reverse((at, o))) = self.nodes_ahead.peek() {
            if at > now {
                break;
            }
            self.nodes_ahead.pop();
            if !self.cached.contains(o) {
                continue;
            }
            if self.balance(o, now).0 == 0 {
                self.cached.remove(o);
                evict.push(o);
            } else {
                self.watch(o, now);
            }
        }
    }
}

/// Rounds `x` by threshold, by classes and `random` times at random (seeds `seed`, `seed + 1`, ...),
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
    [Rounding::Threshold, Rounding::Classes]
        .into_iter()
        .chain((0..random as u64).map(|i| Rounding::Random(seed + i)))
        .take_while(|_| !superlinear_core::cancel::requested())
        .map(|rounding| {
            let mut policy = FlowBalance::new(net, x, requests, z, rounding);
            let report = simulate(requests, objects, z, net.capacity(), &mut policy, Timing::Delayed);
            RoundingOutcome { rounding, report }
        })
        .collect()
}
