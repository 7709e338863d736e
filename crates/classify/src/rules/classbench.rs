//! ClassBench filter files (Taylor and Turner's `db_generator` output):
//! `@src/len<TAB>dst/len<TAB>lo : hi<TAB>lo : hi<TAB>proto/mask<TAB>flags/mask`, one filter per
//! line in priority order. ClassBench filters carry no action; the reader assigns one with an
//! [`ActionPolicy`](super::ActionPolicy). The TCP-flags column is read and ignored: the rule
//! model matches the 5-tuple.

use super::{parse_u8, AddrRange, PortRange, ProtoMatch, ReadOptions, Rule, RuleSet};
use crate::packet::parse_addr;
use superlinear_core::Error;

fn prefix(tok: &str, what: &str) -> Result<AddrRange, String> {
    let (a, l) = tok.split_once('/').ok_or_else(|| format!("{what} '{tok}' is not ADDRESS/LENGTH"))?;
    let addr = parse_addr(a).ok_or_else(|| format!("{what}: bad IPv4 address '{a}'"))?;
    let len = l.parse::<u8>().ok().filter(|&v| v <= 32).ok_or_else(|| format!("{what}: bad prefix length '{l}'"))?;
    Ok(AddrRange::prefix(addr, len))
}

fn port(tok: &str, what: &str) -> Result<u16, String> {
    tok.parse::<u16>().map_err(|_| format!("{what}: bad port '{tok}' (0..65535)"))
}

fn ports(lo: &str, colon: &str, hi: &str, what: &str) -> Result<PortRange, String> {
    if colon != ":" {
        return Err(format!("{what}: expected 'LOW : HIGH', found '{lo} {colon} {hi}'"));
    }
    let (lo, hi) = (port(lo, what)?, port(hi, what)?);
    if lo > hi {
        return Err(format!("{what}: range {lo} : {hi} is empty (low above high)"));
    }
    Ok(PortRange { lo, hi })
}

fn value_mask(tok: &str, what: &str) -> Result<(u8, u8), String> {
    let (v, m) = tok.split_once('/').ok_or_else(|| format!("{what} '{tok}' is not VALUE/MASK"))?;
    let v = parse_u8(v).ok_or_else(|| format!("{what}: bad value '{v}'"))?;
    let m = parse_u8(m).ok_or_else(|| format!("{what}: bad mask '{m}'"))?;
    Ok((v, m))
}

fn parse_line(line: &str) -> Result<Rule, String> {
    let body = line.strip_prefix('@').ok_or("a ClassBench filter starts with '@'")?;
    let t: Vec<&str> = body.split_whitespace().collect();
    if t.len() < 9 {
        return Err(format!(
            "expected 'src/len dst/len lo : hi lo : hi proto/mask [flags/mask]', found {} fields",
            t.len()
        ));
    }
    if t.len() > 10 {
        return Err(format!("unexpected trailing field '{}'", t[10]));
    }
    let (value, mask) = value_mask(t[8], "protocol")?;
    if t.len() == 10 {
        let (f, m) = t[9].split_once('/').ok_or_else(|| format!("flags '{}' is not VALUE/MASK", t[9]))?;
        let hex = |s: &str| u16::from_str_radix(s.trim_start_matches("0x").trim_start_matches("0X"), 16).is_ok();
        if !hex(f) || !hex(m) {
            return Err(format!("flags '{}' is not hexadecimal VALUE/MASK", t[9]));
        }
    }
    Ok(Rule {
        src: prefix(t[0], "source prefix")?,
        dst: prefix(t[1], "destination prefix")?,
        sport: ports(t[2], t[3], t[4], "source ports")?,
        dport: ports(t[5], t[6], t[7], "destination ports")?,
        proto: ProtoMatch { value: value & mask, mask },
        action: super::Action::Accept,
    })
}

/// Parses ClassBench filters; blank lines and `#` comments are skipped.
pub fn parse(text: &str, source: &str, opts: &ReadOptions) -> Result<RuleSet, Error> {
    let mut rules = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let mut rule = parse_line(t).map_err(|m| Error::input(source, Some(i + 1), m))?;
        rule.action = opts.actions.action(rules.len());
        rules.push(rule);
    }
    Ok(RuleSet::new(rules, opts.default_action))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{ActionPolicy, RuleFormat};

    #[test]
    fn reads_filters_and_reports_bad_lines() {
        let text = "@218.127.144.51/32\t88.138.122.189/32\t0 : 65535\t1717 : 1717\t0x06/0xFF\t0x1000/0x1000\t\n\
                    @0.0.0.0/0\t0.0.0.0/0\t0 : 65535\t0 : 65535\t0x00/0x00\t0x0000/0x0000\t\n";
        let opts = ReadOptions { actions: ActionPolicy::AllAccept, ..Default::default() };
        assert_eq!(RuleFormat::detect(text), RuleFormat::ClassBench);
        let set = parse(text, "f", &opts).unwrap();
        assert_eq!(set.len(), 2);
        assert_eq!(set.rules[0].dport, PortRange::single(1717));
        assert_eq!(set.rules[0].proto, ProtoMatch::exact(6));
        assert_eq!(set.rules[1].src, AddrRange::ANY);
        let bad = "@1.2.3.4/32\t5.6.7.8/32\t0 : 65535\t1 : 1\t0x06/0xFF\n@1.2.3.4/40\t5.6.7.8/32\t0 : 65535\t1 : 1\t0x06/0xFF\n";
        let e = parse(bad, "rules.cb", &opts).unwrap_err().to_string();
        assert!(e.starts_with("rules.cb:2: source prefix: bad prefix length"), "{e}");
        let e = parse("@1.2.3.4/32 5.6.7.8/32 9 : 3 1 : 1 0x06/0xFF", "x", &opts).unwrap_err().to_string();
        assert!(e.contains("x:1:") && e.contains("empty"), "{e}");
    }
}
