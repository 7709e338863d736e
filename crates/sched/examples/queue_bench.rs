//! Quick command-line run of the queue benchmark (`cargo run --release -p superlinear-sched
//! --example queue_bench -- N PAIRS [WIDTH LEVELS]`); the CLI's `attack bench-queue` is the
//! supported way, with result files and plots.

use superlinear_sched::bench::{bench_queue, PATTERNS, QUEUES};

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("numbers")).collect();
    let n = args.first().copied().unwrap_or(1_000_000);
    let pairs = args.get(1).copied().unwrap_or(5_000_000);
    let width = args.get(2).copied().unwrap_or(64) as u32;
    let levels = args.get(3).copied().unwrap_or(3) as u32;
    println!("n = {n}, pairs = {pairs}, HFFS {width}^{levels}");
    for (pattern, _) in PATTERNS {
        for queue in QUEUES {
            if let Some(b) = bench_queue(queue, pattern, n, pairs, width, levels, 1).expect("valid") {
                println!(
                    "{pattern:>11} {queue:>12} {:8.2} M pairs/s  (checksum {})",
                    b.pairs_per_second() / 1e6,
                    b.checksum
                );
            }
        }
    }
}
