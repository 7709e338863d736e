//! The wire form of `nft-bench`'s rule-set options, as Python spells them (`format`, `default`:
//! the CLI's flag names), with their one default each and unknown fields rejected.

use serde::{Deserialize, Serialize};
use superlinear_classify::config::read_options;
use superlinear_classify::rules::ReadOptions;
use superlinear_classify::trace::TraceFormat;
use superlinear_core::Error;

/// How one rule set and its trace are read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoadSettings {
    /// Rule file format (`auto`, `classbench`, `native`, `nft`).
    pub format: String,
    /// Actions of ClassBench filters.
    pub actions: String,
    /// Default policy where the file sets none.
    pub default: String,
    /// Trace format (`auto`, `classbench`, `pcap`, `pcapng`, `binary`).
    pub trace_format: String,
    /// Headers generated from the rules when there is no trace.
    pub generate: usize,
    /// Seed of the generated headers.
    pub seed: u64,
}

impl Default for LoadSettings {
    fn default() -> Self {
        Self {
            format: "auto".into(),
            actions: "random".into(),
            default: "accept".into(),
            trace_format: "auto".into(),
            generate: 0,
            seed: 1,
        }
    }
}

impl LoadSettings {
    /// The rule reader's options.
    pub fn read_options(&self) -> Result<ReadOptions, Error> {
        read_options(&self.format, &self.actions, &self.default)
    }

    /// The trace's format.
    pub fn trace_format(&self) -> Result<TraceFormat, Error> {
        TraceFormat::parse(&self.trace_format)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sender::SendSpec;

    fn parse<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, String> {
        let de = &mut serde_json::Deserializer::from_str(json);
        serde_path_to_error::deserialize(de).map_err(|e| format!("{}: {}", e.path(), e.inner()))
    }

    #[test]
    fn configs_reject_unknown_and_mistyped_fields_by_name() {
        assert!(parse::<LoadSettings>(r#"{"default_action": "drop"}"#)
            .unwrap_err()
            .contains("unknown field `default_action`"));
        assert!(parse::<LoadSettings>(r#"{"seed": "x"}"#).unwrap_err().starts_with("seed: invalid type"));
        assert!(parse::<SendSpec>(r#"{"rate": 5}"#).unwrap_err().contains("unknown field `rate`"));
        assert!(parse::<SendSpec>(r#"{"batch": "big"}"#).unwrap_err().starts_with("batch: invalid type"));
        assert_eq!(parse::<SendSpec>(r#"{"device": "veth0"}"#).unwrap().batch, SendSpec::default().batch);
        assert!(LoadSettings::default().read_options().is_ok());
    }
}
