//! The subset of nftables syntax that `nft list ruleset` prints for 5-tuple rules:
//!
//! ```text
//! table ip filter {
//!     chain input {
//!         type filter hook input priority filter; policy drop;
//!         ip saddr 10.10.10.0/24 ip daddr 23.0.0.45 tcp dport 443 counter packets 0 bytes 0 drop
//!         ip saddr 192.168.0.0/16 meta l4proto udp th sport 1024-65535 accept
//!     }
//! }
//! ```
//!
//! Understood: `ip saddr|daddr ADDR[/LEN|-ADDR]`, `ip protocol P`, `meta l4proto P`,
//! `tcp|udp|th sport|dport PORT[-PORT]`, `counter [packets N bytes N]`, `comment "..."`, the
//! verdicts `accept`, `drop`, `reject`, `queue`, the chain's `policy` (the default action) and
//! `# handle N` annotations. Everything else (sets, negation, other matches, jumps) is reported
//! as unsupported with its line, never silently dropped. Rules of every chain are read in file
//! order into one list.

use super::{parse_addr_range, parse_port_range, parse_proto, Action, ProtoMatch, ReadOptions, Rule, RuleSet};
use superlinear_core::Error;

/// Removes `comment "..."` strings (they may hold spaces) and a trailing `# handle N`.
fn strip_annotations(line: &str) -> Result<String, String> {
    let mut out = String::with_capacity(line.len());
    let mut in_quote = false;
    for c in line.chars() {
        match c {
            '"' => in_quote = !in_quote,
            '#' if !in_quote => break,
            _ if !in_quote => out.push(c),
            _ => {}
        }
    }
    if in_quote {
        return Err("unterminated quoted string".into());
    }
    Ok(out)
}

fn set_proto(rule: &mut Rule, p: u8, seen: &mut bool) -> Result<(), String> {
    if *seen && rule.proto != ProtoMatch::exact(p) {
        return Err(format!("conflicting protocols {} and {}", rule.proto, ProtoMatch::exact(p)));
    }
    rule.proto = ProtoMatch::exact(p);
    *seen = true;
    Ok(())
}

fn parse_rule(t: &str) -> Result<Rule, String> {
    let words: Vec<&str> = t.split_whitespace().collect();
    let mut rule = Rule::any(Action::Accept);
    let mut verdict = None;
    let mut proto_seen = false;
    let mut i = 0;
    let value = |i: usize, what: &str| -> Result<&str, String> {
        let v = *words.get(i).ok_or_else(|| format!("'{what}' needs a value"))?;
        if v == "!=" {
            return Err(format!("negated match '{what} !=' is not supported"));
        }
        if v.starts_with('{') || v.starts_with('@') {
            return Err(format!("sets ('{what} {v}') are not supported"));
        }
        Ok(v)
    };
    while i < words.len() {
        if verdict.is_some() {
            return Err(format!("unexpected '{}' after the verdict", words[i]));
        }
        match (words[i], words.get(i + 1).copied()) {
            ("ip", Some("saddr")) => {
                rule.src = parse_addr_range(value(i + 2, "ip saddr")?)?;
                i += 3;
            }
            ("ip", Some("daddr")) => {
                rule.dst = parse_addr_range(value(i + 2, "ip daddr")?)?;
                i += 3;
            }
            ("ip", Some("protocol")) | ("meta", Some("l4proto")) => {
                let v = value(i + 2, words[i])?;
                let p = parse_proto(v).ok_or_else(|| format!("unknown protocol '{v}'"))?;
                set_proto(&mut rule, p, &mut proto_seen)?;
                i += 3;
            }
            (l4 @ ("tcp" | "udp" | "th"), Some(dir @ ("sport" | "dport"))) => {
                let what = format!("{l4} {dir}");
                let ports = parse_port_range(value(i + 2, &what)?)?;
                match l4 {
                    "tcp" => set_proto(&mut rule, 6, &mut proto_seen)?,
                    "udp" => set_proto(&mut rule, 17, &mut proto_seen)?,
                    _ => {}
                }
                if dir == "sport" {
                    rule.sport = ports;
                } else {
                    rule.dport = ports;
                }
                i += 3;
            }
            ("comment", _) => i += 1,
            ("counter", _) => {
                i += 1;
                while let (Some(&k), Some(n)) = (words.get(i), words.get(i + 1)) {
                    if (k == "packets" || k == "bytes") && n.parse::<u64>().is_ok() {
                        i += 2;
                    } else {
                        break;
                    }
                }
            }
            (w, _) => match Action::parse(w) {
                Some(a) => {
                    verdict = Some(a);
                    i += 1;
                }
                None => return Err(format!("unsupported expression '{w}' (supported: ip saddr/daddr/protocol, meta l4proto, tcp/udp/th sport/dport, counter, accept/drop/reject/queue)")),
            },
        }
    }
    rule.action = verdict.ok_or("rule has no verdict (accept, drop, reject, queue)")?;
    Ok(rule)
}

/// Parses `nft list ruleset` output (or bare rule lines).
pub fn parse(text: &str, source: &str, opts: &ReadOptions) -> Result<RuleSet, Error> {
    let mut rules = Vec::new();
    let mut default_action = opts.default_action;
    let mut depth = 0usize;
    for (i, raw) in text.lines().enumerate() {
        let err = |m: String| Error::input(source, Some(i + 1), m);
        let line = strip_annotations(raw).map_err(err)?;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let first = t.split_whitespace().next().unwrap_or("");
        match first {
            "table" | "chain" => {
                if !t.ends_with('{') {
                    return Err(err(format!("expected '{{' at the end of the '{first}' line")));
                }
                depth += 1;
            }
            "}" => {
                depth = depth.checked_sub(1).ok_or_else(|| err("unbalanced '}'".into()))?;
            }
            "type" => {
                for stmt in t.split(';') {
                    let s = stmt.trim();
                    if let Some(p) = s.strip_prefix("policy") {
                        let p = p.trim();
                        default_action = Action::parse(p).ok_or_else(|| err(format!("unknown policy '{p}'")))?;
                    }
                }
            }
            "flush" | "set" | "map" | "elements" | "flags" => {
                return Err(err(format!("'{first}' is not supported (only tables, chains and rules)")));
            }
            _ => rules.push(parse_rule(t).map_err(err)?),
        }
    }
    if depth != 0 {
        return Err(Error::input(source, Some(text.lines().count().max(1)), "missing '}' at the end of the file"));
    }
    Ok(RuleSet::new(rules, default_action))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{AddrRange, PortRange, RuleFormat};

    const LISTED: &str =
        "table ip filter {\n\tchain input {\n\t\ttype filter hook input priority filter; policy drop;\n\
        \t\tip saddr 192.168.178.33 ip daddr 23.0.0.45 udp dport 53 accept # handle 4\n\
        \t\tip saddr 10.10.10.0/24 ip daddr 23.0.0.45 tcp dport 443 counter packets 12 bytes 960 drop\n\
        \t\tip saddr 10.0.0.1-10.0.0.9 meta l4proto udp th sport 1024-65535 comment \"a b\" accept\n\
        \t\tip protocol icmp reject\n\t}\n}\n";

    #[test]
    fn reads_listed_ruleset() {
        assert_eq!(RuleFormat::detect(LISTED), RuleFormat::Nft);
        let set = parse(LISTED, "r.nft", &ReadOptions::default()).unwrap();
        assert_eq!(set.default_action, Action::Drop);
        assert_eq!(set.len(), 4);
        assert_eq!(set.rules[0].proto, ProtoMatch::exact(17));
        assert_eq!(set.rules[1].src, AddrRange::prefix(0x0a0a_0a00, 24));
        assert_eq!(set.rules[1].action, Action::Drop);
        assert_eq!(set.rules[2].sport, PortRange { lo: 1024, hi: 65535 });
        assert_eq!(set.rules[3].proto, ProtoMatch::exact(1));
    }

    #[test]
    fn unsupported_syntax_names_the_line() {
        for (text, want) in [
            ("ip saddr != 1.2.3.4 accept", "f:1: negated match"),
            ("ip saddr { 1.2.3.4, 1.2.3.5 } accept", "f:1: sets"),
            ("iifname eth0 accept", "f:1: unsupported expression 'iifname'"),
            ("tcp dport 80 udp sport 5 accept", "f:1: conflicting protocols"),
            ("ip saddr 1.2.3.4", "f:1: rule has no verdict"),
            ("table ip t {\n chain c {\n accept\n", "f:3: missing '}'"),
            ("accept drop", "f:1: unexpected 'drop' after the verdict"),
        ] {
            let e = parse(text, "f", &ReadOptions::default()).unwrap_err().to_string();
            assert!(e.starts_with(want), "{e} / {want}");
        }
    }
}
