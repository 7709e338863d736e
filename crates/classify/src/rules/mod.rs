//! The rule model and its file formats.
//!
//! A rule matches IPv4 source and destination address ranges (prefixes are the common case),
//! source and destination port ranges and a protocol value under a mask, and carries an action.
//! Rules are in priority order (index 0 first); the first match wins, as in nftables, and a
//! default policy applies when nothing matches (paper §4.1, Fig. 6).
//!
//! Formats, one file each: [`classbench`] filters, the [`native`] text format, the subset of
//! [`nft`] syntax that `nft list ruleset` prints for such rules, and [`nft_writer`]. Every reader
//! reports a bad line as `FILE:LINE: problem`.

pub mod classbench;
pub mod native;
pub mod nft;
pub mod nft_writer;
pub mod schedule;

use crate::packet::{fmt_addr, Packet};
use std::fmt;
use superlinear_core::Error;

/// What a matching rule does with a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Let the packet through.
    Accept,
    /// Discard silently.
    Drop,
    /// Discard and tell the sender.
    Reject,
    /// Hand to user space.
    Queue,
}

impl Action {
    /// Every action, in code order.
    pub const ALL: [Action; 4] = [Action::Accept, Action::Drop, Action::Reject, Action::Queue];

    /// The keyword (also nftables' verdict).
    pub fn name(self) -> &'static str {
        match self {
            Action::Accept => "accept",
            Action::Drop => "drop",
            Action::Reject => "reject",
            Action::Queue => "queue",
        }
    }

    /// Parses a keyword (case-insensitive).
    pub fn parse(s: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.name().eq_ignore_ascii_case(s))
    }

    /// A small code for compact tables.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The action of a code made by [`Action::code`].
    pub fn from_code(c: u8) -> Action {
        Action::ALL[(c as usize).min(3)]
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An inclusive range of 32-bit addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AddrRange {
    /// Lowest address.
    pub lo: u32,
    /// Highest address.
    pub hi: u32,
}

impl AddrRange {
    /// Every address.
    pub const ANY: AddrRange = AddrRange { lo: 0, hi: u32::MAX };

    /// The addresses of `addr/len` (host bits of `addr` are ignored).
    pub fn prefix(addr: u32, len: u8) -> AddrRange {
        let len = len.min(32);
        let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
        AddrRange { lo: addr & mask, hi: (addr & mask) | !mask }
    }

    /// One address.
    pub fn single(addr: u32) -> AddrRange {
        AddrRange { lo: addr, hi: addr }
    }

    /// The prefix length if this range is exactly a prefix.
    pub fn prefix_len(&self) -> Option<u8> {
        let span = self.hi.wrapping_sub(self.lo);
        if self.lo > self.hi || span.wrapping_add(1) & span != 0 {
            return None;
        }
        let len = 32 - (span.count_ones() as u8);
        (self.lo & span == 0).then_some(len)
    }

    /// Whether `a` lies in the range.
    pub fn contains(&self, a: u32) -> bool {
        self.lo <= a && a <= self.hi
    }

    /// Whether the two ranges share an address.
    pub fn overlaps(&self, o: &AddrRange) -> bool {
        self.lo <= o.hi && o.lo <= self.hi
    }
}

impl fmt::Display for AddrRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.prefix_len() {
            Some(0) => f.write_str("any"),
            Some(32) => f.write_str(&fmt_addr(self.lo)),
            Some(l) => write!(f, "{}/{}", fmt_addr(self.lo), l),
            None => write!(f, "{}-{}", fmt_addr(self.lo), fmt_addr(self.hi)),
        }
    }
}

/// An inclusive range of ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PortRange {
    /// Lowest port.
    pub lo: u16,
    /// Highest port.
    pub hi: u16,
}

impl PortRange {
    /// Every port.
    pub const ANY: PortRange = PortRange { lo: 0, hi: u16::MAX };

    /// One port.
    pub fn single(p: u16) -> PortRange {
        PortRange { lo: p, hi: p }
    }

    /// Whether this is every port.
    pub fn is_any(&self) -> bool {
        *self == PortRange::ANY
    }

    /// Whether `p` lies in the range.
    pub fn contains(&self, p: u16) -> bool {
        self.lo <= p && p <= self.hi
    }

    /// Whether the two ranges share a port.
    pub fn overlaps(&self, o: &PortRange) -> bool {
        self.lo <= o.hi && o.lo <= self.hi
    }
}

impl fmt::Display for PortRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_any() {
            f.write_str("any")
        } else if self.lo == self.hi {
            write!(f, "{}", self.lo)
        } else {
            write!(f, "{}-{}", self.lo, self.hi)
        }
    }
}

/// A protocol value under a mask: matches when `proto & mask == value & mask`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProtoMatch {
    /// Value (only its masked bits matter).
    pub value: u8,
    /// Mask: 0 = any protocol, 0xff = exactly `value`.
    pub mask: u8,
}

impl ProtoMatch {
    /// Any protocol.
    pub const ANY: ProtoMatch = ProtoMatch { value: 0, mask: 0 };

    /// Exactly protocol `p`.
    pub fn exact(p: u8) -> ProtoMatch {
        ProtoMatch { value: p, mask: 0xff }
    }

    /// Whether protocol `p` matches.
    pub fn contains(&self, p: u8) -> bool {
        (p ^ self.value) & self.mask == 0
    }

    /// Whether some protocol matches both.
    pub fn overlaps(&self, o: &ProtoMatch) -> bool {
        (self.value ^ o.value) & self.mask & o.mask == 0
    }
}

/// Protocol name for the text formats.
pub fn proto_name(p: u8) -> Option<&'static str> {
    match p {
        1 => Some("icmp"),
        6 => Some("tcp"),
        17 => Some("udp"),
        _ => None,
    }
}

/// Parses a protocol name or number.
pub fn parse_proto(s: &str) -> Option<u8> {
    match s.to_ascii_lowercase().as_str() {
        "icmp" => Some(1),
        "tcp" => Some(6),
        "udp" => Some(17),
        other => parse_u8(other),
    }
}

/// Parses a decimal or `0x` hexadecimal byte.
pub fn parse_u8(s: &str) -> Option<u8> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u8::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

impl fmt::Display for ProtoMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.mask, proto_name(self.value)) {
            (0, _) => f.write_str("any"),
            (0xff, Some(n)) => f.write_str(n),
            (0xff, None) => write!(f, "{}", self.value),
            (m, _) => write!(f, "0x{:02x}/0x{:02x}", self.value & m, m),
        }
    }
}

/// One classifier rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    /// Source addresses.
    pub src: AddrRange,
    /// Destination addresses.
    pub dst: AddrRange,
    /// Source ports.
    pub sport: PortRange,
    /// Destination ports.
    pub dport: PortRange,
    /// Protocol.
    pub proto: ProtoMatch,
    /// What a match does.
    pub action: Action,
}

impl Rule {
    /// A rule matching everything.
    pub fn any(action: Action) -> Rule {
        Rule {
            src: AddrRange::ANY,
            dst: AddrRange::ANY,
            sport: PortRange::ANY,
            dport: PortRange::ANY,
            proto: ProtoMatch::ANY,
            action,
        }
    }

    /// Whether the rule matches `p` (the reference definition; the fast one is in `table`).
    pub fn matches(&self, p: &Packet) -> bool {
        self.src.contains(p.src)
            && self.dst.contains(p.dst)
            && self.sport.contains(p.sport)
            && self.dport.contains(p.dport)
            && self.proto.contains(p.proto)
    }

    /// Whether some packet matches both rules (they overlap in every field).
    pub fn overlaps(&self, o: &Rule) -> bool {
        self.src.overlaps(&o.src)
            && self.dst.overlaps(&o.dst)
            && self.sport.overlaps(&o.sport)
            && self.dport.overlaps(&o.dport)
            && self.proto.overlaps(&o.proto)
    }

    /// Checks the ranges are well formed.
    pub fn validate(&self) -> Result<(), String> {
        if self.src.lo > self.src.hi {
            return Err("source address range is empty (low above high)".into());
        }
        if self.dst.lo > self.dst.hi {
            return Err("destination address range is empty (low above high)".into());
        }
        if self.sport.lo > self.sport.hi {
            return Err(format!("source port range {}-{} is empty", self.sport.lo, self.sport.hi));
        }
        if self.dport.lo > self.dport.hi {
            return Err(format!("destination port range {}-{} is empty", self.dport.lo, self.dport.hi));
        }
        Ok(())
    }
}

impl fmt::Display for Rule {
    /// The native text format (see [`native`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} src {} dst {} sport {} dport {} proto {}",
            self.action, self.src, self.dst, self.sport, self.dport, self.proto
        )
    }
}

/// A priority-ordered rule list with its default policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleSet {
    /// Rules, highest priority first.
    pub rules: Vec<Rule>,
    /// The verdict when no rule matches.
    pub default_action: Action,
    /// Whether the rule file set `default_action` itself (a native `default` line, an nft chain's
    /// `policy`) rather than the reader's fallback: a `--default` beside such a file has no effect.
    pub default_from_file: bool,
}

impl RuleSet {
    /// A rule set whose default is not a file's own.
    pub fn new(rules: Vec<Rule>, default_action: Action) -> Self {
        Self { rules, default_action, default_from_file: false }
    }

    /// A rule set read from a file: `own_default` is the policy the file sets, if any, else the
    /// reader's fallback `fallback` applies.
    pub fn read(rules: Vec<Rule>, own_default: Option<Action>, fallback: Action) -> Self {
        Self { rules, default_action: own_default.unwrap_or(fallback), default_from_file: own_default.is_some() }
    }

    /// Number of rules.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Brute-force first match: the reference every classifier must agree with.
    pub fn first_match(&self, p: &Packet) -> Option<usize> {
        self.rules.iter().position(|r| r.matches(p))
    }

    /// The verdict of the first match, or the default.
    pub fn verdict(&self, p: &Packet) -> Action {
        self.decide(p).1
    }

    /// The first match and its verdict (the default where none matches), from one scan.
    pub fn decide(&self, p: &Packet) -> (Option<usize>, Action) {
        let first = self.first_match(p);
        (first, first.map_or(self.default_action, |i| self.rules[i].action))
    }
}

/// Rule file formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleFormat {
    /// Decide from the content.
    Auto,
    /// ClassBench filters (`@src/len dst/len lo : hi lo : hi proto/mask flags/mask`).
    ClassBench,
    /// The native text format.
    Native,
    /// `nft list ruleset` output.
    Nft,
}

impl RuleFormat {
    /// Parses `auto`, `classbench`, `native`, `nft`.
    pub fn parse(s: &str) -> Result<RuleFormat, Error> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" | "" => Ok(RuleFormat::Auto),
            "classbench" | "cb" => Ok(RuleFormat::ClassBench),
            "native" | "text" => Ok(RuleFormat::Native),
            "nft" | "nftables" => Ok(RuleFormat::Nft),
            other => {
                Err(Error::config(format!("unknown rule format '{other}' (known: auto, classbench, native, nft)")))
            }
        }
    }

    /// The format's name, as `parse` takes it.
    pub fn name(self) -> &'static str {
        match self {
            RuleFormat::Auto => "auto",
            RuleFormat::ClassBench => "classbench",
            RuleFormat::Native => "native",
            RuleFormat::Nft => "nft",
        }
    }

    /// Guesses the format from the first meaningful line.
    pub fn detect(text: &str) -> RuleFormat {
        for line in text.lines() {
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            if t.starts_with('@') {
                return RuleFormat::ClassBench;
            }
            let first = t.split_whitespace().next().unwrap_or("");
            if ["table", "chain", "ip", "meta", "th", "tcp", "udp", "flush", "add"].contains(&first) {
                return RuleFormat::Nft;
            }
            return RuleFormat::Native;
        }
        RuleFormat::Native
    }
}

/// How rules without actions (ClassBench filters) get one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ActionPolicy {
    /// Every rule accepts (no rule then depends on another).
    AllAccept,
    /// Each rule drops with probability `drop_fraction`, decided by a seeded hash of its index,
    /// so the same file always gets the same actions.
    Random {
        /// Share of dropping rules.
        drop_fraction: f64,
        /// Seed of the hash.
        seed: u64,
    },
}

impl Default for ActionPolicy {
    fn default() -> Self {
        ActionPolicy::Random { drop_fraction: 0.5, seed: 1 }
    }
}

impl ActionPolicy {
    /// Parses `accept` or `random[:FRACTION[:SEED]]`.
    pub fn parse(s: &str) -> Result<ActionPolicy, Error> {
        let s = s.trim();
        if s == "accept" {
            return Ok(ActionPolicy::AllAccept);
        }
        let mut parts = s.split(':');
        if parts.next() != Some("random") {
            return Err(Error::config(format!(
                "unknown action policy '{s}' (known: accept, random[:FRACTION[:SEED]])"
            )));
        }
        let drop_fraction = match parts.next() {
            Some(f) => f
                .parse::<f64>()
                .ok()
                .filter(|v| (0.0..=1.0).contains(v))
                .ok_or_else(|| Error::config(format!("drop fraction in '{s}' must be a number in [0, 1]")))?,
            None => 0.5,
        };
        let seed = match parts.next() {
            Some(x) => x
                .parse::<u64>()
                .map_err(|_| Error::config(format!("seed in '{s}' must be a whole number from 0 to 2^64 - 1")))?,
            None => 1,
        };
        if parts.next().is_some() {
            return Err(Error::config(format!("'{s}' has more parts than random[:FRACTION[:SEED]]")));
        }
        Ok(ActionPolicy::Random { drop_fraction, seed })
    }

    /// The action of rule `index`.
    pub fn action(&self, index: usize) -> Action {
        match *self {
            ActionPolicy::AllAccept => Action::Accept,
            ActionPolicy::Random { drop_fraction, seed } => {
                let h = superlinear_core::hash::hash64(index as u64, seed);
                if ((h >> 11) as f64 / (1u64 << 53) as f64) < drop_fraction {
                    Action::Drop
                } else {
                    Action::Accept
                }
            }
        }
    }
}

/// Options of the rule readers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReadOptions {
    /// File format.
    pub format: RuleFormat,
    /// Actions of action-less formats (ClassBench).
    pub actions: ActionPolicy,
    /// Default policy where the file does not set one.
    pub default_action: Action,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self { format: RuleFormat::Auto, actions: ActionPolicy::default(), default_action: Action::Accept }
    }
}

/// Parses rule text; `source` names the file in error messages.
pub fn parse_rules(text: &str, source: &str, opts: &ReadOptions) -> Result<RuleSet, Error> {
    let format = if opts.format == RuleFormat::Auto { RuleFormat::detect(text) } else { opts.format };
    match format {
        RuleFormat::ClassBench => classbench::parse(text, source, opts),
        RuleFormat::Native => native::parse(text, source, opts),
        RuleFormat::Nft | RuleFormat::Auto => nft::parse(text, source, opts),
    }
}

/// Reads a rule file.
pub fn read_rules(path: &str, opts: &ReadOptions) -> Result<RuleSet, Error> {
    parse_rules(&superlinear_core::input::read_text(path)?, path, opts)
}

/// Writes rules in the native format (`# default POLICY` first).
pub fn to_native(set: &RuleSet) -> String {
    let mut out =
        format!("# superlinear native rules: {} rules, first match wins\ndefault {}\n", set.len(), set.default_action);
    for r in &set.rules {
        out.push_str(&r.to_string());
        out.push('\n');
    }
    out
}

/// Writes filters in ClassBench form (actions are not part of it and are lost).
pub fn to_classbench(set: &RuleSet) -> Result<String, Error> {
    let mut out = String::new();
    for (i, r) in set.rules.iter().enumerate() {
        let (Some(sl), Some(dl)) = (r.src.prefix_len(), r.dst.prefix_len()) else {
            return Err(Error::config(format!("rule {}: ClassBench needs address prefixes, not ranges", i + 1)));
        };
        out.push_str(&format!(
            "@{}/{}\t{}/{}\t{} : {}\t{} : {}\t0x{:02X}/0x{:02X}\t0x0000/0x0000\t\n",
            fmt_addr(r.src.lo),
            sl,
            fmt_addr(r.dst.lo),
            dl,
            r.sport.lo,
            r.sport.hi,
            r.dport.lo,
            r.dport.hi,
            r.proto.value & r.proto.mask,
            r.proto.mask
        ));
    }
    Ok(out)
}

/// Parses `a.b.c.d`, `a.b.c.d/len`, `a.b.c.d-e.f.g.h` or `any`.
pub fn parse_addr_range(s: &str) -> Result<AddrRange, String> {
    if s == "any" || s == "*" {
        return Ok(AddrRange::ANY);
    }
    if let Some((a, l)) = s.split_once('/') {
        let addr = crate::packet::parse_addr(a).ok_or_else(|| format!("bad IPv4 address '{a}'"))?;
        let len: u8 = l.parse().ok().filter(|&v: &u8| v <= 32).ok_or_else(|| format!("bad prefix length '/{l}'"))?;
        return Ok(AddrRange::prefix(addr, len));
    }
    if let Some((a, b)) = s.split_once('-') {
        let lo = crate::packet::parse_addr(a).ok_or_else(|| format!("bad IPv4 address '{a}'"))?;
        let hi = crate::packet::parse_addr(b).ok_or_else(|| format!("bad IPv4 address '{b}'"))?;
        if lo > hi {
            return Err(format!("address range '{s}' is empty (low above high)"));
        }
        return Ok(AddrRange { lo, hi });
    }
    crate::packet::parse_addr(s).map(AddrRange::single).ok_or_else(|| format!("bad IPv4 address '{s}'"))
}

/// Parses `N`, `N-M` or `any`.
pub fn parse_port_range(s: &str) -> Result<PortRange, String> {
    if s == "any" || s == "*" {
        return Ok(PortRange::ANY);
    }
    // Digits only: Rust's parser takes a leading '+', which no rule format writes.
    let port = |t: &str| {
        let t = t.trim();
        t.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| t.parse::<u16>().ok())
            .flatten()
            .ok_or_else(|| format!("bad port '{t}' (a number from 0 to 65535)"))
    };
    if s.starts_with('-') {
        return Err(format!("bad port '{s}' (a number from 0 to 65535)"));
    }
    match s.split_once('-') {
        Some((a, b)) => {
            let (lo, hi) = (port(a)?, port(b)?);
            if lo > hi {
                return Err(format!("port range '{s}' is empty (low above high)"));
            }
            Ok(PortRange { lo, hi })
        }
        None => Ok(PortRange::single(port(s)?)),
    }
}

/// Writes a rule set to `path` in `format` (`Auto` means native; ClassBench loses actions).
pub fn write_rules(path: &str, set: &RuleSet, format: RuleFormat) -> Result<(), Error> {
    let text = match format {
        RuleFormat::Nft => nft_writer::to_nft(set, &nft_writer::NftOptions::default())?,
        RuleFormat::ClassBench => to_classbench(set)?,
        RuleFormat::Native | RuleFormat::Auto => to_native(set),
    };
    std::fs::write(path, text)
        .map_err(|e| Error::input(path, None, format!("cannot write: {}", superlinear_core::input::io_words(&e))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str, body: &[u8]) -> String {
        superlinear_core::input::scratch_file("rules", name, body)
    }

    #[test]
    fn files_with_a_bom_are_read_in_their_format() {
        let opts = ReadOptions::default();
        let native = read_rules(&tmp("n.txt", b"\xEF\xBB\xBFdrop src 10.0.0.0/8\n"), &opts).unwrap();
        assert_eq!(native.rules[0].action, Action::Drop);
        let cb = b"\xEF\xBB\xBF@10.0.0.0/8\t0.0.0.0/0\t0 : 65535\t80 : 80\t0x06/0xFF\t0x0000/0x0000\n";
        let set = read_rules(&tmp("cb.txt", cb), &opts).unwrap();
        assert_eq!((set.len(), set.rules[0].dport), (1, PortRange::single(80)));
        let e = read_rules("/dev/null", &opts).unwrap_err().to_string();
        assert!(e.starts_with("/dev/null: not a regular file"), "{e}");
        let e = read_rules(&tmp("bad.txt", b"accept\n\xff\n"), &opts).unwrap_err().to_string();
        assert!(e.ends_with("bad.txt:2: not UTF-8 text"), "{e}");
    }

    #[test]
    fn prefixes_and_overlaps() {
        let p = AddrRange::prefix(0x0a01_0203, 8);
        assert_eq!((p.lo, p.hi), (0x0a00_0000, 0x0aff_ffff));
        assert_eq!(p.prefix_len(), Some(8));
        assert_eq!(AddrRange::ANY.prefix_len(), Some(0));
        assert_eq!(AddrRange::single(5).prefix_len(), Some(32));
        assert_eq!(AddrRange { lo: 1, hi: 2 }.prefix_len(), None);
        assert_eq!(AddrRange { lo: 2, hi: 3 }.prefix_len(), Some(31));
        assert!(ProtoMatch::exact(6).overlaps(&ProtoMatch::ANY));
        assert!(!ProtoMatch::exact(6).overlaps(&ProtoMatch::exact(17)));
        assert_eq!(parse_addr_range("10.0.0.0/8").unwrap(), p);
        assert!(parse_addr_range("10.0.0.0/33").is_err());
        assert!(parse_port_range("5-3").is_err());
        assert_eq!(parse_port_range("80").unwrap(), PortRange::single(80));
    }

    #[test]
    fn action_policies_are_deterministic() {
        let p = ActionPolicy::parse("random:0.25:7").unwrap();
        let drops = (0..10_000).filter(|&i| p.action(i) == Action::Drop).count();
        assert!((2_000..3_000).contains(&drops), "{drops}");
        assert_eq!(p.action(42), p.action(42));
        assert_eq!(ActionPolicy::parse("accept").unwrap().action(3), Action::Accept);
        assert!(ActionPolicy::parse("random:2").is_err());
        assert!(ActionPolicy::parse("x").is_err());
        assert!(ActionPolicy::parse("random:0.5:1:9").is_err());
    }
}
