//! Property tests of the priority queues against a reference ordered multiset (a `BTreeMap` of
//! FIFO buckets): random operation sequences (push, pop-min, pop-max, remove by handle) on
//! several tree shapes, including non-power-of-two widths, full pools and single buckets; the
//! logical partitions against q independent references; the sliding window against the
//! reference on hold-model priorities; the baselines on priorities. Fixed seed, fast.

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use std::collections::{BTreeMap, HashMap, VecDeque};
use superlinear_sched::queue::{
    BTreeQueue, BinaryHeapQueue, DoubleEndedPriorityQueue, Handle, HffsQueue, MinMaxHeap, PartitionedQueue,
    PriorityQueue, SlidingWindowQueue,
};

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: RngSeed::Fixed(0xbb0_5eed),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// The reference: priority → FIFO of ids.
#[derive(Default)]
struct Reference {
    buckets: BTreeMap<u32, VecDeque<u64>>,
    len: usize,
}

impl Reference {
    fn push(&mut self, p: u32, id: u64) {
        self.buckets.entry(p).or_default().push_back(id);
        self.len += 1;
    }
    fn take(&mut self, p: u32) -> (u32, u64) {
        let q = self.buckets.get_mut(&p).unwrap();
        let id = q.pop_front().unwrap();
        if q.is_empty() {
            self.buckets.remove(&p);
        }
        self.len -= 1;
        (p, id)
    }
    fn pop_min(&mut self) -> Option<(u32, u64)> {
        let p = *self.buckets.keys().next()?;
        Some(self.take(p))
    }
    fn pop_max(&mut self) -> Option<(u32, u64)> {
        let p = *self.buckets.keys().next_back()?;
        Some(self.take(p))
    }
    fn remove(&mut self, p: u32, id: u64) {
        let q = self.buckets.get_mut(&p).unwrap();
        let at = q.iter().position(|&x| x == id).unwrap();
        q.remove(at);
        if q.is_empty() {
            self.buckets.remove(&p);
        }
        self.len -= 1;
    }
}

#[derive(Clone, Debug)]
enum Op {
    Push(u32),
    PopMin,
    PopMax,
    /// Remove the queued element with this index among the live ones (mod their number).
    Remove(usize),
}

fn ops(max_prio: u32) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        4 => (0..max_prio).prop_map(Op::Push),
        // Few distinct priorities too, so buckets hold many elements and chunks fill.
        2 => (0..3u32).prop_map(move |p| Op::Push(p * (max_prio / 3))),
        2 => Just(Op::PopMin),
        2 => Just(Op::PopMax),
        1 => any::<usize>().prop_map(Op::Remove),
    ];
    prop::collection::vec(op, 1..400)
}

fn shapes() -> impl Strategy<Value = (u32, u32, usize)> {
    prop_oneof![
        Just((2u32, 3u32)),
        Just((3, 2)),
        Just((4, 3)),
        Just((5, 2)),
        Just((64, 2)),
        Just((7, 1)),
        Just((64, 1))
    ]
    .prop_flat_map(|(w, d)| (Just(w), Just(d), 1usize..64))
}

proptest! {
    #![proptest_config(config(160))]

    #[test]
    fn hffs_matches_reference((w, d, cap) in shapes(), seq in ops(1 << 12)) {
        let mut q: HffsQueue<u64> = HffsQueue::new(w, d, cap);
        let span = q.span() as u32;
        let mut r = Reference::default();
        let mut live: Vec<(Handle, u32, u64)> = Vec::new();
        let mut next_id = 0u64;
        for op in seq {
            match op {
                Op::Push(p) => {
                    let p = p % span;
                    next_id += 1;
                    match q.push(p, next_id) {
                        Ok(h) => {
                            prop_assert!(r.len < cap);
                            r.push(p, next_id);
                            live.push((h, p, next_id));
                        }
                        Err(v) => {
                            prop_assert_eq!(v, next_id);
                            prop_assert_eq!(r.len, cap);
                        }
                    }
                }
                Op::PopMin => {
                    let got = q.pop_min();
                    prop_assert_eq!(got, r.pop_min());
                    if let Some((_, id)) = got { live.retain(|x| x.2 != id); }
                }
                Op::PopMax => {
                    let got = q.pop_max();
                    prop_assert_eq!(got, r.pop_max());
                    if let Some((_, id)) = got { live.retain(|x| x.2 != id); }
                }
                Op::Remove(i) => {
                    if !live.is_empty() {
                        let (h, p, id) = live.swap_remove(i % live.len());
                        prop_assert_eq!(q.get(h), Some((p, &id)));
                        prop_assert_eq!(q.remove(h), (p, id));
                        r.remove(p, id);
                    }
                }
            }
            prop_assert_eq!(q.len(), r.len);
            prop_assert_eq!(q.is_full(), r.len == cap);
            prop_assert_eq!(q.min_priority(), r.buckets.keys().next().copied());
            prop_assert_eq!(q.max_priority(), r.buckets.keys().next_back().copied());
            prop_assert_eq!(q.peek_min().map(|(p, v)| (p, *v)), r.buckets.iter().next().map(|(p, f)| (*p, f[0])));
        }
    }

    #[test]
    fn partitions_match_independent_references(queues in 1u32..20, seq in prop::collection::vec((0u32..20, 0u32..1000, 0u8..3), 1..300)) {
        let (w, d, cap) = (4, 3, 40);
        let mut q: PartitionedQueue<u64> = PartitionedQueue::new(w, d, cap, queues);
        let s = q.span_each();
        let mut refs: Vec<Reference> = (0..queues).map(|_| Reference::default()).collect();
        let mut total = 0;
        for (n, (i, p, kind)) in seq.into_iter().enumerate() {
            let i = i % queues;
            match kind {
                0 => {
                    let ok = q.push(i, p % s, n as u64).is_ok();
                    prop_assert_eq!(ok, total < cap);
                    if ok { refs[i as usize].push(p % s, n as u64); total += 1; }
                }
                1 => {
                    let got = q.pop_min(i);
                    prop_assert_eq!(got, refs[i as usize].pop_min());
                    if got.is_some() { total -= 1; }
                }
                _ => {
                    let got = q.pop_max(i);
                    prop_assert_eq!(got, refs[i as usize].pop_max());
                    if got.is_some() { total -= 1; }
                }
            }
            for j in 0..queues {
                prop_assert_eq!(q.len_of(j), refs[j as usize].len);
                prop_assert_eq!(q.min_priority(j), refs[j as usize].buckets.keys().next().copied());
            }
        }
    }

    #[test]
    fn sliding_window_is_exact_on_hold_model_priorities(steps in prop::collection::vec((0u64..16, any::<bool>()), 1..400)) {
        // Window P = 16 (w = 4, D = 3, two partitions of 32): new priorities stay within one
        // window of the last minimum, so the window must never clamp.
        let mut q: SlidingWindowQueue<u64> = SlidingWindowQueue::new(4, 3, 64);
        prop_assert_eq!(q.window(), 32);
        let mut r = Reference::default();
        let mut now = 0u64;
        for (n, (delta, pop)) in steps.into_iter().enumerate() {
            if pop || q.is_full() {
                let got = q.pop_min();
                let want = r.pop_min().map(|(p, id)| (p as u64, id));
                prop_assert_eq!(got, want);
                if let Some((p, _)) = got { now = p; }
            } else {
                let p = now + delta;
                q.push(p, n as u64).unwrap();
                r.push(p as u32, n as u64);
            }
        }
        prop_assert_eq!(q.clamped(), 0);
    }

    #[test]
    fn baselines_match_the_reference_on_the_min_end(seq in ops(1 << 10)) {
        let cap = 50;
        let mut heap = BinaryHeapQueue::new(cap);
        let mut tree = BTreeQueue::new(cap);
        let mut mm = MinMaxHeap::new(cap);
        let mut r = Reference::default();
        for (n, op) in seq.into_iter().enumerate() {
            if let Op::Push(p) = op {
                let full = r.len == cap;
                prop_assert_eq!(heap.push(p, n).is_err(), full);
                prop_assert_eq!(tree.push(p, n).is_err(), full);
                prop_assert_eq!(mm.push(p, n).is_err(), full);
                if !full { r.push(p, n as u64); }
            } else {
                // FIFO ties on the min end: exactly the same element everywhere.
                let want = r.pop_min();
                prop_assert_eq!(heap.pop_min().map(|(p, v)| (p, v as u64)), want);
                prop_assert_eq!(tree.pop_min().map(|(p, v)| (p, v as u64)), want);
                prop_assert_eq!(mm.pop_min().map(|(p, v)| (p, v as u64)), want);
            }
            prop_assert_eq!(heap.len(), r.len);
        }
    }

    #[test]
    fn double_ended_baselines_order_priorities(seq in ops(1 << 10)) {
        // Priorities only: which of several equal-priority elements the max end returns is
        // each structure's own business.
        let cap = 50;
        let mut tree = BTreeQueue::new(cap);
        let mut mm = MinMaxHeap::new(cap);
        let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
        let mut len = 0;
        for (n, op) in seq.into_iter().enumerate() {
            let want = match op {
                Op::Push(p) => {
                    prop_assert_eq!(tree.push(p, n).is_err(), len == cap);
                    prop_assert_eq!(mm.push(p, n).is_err(), len == cap);
                    if len < cap { *counts.entry(p).or_default() += 1; len += 1; }
                    None
                }
                Op::PopMin | Op::Remove(_) => {
                    let want = counts.keys().next().copied();
                    prop_assert_eq!(tree.pop_min().map(|x| x.0), want);
                    prop_assert_eq!(mm.pop_min().map(|x| x.0), want);
                    want
                }
                Op::PopMax => {
                    let want = counts.keys().next_back().copied();
                    prop_assert_eq!(tree.pop_max().map(|x| x.0), want);
                    prop_assert_eq!(mm.pop_max().map(|x| x.0), want);
                    want
                }
            };
            if let Some(p) = want {
                let c = counts.get_mut(&p).unwrap();
                *c -= 1;
                if *c == 0 { counts.remove(&p); }
                len -= 1;
            }
            prop_assert_eq!(tree.len(), len);
            prop_assert_eq!(mm.len(), len);
        }
    }
}

#[test]
fn handles_stay_valid_while_neighbours_leave() {
    let mut q: HffsQueue<u32> = HffsQueue::new(8, 2, 1000);
    let handles: Vec<Handle> = (0..100).map(|i| q.push(5, i).unwrap()).collect();
    let mut by_value: HashMap<u32, Handle> = (0..100).zip(handles).collect();
    for i in (0..100).step_by(3) {
        assert_eq!(q.remove(by_value.remove(&i).unwrap()), (5, i));
    }
    for (v, h) in &by_value {
        assert_eq!(q.get(*h), Some((5, v)));
    }
    let mut order = Vec::new();
    while let Some((_, v)) = q.pop_min() {
        order.push(v);
    }
    let want: Vec<u32> = (0..100).filter(|i| i % 3 != 0).collect();
    assert_eq!(order, want);
}
