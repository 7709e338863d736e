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
//! `tcp|udp|th sport|dport PORT[-PORT]` (each field once), `counter [packets N bytes N]`, the
//! verdicts `accept`, `drop`, `reject`, `queue`, a `comment "..."` after the verdict (where nft
//! prints it), the chain's `policy` (the default action) and `# handle N` annotations. Everything
//! else (sets, negation, other matches, jumps) is reported as unsupported with its line, never
//! silently dropped. The rules are those of one base chain (or bare rule lines): a second base
//! chain, or a regular chain with rules, is refused rather than merged into one list.

use super::{parse_addr_range, parse_port_range, parse_proto, Action, ProtoMatch, ReadOptions, Rule, RuleSet};
use superlinear_core::Error;

/// Removes a trailing `# handle N` and turns each quoted string (a comment may hold spaces) into
/// the one word `""`, so that `comment "a b"` is a keyword and its value.
fn strip_annotations(line: &str) -> Result<String, String> {
    let mut out = String::with_capacity(line.len());
    let mut in_quote = false;
    for c in line.chars() {
        match c {
            '"' if in_quote => {
                in_quote = false;
                out.push_str("\"\" ");
            }
            '"' => {
                in_quote = true;
                out.push(' ');
            }
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

/// The fields a match sets, in the order of `parse_rule`'s `field_seen` slots.
const FIELDS: [&str; 4] = ["src", "dst", "sport", "dport"];

fn parse_rule(t: &str) -> Result<Rule, String> {
    let words: Vec<&str> = t.split_whitespace().collect();
    let mut rule = Rule::any(Action::Accept);
    let mut verdict = None;
    let mut proto_seen = false;
    let mut commented = false;
    // nft ANDs repeated matches of a field; a rule here holds one range per field, so a repeat
    // is refused rather than keeping the last.
    let mut field_seen = [false; FIELDS.len()];
    let mut once = |slot: usize, what: &str, v: &str| {
        if std::mem::replace(&mut field_seen[slot], true) {
            return Err(format!("field '{}' given twice ('{what} {v}'); give one match per field", FIELDS[slot]));
        }
        Ok(())
    };
    let mut i = 0;
    let value = |i: usize, what: &str| -> Result<&str, String> {
        let v = *words.get(i).ok_or_else(|| format!("'{what}' needs a value"))?;
        if v == "!=" {
            return Err(format!("negated match '{what} !=' is not supported"));
        }
        if v.starts_with('{') || v.starts_with('@') {
            // An anonymous set's first word is only its opening brace.
            let set = if v.starts_with('{') { "{ ... }" } else { v };
            return Err(format!("sets ('{what} {set}') are not supported; write one rule per value"));
        }
        Ok(v)
    };
    while i < words.len() {
        // nft takes a rule's comment last, after the verdict, and nothing else there.
        if verdict.is_some() && words[i] != "comment" {
            return Err(format!("unexpected '{}' after the verdict", words[i]));
        }
        match (words[i], words.get(i + 1).copied()) {
            ("ip", Some(dir @ ("saddr" | "daddr"))) => {
                let what = format!("ip {dir}");
                let v = value(i + 2, &what)?;
                let range = parse_addr_range(v)?;
                let (slot, field) = if dir == "saddr" { (0, &mut rule.src) } else { (1, &mut rule.dst) };
                once(slot, &what, v)?;
                *field = range;
                i += 3;
            }
            ("ip", Some("protocol")) | ("meta", Some("l4proto")) => {
                let v = value(i + 2, &format!("{} {}", words[i], words[i + 1]))?;
                let p = parse_proto(v).ok_or_else(|| format!("unknown protocol '{v}'"))?;
                set_proto(&mut rule, p, &mut proto_seen)?;
                i += 3;
            }
            (l4 @ ("tcp" | "udp" | "th"), Some(dir @ ("sport" | "dport"))) => {
                let what = format!("{l4} {dir}");
                let v = value(i + 2, &what)?;
                let ports = parse_port_range(v)?;
                match l4 {
                    "tcp" => set_proto(&mut rule, 6, &mut proto_seen)?,
                    "udp" => set_proto(&mut rule, 17, &mut proto_seen)?,
                    _ => {}
                }
                let (slot, field) = if dir == "sport" { (2, &mut rule.sport) } else { (3, &mut rule.dport) };
                once(slot, &what, v)?;
                *field = ports;
                i += 3;
            }
            ("comment", next) => {
                if verdict.is_none() {
                    return Err("'comment' before the verdict: nft takes it last ('... accept comment \"text\"')".into());
                }
                if next != Some(QUOTED) {
                    return Err("'comment' needs a quoted string ('comment \"text\"')".into());
                }
                if std::mem::replace(&mut commented, true) {
                    return Err("'comment' given twice".into());
                }
                i += 2;
            }
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
                None => return Err(format!("unsupported expression '{w}' (supported: ip saddr/daddr/protocol, meta l4proto, tcp/udp/th sport/dport, counter, accept/drop/reject/queue, comment)")),
            },
        }
    }
    rule.action = verdict.ok_or("rule has no verdict (accept, drop, reject, queue)")?;
    Ok(rule)
}

/// What [`strip_annotations`] leaves of a quoted string.
const QUOTED: &str = "\"\"";

/// A chain: its name, the line that opens it, whether it is a base chain (it has a
/// `type … hook …` line), its hook and its policy.
#[derive(Clone)]
struct Chain {
    name: String,
    line: usize,
    base: bool,
    hook: String,
    policy: Option<Action>,
}

/// The hooks a packet crosses, in order, on each of its paths through netfilter: received and
/// delivered here, received and forwarded, sent from here.
const PATHS: [&[&str]; 3] = [
    &["ingress", "prerouting", "input"],
    &["ingress", "prerouting", "forward", "postrouting"],
    &["output", "postrouting"],
];

/// Whether some packet crosses both hooks (the same hook included; an unknown one is taken to).
fn share_a_path(a: &str, b: &str) -> bool {
    let known = |h: &str| PATHS.iter().any(|p| p.contains(&h));
    a == b || !known(a) || !known(b) || PATHS.iter().any(|p| p.contains(&a) && p.contains(&b))
}

/// The name of the chain a `chain NAME {` line opens (quotes removed).
fn chain_name(raw: &str) -> String {
    let rest = raw.trim().strip_prefix("chain").unwrap_or("");
    let name = rest.rsplit_once('{').map_or(rest, |(name, _)| name).trim().trim_matches('"');
    if name.is_empty() {
        "?".into()
    } else {
        name.into()
    }
}

/// Parses `nft list ruleset` output (or bare rule lines).
///
/// One rule set is one first-match list with one default, so the rules must all be in one chain,
/// a base chain, whose policy is the default: rules in a second base chain (another hook or
/// table, with its own policy) or in a regular chain (reached only by a jump, which is
/// unsupported) would be merged into a list nftables never runs, and are refused instead. Base
/// chains without rules (a distribution's `forward` and `output` beside `input`) are read and
/// left out.
pub fn parse(text: &str, source: &str, opts: &ReadOptions) -> Result<RuleSet, Error> {
    let mut rules = Vec::new();
    let mut depth = 0usize;
    let mut chain: Option<Chain> = None;
    // The chain holding the rules, and the base chains in order (the first one's policy is the
    // default of a file without rules).
    let mut rule_chain: Option<Chain> = None;
    let mut bases: Vec<Chain> = Vec::new();
    let mut any_chain = false;
    let mut bare_rule_line = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let err = |m: String| Error::input(source, Some(n), m);
        let line = strip_annotations(raw).map_err(err)?;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let mut words = t.split_whitespace();
        let first = words.next().unwrap_or("");
        // A table's or chain's own comment, on a line of its own (nft prints it there).
        if first == "comment" && depth > 0 && words.next() == Some(QUOTED) && words.next().is_none() {
            continue;
        }
        match first {
            "table" | "chain" => {
                if !t.ends_with('{') {
                    return Err(err(format!("expected '{{' at the end of the '{first}' line")));
                }
                if let Some(open) = &chain {
                    return Err(err(format!("'{first}' inside chain '{}' (line {})", open.name, open.line)));
                }
                if first == "table" {
                    // `table [FAMILY] NAME {`: the rules classify IPv4 packets.
                    let named: Vec<&str> = t.trim_end_matches('{').split_whitespace().skip(1).collect();
                    if let [family, _] = named[..] {
                        if !matches!(family, "ip" | "inet" | "netdev") {
                            return Err(err(format!(
                                "table family '{family}' does not classify IPv4 packets (use ip, inet or netdev)"
                            )));
                        }
                    }
                }
                if first == "chain" {
                    if let Some(bare) = bare_rule_line {
                        return Err(err(format!(
                            "a chain after rules outside any chain (line {bare}); give one chain, or bare rules only"
                        )));
                    }
                    chain =
                        Some(Chain { name: chain_name(raw), line: n, base: false, hook: String::new(), policy: None });
                    any_chain = true;
                }
                depth += 1;
            }
            "}" => {
                depth = depth.checked_sub(1).ok_or_else(|| err("unbalanced '}'".into()))?;
                if let Some(closed) = chain.take() {
                    if rule_chain.as_ref().is_some_and(|held| held.line == closed.line) {
                        rule_chain = Some(closed.clone()); // with the policy, wherever its line was
                    }
                    if closed.base {
                        bases.push(closed);
                    }
                }
            }
            "type" => {
                let Some(open) = chain.as_mut() else {
                    return Err(err("'type' outside a chain".into()));
                };
                if !t.split(|c: char| c.is_whitespace() || c == ';').any(|w| w == "hook") {
                    return Err(err("a chain 'type' needs a hook ('type filter hook input priority 0;')".into()));
                }
                if open.base {
                    return Err(err(format!("a second 'type' line in chain '{}' (line {})", open.name, open.line)));
                }
                if words.next() != Some("filter") {
                    return Err(err("only 'type filter' chains classify (not nat or route)".into()));
                }
                open.base = true;
                let mut after = t.split(|c: char| c.is_whitespace() || c == ';').filter(|w| !w.is_empty());
                open.hook = after.by_ref().find(|w| *w == "hook").and(after.next()).unwrap_or("").to_string();
                for stmt in t.split(';') {
                    let s = stmt.trim();
                    if let Some(p) = s.strip_prefix("policy") {
                        let p = p.trim();
                        if open.policy.is_some() {
                            return Err(err("the chain's policy is given twice".into()));
                        }
                        open.policy = Some(Action::parse(p).ok_or_else(|| err(format!("unknown policy '{p}'")))?);
                    }
                }
            }
            "flush" | "set" | "map" | "elements" | "flags" => {
                return Err(err(format!("'{first}' is not supported (only tables, chains and rules)")));
            }
            _ => {
                // The rule's own mistakes first: they are what its line shows.
                let rule = parse_rule(t).map_err(err)?;
                match &chain {
                    Some(open) if !open.base => {
                        return Err(Error::input(
                            source,
                            Some(open.line),
                            format!(
                                "chain '{}' is a regular chain (no 'type … hook …' line before its rules), reached \
                                 only by a jump, which is not supported; give one base chain",
                                open.name
                            ),
                        ))
                    }
                    Some(open) => match &rule_chain {
                        Some(held) if held.line != open.line => {
                            return Err(Error::input(
                                source,
                                Some(open.line),
                                format!(
                                    "rules in more than one base chain: '{}' here and '{}' on line {}; a rule set \
                                     is one first-match list, give the rules of one chain",
                                    open.name, held.name, held.line
                                ),
                            ))
                        }
                        Some(_) => {}
                        None => rule_chain = Some(open.clone()),
                    },
                    None if depth > 0 => return Err(err("a rule outside a chain".into())),
                    None if any_chain => {
                        return Err(err(
                            "a rule outside any chain, beside a chain; give one chain, or bare rules only".into()
                        ))
                    }
                    None => {
                        bare_rule_line.get_or_insert(n);
                    }
                }
                rules.push(rule);
            }
        }
    }
    if depth != 0 {
        return Err(Error::input(source, Some(text.lines().count().max(1)), "missing '}' at the end of the file"));
    }
    // A base chain without rules is left out only where it passes every packet, or sees none of
    // the rules' chain's packets: one that drops them on the same path (`input` rules after a
    // `prerouting` chain of policy drop) would make the list's verdicts nftables never gives.
    if let Some(held) = &rule_chain {
        if let Some(c) = bases.iter().find(|c| {
            c.line != held.line && !matches!(c.policy, None | Some(Action::Accept)) && share_a_path(&c.hook, &held.hook)
        }) {
            return Err(Error::input(
                source,
                Some(c.line),
                format!(
                    "chain '{}' (hook {}) has no rules and policy {}: it stops every packet the rules of chain '{}' \
                     (hook {}, line {}) pass on that path; a rule set is one first-match list, give one base chain",
                    c.name,
                    c.hook,
                    c.policy.map_or("accept", |a| a.name()),
                    held.name,
                    held.hook,
                    held.line
                ),
            ));
        }
    }
    let policy = rule_chain.or(bases.into_iter().next()).and_then(|c| c.policy);
    Ok(RuleSet::read(rules, policy, opts.default_action))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{AddrRange, PortRange, RuleFormat};

    const LISTED: &str =
        "table ip filter {\n\tchain input {\n\t\ttype filter hook input priority filter; policy drop;\n\
        \t\tip saddr 192.168.178.33 ip daddr 23.0.0.45 udp dport 53 accept # handle 4\n\
        \t\tip saddr 10.10.10.0/24 ip daddr 23.0.0.45 tcp dport 443 counter packets 12 bytes 960 drop\n\
        \t\tip saddr 10.0.0.1-10.0.0.9 meta l4proto udp th sport 1024-65535 accept comment \"a b\"\n\
        \t\tip protocol icmp reject\n\t}\n}\n";

    #[test]
    fn chains_that_are_not_one_ipv4_filter_are_refused() {
        let opts = ReadOptions::default();
        for (text, said) in [
            ("table ip t {\n chain c {\n  type filter hook input priority 0; policy drop; policy accept;\n }\n}\n", "policy is given twice"),
            ("table ip t {\n chain c {\n  type filter hook input priority 0;\n  type filter hook input priority 0;\n }\n}\n", "second 'type' line"),
            ("table ip t {\n chain c {\n  type nat hook prerouting priority 0;\n }\n}\n", "only 'type filter'"),
            ("table ip6 t {\n chain c {\n  type filter hook input priority 0;\n }\n}\n", "family 'ip6'"),
        ] {
            let e = parse(text, "x.nft", &opts).unwrap_err().to_string();
            assert!(e.contains(said), "{e}");
        }
    }

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
            ("ip saddr { 1.2.3.4, 1.2.3.5 } accept", "f:1: sets ('ip saddr { ... }') are not supported"),
            ("meta l4proto { tcp, udp } th dport 53 accept", "f:1: sets ('meta l4proto { ... }')"),
            ("ip protocol @protos accept", "f:1: sets ('ip protocol @protos')"),
            ("iifname eth0 accept", "f:1: unsupported expression 'iifname'"),
            ("tcp dport 80 udp sport 5 accept", "f:1: conflicting protocols"),
            ("ip saddr 1.2.3.4", "f:1: rule has no verdict"),
            ("table ip t {\n chain c {\n type filter hook input priority 0;\n accept\n", "f:4: missing '}'"),
            ("accept drop", "f:1: unexpected 'drop' after the verdict"),
            ("ip saddr 10.0.0.0/8 ip saddr 11.0.0.0/8 accept", "f:1: field 'src' given twice ('ip saddr 11.0.0.0/8')"),
            ("ip daddr 1.2.3.4 ip daddr 1.2.3.4 accept", "f:1: field 'dst' given twice"),
            ("tcp dport 80 tcp dport 443 accept", "f:1: field 'dport' given twice ('tcp dport 443')"),
            ("th sport 1 udp sport 2 accept", "f:1: field 'sport' given twice"),
            ("comment \"web\" accept", "f:1: 'comment' before the verdict: nft takes it last"),
            ("accept comment \"a\" comment \"b\"", "f:1: 'comment' given twice"),
            ("accept comment", "f:1: 'comment' needs a quoted string"),
            ("accept comment \"x\" counter", "f:1: unexpected 'counter' after the verdict"),
        ] {
            let e = parse(text, "f", &ReadOptions::default()).unwrap_err().to_string();
            assert!(e.starts_with(want), "{e} / {want}");
        }
    }

    #[test]
    fn comment_after_the_verdict_is_read() {
        let set =
            parse("tcp dport 80 accept comment \"web # not a handle\" # handle 7\n", "f", &ReadOptions::default())
                .unwrap();
        assert_eq!(set.rules[0].dport, PortRange::single(80));
        assert_eq!(set.rules[0].action, Action::Accept);
    }

    const TWO_CHAINS: &str =
        "table ip filter {\n\tchain input {\n\t\ttype filter hook input priority filter; policy drop;\n\
        \t\ttcp dport 22 accept\n\t}\n\tchain forward {\n\t\ttype filter hook forward priority filter; policy accept;\n\
        \t\tip saddr 10.0.0.0/8 drop\n\t}\n}\n";

    #[test]
    fn rules_of_one_base_chain_only() {
        let e = parse(TWO_CHAINS, "f", &ReadOptions::default()).unwrap_err().to_string();
        assert_eq!(
            e,
            "f:6: rules in more than one base chain: 'forward' here and 'input' on line 2; a rule set is one \
             first-match list, give the rules of one chain"
        );
        let two_tables =
            "table ip a {\n chain c {\n  type filter hook input priority 0; policy drop;\n  accept\n }\n}\n\
                          table ip b {\n chain \"c 2\" {\n  type filter hook input priority 0;\n  drop\n }\n}\n";
        let e = parse(two_tables, "f", &ReadOptions::default()).unwrap_err().to_string();
        assert!(e.starts_with("f:8: rules in more than one base chain: 'c 2' here and 'c' on line 2"), "{e}");
    }

    #[test]
    fn empty_base_chains_beside_the_rules_are_left_out() {
        // A distribution's stock ruleset: input with rules, forward and output empty, each with
        // its own policy (and comments of their own); the default is the policy of the rules' chain.
        let stock = "table inet filter {\n\tcomment \"stock\"\n\tchain input {\n\
                     \t\ttype filter hook input priority filter; policy drop;\n\t\tcomment \"in\"\n\
                     \t\ttcp dport 22 accept\n\t}\n\tchain forward {\n\
                     \t\ttype filter hook forward priority filter; policy accept;\n\t}\n\tchain output {\n\
                     \t\ttype filter hook output priority filter; policy accept;\n\t}\n}\n";
        let set = parse(stock, "f", &ReadOptions::default()).unwrap();
        assert_eq!((set.len(), set.default_action, set.default_from_file), (1, Action::Drop, true));
        // Rules in the last of them: its policy, not the first chain's.
        let last = stock
            .replace("\t\ttcp dport 22 accept\n", "")
            .replace("policy accept;\n\t}\n}", "policy accept;\n\t\tudp dport 53 drop\n\t}\n}");
        let set = parse(&last, "f", &ReadOptions::default()).unwrap();
        assert_eq!((set.len(), set.default_action, set.rules[0].action), (1, Action::Accept, Action::Drop));
        // No rules at all: the first base chain's policy.
        let none = stock.replace("\t\ttcp dport 22 accept\n", "");
        assert_eq!(parse(&none, "f", &ReadOptions::default()).unwrap().default_action, Action::Drop);
        // An empty chain that drops on another path (forward, beside input rules) is left out;
        // one that drops on the rules' path (prerouting before input) is refused: the list
        // would pass packets nftables drops.
        let forward_drop =
            stock.replace("hook forward priority filter; policy accept", "hook forward priority filter; policy drop");
        assert_eq!(parse(&forward_drop, "f", &ReadOptions::default()).unwrap().len(), 1);
        let pre_drop = forward_drop.replace("hook forward", "hook prerouting");
        let e = parse(&pre_drop, "f", &ReadOptions::default()).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "f:8: chain 'forward' (hook prerouting) has no rules and policy drop: it stops every packet the \
                 rules of chain 'input' (hook input, line 3) pass on that path"
            ),
            "{e}"
        );
    }

    #[test]
    fn a_comment_needs_its_string() {
        let e = parse("tcp dport 80 accept comment counter\n", "f", &ReadOptions::default()).unwrap_err();
        assert!(e.to_string().starts_with("f:1: 'comment' needs a quoted string"), "{e}");
    }

    #[test]
    fn regular_chains_and_stray_rules_are_refused() {
        for (text, want) in [
            (
                "table ip t {\n chain base {\n  type filter hook input priority 0; policy drop;\n  accept\n }\n\
                 chain helper {\n  ip saddr 10.0.0.0/8 accept\n }\n}\n",
                "f:6: chain 'helper' is a regular chain (no 'type … hook …' line before its rules), reached only by \
                 a jump, which is not supported; give one base chain",
            ),
            ("table ip t {\n accept\n}\n", "f:2: a rule outside a chain"),
            ("accept\ntable ip t {\n chain c {\n", "f:3: a chain after rules outside any chain (line 1)"),
            (
                "table ip t {\n chain c {\n type filter hook input priority 0;\n }\n}\ndrop\n",
                "f:6: a rule outside any chain",
            ),
            ("table ip t {\n chain c {\n type filter;\n", "f:3: a chain 'type' needs a hook"),
            ("table ip t {\n chain c {\n chain d {\n", "f:3: 'chain' inside chain 'c' (line 2)"),
        ] {
            let e = parse(text, "f", &ReadOptions::default()).unwrap_err().to_string();
            assert!(e.starts_with(want), "{e} / {want}");
        }
        // An empty regular chain holds nothing to merge.
        let text =
            "table ip t {\n chain base {\n  type filter hook input priority 0;\n  drop\n }\n chain spare {\n }\n}\n";
        assert_eq!(parse(text, "f", &ReadOptions::default()).unwrap().len(), 1);
    }
}
