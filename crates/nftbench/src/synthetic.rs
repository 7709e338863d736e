//! The synthetic rule set and trace `nft-bench` runs on: the paper's synthetic rules, half the
//! packets from their flows and half ClassBench-style headers drawn from the rules (so the
//! kernel chain sees both the skewed flows and traffic spread over every rule).

use superlinear_classify::generate::{headers_for_rules, SyntheticSpec};
use superlinear_classify::{Packet, RuleSet};
use superlinear_core::Error;

/// The rules of `spec` and `packets` packets, seeded.
pub fn synthetic_workload(spec: &SyntheticSpec, packets: usize, seed: u64) -> Result<(RuleSet, Vec<Packet>), Error> {
    let set = spec.rule_set()?;
    let mut trace = spec.trace(packets / 2, seed)?;
    trace.extend(headers_for_rules(&set, packets - packets / 2, seed ^ 0x5eed)?);
    Ok((set, trace))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_flows_half_headers_repeatably() {
        let spec = SyntheticSpec { rules: 30, depth: 1, flows_per_rule: 2, catch_all_fraction: 0.0 };
        let (set, trace) = synthetic_workload(&spec, 1001, 4).unwrap();
        assert_eq!(trace.len(), 1001);
        assert_eq!(set.rules.len(), spec.rule_set().unwrap().rules.len());
        assert_eq!(trace[..500], spec.trace(500, 4).unwrap()[..]);
        assert_eq!(trace, synthetic_workload(&spec, 1001, 4).unwrap().1);
    }
}
