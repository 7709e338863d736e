//! One configured run over key requests: algorithm × dispatcher × workload × k, executed in the
//! modes asked for. This is what the CLI's experiments call for every grid point.

use crate::accounting::{Accounting, AccountingRecord};
use crate::cputime::available_cores;
use crate::dispatch::{self, Dispatcher};
use crate::error::Error;
use crate::runner::{run_projected, run_threaded, run_threaded_within, Placement, Streams};
use crate::worker::{Worker, WorkerParams};
use crate::workers::AlgoSpec;
use crate::workload::WorkloadSpec;

/// Most worker threads a real-thread run starts.
pub const MAX_THREADED_WORKERS: usize = 1024;

/// How each worker's initial data set is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateModel {
    /// Every worker holds all items in the same initial order (the paper's model, the default).
    Replicated,
    /// Each worker holds only the items whose home it is under a key-affine dispatcher.
    Sharded,
}

/// Which kinds of run to execute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Modes {
    /// Serial dispatch, then workers on their own streams (projected and work speedups).
    pub projected: bool,
    /// Real threads, one core per worker; skipped when k exceeds the cores.
    pub measured: bool,
    /// Real threads, every worker on one core (paper Fig. 5c).
    pub single_core: bool,
}

/// A complete run description.
#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    /// The workers' algorithm.
    pub algo: AlgoSpec,
    /// Worker parameters (w, ρ, capacity).
    pub params: WorkerParams,
    /// Dispatcher name from the registry.
    pub dispatch: String,
    /// Workload.
    pub workload: WorkloadSpec,
    /// Number of workers.
    pub k: usize,
    /// Counted requests.
    pub requests: usize,
    /// Warm-up requests served first and left uncounted; used only when `exclude_warmup`.
    pub warmup: usize,
    /// Leave the warm-up out of every figure (the paper includes it; so does the default).
    pub exclude_warmup: bool,
    /// Seed of the workload and of seeded dispatchers.
    pub seed: u64,
    /// Replicated or sharded state.
    pub state: StateModel,
    /// Which runs to execute.
    pub modes: Modes,
    /// Workers run at once in projected mode (0 = every available core).
    pub parallel: usize,
    /// Projected mode: runs of each stream, keeping the least CPU time (best of n; 1 = once).
    pub repeats: usize,
    /// Projected and measured modes: passes (threaded runs) are added, up to
    /// [`crate::runner::MAX_WINDOW_PASSES`], until they span this many milliseconds of wall-clock
    /// time, keeping the least time (0: `repeats` passes and one threaded run).
    pub min_timed_ms: u64,
}

/// Results of one configured run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunReport {
    /// Items in the universe.
    pub items: usize,
    /// Cores available to this process.
    pub cores: usize,
    /// Projected run (also carries the work counts).
    pub projected: Option<Accounting>,
    /// Measured run with one core per worker, when k ≤ cores.
    pub measured: Option<Accounting>,
    /// Measured run with every worker on one core.
    pub single_core: Option<Accounting>,
}

/// A [`RunReport`] as results carry it: each mode's accounting with its derived figures.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RunRecord<'a> {
    pub items: usize,
    pub cores: usize,
    pub projected: Option<AccountingRecord<'a>>,
    pub measured: Option<AccountingRecord<'a>>,
    pub single_core: Option<AccountingRecord<'a>>,
}

impl RunReport {
    /// The record of this run.
    pub fn record(&self) -> RunRecord<'_> {
        RunRecord {
            items: self.items,
            cores: self.cores,
            projected: self.projected.as_ref().map(Accounting::record),
            measured: self.measured.as_ref().map(Accounting::record),
            single_core: self.single_core.as_ref().map(Accounting::record),
        }
    }
}

impl RunConfig {
    /// Checks the parameters; every problem becomes one clear line.
    pub fn validate(&self) -> Result<(), Error> {
        if self.k == 0 {
            return Err(Error::config("k must be at least 1"));
        }
        if self.requests == 0 {
            return Err(Error::config("requests must be at least 1"));
        }
        self.workload.validate()?;
        let entry = dispatch::lookup(&self.dispatch)?;
        if self.state == StateModel::Sharded && !entry.key_affine {
            return Err(Error::config(format!(
                "sharded state needs a key-affine dispatcher (like 'hash'); '{}' sends a key to any worker",
                self.dispatch
            )));
        }
        if let Some(m) = self.workload.items_hint() {
            if self.k > m && self.state == StateModel::Sharded {
                return Err(Error::config(format!(
                    "sharded state with k = {} > m = {m} leaves workers without items",
                    self.k
                )));
            }
        }
        if self.exclude_warmup && self.warmup == 0 {
            return Err(Error::config("excluding the warm-up needs a warm-up length (warmup > 0 requests)"));
        }
        if (self.modes.measured || self.modes.single_core) && self.k > MAX_THREADED_WORKERS {
            return Err(Error::config(format!(
                "real-thread runs start one thread per worker; k = {} exceeds the limit of {MAX_THREADED_WORKERS}",
                self.k
            )));
        }
        if !(self.modes.projected || self.modes.measured || self.modes.single_core) {
            return Err(Error::config("no run mode selected"));
        }
        Ok(())
    }

    fn dispatcher(&self) -> Box<dyn Dispatcher> {
        engine_dispatcher(&self.dispatch, self.k, self.seed).expect("validated")
    }
}

/// A run's dispatcher seed is its workload seed xor this salt, so that the two streams of
/// randomness differ; the working-set law uses the same to reproduce a run's assignments.
pub const ENGINE_DISPATCH_SALT: u64 = 0xd15a_7c4e;

/// The dispatcher a run builds for `name`, k workers and run seed `seed`.
pub fn engine_dispatcher(name: &str, k: usize, seed: u64) -> Result<Box<dyn Dispatcher>, Error> {
    let entry = dispatch::lookup(name)?;
    Ok((entry.build)(k, seed ^ ENGINE_DISPATCH_SALT))
}

/// Executes a configured run in every mode it asks for.
pub fn execute(config: &RunConfig) -> Result<RunReport, Error> {
    config.validate()?;
    let warmup = if config.exclude_warmup { config.warmup } else { 0 };
    let workload = config.workload.generate(warmup + config.requests, config.seed)?;
    crate::cancel::check()?;
    let split_at = warmup.min(workload.requests.len());
    let streams = Streams { warmup: &workload.requests[..split_at], counted: &workload.requests[split_at..] };
    if streams.counted.is_empty() {
        return Err(Error::config(format!("no requests left to count after {warmup} warm-up requests")));
    }

    let shards: Vec<Vec<u64>> = match config.state {
        StateModel::Replicated => Vec::new(),
        StateModel::Sharded => {
            let homes = config.dispatcher();
            let mut shards = vec![Vec::new(); config.k];
            for &item in &workload.items {
                shards[homes.home(&item).expect("validated key-affine")].push(item);
            }
            shards
        }
    };
    let items_of = |i: usize| -> &[u64] {
        match config.state {
            StateModel::Replicated => &workload.items,
            StateModel::Sharded => &shards[i],
        }
    };
    let factory = |i: usize| -> Box<dyn Worker> { config.algo.build(items_of(i), &config.params) };

    let cores = available_cores();
    let parallel = if config.parallel == 0 { cores } else { config.parallel };
    let make_dispatcher = || config.dispatcher();
    let min_timed = std::time::Duration::from_millis(config.min_timed_ms);
    let projected = config
        .modes
        .projected
        .then(|| run_projected(streams, &make_dispatcher, config.k, &factory, parallel, config.repeats, min_timed));
    let measured = (config.modes.measured && config.k <= cores).then(|| {
        run_threaded_within(streams, &make_dispatcher, config.k, &factory, Placement::OneCorePerWorker, min_timed)
    });
    let single_core = config
        .modes
        .single_core
        .then(|| run_threaded(streams, config.dispatcher().as_mut(), config.k, &factory, Placement::SingleCore));
    crate::cancel::check()?;
    Ok(RunReport { items: workload.items.len(), cores, projected, measured, single_core })
}
