//! Writes a rule set as an nftables ruleset file (`nft -f FILE` loads it; the kernel comparison
//! uses it). The output is the syntax [`super::nft`] reads, so it round-trips.
//!
//! A rule with an exact TCP or UDP protocol uses `tcp|udp sport|dport`; another exact protocol
//! uses `ip protocol P` and, for ports, `th sport|dport`; a rule with ports but any protocol
//! uses `th` alone. Partial protocol masks have no nft spelling here and are refused.

use super::{AddrRange, PortRange, RuleSet};
use superlinear_core::Error;

/// Names of the generated table and chain, and the hook.
#[derive(Clone, Debug)]
pub struct NftOptions {
    /// Table (family `ip`).
    pub table: String,
    /// Base chain.
    pub chain: String,
    /// Netfilter hook (`prerouting`, `input`, `forward`, ...).
    pub hook: String,
    /// Add a `counter` to every rule.
    pub counters: bool,
}

impl Default for NftOptions {
    fn default() -> Self {
        Self { table: "superlinear".into(), chain: "classify".into(), hook: "prerouting".into(), counters: false }
    }
}

fn addr(out: &mut String, key: &str, r: &AddrRange) {
    if *r != AddrRange::ANY {
        out.push_str(&format!("ip {key} {r} "));
    }
}

fn port(out: &mut String, l4: &str, key: &str, r: &PortRange) {
    if !r.is_any() {
        out.push_str(&format!("{l4} {key} {r} "));
    }
}

/// One rule's nft statement (without indentation).
pub fn rule_statement(r: &super::Rule, counters: bool) -> Result<String, String> {
    let mut s = String::new();
    addr(&mut s, "saddr", &r.src);
    addr(&mut s, "daddr", &r.dst);
    let l4 = match r.proto.mask {
        0 => "th",
        0xff => match r.proto.value {
            6 => "tcp",
            17 => "udp",
            p => {
                s.push_str(&format!("ip protocol {} ", super::proto_name(p).map_or(p.to_string(), str::to_string)));
                "th"
            }
        },
        m => return Err(format!("protocol mask 0x{m:02x} has no nftables form here (only 0x00 or 0xff)")),
    };
    if (l4 == "tcp" || l4 == "udp") && r.sport.is_any() && r.dport.is_any() {
        s.push_str(&format!("ip protocol {l4} "));
    }
    port(&mut s, l4, "sport", &r.sport);
    port(&mut s, l4, "dport", &r.dport);
    if counters {
        s.push_str("counter ");
    }
    s.push_str(r.action.name());
    Ok(s)
}

/// The whole ruleset: one table, one base chain with the default policy, the rules in order.
pub fn to_nft(set: &RuleSet, opts: &NftOptions) -> Result<String, Error> {
    let mut out = format!(
        "table ip {} {{\n\tchain {} {{\n\t\ttype filter hook {} priority filter; policy {};\n",
        opts.table, opts.chain, opts.hook, set.default_action
    );
    for (i, r) in set.rules.iter().enumerate() {
        let stmt = rule_statement(r, opts.counters).map_err(|m| Error::config(format!("rule {}: {m}", i + 1)))?;
        out.push_str("\t\t");
        out.push_str(&stmt);
        out.push('\n');
    }
    out.push_str("\t}\n}\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{nft, Action, ProtoMatch, ReadOptions, Rule};

    #[test]
    fn round_trips_through_the_reader() {
        let mut rules = vec![Rule::any(Action::Drop)];
        let mut r = Rule::any(Action::Accept);
        r.src = AddrRange::prefix(0x0a00_0000, 8);
        r.dst = AddrRange { lo: 5, hi: 9 };
        r.dport = PortRange::single(53);
        r.proto = ProtoMatch::exact(17);
        rules.push(r);
        r.proto = ProtoMatch::exact(6);
        r.dport = PortRange::ANY;
        rules.push(r);
        r.proto = ProtoMatch::exact(1);
        r.sport = PortRange { lo: 1, hi: 2 };
        rules.push(r);
        r.proto = ProtoMatch::ANY;
        r.action = Action::Reject;
        rules.push(r);
        let set = RuleSet::new(rules, Action::Drop);
        let text = to_nft(&set, &NftOptions { counters: true, ..Default::default() }).unwrap();
        let back = nft::parse(&text, "w", &ReadOptions::default()).unwrap();
        // The written chain states its policy, so the reader takes it as the file's own.
        assert_eq!(back, RuleSet { default_from_file: true, ..set.clone() }, "{text}");
        let mut bad = set.clone();
        bad.rules[0].proto = ProtoMatch { value: 4, mask: 0x0f };
        assert!(to_nft(&bad, &NftOptions::default()).unwrap_err().to_string().starts_with("rule 1:"));
    }
}
