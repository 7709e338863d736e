//! Scoring field choices on a calibration sample: by the working-set law (fast, exact where
//! MRF is move-to-front) and by simulating the MRF workers (exact, used on the law's
//! shortlist).

use super::plan::RuleAwarePlan;
use crate::classifier::{MrfClassifier, MrfVariant};
use crate::dispatch::rss::{FieldMask, RssToeplitzDispatcher};
use crate::packet::Packet;
use crate::snapshot::Snapshot;
use std::sync::Arc;
use superlinear_core::dispatch::Dispatcher;
use superlinear_core::law::{DispatcherCandidate, Evaluator, ItemSequence, MtfCost};

fn hashed_bits(m: &FieldMask) -> u32 {
    m.src as u32 + m.dst as u32 + m.sport as u32 + m.dport as u32 + m.proto as u32
}

/// One candidate's score on a calibration sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FieldScore {
    /// The hashed bits.
    pub mask: FieldMask,
    /// Steady-state work speedup over one worker: q(k)·ℓ(k) predicted by the law for
    /// move-to-front workers ([`score_with_law`]), or exact for MRF workers ([`score_with_mrf`]).
    pub work_speedup: f64,
}

/// Best first; exact ties go to fewer hashed bits. Only exact ties: a tolerance band would also
/// prefer fewer bits over a field that does improve the split.
fn sort_best_first(scores: &mut [FieldScore]) {
    scores.sort_by(|a, b| {
        b.work_speedup
            .partial_cmp(&a.work_speedup)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(hashed_bits(&a.mask).cmp(&hashed_bits(&b.mask)))
    });
}

/// Scores `plan`'s shortlist at k with the working-set law on `sample` (first-match rules as
/// items) and returns every score, best first.
///
/// The score is the steady state: the sample is served twice and only the second pass counts.
/// A classifier serves traffic that keeps repeating its flows for far longer than a sample, so
/// what decides is the working sets the workers settle into, not how fast they first pull their
/// rules forward; on a short sample those cold-start costs would dominate the score.
pub fn score_with_law(snap: &Snapshot, plan: &RuleAwarePlan, sample: &[Packet], k: usize) -> Vec<FieldScore> {
    let once = snap.first_match_ids(sample);
    let twice: Vec<u32> = once.iter().chain(&once).copied().collect();
    let doubled: Vec<Packet> = sample.iter().chain(sample).copied().collect();
    let law = |ids: Vec<u32>| {
        Evaluator::new(ItemSequence::new(ids, snap.len() + 1).expect("rule ids fit the law"), Box::new(MtfCost))
    };
    let (mut first_pass, mut both_passes) = (law(once), law(twice));
    let mut scores: Vec<FieldScore> = plan
        .shortlist(k)
        .into_iter()
        .map(|mask| {
            let build = move |k| Box::new(RssToeplitzDispatcher::new(mask, k)) as Box<dyn Dispatcher<Packet>>;
            let first = first_pass.candidate(&DispatcherCandidate::new(mask.name(), sample, build), k.max(1));
            let both = both_passes.candidate(&DispatcherCandidate::new(mask.name(), &doubled, build), k.max(1));
            let work_speedup = match (first, both) {
                (Ok(a), Ok(b)) => {
                    let span = b.workers.iter().zip(&a.workers).map(|(b, a)| b.work - a.work).max().unwrap_or(0);
                    (b.baseline_work - a.baseline_work) as f64 / span.max(1) as f64
                }
                _ => 0.0,
            };
            FieldScore { mask, work_speedup }
        })
        .collect();
    sort_best_first(&mut scores);
    scores
}

/// Scores `masks` at k exactly: each worker is an MRF classifier (precomputed dependencies)
/// serving the sample packets the candidate routes to it, twice, the second pass counted (the
/// steady state, as in [`score_with_law`]); the score is one worker's counted work over the
/// busiest worker's. Returns every score, best first.
pub fn score_with_mrf(snap: &Arc<Snapshot>, sample: &[Packet], k: usize, masks: &[FieldMask]) -> Vec<FieldScore> {
    let steady_work = |packets: &[Packet]| -> u64 {
        let mut worker = MrfClassifier::new(snap.clone(), MrfVariant::Precomputed);
        for p in packets {
            worker.classify(p);
        }
        packets.iter().map(|p| worker.classify(p).work).sum()
    };
    let baseline = steady_work(sample);
    let k = k.max(1);
    let mut scores: Vec<FieldScore> = masks
        .iter()
        .map(|&mask| {
            let rss = RssToeplitzDispatcher::new(mask, k);
            let mut queues: Vec<Vec<Packet>> = vec![Vec::new(); k];
            for p in sample {
                queues[rss.home(p).expect("RSS is key-affine")].push(*p);
            }
            let span = queues.iter().map(|q| steady_work(q)).max().unwrap_or(0);
            FieldScore { mask, work_speedup: baseline as f64 / span.max(1) as f64 }
        })
        .collect();
    sort_best_first(&mut scores);
    scores
}
