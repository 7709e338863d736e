//! ClassBench header traces (`trace_generator` output): `src dst sport dport proto flags filter`
//! per line, unsigned decimal integers; `filter` is the 0-based rule the header was generated
//! from. Only the first five fields are required.

use super::PacketTrace;
use crate::packet::Packet;
use superlinear_core::Error;

fn field<T: std::str::FromStr>(tok: Option<&str>, what: &str, max: &str) -> Result<T, String> {
    let t = tok.ok_or_else(|| format!("missing {what} (expected 'src dst sport dport proto [flags filter]')"))?;
    t.parse::<T>().map_err(|_| format!("bad {what} '{t}' (an integer 0..{max})"))
}

/// Parses a ClassBench trace; blank lines and `#` comments are skipped.
pub fn parse(text: &str, source: &str) -> Result<PacketTrace, Error> {
    let mut packets = Vec::new();
    let mut filters = Vec::new();
    let mut all_have_filter = true;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let parsed = (|| -> Result<(Packet, Option<u32>), String> {
            let mut w = t.split_whitespace();
            let src = field::<u32>(w.next(), "source address", "4294967295")?;
            let dst = field::<u32>(w.next(), "destination address", "4294967295")?;
            let sport = field::<u16>(w.next(), "source port", "65535")?;
            let dport = field::<u16>(w.next(), "destination port", "65535")?;
            let proto = field::<u8>(w.next(), "protocol", "255")?;
            let filter = match (w.next(), w.next()) {
                (Some(flags), f) => {
                    field::<u64>(Some(flags), "flags", "2^64-1")?;
                    f.map(|f| field::<u32>(Some(f), "filter number", "4294967295")).transpose()?
                }
                (None, _) => None,
            };
            if let Some(extra) = w.next() {
                return Err(format!("unexpected trailing field '{extra}'"));
            }
            Ok((Packet::new(src, dst, sport, dport, proto), filter))
        })()
        .map_err(|m| Error::input(source, Some(i + 1), m))?;
        packets.push(parsed.0);
        match parsed.1 {
            Some(f) => filters.push(f),
            None => all_have_filter = false,
        }
    }
    let generating_rule = (all_have_filter && !packets.is_empty()).then_some(filters);
    Ok(PacketTrace { packets, generating_rule, skipped: Default::default() })
}

/// Writes packets as a ClassBench trace (flags 0, filter = `filters[i]` or 0).
pub fn to_text(packets: &[Packet], filters: Option<&[u32]>) -> String {
    let mut out = String::with_capacity(packets.len() * 40);
    for (i, p) in packets.iter().enumerate() {
        let f = filters.and_then(|f| f.get(i)).copied().unwrap_or(0);
        out.push_str(&format!("{}\t{}\t{}\t{}\t{}\t0\t{}\n", p.src, p.dst, p.sport, p.dport, p.proto, f));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_reports() {
        let t = parse("1794277631\t860178875\t65535\t6889\t6\t0\t2883\n1 2 3 4 17 4294967295 5\n", "t").unwrap();
        assert_eq!(t.packets[0], Packet::new(1794277631, 860178875, 65535, 6889, 6));
        assert_eq!(t.generating_rule, Some(vec![2883, 5]));
        let back = parse(&to_text(&t.packets, t.generating_rule.as_deref()), "t").unwrap();
        assert_eq!(back.packets, t.packets);
        let e = parse("1 2 3 4 6 0 0\n1 2 70000 4 6\n", "tr").unwrap_err().to_string();
        assert_eq!(e, "tr:2: bad source port '70000' (an integer 0..65535)");
        let e = parse("1 2 3", "tr").unwrap_err().to_string();
        assert!(e.starts_with("tr:1: missing destination port"), "{e}");
    }
}
