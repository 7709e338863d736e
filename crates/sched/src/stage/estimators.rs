//! Job-size estimators for the SurgeProtector stage.
//!
//! * [`LearnedEstimator`]: the thesis's Full Matching heuristic (§3.5.2) — a cost learned per
//!   *class* of request from the work observed when such requests were served. For Pigasus the
//!   class is a candidate rule found by a constant-time fast matcher; for a key worker it is the
//!   key itself, or [`NO_CLASS`] for keys the worker does not hold (its "catch-all": a full
//!   scan); for a classifier it will be the packet's rule as a cheap pre-match predicts it.
//! * [`OracleEstimator`]: asks the worker ([`super::CostOracle`]) what the request costs in its
//!   current self-adjusted order, falling back to a learned estimate where the worker cannot
//!   tell.

use super::{CostOracle, JobEstimator};
use std::collections::HashMap;

/// The class of requests the worker holds no item for.
pub const NO_CLASS: u64 = u64::MAX;

/// How a learned cost follows its observations.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LearnMode {
    /// The largest cost seen (the thesis's z_k = max observed ratio): never forgets an attack.
    Max,
    /// The last cost seen: follows a self-adjusting structure as it reorders.
    Last,
    /// Exponentially weighted moving average with this weight on the newest observation.
    Ewma(f64),
}

/// Costs learned per request class.
pub struct LearnedEstimator<R> {
    class_of: Box<dyn Fn(&R) -> u64 + Send>,
    costs: HashMap<u64, f64>,
    mode: LearnMode,
    /// Estimate for classes never observed: the largest cost seen so far (pessimistic, so an
    /// attacker cannot hide behind fresh classes), or `initial` before any observation.
    largest: f64,
}

impl<R> LearnedEstimator<R> {
    /// An estimator classifying requests with `class_of`; unseen classes are estimated at
    /// `initial` until something has been observed, then at the largest cost seen.
    pub fn new(class_of: impl Fn(&R) -> u64 + Send + 'static, mode: LearnMode, initial: f64) -> Self {
        Self { class_of: Box::new(class_of), costs: HashMap::new(), mode, largest: initial }
    }

    /// Number of classes learned.
    pub fn classes(&self) -> usize {
        self.costs.len()
    }
}

impl<R> JobEstimator<R> for LearnedEstimator<R> {
    fn estimate(&mut self, request: &R, _worker: &dyn CostOracle<R>) -> f64 {
        let c = (self.class_of)(request);
        self.costs.get(&c).copied().unwrap_or(self.largest)
    }

    fn observe(&mut self, request: &R, work: u64) {
        let w = work as f64;
        self.largest = self.largest.max(w);
        let c = (self.class_of)(request);
        let mode = self.mode;
        self.costs
            .entry(c)
            .and_modify(|v| {
                *v = match mode {
                    LearnMode::Max => v.max(w),
                    LearnMode::Last => w,
                    LearnMode::Ewma(a) => a * w + (1.0 - a) * *v,
                }
            })
            .or_insert(w);
    }
}

/// Estimates from the worker's own view of its current order, falling back to a learned cost.
pub struct OracleEstimator<R> {
    fallback: LearnedEstimator<R>,
}

impl<R> OracleEstimator<R> {
    /// Asks the worker; where it cannot tell, uses `fallback`.
    pub fn new(fallback: LearnedEstimator<R>) -> Self {
        Self { fallback }
    }
}

impl<R> JobEstimator<R> for OracleEstimator<R> {
    fn estimate(&mut self, request: &R, worker: &dyn CostOracle<R>) -> f64 {
        match worker.current_cost(request) {
            Some(c) => c as f64,
            None => self.fallback.estimate(request, worker),
        }
    }

    fn observe(&mut self, request: &R, work: u64) {
        self.fallback.observe(request, work);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nothing;
    impl CostOracle<u64> for Nothing {
        fn current_cost(&self, r: &u64) -> Option<u64> {
            (*r == 42).then_some(7)
        }
    }

    #[test]
    fn learns_per_class_and_is_pessimistic_about_the_unknown() {
        let n = &Nothing;
        let mut e = LearnedEstimator::new(|k: &u64| *k % 10, LearnMode::Max, 5.0);
        assert_eq!(e.estimate(&3, n), 5.0);
        e.observe(&3, 2);
        e.observe(&13, 1);
        e.observe(&4, 100);
        assert_eq!(e.estimate(&23, n), 2.0);
        assert_eq!(e.estimate(&7, n), 100.0);
        let mut l = LearnedEstimator::new(|k: &u64| *k, LearnMode::Last, 1.0);
        l.observe(&1, 50);
        l.observe(&1, 3);
        assert_eq!(l.estimate(&1, n), 3.0);
        let mut w = LearnedEstimator::new(|k: &u64| *k, LearnMode::Ewma(0.5), 1.0);
        w.observe(&1, 10);
        w.observe(&1, 20);
        assert_eq!(w.estimate(&1, n), 15.0);
    }

    #[test]
    fn oracle_answers_first_then_falls_back() {
        let mut o = OracleEstimator::new(LearnedEstimator::new(|k: &u64| *k, LearnMode::Last, 9.0));
        assert_eq!(o.estimate(&42, &Nothing), 7.0);
        assert_eq!(o.estimate(&1, &Nothing), 9.0);
        o.observe(&1, 3);
        assert_eq!(o.estimate(&1, &Nothing), 3.0);
    }
}
