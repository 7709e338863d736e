//! Decoding one captured frame (Ethernet II with optional 802.1Q/802.1ad tags, or raw IPv4)
//! into a 5-tuple. Encoding is [`super::encode`].

use super::Skipped;
use crate::packet::Packet;

/// pcap link types understood.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Raw IP (the LINKTYPE_RAW value).
pub const LINKTYPE_RAW: u32 = 101;
/// Raw IPv4.
pub const LINKTYPE_IPV4: u32 = 228;

/// Refuses a capture's link type that [`decode`] does not read, naming it: every frame would be
/// skipped, and "no packets" alone would not say why.
pub fn check_linktype(linktype: u32) -> Result<(), String> {
    if matches!(linktype, LINKTYPE_ETHERNET | LINKTYPE_RAW | LINKTYPE_IPV4) {
        return Ok(());
    }
    let name = match linktype {
        0 => " (BSD loopback)",
        113 => " (Linux cooked capture, as `tcpdump -i any` writes)",
        127 => " (802.11 radiotap)",
        276 => " (Linux cooked capture v2)",
        _ => "",
    };
    Err(format!(
        "link type {linktype}{name} is not read: Ethernet (1) or raw IPv4 (101, 228) only (capture on one interface, \
         e.g. tcpdump -i eth0)"
    ))
}

/// Why a frame was skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    /// Not IPv4.
    NotIpv4,
    /// No TCP/UDP ports.
    NotTcpUdp,
    /// Too short.
    Truncated,
}

impl Skip {
    /// Counts this reason.
    pub fn count(self, s: &mut Skipped) {
        match self {
            Skip::NotIpv4 => s.not_ipv4 += 1,
            Skip::NotTcpUdp => s.not_tcp_udp += 1,
            Skip::Truncated => s.truncated += 1,
        }
    }
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Decodes an IPv4 packet starting at `ip`.
pub fn decode_ipv4(ip: &[u8]) -> Result<Packet, Skip> {
    let first = *ip.first().ok_or(Skip::Truncated)?;
    if first >> 4 != 4 {
        return Err(Skip::NotIpv4);
    }
    let ihl = (first & 0x0f) as usize * 4;
    if ihl < 20 {
        return Err(Skip::Truncated);
    }
    if ip.len() < ihl {
        return Err(Skip::Truncated);
    }
    let frag = be16(ip, 6).ok_or(Skip::Truncated)?;
    let proto = ip[9];
    let src = be32(ip, 12).ok_or(Skip::Truncated)?;
    let dst = be32(ip, 16).ok_or(Skip::Truncated)?;
    if proto != 6 && proto != 17 {
        return Err(Skip::NotTcpUdp);
    }
    if frag & 0x1fff != 0 {
        // A non-first fragment carries no transport header.
        return Err(Skip::NotTcpUdp);
    }
    let sport = be16(ip, ihl).ok_or(Skip::Truncated)?;
    let dport = be16(ip, ihl + 2).ok_or(Skip::Truncated)?;
    Ok(Packet::new(src, dst, sport, dport, proto))
}

/// Decodes a frame of link type `linktype`.
pub fn decode(linktype: u32, frame: &[u8]) -> Result<Packet, Skip> {
    match linktype {
        LINKTYPE_ETHERNET => {
            let mut at = 12;
            let mut ethertype = be16(frame, at).ok_or(Skip::Truncated)?;
            // Up to two VLAN tags (802.1Q, 802.1ad / QinQ).
            for _ in 0..2 {
                if ethertype == 0x8100 || ethertype == 0x88a8 {
                    at += 4;
                    ethertype = be16(frame, at).ok_or(Skip::Truncated)?;
                }
            }
            if ethertype != 0x0800 {
                return Err(Skip::NotIpv4);
            }
            decode_ipv4(&frame[at + 2..])
        }
        LINKTYPE_RAW | LINKTYPE_IPV4 => decode_ipv4(frame),
        _ => Err(Skip::NotIpv4),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::encode::encode_ethernet;

    #[test]
    fn decodes_what_it_encodes_and_skips_the_rest() {
        let p = Packet::new(0x0a000001, 0xc0a80001, 1234, 80, 6);
        assert_eq!(decode(LINKTYPE_ETHERNET, &encode_ethernet(&p)), Ok(p));
        let u = Packet::new(1, 2, 3, 4, 17);
        assert_eq!(decode(LINKTYPE_ETHERNET, &encode_ethernet(&u)), Ok(u));
        let icmp = Packet::new(1, 2, 0, 0, 1);
        assert_eq!(decode(LINKTYPE_ETHERNET, &encode_ethernet(&icmp)), Err(Skip::NotTcpUdp));
        let mut arp = encode_ethernet(&p);
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(decode(LINKTYPE_ETHERNET, &arp), Err(Skip::NotIpv4));
        let f = encode_ethernet(&p);
        assert_eq!(decode(LINKTYPE_ETHERNET, &f[..30]), Err(Skip::Truncated));
        assert_eq!(decode(LINKTYPE_RAW, &f[14..]), Ok(p));
        // VLAN tagged.
        let mut v = f[..12].to_vec();
        v.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
        v.extend_from_slice(&f[12..]);
        assert_eq!(decode(LINKTYPE_ETHERNET, &v), Ok(p));
    }
}
