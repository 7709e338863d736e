//! The rule-aware dispatcher's choices for one rule set, computed on first use and kept: the
//! rule-only plan, the calibration sample and the chosen fields per k. Calibration simulates
//! MRF workers and is the costly step, so a sweep over k (or a run, a check and a description
//! at the same k) must reuse it; one planner serves every dispatcher built over its snapshot.

use super::plan::{RuleAwarePlan, GENERATED_SAMPLE, SIMULATED_SHORTLIST};
use super::score::{score_with_law, score_with_mrf};
use crate::dispatch::rss::FieldMask;
use crate::generate;
use crate::packet::Packet;
use crate::snapshot::Snapshot;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// A rule set and the rule-aware dispatcher's cached choices for it. Dispatchers are built
/// over a planner (see [`crate::dispatch::build`]); a new rule set needs a new planner.
#[derive(Debug)]
pub struct RuleAwarePlanner {
    snap: Arc<Snapshot>,
    plan: OnceLock<RuleAwarePlan>,
    calibration: OnceLock<Vec<Packet>>,
    choices: Mutex<HashMap<usize, FieldMask>>,
}

impl RuleAwarePlanner {
    /// A planner over `snap`, nothing computed yet.
    pub fn new(snap: Arc<Snapshot>) -> Self {
        Self { snap, plan: OnceLock::new(), calibration: OnceLock::new(), choices: Mutex::new(HashMap::new()) }
    }

    /// The rule set.
    pub fn snapshot(&self) -> &Arc<Snapshot> {
        &self.snap
    }

    /// Every field choice scored on the rules (once).
    pub fn plan(&self) -> &RuleAwarePlan {
        self.plan.get_or_init(|| RuleAwarePlan::new(&self.snap.rules.rules))
    }

    /// Gives the planner a calibration sample of traffic (once; later calls are ignored).
    /// Without one it generates headers inside the rules.
    pub fn calibrate(&self, sample: &[Packet]) {
        let _ = self.calibration.set(sample.to_vec());
    }

    /// The fields the rule-aware dispatcher hashes at k: the law's best few on the calibration
    /// sample, re-scored by simulating MRF workers (scored once per k, then cached).
    pub fn fields(&self, k: usize) -> FieldMask {
        if let Some(m) = self.choices.lock().unwrap_or_else(|e| e.into_inner()).get(&k) {
            return *m;
        }
        let generated;
        let sample: &[Packet] = match self.calibration.get() {
            Some(s) if !s.is_empty() => s,
            _ => {
                generated = generate::headers_for_rules(&self.snap.rules, GENERATED_SAMPLE, 1).unwrap_or_default();
                &generated
            }
        };
        let choice = if sample.is_empty() {
            FieldMask::FIVE_TUPLE
        } else {
            let shortlist: Vec<FieldMask> = score_with_law(&self.snap, self.plan(), sample, k)
                .iter()
                .take(SIMULATED_SHORTLIST)
                .map(|s| s.mask)
                .collect();
            score_with_mrf(&self.snap, sample, k, &shortlist).first().map_or(FieldMask::FIVE_TUPLE, |s| s.mask)
        };
        self.choices.lock().unwrap_or_else(|e| e.into_inner()).insert(k, choice);
        choice
    }
}

impl From<Arc<Snapshot>> for RuleAwarePlanner {
    fn from(snap: Arc<Snapshot>) -> Self {
        Self::new(snap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::SyntheticSpec;

    #[test]
    fn choices_are_cached_per_k_and_the_calibration_is_set_once() {
        let spec = SyntheticSpec { rules: 61, depth: 1, flows_per_rule: 4, catch_all_fraction: 0.0 };
        let planner = RuleAwarePlanner::new(Arc::new(Snapshot::new(spec.rule_set().unwrap())));
        let trace = spec.trace(4_000, 2).unwrap();
        planner.calibrate(&trace);
        planner.calibrate(&trace[..10]);
        assert_eq!(planner.calibration.get().map(Vec::len), Some(4_000), "the first sample stays");
        let chosen = planner.fields(4);
        assert_eq!(planner.fields(4), chosen);
        // A later call at the same k reads the cache instead of scoring again.
        let planted =
            if chosen == FieldMask::FIVE_TUPLE { FieldMask::parse("sport") } else { Ok(FieldMask::FIVE_TUPLE) };
        let planted = planted.unwrap();
        planner.choices.lock().unwrap().insert(4, planted);
        assert_eq!(planner.fields(4), planted);
        assert!(std::ptr::eq(planner.plan(), planner.plan()), "the plan is built once");
    }
}
