//! The packet a classifier sees: the IPv4 5-tuple (host byte order).

use std::fmt;

/// Protocol numbers used in names and generators.
pub mod proto {
    /// ICMP.
    pub const ICMP: u8 = 1;
    /// TCP.
    pub const TCP: u8 = 6;
    /// UDP.
    pub const UDP: u8 = 17;
}

/// An IPv4 5-tuple. Ports are 0 for protocols without ports.
///
/// `repr(C)`: the fields lie in declaration order in the first 13 bytes, which the GFNI RSS
/// kernel (`dispatch::toeplitz_gfni`) loads directly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(C)]
pub struct Packet {
    /// Source address.
    pub src: u32,
    /// Destination address.
    pub dst: u32,
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// IP protocol number.
    pub proto: u8,
}

impl Packet {
    /// A packet from its five fields.
    pub const fn new(src: u32, dst: u32, sport: u16, dport: u16, proto: u8) -> Self {
        Self { src, dst, sport, dport, proto }
    }
}

/// Dotted-quad form of an address.
pub fn fmt_addr(a: u32) -> String {
    let b = a.to_be_bytes();
    format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3])
}

/// Parses a dotted quad.
pub fn parse_addr(s: &str) -> Option<u32> {
    let mut out = 0u32;
    let mut parts = 0;
    for part in s.split('.') {
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let v: u32 = part.parse().ok()?;
        if v > 255 {
            return None;
        }
        out = (out << 8) | v;
        parts += 1;
    }
    (parts == 4).then_some(out)
}

impl fmt::Display for Packet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} -> {}:{} proto {}", fmt_addr(self.src), self.sport, fmt_addr(self.dst), self.dport, self.proto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip() {
        assert_eq!(parse_addr("10.0.0.1"), Some(0x0a00_0001));
        assert_eq!(fmt_addr(0xc0a8_0001), "192.168.0.1");
        for bad in ["1.2.3", "1.2.3.256", "1..2.3", "a.b.c.d", "1.2.3.4.5", ""] {
            assert_eq!(parse_addr(bad), None, "{bad}");
        }
    }
}
