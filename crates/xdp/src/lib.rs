//! The self-adjusting classifier in the Linux XDP datapath, on a stock kernel (paper §4, without
//! the authors' nftables patch): an XDP dispatcher on the ingress device hashes the chosen header
//! fields (RSS, Toeplitz) and redirects each frame through a cpumap to the CPU of its logical
//! worker, where a second XDP program classifies it with a static or an MRF rule list kept per
//! logical worker, counting hits per rule and work per worker and CPU.
//!
//! * `bpf/classifier.bpf.c`: the two programs and their maps (compiled by build.rs with clang);
//! * [`layout`]: the map values as Rust sees them;
//! * [`tables`]: a rule set as the kernel's tables (rules, same-action lists, hash tables);
//! * [`datapath`]: load, pin, update, read counters, unload;
//! * [`replay`]: the throughput study's in-kernel trace replayer (`bpf/replay.bpf.c`).

pub mod config;
pub mod datapath;
pub mod layout;
pub mod replay;
pub mod tables;

pub use datapath::{build_error, check_order, load, unload, KernelAlgo, KernelCounters, LoadSpec, Pinned};
