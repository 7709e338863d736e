//! The wire form of `superlinear xdp load`'s options, as Python spells them, with one default
//! each and unknown fields rejected.

use serde::{Deserialize, Serialize};

/// Where and how to load the XDP datapath.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct XdpLoadSettings {
    /// Interface the dispatcher attaches to.
    pub iface: String,
    /// Named network namespace of the interface (`ip netns`); empty: this process's.
    pub netns: String,
    /// Worker classifier (`static`, `mrf`).
    pub algo: String,
    /// Dispatcher: `rss[:FIELDS]` or `rule` (the rule-aware dispatcher's field choice for k).
    pub dispatch: String,
    /// Logical workers (0: one per worker CPU).
    pub k: usize,
    /// Worker CPUs (empty: every online CPU).
    pub cpus: Vec<u32>,
    /// Frames each worker CPU's cpumap queue holds.
    pub queue_size: u32,
    /// `native` (driver) or `generic` (skb) XDP.
    pub mode: String,
    /// bpffs directory the datapath is pinned under.
    pub pin_dir: String,
}

impl Default for XdpLoadSettings {
    fn default() -> Self {
        Self {
            iface: String::new(),
            netns: String::new(),
            algo: "mrf".into(),
            dispatch: "rss".into(),
            k: 0,
            cpus: Vec::new(),
            queue_size: 2048,
            mode: "native".into(),
            pin_dir: String::new(),
        }
    }
}
