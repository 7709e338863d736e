//! The native text format: one rule per line, the action first, then optional fields, each a
//! keyword and a value; a missing field matches anything. `#` starts a comment.
//!
//! ```text
//! default drop
//! accept src 192.168.178.33 dst 23.0.0.45 dport 53 proto udp
//! drop   src 10.10.10.0/24 dst 23.0.0.45/32 dport 443 proto tcp
//! accept src 10.0.0.1-10.0.0.9 sport 1024-65535 proto 0x06/0xff
//! ```
//!
//! Addresses: `a.b.c.d`, `a.b.c.d/len`, `a.b.c.d-e.f.g.h`, `any`; ports: `N`, `N-M`, `any`;
//! proto: `tcp`, `udp`, `icmp`, a number, `VALUE/MASK` or `any`.

use super::{
    parse_addr_range, parse_port_range, parse_proto, parse_u8, Action, ProtoMatch, ReadOptions, Rule, RuleSet,
};
use superlinear_core::Error;

fn parse_proto_match(v: &str) -> Result<ProtoMatch, String> {
    if v == "any" {
        return Ok(ProtoMatch::ANY);
    }
    if let Some((a, m)) = v.split_once('/') {
        let a = parse_u8(a).ok_or_else(|| format!("bad protocol value '{a}'"))?;
        let m = parse_u8(m).ok_or_else(|| format!("bad protocol mask '{m}'"))?;
        return Ok(ProtoMatch { value: a & m, mask: m });
    }
    parse_proto(v)
        .map(ProtoMatch::exact)
        .ok_or_else(|| format!("bad protocol '{v}' (tcp, udp, icmp, 0-255, VALUE/MASK, any)"))
}

pub(crate) fn parse_line(t: &str) -> Result<Rule, String> {
    let mut words = t.split_whitespace();
    let first = words.next().unwrap_or("");
    let action =
        Action::parse(first).ok_or_else(|| format!("unknown action '{first}' (accept, drop, reject, queue)"))?;
    let mut rule = Rule::any(action);
    let mut seen = [false; 5];
    while let Some(key) = words.next() {
        let value = words.next().ok_or_else(|| format!("'{key}' needs a value"))?;
        let slot = match key {
            "src" => {
                rule.src = parse_addr_range(value)?;
                0
            }
            "dst" => {
                rule.dst = parse_addr_range(value)?;
                1
            }
            "sport" => {
                rule.sport = parse_port_range(value)?;
                2
            }
            "dport" => {
                rule.dport = parse_port_range(value)?;
                3
            }
            "proto" => {
                rule.proto = parse_proto_match(value)?;
                4
            }
            other => return Err(format!("unknown field '{other}' (src, dst, sport, dport, proto)")),
        };
        if std::mem::replace(&mut seen[slot], true) {
            return Err(format!("field '{key}' given twice"));
        }
    }
    Ok(rule)
}

/// Parses the native format.
pub fn parse(text: &str, source: &str, opts: &ReadOptions) -> Result<RuleSet, Error> {
    let mut rules = Vec::new();
    let mut own_default = None;
    let mut default_line = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.split('#').next().unwrap_or("").trim();
        if t.is_empty() {
            continue;
        }
        let err = |m: String| Error::input(source, Some(i + 1), m);
        if let Some(rest) = t.strip_prefix("default") {
            if rest.is_empty() || rest.starts_with(char::is_whitespace) {
                if let Some(first) = default_line.replace(i + 1) {
                    return Err(err(format!("a second 'default' line (the first is line {first}); give one")));
                }
                let a = rest.trim();
                own_default = Some(Action::parse(a).ok_or_else(|| err(format!("unknown default policy '{a}'")))?);
                continue;
            }
        }
        rules.push(parse_line(t).map_err(err)?);
    }
    Ok(RuleSet::read(rules, own_default, opts.default_action))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{to_native, AddrRange, PortRange};

    #[test]
    fn parses_and_round_trips() {
        let text = "default drop\naccept src 192.168.178.33 dst 23.0.0.45 dport 53 proto udp # dns\n\
                    drop src 10.0.0.1-10.0.0.9 sport 1024-65535 proto 0x06/0xff\nreject\n";
        let set = parse(text, "n", &ReadOptions::default()).unwrap();
        assert_eq!((set.default_action, set.default_from_file), (Action::Drop, true));
        assert_eq!(set.len(), 3);
        assert_eq!(set.rules[0].dport, PortRange::single(53));
        assert_eq!(set.rules[1].src, AddrRange { lo: 0x0a00_0001, hi: 0x0a00_0009 });
        assert_eq!(set.rules[2], Rule::any(Action::Reject));
        let again = parse(&to_native(&set), "n2", &ReadOptions::default()).unwrap();
        assert_eq!(again, set);
        // Without a default line the reader's fallback applies, and the set says it is not the file's.
        let fallback = ReadOptions { default_action: Action::Reject, ..ReadOptions::default() };
        let set = parse("accept proto udp\n", "n3", &fallback).unwrap();
        assert_eq!((set.default_action, set.default_from_file), (Action::Reject, false));
    }

    #[test]
    fn errors_name_the_line() {
        for (text, want) in [
            ("accept\nallow src any\n", "f:2: unknown action 'allow'"),
            ("accept src\n", "f:1: 'src' needs a value"),
            ("accept src 1.2.3.4 src 1.2.3.5", "f:1: field 'src' given twice"),
            ("drop dport 70000", "f:1: bad port '70000'"),
            ("drop dport +80", "f:1: bad port '+80'"),
            ("drop dport -1", "f:1: bad port '-1'"),
            ("default maybe", "f:1: unknown default policy"),
            (
                "default drop\naccept\n\ndefault accept\n",
                "f:4: a second 'default' line (the first is line 1); give one",
            ),
        ] {
            let e = parse(text, "f", &ReadOptions::default()).unwrap_err().to_string();
            assert!(e.starts_with(want), "{e} / {want}");
        }
    }
}
