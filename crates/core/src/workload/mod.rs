//! Workloads: the item universe and a seeded, reproducible request stream over it.
//!
//! A workload is either generated (uniform, Zipf) or read from a key trace file. The item
//! universe, in its initial order, is what every worker holds at the start (replicated state).

mod trace;
mod uniform;
mod zipf;

pub use trace::{parse_binary_trace, read_trace, write_binary_trace, write_text_trace, TRACE_MAGIC};
pub use uniform::UniformKeys;
pub use zipf::ZipfKeys;

use crate::error::Error;

/// A generated or loaded workload.
#[derive(Clone, Debug)]
pub struct Workload {
    /// The item universe in the initial order every worker starts from.
    pub items: Vec<u64>,
    /// The request stream.
    pub requests: Vec<u64>,
}

/// How to obtain a workload.
#[derive(Clone, Debug, PartialEq)]
pub enum WorkloadSpec {
    /// Uniform over items 0..m.
    Uniform { m: usize },
    /// Zipf(α) over m items; popularity ranks map to items through a seeded permutation, so the
    /// popular items are not simply the first ones of the initial order.
    Zipf { m: usize, alpha: f64 },
    /// Keys read from a text or binary trace file; items are its distinct keys, ascending.
    Trace { path: String },
}

/// A source of keys for generated workloads.
pub trait KeySampler {
    /// The next key.
    fn next_key(&mut self) -> u64;
}

impl WorkloadSpec {
    /// Checks parameters without generating anything.
    pub fn validate(&self) -> Result<(), Error> {
        match self {
            WorkloadSpec::Uniform { m } | WorkloadSpec::Zipf { m, .. } if *m == 0 => {
                Err(Error::config("workload needs m >= 1 items"))
            }
            WorkloadSpec::Zipf { alpha, .. } if !(alpha.is_finite() && *alpha > 0.0) => Err(Error::config(format!(
                "zipf alpha must be a positive number, got {}",
                crate::error::number_text(*alpha)
            ))),
            _ => Ok(()),
        }
    }

    /// Number of items, when known without reading a file.
    pub fn items_hint(&self) -> Option<usize> {
        match self {
            WorkloadSpec::Uniform { m } | WorkloadSpec::Zipf { m, .. } => Some(*m),
            WorkloadSpec::Trace { .. } => None,
        }
    }

    /// A short label for result rows ("uniform", "zipf1.01", "trace").
    pub fn label(&self) -> String {
        match self {
            WorkloadSpec::Uniform { .. } => "uniform".into(),
            WorkloadSpec::Zipf { alpha, .. } => format!("zipf{alpha}"),
            WorkloadSpec::Trace { .. } => "trace".into(),
        }
    }

    /// Generates `n` requests (for traces: the first `n` keys, or all of them when `n` is 0 or
    /// larger than the trace).
    pub fn generate(&self, n: usize, seed: u64) -> Result<Workload, Error> {
        self.validate()?;
        match self {
            WorkloadSpec::Uniform { m } => {
                let mut keys = UniformKeys::new(*m, seed);
                Ok(Workload { items: (0..*m as u64).collect(), requests: sample(&mut keys, n)? })
            }
            WorkloadSpec::Zipf { m, alpha } => {
                let mut keys = ZipfKeys::new(*m, *alpha, seed)?;
                Ok(Workload { items: (0..*m as u64).collect(), requests: sample(&mut keys, n)? })
            }
            WorkloadSpec::Trace { path } => {
                let mut requests = read_trace(path)?;
                if n > 0 && n < requests.len() {
                    requests.truncate(n);
                }
                let mut items = requests.clone();
                items.sort_unstable();
                items.dedup();
                Ok(Workload { items, requests })
            }
        }
    }
}

fn sample(keys: &mut impl KeySampler, n: usize) -> Result<Vec<u64>, Error> {
    let mut out = Vec::with_capacity(n);
    // In slices, so that a cancelled run stops here too.
    while out.len() < n {
        crate::cancel::check()?;
        let end = n.min(out.len() + (1 << 20));
        out.extend((out.len()..end).map(|_| keys.next_key()));
    }
    Ok(out)
}
