//! Rules and innocent packets for the attack on a classifier: rule and trace files (ClassBench,
//! native, nft; ClassBench, pcap, pcapng, binary traces), or, so the experiment runs without
//! data, the paper's synthetic dependency chains (§4.3, Fig. 9b) with a final catch-all rule.
//!
//! Synthetic innocent traffic has locality (Zipf-popular chains, a few flows each) and goes to
//! each chain's *head*, its specific /32 rule: heads depend on nothing, so MRF moves them to the
//! front and serves this traffic well. The chains' wider rules behind them depend on their
//! predecessors; MRF (paper Alg. 1) moves a hit rule only up to its nearest dependency, so a
//! chain comes forward one level per hit, its tail last, while every head that moves past it
//! pushes it back: the adversary's targets.

use std::sync::Arc;
use superlinear_classify::generate::{headers_for_rules, SyntheticSpec, DST, FLOW_PORT_BASE, SRC};
use superlinear_classify::packet::proto;
use superlinear_classify::rules::{read_rules, ReadOptions};
use superlinear_classify::trace::{read_trace, TraceFormat};
use superlinear_classify::{Error, Packet, Snapshot};
use superlinear_core::workload::WorkloadSpec;

/// Packets generated inside a rule file's rules when no trace is given.
pub const GENERATED_PACKETS: usize = 100_000;

/// Where the rules and the innocent packets come from.
#[derive(Clone, Debug)]
pub enum ClassifierWorkload {
    /// A rule file and a trace (`None`: headers generated inside the rules, ClassBench style).
    Files {
        /// Rule file.
        rules: String,
        /// Trace file.
        trace: Option<String>,
        /// How to read the rules.
        options: ReadOptions,
        /// Trace format.
        trace_format: TraceFormat,
    },
    /// Synthetic dependency chains, Zipf-popular, with a catch-all rule.
    Synthetic {
        /// Base rules (chains).
        chains: usize,
        /// Dependencies per chain (d: each chain has d + 1 rules).
        depth: usize,
        /// Flows per chain in the innocent traffic.
        flows_per_chain: usize,
        /// Zipf exponent of chain popularity.
        alpha: f64,
        /// Share of innocent packets for the catch-all rule (0: no catch-all rule at all).
        catch_all: f64,
    },
}

impl ClassifierWorkload {
    /// The compiled rules and `packets` innocent packets (`None`: the whole trace, or
    /// [`GENERATED_PACKETS`]); a shorter trace is replayed from its start.
    pub fn load(&self, packets: Option<usize>, seed: u64) -> Result<(Arc<Snapshot>, Vec<Packet>), Error> {
        if packets == Some(0) {
            return Err(Error::config("the experiment needs at least one innocent packet"));
        }
        let (set, mut trace) = match self {
            ClassifierWorkload::Files { rules, trace, options, trace_format } => {
                let set = read_rules(rules, options)?;
                if set.is_empty() {
                    return Err(Error::input(rules.as_str(), None, "no rules"));
                }
                let trace = match trace {
                    Some(path) => {
                        let t = read_trace(path, *trace_format)?;
                        if t.packets.is_empty() {
                            return Err(Error::input(path.as_str(), None, "no TCP/UDP IPv4 packets to classify"));
                        }
                        t.packets
                    }
                    None => headers_for_rules(&set, packets.unwrap_or(GENERATED_PACKETS), seed)?,
                };
                (set, trace)
            }
            ClassifierWorkload::Synthetic { chains, depth, flows_per_chain, alpha, catch_all } => {
                let spec = SyntheticSpec {
                    rules: *chains,
                    depth: *depth,
                    flows_per_rule: *flows_per_chain,
                    catch_all_fraction: *catch_all,
                };
                let set = spec.rule_set()?;
                (set, synthetic_trace(&spec, *alpha, packets.unwrap_or(GENERATED_PACKETS), seed)?)
            }
        };
        if let Some(n) = packets {
            trace = trace.iter().copied().cycle().take(n).collect();
        }
        Ok((Arc::new(Snapshot::new(set)), trace))
    }
}

/// `n` packets: chains by Zipf(`alpha`) popularity (a seeded permutation of ranks), a flow of
/// the chain's head uniformly, and the spec's share to the catch-all rule.
fn synthetic_trace(spec: &SyntheticSpec, alpha: f64, n: usize, seed: u64) -> Result<Vec<Packet>, Error> {
    use rand::{Rng, SeedableRng};
    let chains = WorkloadSpec::Zipf { m: spec.rules, alpha }.generate(n, seed)?.requests;
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed ^ 0x7ace_5eed);
    Ok(chains
        .into_iter()
        .map(|c| {
            if spec.catch_all_fraction > 0.0 && rng.gen::<f64>() < spec.catch_all_fraction {
                spec.catch_all_packet(rng.gen_range(0..1000))
            } else {
                let flow = FLOW_PORT_BASE + rng.gen_range(0..spec.flows_per_rule) as u16;
                Packet::new(SRC, DST, flow, c as u16 + 1, proto::UDP)
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_chains_with_locality_and_a_catch_all() {
        let w = ClassifierWorkload::Synthetic { chains: 50, depth: 2, flows_per_chain: 3, alpha: 1.2, catch_all: 0.05 };
        let (snap, packets) = w.load(Some(4000), 1).unwrap();
        assert_eq!((snap.len(), packets.len()), (151, 4000));
        let mut uses = vec![0usize; 152];
        for p in &packets {
            uses[snap.first_match(p).map_or(151, |r| r as usize)] += 1;
        }
        assert!((120..300).contains(&uses[150]), "catch-all share {}", uses[150]);
        let top = *uses[..150].iter().max().unwrap();
        assert!(top > 800, "Zipf: the hottest chain gets a large share ({top})");
        assert!(uses[..150].iter().enumerate().all(|(r, &u)| u == 0 || r % 3 == 0), "heads only");
        assert!(w.load(Some(0), 1).is_err());
    }

    #[test]
    fn missing_files_are_one_line_errors() {
        let w = ClassifierWorkload::Files {
            rules: "/nonexistent/rules".into(),
            trace: None,
            options: ReadOptions::default(),
            trace_format: TraceFormat::Auto,
        };
        let e = w.load(None, 1).unwrap_err().to_string();
        assert!(e.contains("/nonexistent/rules") && !e.contains('\n'), "{e}");
    }
}
