//! The static first-match list: scan the rule table in priority order (nftables' linked list,
//! here a contiguous array, which only flatters the baseline).

use super::stats::StatsRecorder;
use super::{ClassifierOptions, FootprintModel, HotCount, Lookup, PacketClassifier};
use crate::packet::Packet;
use crate::snapshot::Snapshot;
use crate::table::CompactRule;
use std::sync::Arc;
use superlinear_core::Worker;

/// A static classifier; the reference every other one must agree with.
pub struct StaticClassifier {
    snap: Arc<Snapshot>,
    stats: StatsRecorder,
}

impl StaticClassifier {
    /// A static list over `snap`.
    pub fn new(snap: Arc<Snapshot>) -> Self {
        Self::with_options(snap, ClassifierOptions::default())
    }

    /// With statistics delivered to a sink on drop.
    pub fn with_options(snap: Arc<Snapshot>, opts: ClassifierOptions) -> Self {
        let stats = StatsRecorder::new(opts.stats, snap.len(), opts.window);
        Self { snap, stats }
    }

    /// Classifies one packet.
    #[inline]
    pub fn classify(&mut self, p: &Packet) -> Lookup {
        let n = self.snap.table.len();
        let rule = self.snap.first_match(p);
        let position = rule.unwrap_or(n as u32);
        let lookup = Lookup {
            rule,
            action: self.snap.action_of(rule),
            work: if rule.is_some() { position as u64 + 1 } else { n as u64 },
            position,
            chain: 0,
            moved: 0,
        };
        self.stats.record(&lookup);
        lookup
    }

    /// The shared snapshot.
    pub fn snapshot(&self) -> &Arc<Snapshot> {
        &self.snap
    }
}

impl Worker<Packet> for StaticClassifier {
    #[inline]
    fn serve(&mut self, p: &Packet) -> u64 {
        self.classify(p).work
    }

    /// A static list has no upkeep: zero, so that its rows compare with MRF's.
    fn entries_moved(&self) -> Option<u64> {
        Some(0)
    }
}

impl PacketClassifier for StaticClassifier {
    #[inline]
    fn classify(&mut self, p: &Packet) -> Lookup {
        StaticClassifier::classify(self, p)
    }

    fn snapshot(&self) -> &Arc<Snapshot> {
        &self.snap
    }

    /// Nothing of its own: it scans the snapshot's table.
    fn own_bytes(&self) -> usize {
        0
    }

    fn footprint_model(&self) -> FootprintModel {
        let rule = std::mem::size_of::<CompactRule>();
        FootprintModel {
            shared_bytes: self.snap.table.len() * rule,
            hot: "table prefix to the deepest first match",
            item_bytes: rule,
            count: HotCount::TablePrefix,
        }
    }

    /// A static list never moves: a rule stands at its priority.
    fn position_of(&self, rule: u32) -> Option<usize> {
        Some(rule as usize)
    }

    fn cost_now(&self, p: &Packet) -> Option<u64> {
        Some(self.snap.first_match(p).map_or(self.snap.len() as u64, |r| r as u64 + 1))
    }
}
