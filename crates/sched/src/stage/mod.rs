//! SurgeProtector in front of a real worker (thesis §3.5): packets wait in a scheduler's buffer
//! for one self-adjusting worker, which then serves them for real; the job size the scheduler
//! sees is an *estimate* (§3.5.2), the service time is the worker's exact work for that packet
//! in its state at that moment.
//!
//! The stage is generic over the request type: a key for the core workers (move-to-front and
//! static lists, splay trees, ...), a packet for a classifier worker. What a new worker type
//! brings is a [`superlinear_core::Worker`] implementation and a [`JobEstimator`] (optionally
//! backed by a [`CostOracle`] the worker implements), and an adversary producing its requests.
//!
//! Two targets: the core's key workers ([`run_key_attack`]) and the packet classifier's MRF
//! workers ([`run_classifier_attack`]), whose flow cache predicts a packet's rule and whose
//! current order prices it.
//!
//! Time is work-clocked: one work unit (a list position visited, a rule compared) takes a fixed
//! number of microseconds, calibrated on this machine, so a run is deterministic for a seed and
//! its goodput is in the same units as the arrival rates. Results label it so.

use superlinear_core::Worker;

mod classifier_adversary;
mod classifier_attack;
mod classifier_worker;
mod classifier_workload;
mod estimators;
mod experiment;
mod key_adversary;
mod key_attack;
mod runner;

pub use classifier_adversary::{ClassifierAdversary, CLASSIFIER_ADVERSARIES};
pub use classifier_attack::{
    flow_of, run_classifier_attack, ClassifierAttackReport, ClassifierAttackSpec, PROBE_INNOCENT_PER_ATTACK,
};
pub use classifier_worker::{ClassifierWorker, Prediction, CLASSIFIER_ALGOS, FLOW_CACHE_SLOTS};
pub use classifier_workload::{ClassifierWorkload, GENERATED_PACKETS};
pub use estimators::{LearnMode, LearnedEstimator, OracleEstimator, NO_CLASS};
pub use experiment::{run_attack, AttackRow, AttackSpec, AttackSummary, AttackTarget};
pub use key_adversary::{KeyAdversary, ADVERSARIES};
pub use key_attack::{run_key_attack, KeyAttackSpec};
pub use runner::{run_stage, StageOutcome, StageRequest, StageSpec};

/// A job-size estimator: SurgeProtector's heuristic (thesis §3.5.2). It sees a request before
/// the worker serves it, may ask the worker about its current state, and learns from the work
/// the request really cost.
pub trait JobEstimator<R>: Send {
    /// Predicted work units of `request`; `worker` answers what it can about its current order.
    fn estimate(&mut self, request: &R, worker: &dyn CostOracle<R>) -> f64;
    /// The work `request` really cost when it was served.
    fn observe(&mut self, request: &R, work: u64);
}

/// A worker that can tell, cheaply and before serving, what a request would cost in its
/// current state: for a self-adjusting list, the position its item (or a packet's rule, with
/// its dependency chain) has reached now. The most accurate estimate a stage can have.
pub trait CostOracle<R> {
    /// Work units `request` would cost now, if known without serving it.
    fn current_cost(&self, request: &R) -> Option<u64>;
}

/// A worker that serves requests in a stage: a [`Worker`] that may also answer cost queries.
pub trait StageWorker<R>: Worker<R> + CostOracle<R> {}
impl<R, W: Worker<R> + CostOracle<R> + ?Sized> StageWorker<R> for W {}

/// Any worker without an oracle (the core workers): every cost query answers "unknown".
pub struct Blind<W: ?Sized>(pub Box<W>);

impl<R, W: Worker<R> + ?Sized> Worker<R> for Blind<W> {
    fn serve(&mut self, request: &R) -> u64 {
        self.0.serve(request)
    }
}

impl<R, W: ?Sized> CostOracle<R> for Blind<W> {
    fn current_cost(&self, _: &R) -> Option<u64> {
        None
    }
}
