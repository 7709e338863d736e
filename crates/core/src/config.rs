//! The wire form of an engine run, as Python and sweep files spell it: flat, named fields with
//! their one default each, unknown fields rejected. [`RunSettings::to_run_config`] turns it into
//! the typed [`RunConfig`].

use crate::error::Error;
use crate::run_config::{Modes, RunConfig, StateModel};
use crate::worker::WorkerParams;
use crate::workers::AlgoSpec;
use crate::workload::WorkloadSpec;
use serde::{Deserialize, Serialize};

/// Where requests come from: `uniform` or `zipf` over `m` items, or a key `trace` file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkloadSettings {
    /// `uniform`, `zipf` or `trace`.
    pub kind: String,
    /// Items (uniform, zipf).
    pub m: usize,
    /// Zipf exponent.
    pub alpha: f64,
    /// Trace file (trace).
    pub path: Option<String>,
}

impl Default for WorkloadSettings {
    fn default() -> Self {
        Self { kind: "uniform".into(), m: 100_000, alpha: 1.01, path: None }
    }
}

impl WorkloadSettings {
    /// The typed workload; an unknown kind is an error naming the known ones.
    pub fn to_spec(&self) -> Result<WorkloadSpec, Error> {
        let m = self.m;
        Ok(match self.kind.as_str() {
            "uniform" => WorkloadSpec::Uniform { m },
            "zipf" => WorkloadSpec::Zipf { m, alpha: self.alpha },
            "trace" => WorkloadSpec::Trace { path: self.path.clone().unwrap_or_default() },
            other => {
                return Err(Error::config(format!("unknown workload kind '{other}' (known: uniform, zipf, trace)")))
            }
        })
    }
}

/// The most workers a run takes: one dispatcher's batches address `k` × their stride slots with
/// u32 indices (crates/core/src/runner), and 16-bit worker ids are what an RSS indirection table names.
pub const MAX_WORKERS: usize = 65_535;

/// One engine run as configured from outside: see [`RunConfig`] for each field's meaning.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunSettings {
    pub algo: String,
    pub dispatch: String,
    pub k: usize,
    pub workload: WorkloadSettings,
    pub requests: usize,
    pub warmup: usize,
    pub exclude_warmup: bool,
    pub seed: u64,
    /// Sharded instead of replicated state.
    pub sharded: bool,
    pub compare_cycles: u64,
    pub miss_cycles: u64,
    /// Cache capacity in items (caches only).
    pub capacity: Option<usize>,
    /// Any of `projected`, `measured`, `single_core`.
    pub modes: Vec<String>,
    pub parallel: usize,
    pub repeats: usize,
    /// Least wall-clock milliseconds the projected passes and the measured threaded runs span,
    /// keeping the least time (0: `repeats` passes and one threaded run).
    pub min_timed_ms: u64,
}

impl Default for RunSettings {
    fn default() -> Self {
        Self {
            algo: "mtf".into(),
            dispatch: "hash".into(),
            k: 1,
            workload: WorkloadSettings::default(),
            requests: 100_000,
            warmup: 0,
            exclude_warmup: false,
            seed: 1,
            sharded: false,
            compare_cycles: 0,
            miss_cycles: 0,
            capacity: None,
            modes: vec!["projected".into()],
            parallel: 0,
            repeats: 1,
            min_timed_ms: 0,
        }
    }
}

impl RunSettings {
    /// The typed run; a bad algorithm, workload kind or mode is an error naming it.
    pub fn to_run_config(&self) -> Result<RunConfig, Error> {
        for m in &self.modes {
            if !["projected", "measured", "single_core"].contains(&m.as_str()) {
                return Err(Error::config(format!("unknown mode '{m}' (known: projected, measured, single_core)")));
            }
        }
        if self.k > MAX_WORKERS {
            return Err(Error::config(format!("k = {}: at most {MAX_WORKERS} workers", self.k)));
        }
        // Trees, lists and caches index their slots with u32 (u32::MAX marks "none").
        if self.workload.m >= u32::MAX as usize {
            return Err(Error::config(format!("m = {}: at most {} items", self.workload.m, u32::MAX - 1)));
        }
        let algo = AlgoSpec::parse(&self.algo)?;
        if let Some(c) = self.capacity.filter(|&c| c >= u32::MAX as usize) {
            return Err(Error::config(format!("capacity {c}: at most {} items", u32::MAX - 1)));
        }
        let has = |m: &str| self.modes.iter().any(|x| x == m);
        Ok(RunConfig {
            algo,
            params: WorkerParams {
                capacity: self.capacity,
                compare_cycles: self.compare_cycles,
                miss_cycles: self.miss_cycles,
            },
            dispatch: self.dispatch.clone(),
            workload: self.workload.to_spec()?,
            k: self.k,
            requests: self.requests,
            warmup: self.warmup,
            exclude_warmup: self.exclude_warmup,
            seed: self.seed,
            state: if self.sharded { StateModel::Sharded } else { StateModel::Replicated },
            modes: Modes { projected: has("projected"), measured: has("measured"), single_core: has("single_core") },
            parallel: self.parallel,
            repeats: self.repeats,
            min_timed_ms: self.min_timed_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, String> {
        let de = &mut serde_json::Deserializer::from_str(json);
        serde_path_to_error::deserialize(de).map_err(|e| format!("{}: {}", e.path(), e.inner()))
    }

    #[test]
    fn run_settings_reject_unknown_and_mistyped_fields_by_name() {
        let e = parse::<RunSettings>(r#"{"k": 2, "mis_cycles": 5000}"#).unwrap_err();
        assert!(e.contains("unknown field `mis_cycles`"), "{e}");
        let e = parse::<RunSettings>(r#"{"k": "abc"}"#).unwrap_err();
        assert!(e.starts_with("k: invalid type"), "{e}");
        let e = parse::<RunSettings>(r#"{"workload": {"kind": "zipf", "alhpa": 1.2}}"#).unwrap_err();
        assert!(e.starts_with("workload.alhpa: unknown field `alhpa`"), "{e}");
        let e = parse::<RunSettings>(r#"{"workload": {"m": "many"}}"#).unwrap_err();
        assert!(e.starts_with("workload.m: invalid type"), "{e}");
    }

    #[test]
    fn missing_fields_take_the_defaults() {
        let s: RunSettings = parse(r#"{"k": 4, "workload": {"kind": "zipf"}}"#).unwrap();
        assert_eq!(
            s,
            RunSettings {
                k: 4,
                workload: WorkloadSettings { kind: "zipf".into(), ..Default::default() },
                ..Default::default()
            }
        );
        let c = s.to_run_config().unwrap();
        assert_eq!(c.workload, WorkloadSpec::Zipf { m: 100_000, alpha: 1.01 });
        assert_eq!(c.requests, 100_000);
        assert!(c.modes.projected && !c.modes.measured);
    }

    #[test]
    fn bad_values_are_config_errors() {
        let bad_mode = RunSettings { modes: vec!["fast".into()], ..Default::default() };
        assert!(bad_mode.to_run_config().unwrap_err().to_string().contains("unknown mode 'fast'"));
        let bad_kind = WorkloadSettings { kind: "pareto".into(), ..Default::default() };
        assert!(bad_kind.to_spec().unwrap_err().to_string().contains("unknown workload kind 'pareto'"));
    }

    #[test]
    fn sizes_the_engine_cannot_index_are_config_errors_not_panics() {
        let err = |s: RunSettings| s.to_run_config().unwrap_err().to_string();
        assert!(err(RunSettings { k: MAX_WORKERS + 1, ..Default::default() }).contains("at most 65535 workers"));
        assert!(RunSettings { k: MAX_WORKERS, ..Default::default() }.to_run_config().is_ok());
        let m = WorkloadSettings { m: u32::MAX as usize, ..Default::default() };
        assert!(err(RunSettings { workload: m, ..Default::default() }).contains("at most 4294967294 items"));
        let lru = |c: usize| RunSettings { algo: format!("lru:{c}"), ..Default::default() };
        assert!(err(lru(u32::MAX as usize)).contains("capacity in 'lru:4294967295': at most 4294967294 items"));
        assert!(lru(u32::MAX as usize - 1).to_run_config().is_ok());
        let cap = RunSettings { algo: "lru:10".into(), capacity: Some(1 << 40), ..Default::default() };
        assert!(err(cap).contains("capacity 1099511627776: at most"));
    }
}
