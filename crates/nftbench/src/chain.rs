//! A rule set as the benchmark's nftables table: one linear base chain with exactly the rules
//! of the set, in the same order, one nftables rule per filter with a `counter` each, on the
//! netdev ingress hook of one device. No sets, maps or concatenations: this is the vanilla
//! classifier the paper compares against (nftables evaluates the chain rule after rule).
//!
//! ```text
//! table netdev superlinear_nft {
//!     chain guard {      # priority -100: foreign frames (IPv6 neighbour discovery, ...) never
//!         ...            # reach the classifier, so its counters hold replayed packets only
//!         meta protocol != ip counter drop
//!     }
//!     chain classify {   # priority 0: the rule set
//!         type filter hook ingress device "DEV" priority 0; policy drop;
//!         ip saddr 10.0.0.0/8 tcp dport 80 counter accept
//!         ...
//!         counter        # rule-less: counts the packets the default policy decides
//!     }
//!     chain sink {       # priority 100: drops what the classifier accepted, so accepted and
//!         ...            # dropped packets cost the same after classification
//!     }
//! }
//! ```
//!
//! Why netdev ingress: it evaluates every frame the device receives, whatever its addresses
//! (no routing decision, no local-delivery check), so every replayed packet is classified.
//! The rule statements are the classify crate's nft writer's ([`rule_statement`]); with the
//! netdev family nft adds the `meta protocol ip` and `meta l4proto` dependencies of `ip` and
//! `tcp`/`udp` matches itself, and rules with ports but any protocol use `th sport|dport`, which
//! reads the first four bytes of whatever transport header the packet has (the frames carry the
//! trace's ports there for every protocol, see [`crate::frame`]).
//!
//! Verdicts: `reject` and `queue` run as `drop` here (all four are terminal, so which rule
//! matches first, and so every counter, is unchanged; `queue` would need a user-space reader).

use superlinear_classify::rules::nft_writer::rule_statement;
use superlinear_classify::rules::{Action, RuleSet};
use superlinear_core::Error;

/// Name of the chain holding the rules.
pub const CLASSIFY_CHAIN: &str = "classify";
/// Name of the chain that drops non-IPv4 frames before classification.
pub const GUARD_CHAIN: &str = "guard";
/// Name of the chain that drops what the classifier accepted.
pub const SINK_CHAIN: &str = "sink";
/// Longest Linux interface name.
const IFNAMSIZ: usize = 15;

/// Where the table goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainOptions {
    /// Table name (family `netdev`).
    pub table: String,
    /// The receiving device whose ingress hook runs the chains.
    pub device: String,
    /// Leave the rules out (the empty-chain baseline): only the default counter remains.
    pub empty: bool,
}

impl Default for ChainOptions {
    fn default() -> Self {
        Self { table: "superlinear_nft".into(), device: "slnft0".into(), empty: false }
    }
}

/// The verdict a rule gets in the kernel chain: `reject` and `queue` become `drop`.
pub fn kernel_action(a: Action) -> Action {
    match a {
        Action::Accept => Action::Accept,
        Action::Drop | Action::Reject | Action::Queue => Action::Drop,
    }
}

fn check_name(what: &str, name: &str, max: usize) -> Result<(), Error> {
    let ok = !name.is_empty()
        && name.len() <= max
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.');
    if ok {
        Ok(())
    } else {
        Err(Error::config(format!("{what} '{name}' must be 1 to {max} characters of letters, digits, '_', '-' or '.'")))
    }
}

/// The whole table as `nft -f` input.
pub fn bench_table(set: &RuleSet, opts: &ChainOptions) -> Result<String, Error> {
    check_name("table name", &opts.table, 64)?;
    check_name("device name", &opts.device, IFNAMSIZ)?;
    let hook = |prio: i32, policy: Action| {
        format!("\t\ttype filter hook ingress device \"{}\" priority {prio}; policy {policy};\n", opts.device)
    };
    let mut out = format!("table netdev {} {{\n", opts.table);
    out.push_str(&format!("\tchain {GUARD_CHAIN} {{\n"));
    out.push_str(&hook(-100, Action::Accept));
    out.push_str("\t\tmeta protocol != ip counter drop\n\t}\n");
    out.push_str(&format!("\tchain {CLASSIFY_CHAIN} {{\n"));
    out.push_str(&hook(0, kernel_action(set.default_action)));
    if !opts.empty {
        for (i, r) in set.rules.iter().enumerate() {
            let mut r = *r;
            r.action = kernel_action(r.action);
            let stmt = rule_statement(&r, true).map_err(|m| Error::config(format!("rule {}: {m}", i + 1)))?;
            out.push_str("\t\t");
            out.push_str(&stmt);
            out.push('\n');
        }
    }
    out.push_str("\t\tcounter\n\t}\n");
    out.push_str(&format!("\tchain {SINK_CHAIN} {{\n"));
    out.push_str(&hook(100, Action::Drop));
    out.push_str("\t\tcounter\n\t}\n}\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use superlinear_classify::rules::{nft, AddrRange, PortRange, ProtoMatch, ReadOptions, Rule};

    fn sample() -> RuleSet {
        let mut a = Rule::any(Action::Accept);
        a.src = AddrRange::prefix(0x0a00_0000, 8);
        a.dport = PortRange::single(80);
        a.proto = ProtoMatch::exact(6);
        let mut b = Rule::any(Action::Reject);
        b.sport = PortRange { lo: 1024, hi: 65535 };
        let mut c = Rule::any(Action::Drop);
        c.proto = ProtoMatch::exact(47);
        c.dport = PortRange::single(5);
        RuleSet::new(vec![a, b, c], Action::Queue)
    }

    #[test]
    fn one_rule_per_filter_with_counters_and_a_default_counter() {
        let text = bench_table(&sample(), &ChainOptions::default()).unwrap();
        let classify: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.contains("chain classify"))
            .skip(1)
            .take_while(|l| l.trim() != "}")
            .map(str::trim)
            .collect();
        assert_eq!(
            classify,
            [
                "type filter hook ingress device \"slnft0\" priority 0; policy drop;",
                "ip saddr 10.0.0.0/8 tcp dport 80 counter accept",
                "th sport 1024-65535 counter drop",
                "ip protocol 47 th dport 5 counter drop",
                "counter",
            ]
        );
        assert!(classify.iter().all(|l| !l.contains('{') && !l.contains('@')), "no sets or maps");
        // The classify crate's nft reader reads the chains back (guard and sink add rules of
        // their own, so compare the classify chain's rules only).
        let chain_only: String = classify[1..4].join("\n");
        let back = nft::parse(&chain_only, "t", &ReadOptions::default()).unwrap();
        let want: Vec<Rule> = sample().rules.iter().map(|r| Rule { action: kernel_action(r.action), ..*r }).collect();
        assert_eq!(back.rules, want);
    }

    #[test]
    fn empty_chain_keeps_the_default_counter_and_bad_names_are_refused() {
        let opts = ChainOptions { empty: true, ..Default::default() };
        let text = bench_table(&sample(), &opts).unwrap();
        assert!(!text.contains("dport"));
        assert_eq!(text.matches("counter").count(), 3, "{text}");
        let bad = ChainOptions { device: "a\"b".into(), ..Default::default() };
        assert!(bench_table(&sample(), &bad).unwrap_err().to_string().starts_with("device name"));
        let long = ChainOptions { device: "x".repeat(16), ..Default::default() };
        assert!(bench_table(&sample(), &long).is_err());
        let mut masked = sample();
        masked.rules[1].proto = ProtoMatch { value: 4, mask: 0x0f };
        let e = bench_table(&masked, &ChainOptions::default()).unwrap_err().to_string();
        assert!(e.starts_with("rule 2: protocol mask"), "{e}");
    }
}
