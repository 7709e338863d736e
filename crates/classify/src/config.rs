//! The wire forms of the classifier's configs, as Python spells them: flat named fields with
//! their one default each, unknown fields rejected. Each turns into the typed spec it stands for.

use crate::generate::SyntheticSpec;
use crate::rules::{Action, ActionPolicy, ReadOptions, RuleFormat};
use crate::run::RunSpec;
use crate::trace::TraceFormat;
use serde::{Deserialize, Serialize};
use superlinear_core::Error;

/// Rule-reader options from their names: a rule format, the actions of action-less formats
/// and the default policy.
pub fn read_options(rule_format: &str, actions: &str, default_action: &str) -> Result<ReadOptions, Error> {
    Ok(ReadOptions {
        format: RuleFormat::parse(rule_format)?,
        actions: ActionPolicy::parse(actions)?,
        default_action: Action::parse(default_action).ok_or_else(|| {
            Error::config(format!("unknown default action '{default_action}' (known: accept, drop, reject, queue)"))
        })?,
    })
}

/// How a `PacketWorkload` is read from files (rules, and a trace or generated headers).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoadSettings {
    /// `auto`, `native`, `nft`, `classbench`.
    pub rule_format: String,
    /// Actions of ClassBench filters (`random:P:SEED`, `accept`, ...).
    pub actions: String,
    /// Default policy where the file sets none.
    pub default_action: String,
    /// `auto`, `binary`, `pcap`, `pcapng`, `classbench`.
    pub trace_format: String,
    /// Headers generated from the rules when there is no trace.
    pub generate: usize,
    /// Seed of the generated headers.
    pub seed: u64,
}

impl Default for LoadSettings {
    fn default() -> Self {
        Self {
            rule_format: "auto".into(),
            actions: "random:0.5:1".into(),
            default_action: "accept".into(),
            trace_format: "auto".into(),
            generate: 100_000,
            seed: 1,
        }
    }
}

impl LoadSettings {
    /// The rule reader's options.
    pub fn read_options(&self) -> Result<ReadOptions, Error> {
        read_options(&self.rule_format, &self.actions, &self.default_action)
    }

    /// The trace's format.
    pub fn trace_format(&self) -> Result<TraceFormat, Error> {
        TraceFormat::parse(&self.trace_format)
    }
}

/// The paper's synthetic rules and trace (see [`SyntheticSpec`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SyntheticSettings {
    pub rules: usize,
    pub depth: usize,
    pub flows_per_rule: usize,
    /// Share of packets sent to a final catch-all rule.
    #[serde(alias = "catch_all_fraction")]
    pub catch_all: f64,
}

impl Default for SyntheticSettings {
    fn default() -> Self {
        Self { rules: 4999, depth: 0, flows_per_rule: 1, catch_all: 0.0 }
    }
}

impl SyntheticSettings {
    /// The generator's spec.
    pub fn to_spec(&self) -> SyntheticSpec {
        SyntheticSpec {
            rules: self.rules,
            depth: self.depth,
            flows_per_rule: self.flows_per_rule,
            catch_all_fraction: self.catch_all,
        }
    }
}

/// One classifier run over a loaded workload (see [`RunSpec`] for each field).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunSettings {
    pub algo: String,
    pub dispatch: String,
    pub k: usize,
    /// Any of `projected`, `measured`.
    pub modes: Vec<String>,
    pub repeats: usize,
    /// Least wall-clock milliseconds the projected passes and the measured threaded runs span,
    /// keeping the least time (0: `repeats` passes and one threaded run).
    pub min_timed_ms: u64,
    pub parallel: usize,
    pub seed: u64,
    pub stats: bool,
    pub window: usize,
    pub warmup: usize,
    pub front: usize,
    pub dispatchers: usize,
}

impl Default for RunSettings {
    fn default() -> Self {
        let d = RunSpec::default();
        Self {
            algo: d.algo,
            dispatch: d.dispatch,
            k: d.k,
            modes: vec!["projected".into()],
            repeats: d.repeats,
            min_timed_ms: d.min_timed_ms,
            parallel: d.parallel,
            seed: d.seed,
            stats: d.stats,
            window: d.window,
            warmup: d.warmup,
            front: d.front,
            dispatchers: d.dispatchers,
        }
    }
}

impl RunSettings {
    /// The run's spec; an unknown mode is an error naming it.
    pub fn to_spec(&self) -> Result<RunSpec, Error> {
        if let Some(m) = self.modes.iter().find(|m| *m != "projected" && *m != "measured") {
            return Err(Error::config(format!("unknown mode '{m}' (known: projected, measured)")));
        }
        Ok(RunSpec {
            algo: self.algo.clone(),
            dispatch: self.dispatch.clone(),
            k: self.k,
            projected: self.modes.iter().any(|m| m == "projected"),
            measured: self.modes.iter().any(|m| m == "measured"),
            repeats: self.repeats,
            min_timed_ms: self.min_timed_ms,
            parallel: self.parallel,
            seed: self.seed,
            stats: self.stats,
            window: self.window,
            period: 0,
            warmup: self.warmup,
            front: self.front,
            dispatchers: self.dispatchers,
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
    fn configs_reject_unknown_and_mistyped_fields_by_name() {
        assert!(parse::<RunSettings>(r#"{"algo": "mrf", "workers": 4}"#)
            .unwrap_err()
            .contains("unknown field `workers`"));
        assert!(parse::<RunSettings>(r#"{"k": "four"}"#).unwrap_err().starts_with("k: invalid type"));
        assert!(parse::<LoadSettings>(r#"{"rule_fromat": "nft"}"#)
            .unwrap_err()
            .contains("unknown field `rule_fromat`"));
        assert!(parse::<LoadSettings>(r#"{"generate": -1}"#).unwrap_err().starts_with("generate: invalid value"));
        assert!(parse::<SyntheticSettings>(r#"{"rule": 5}"#).unwrap_err().contains("unknown field `rule`"));
        assert!(parse::<SyntheticSettings>(r#"{"depth": 1.5}"#).unwrap_err().starts_with("depth: invalid type"));
    }

    #[test]
    fn defaults_and_conversions() {
        assert_eq!(RunSettings::default().to_spec().unwrap(), RunSpec::default());
        let bad = RunSettings { modes: vec!["single_core".into()], ..Default::default() };
        assert!(bad.to_spec().unwrap_err().to_string().contains("unknown mode 'single_core'"));
        assert!(LoadSettings::default().read_options().is_ok());
        let bad = LoadSettings { default_action: "maybe".into(), ..Default::default() };
        assert!(bad.read_options().unwrap_err().to_string().contains("'maybe'"));
        let s: SyntheticSettings = parse(r#"{"catch_all_fraction": 0.25}"#).unwrap();
        assert_eq!(s.to_spec().catch_all_fraction, 0.25);
    }
}
