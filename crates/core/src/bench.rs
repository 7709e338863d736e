//! Micro-benchmarks behind `superlinear bench`: single-thread lookups per second of each
//! structure, and the dispatcher's cost per request. Timings, so never used in tests.

use crate::cputime::thread_cpu_ns;
use crate::dispatch;
use crate::error::Error;
use crate::runner::{route_into_batches, Batches};
use crate::worker::WorkerParams;
use crate::workers::AlgoSpec;
use crate::workload::WorkloadSpec;

/// Requests timed between two reads of the Ctrl-C flag (milliseconds of work, and one relaxed
/// load per slice: nothing next to the work timed).
const SLICE: usize = 4096;

/// Lookups per second of one worker over uniform keys on m items (thread CPU time).
pub fn structure_lookups_per_second(
    algo: &AlgoSpec,
    m: usize,
    lookups: usize,
    compare_cycles: u64,
    miss_cycles: u64,
    seed: u64,
) -> Result<f64, Error> {
    let w = WorkloadSpec::Uniform { m }.generate(lookups.max(1), seed)?;
    let capacity = algo.capacity.or(Some((m / 20).max(1)));
    let mut worker = algo.build(&w.items, &WorkerParams { capacity, compare_cycles, miss_cycles });
    let t0 = thread_cpu_ns();
    // In slices, so that Ctrl-C stops it: the structure keeps its state from one to the next.
    for slice in w.requests.chunks(SLICE) {
        if crate::cancel::requested() {
            break;
        }
        std::hint::black_box(worker.serve_batch(slice));
    }
    let ns = (thread_cpu_ns() - t0).max(1);
    crate::cancel::check()?;
    Ok(w.requests.len() as f64 * 1e9 / ns as f64)
}

/// Nanoseconds of dispatcher CPU per request: routing plus appending to per-worker batches
/// ([`route_into_batches`]), the serial work of every runner minus the ring push of full batches.
pub fn dispatcher_ns_per_request(name: &str, k: usize, requests: usize, seed: u64) -> Result<f64, Error> {
    let entry = dispatch::lookup(name)?;
    let k = k.max(1);
    let keys = WorkloadSpec::Uniform { m: 1 << 20 }.generate(requests.max(1), seed)?.requests;
    let mut d = (entry.build)(k, seed);
    let mut dispatched = vec![0u64; k];
    let mut batches = Batches::new(k);
    let t0 = thread_cpu_ns();
    route_into_batches(d.as_mut(), &keys, &mut dispatched, &mut batches, |_, b| {
        std::hint::black_box(b);
    });
    let ns = thread_cpu_ns() - t0;
    crate::cancel::check()?; // routing stopped part way
    batches.drain(|_, b| {
        std::hint::black_box(b);
    });
    Ok(ns as f64 / keys.len() as f64)
}
