//! Our classifiers' per-rule match counts over a trace: the numbers nftables' per-rule
//! counters must equal. Each packet is classified by the classifier itself (not a reference
//! scan), so a difference points at a bug in one of the two implementations of first match.

use std::sync::Arc;
use superlinear_classify::packet::Packet;
use superlinear_classify::Snapshot;
use superlinear_core::Error;

/// Packets per first-match rule and for the default policy.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleCounts {
    /// `per_rule[i]`: packets whose first match is rule i (priority order).
    pub per_rule: Vec<u64>,
    /// Packets no rule matched.
    pub default: u64,
}

impl RuleCounts {
    /// Every packet counted.
    pub fn total(&self) -> u64 {
        self.per_rule.iter().sum::<u64>() + self.default
    }
}

/// Classifies every packet with one classifier (a registry name: `static`, `mrf`, ...) in trace order and
/// counts the rule it returns.
pub fn count(snap: &Arc<Snapshot>, packets: &[Packet], algo: &str) -> Result<RuleCounts, Error> {
    let mut classifier = superlinear_classify::run::build(algo, snap.clone(), 0)?;
    let mut counts = RuleCounts { per_rule: vec![0; snap.len()], default: 0 };
    for p in packets {
        match classifier.classify(p).rule {
            Some(r) => counts.per_rule[r as usize] += 1,
            None => counts.default += 1,
        }
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use superlinear_classify::generate::{headers_for_rules, SyntheticSpec};

    #[test]
    fn static_and_mrf_count_the_same_first_matches() {
        let spec = SyntheticSpec { rules: 40, depth: 2, flows_per_rule: 3, catch_all_fraction: 0.1 };
        let set = spec.rule_set().unwrap();
        let mut packets = spec.trace(3_000, 7).unwrap();
        packets.extend(headers_for_rules(&set, 500, 3).unwrap());
        packets.push(Packet::new(1, 2, 3, 4, 6));
        let snap = Arc::new(Snapshot::new(set.clone()));
        let s = count(&snap, &packets, "static").unwrap();
        assert_eq!(s, count(&snap, &packets, "mrf").unwrap());
        assert_eq!(s.total(), packets.len() as u64);
        let brute = packets.iter().filter(|p| set.first_match(p) == Some(2)).count() as u64;
        assert_eq!(s.per_rule[2], brute);
        assert!(count(&snap, &packets, "nope").is_err());
    }
}
