//! Valid Ethernet II / IPv4 / TCP or UDP frames for packets: what the pcap and pcapng writers
//! store and what `superlinear nft-bench` sends through the kernel.
//!
//! Every frame is [`FRAME_LEN`] bytes (the Ethernet minimum without the FCS, zero padded):
//!
//! * Ethernet: the given destination and source MACs, EtherType 0x0800;
//! * IPv4: version 4, IHL 5, total length of header + transport header (the padding is not
//!   part of the datagram), the given identification, no fragmentation, TTL 64, the packet's
//!   protocol and addresses, and a valid header checksum;
//! * TCP (protocol 6): the packet's ports, sequence number 1, data offset 5, ACK, window 65535,
//!   a valid checksum over the pseudo-header;
//! * UDP (17): the packet's ports, length 8, a valid checksum (never 0, which means "none");
//! * any other protocol: 4 bytes holding the packet's source and destination ports. This is
//!   where nftables' `th sport|dport` reads, so rules with ports but any protocol see exactly
//!   the ports our classifier sees. Those protocols' own checksums (ICMP's, say) are not
//!   computed: nothing on the path looks at them.

use crate::packet::Packet;

/// Bytes per frame (Ethernet minimum without FCS).
pub const FRAME_LEN: usize = 60;
const ETH_LEN: usize = 14;
const IP_LEN: usize = 20;

/// The two link-layer addresses every frame carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Macs {
    /// Destination (the receiving device).
    pub dst: [u8; 6],
    /// Source (the sending device).
    pub src: [u8; 6],
}

/// Parses `aa:bb:cc:dd:ee:ff`.
pub fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut out = [0u8; 6];
    let mut parts = s.split(':');
    for b in &mut out {
        let p = parts.next()?;
        if p.len() != 2 {
            return None;
        }
        *b = u8::from_str_radix(p, 16).ok()?;
    }
    parts.next().is_none().then_some(out)
}

/// The 16-bit one's complement sum of `data` (odd length: a zero byte is appended), folded,
/// added to `initial` (unfolded partial sums may be chained).
pub fn ones_complement_sum(data: &[u8], initial: u32) -> u32 {
    let mut sum = initial as u64;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [last] = chunks.remainder() {
        sum += (*last as u64) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u32
}

/// The Internet checksum (RFC 1071) of `data` given a partial sum (e.g. the pseudo-header's).
pub fn internet_checksum(data: &[u8], initial: u32) -> u16 {
    !(ones_complement_sum(data, initial) as u16)
}

/// The TCP/UDP pseudo-header's partial sum.
fn pseudo_header_sum(src: u32, dst: u32, proto: u8, l4_len: u16) -> u32 {
    let mut ph = [0u8; 12];
    ph[0..4].copy_from_slice(&src.to_be_bytes());
    ph[4..8].copy_from_slice(&dst.to_be_bytes());
    ph[9] = proto;
    ph[10..12].copy_from_slice(&l4_len.to_be_bytes());
    ones_complement_sum(&ph, 0)
}

/// Transport header length for a protocol.
fn l4_len(proto: u8) -> usize {
    match proto {
        6 => 20,
        17 => 8,
        _ => 4,
    }
}

/// Writes the frame of `p` into `out` (which must be [`FRAME_LEN`] bytes long).
pub fn write_frame(p: &Packet, macs: &Macs, ip_id: u16, out: &mut [u8]) {
    assert_eq!(out.len(), FRAME_LEN, "a frame buffer is FRAME_LEN bytes");
    out.fill(0);
    out[0..6].copy_from_slice(&macs.dst);
    out[6..12].copy_from_slice(&macs.src);
    out[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let l4 = l4_len(p.proto);
    let ip = &mut out[ETH_LEN..ETH_LEN + IP_LEN];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&((IP_LEN + l4) as u16).to_be_bytes());
    ip[4..6].copy_from_slice(&ip_id.to_be_bytes());
    ip[8] = 64;
    ip[9] = p.proto;
    ip[12..16].copy_from_slice(&p.src.to_be_bytes());
    ip[16..20].copy_from_slice(&p.dst.to_be_bytes());
    let sum = internet_checksum(ip, 0);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    let th = &mut out[ETH_LEN + IP_LEN..ETH_LEN + IP_LEN + l4];
    th[0..2].copy_from_slice(&p.sport.to_be_bytes());
    th[2..4].copy_from_slice(&p.dport.to_be_bytes());
    match p.proto {
        6 => {
            th[4..8].copy_from_slice(&1u32.to_be_bytes());
            th[12] = 5 << 4;
            th[13] = 0x10; // ACK
            th[14..16].copy_from_slice(&0xffffu16.to_be_bytes());
            let sum = internet_checksum(th, pseudo_header_sum(p.src, p.dst, 6, l4 as u16));
            th[16..18].copy_from_slice(&sum.to_be_bytes());
        }
        17 => {
            th[4..6].copy_from_slice(&(l4 as u16).to_be_bytes());
            let sum = internet_checksum(th, pseudo_header_sum(p.src, p.dst, 17, l4 as u16));
            // A computed 0 is sent as 0xffff: 0 means "no checksum" in UDP over IPv4.
            th[6..8].copy_from_slice(&(if sum == 0 { 0xffff } else { sum }).to_be_bytes());
        }
        _ => {}
    }
}

/// The link-layer addresses of the frames in capture files (locally administered).
pub const CAPTURE_MACS: Macs = Macs { dst: [0x02, 0, 0, 0, 0, 1], src: [0x02, 0, 0, 0, 0, 2] };

/// The frame of `p` as the capture writers store it ([`CAPTURE_MACS`], identification 0).
pub fn encode_ethernet(p: &Packet) -> Vec<u8> {
    let mut f = vec![0u8; FRAME_LEN];
    write_frame(p, &CAPTURE_MACS, 0, &mut f);
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::frame::{decode, LINKTYPE_ETHERNET};

    const MACS: Macs = Macs { dst: [0x02, 0x53, 0x4c, 0, 0, 2], src: [0x02, 0x53, 0x4c, 0, 0, 1] };

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn ipv4_header_checksum_matches_the_textbook_example() {
        // The worked example of the IPv4 header checksum (Wikipedia, "Internet checksum").
        let header = hex("4500 0073 0000 4000 4011 0000 c0a8 0001 c0a8 00c7");
        assert_eq!(internet_checksum(&header, 0), 0xb861);
        let mut with = header.clone();
        with[10..12].copy_from_slice(&[0xb8, 0x61]);
        assert_eq!(ones_complement_sum(&with, 0), 0xffff, "a valid header sums to all ones");
        assert_eq!(ones_complement_sum(&[0x01], 0), 0x0100, "odd length pads with a zero byte");
    }

    #[test]
    fn known_tcp_and_udp_frames_byte_for_byte() {
        // 10.0.0.1:1234 -> 192.168.0.1:80, IP id 7. The checksums were worked out independently
        // (a separate RFC 1071 sum in Python over the same header bytes and pseudo-headers).
        let tcp = Packet::new(0x0a00_0001, 0xc0a8_0001, 1234, 80, 6);
        let mut f = [0u8; FRAME_LEN];
        write_frame(&tcp, &MACS, 7, &mut f);
        let want = hex("02534c000002 02534c000001 0800
             4500 0028 0007 0000 4006 b01f 0a000001 c0a80001
             04d2 0050 00000001 00000000 5010 ffff e007 0000
             000000000000");
        assert_eq!(&f[..], &want[..]);
        let udp = Packet { proto: 17, ..tcp };
        write_frame(&udp, &MACS, 7, &mut f);
        let want = hex("02534c000002 02534c000001 0800
             4500 001c 0007 0000 4011 b020 0a000001 c0a80001
             04d2 0050 0008 3012
             000000000000000000000000000000000000");
        assert_eq!(&f[..], &want[..]);
    }

    #[test]
    fn every_checksum_verifies_and_frames_decode_to_their_packet() {
        let packets: Vec<Packet> = (0..500u32)
            .map(|i| {
                let proto = [6u8, 17, 1, 0, 47, 255][i as usize % 6];
                Packet::new(i.wrapping_mul(2_654_435_761), !i, (i * 131) as u16, (i * 7919) as u16, proto)
            })
            .collect();
        let mut f = [0u8; FRAME_LEN];
        for (i, p) in packets.iter().enumerate() {
            write_frame(p, &MACS, i as u16, &mut f);
            let ip = &f[14..34];
            assert_eq!(ones_complement_sum(ip, 0), 0xffff, "IPv4 checksum of packet {i}");
            let l4 = l4_len(p.proto);
            assert_eq!(u16::from_be_bytes([ip[2], ip[3]]) as usize, 20 + l4);
            let th = &f[34..34 + l4];
            if p.proto == 6 || p.proto == 17 {
                let ph = pseudo_header_sum(p.src, p.dst, p.proto, l4 as u16);
                assert_eq!(ones_complement_sum(th, ph), 0xffff, "transport checksum of packet {i}");
                assert_eq!(decode(LINKTYPE_ETHERNET, &f), Ok(*p));
            }
            assert_eq!(u16::from_be_bytes([th[0], th[1]]), p.sport);
            assert_eq!(u16::from_be_bytes([th[2], th[3]]), p.dport);
        }
    }

    #[test]
    fn macs_parse() {
        assert_eq!(parse_mac("02:53:4c:00:00:0a"), Some([2, 0x53, 0x4c, 0, 0, 10]));
        for bad in ["02:53:4c:00:00", "02:53:4c:00:00:0a:1", "zz:53:4c:00:00:0a", "2:53:4c:00:00:0a"] {
            assert_eq!(parse_mac(bad), None, "{bad}");
        }
    }
}
