//! `superlinear-nftbench`: the kernel side of `superlinear nft-bench`, which runs the same rules
//! and the same trace through Linux nftables and through our classifiers, checks that both agree
//! rule by rule, and measures both (paper §4: the self-adjusting MRF classifier against the
//! vanilla Linux classifier, which evaluates a chain as a linear list).
//!
//! * [`chain`]: a rule set as one linear nftables chain on a device's netdev ingress hook, one
//!   rule per filter with a counter each, no sets, maps or concatenations, plus a final
//!   rule-less counter for the default policy;
//! * [`frame`]: the trace's frames in one send buffer (valid Ethernet/IPv4/TCP/UDP frames with
//!   their checksums, from `superlinear_classify::trace::encode`);
//! * [`sender`] and [`netns`]: a sender thread that enters a network namespace and sends the
//!   frames with AF_PACKET `sendmmsg` batches, once (paced, for the exact check) or looping
//!   over the trace for a fixed duration (throughput);
//! * [`counts`]: our classifiers' per-rule match counts, the numbers the kernel's counters must
//!   equal.
//!
//! Namespace and rule-set lifecycle, the counters' read-back and the report live in Python
//! (`superlinear.netns`, `superlinear.nft_bench`).

pub mod chain;
pub mod config;
pub mod counts;
pub mod frame;
pub mod netns;
pub mod sender;
pub mod synthetic;

pub use superlinear_core::Error;
