//! The classifier's results as Python reads them: serialisable records of a run, a worker's
//! statistics and a check, derived figures included.

use crate::classifier::WorkerStats;
use crate::run::RunReport;
use serde::Serialize;
use superlinear_core::accounting::{Accounting, AccountingRecord};

/// One worker's statistics as results carry them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkerStatsRecord<'a> {
    pub packets: u64,
    pub work: u64,
    /// Entries moved (the second work counter).
    pub entries_moved: u64,
    pub default_hits: u64,
    pub distinct_rules: usize,
    pub mean_active_rules: f64,
    pub max_active_rules: u32,
    pub window: usize,
    pub windows: u64,
    pub mean_position: f64,
    /// Packets per log2 bucket of the matching rule's position.
    pub position_hist_log2: &'a [u64],
    pub mean_chain: f64,
    pub chain_hist: &'a [u64],
}

impl<'a> WorkerStatsRecord<'a> {
    /// The record of `s`.
    pub fn new(s: &'a WorkerStats) -> Self {
        Self {
            packets: s.packets,
            work: s.work,
            entries_moved: s.moved,
            default_hits: s.default_hits,
            distinct_rules: s.distinct_rules(),
            mean_active_rules: s.mean_active(),
            max_active_rules: s.max_active(),
            window: s.window,
            windows: s.windows,
            mean_position: s.mean_position(),
            position_hist_log2: &s.position_hist,
            mean_chain: s.mean_chain(),
            chain_hist: &s.chain_hist,
        }
    }
}

/// A run as results carry it: each mode's accounting and the workers' statistics (those
/// collected).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunRecord<'a> {
    pub dispatch: &'a str,
    pub cores: usize,
    /// Rules.
    pub items: usize,
    pub projected: Option<AccountingRecord<'a>>,
    pub measured: Option<AccountingRecord<'a>>,
    pub stats: Vec<WorkerStatsRecord<'a>>,
    /// Packets per first-match rule, all workers together (empty without statistics). A
    /// worker's own counts stay in Rust: at k workers they are k × rules numbers (tens of GB as
    /// Python integers at k = 65,535 on 10k rules).
    pub rule_matches: Vec<u64>,
}

/// Packets per first-match rule, summed over `workers`.
fn rule_matches<'a>(workers: impl Iterator<Item = &'a WorkerStats>) -> Vec<u64> {
    let mut sum: Vec<u64> = Vec::new();
    for w in workers {
        if sum.len() < w.matches.len() {
            sum.resize(w.matches.len(), 0);
        }
        sum.iter_mut().zip(&w.matches).for_each(|(s, m)| *s += m);
    }
    sum
}

impl<'a> RunRecord<'a> {
    /// The record of `report`, a run over `rules` rules.
    pub fn new(report: &'a RunReport, rules: usize) -> Self {
        Self {
            dispatch: &report.dispatch,
            cores: report.cores,
            items: rules,
            projected: report.projected.as_ref().map(Accounting::record),
            measured: report.measured.as_ref().map(Accounting::record),
            stats: report.stats.iter().flatten().map(WorkerStatsRecord::new).collect(),
            rule_matches: rule_matches(report.stats.iter().flatten()),
        }
    }
}
