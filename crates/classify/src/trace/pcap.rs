//! Classic libpcap files: a 24-byte global header (magic in either byte order, microsecond or
//! nanosecond timestamps, the link type), then records of a 16-byte header and the captured
//! bytes. Ethernet and raw IPv4 link types are decoded; other frames are counted and skipped.

use super::encode::{encode_ethernet, FRAME_LEN};
use super::frame::{self, LINKTYPE_ETHERNET};
use super::{PacketTrace, Skipped};
use crate::packet::Packet;
use superlinear_core::input::PCAP_MAGICS as MAGICS;
use superlinear_core::Error;

/// Whether the 4 bytes are a pcap magic number.
pub fn is_magic(m: &[u8]) -> bool {
    MAGICS.iter().any(|x| x == m)
}

/// Largest capture length accepted per record (larger means a corrupt file).
const MAX_RECORD: usize = 1 << 20;

/// Parses a pcap file.
pub fn parse(bytes: &[u8], source: &str) -> Result<PacketTrace, Error> {
    let err = |m: String| Error::input(source, None, m);
    if bytes.len() < 24 {
        return Err(err(format!("pcap header needs 24 bytes, file has {}", bytes.len())));
    }
    let little = match bytes[..4] {
        [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1] => true,
        [0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d] => false,
        _ => return Err(err("not a pcap file (bad magic number)".into())),
    };
    let u32_at = |at: usize| -> u32 {
        let b: [u8; 4] = bytes[at..at + 4].try_into().expect("4 bytes");
        if little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }
    };
    // Format 2.x (every libpcap since 1998 writes 2.4); anything else is not this format.
    let major =
        if little { u16::from_le_bytes([bytes[4], bytes[5]]) } else { u16::from_be_bytes([bytes[4], bytes[5]]) };
    if major != 2 {
        return Err(err(format!("pcap format version {major} (this reader takes version 2, which libpcap writes)")));
    }
    let snaplen = u32_at(16) as usize;
    let linktype = u32_at(20) & 0x0fff_ffff;
    frame::check_linktype(linktype).map_err(err)?;
    let mut packets: Vec<Packet> = Vec::new();
    let mut skipped = Skipped::default();
    let mut at = 24;
    let mut record = 0usize;
    while at < bytes.len() {
        record += 1;
        if bytes.len() - at < 16 {
            return Err(err(format!("record {record} at byte {at}: truncated record header")));
        }
        let caplen = u32_at(at + 8) as usize;
        let len = u32_at(at + 12) as usize;
        if caplen > MAX_RECORD {
            return Err(err(format!("record {record} at byte {at}: capture length {caplen} is implausible")));
        }
        // A capture holds at most the packet, and at most the file's snapshot length (0: none
        // stated, as some writers leave it).
        if caplen > len {
            return Err(err(format!(
                "record {record} at byte {at}: capture length {caplen} exceeds the packet's length {len}"
            )));
        }
        if snaplen > 0 && caplen > snaplen {
            return Err(err(format!(
                "record {record} at byte {at}: capture length {caplen} exceeds the file's snapshot length {snaplen}"
            )));
        }
        let start = at + 16;
        let Some(data) = bytes.get(start..start + caplen) else {
            return Err(err(format!("record {record} at byte {at}: {caplen} bytes announced, file ends first")));
        };
        match frame::decode(linktype, data) {
            Ok(p) => packets.push(p),
            Err(s) => s.count(&mut skipped),
        }
        at = start + caplen;
    }
    Ok(PacketTrace { packets, generating_rule: None, skipped })
}

/// Writes packets as an Ethernet pcap (microsecond timestamps, one packet per microsecond).
pub fn write(packets: &[Packet]) -> Vec<u8> {
    let mut out = Vec::with_capacity(24 + packets.len() * (16 + FRAME_LEN));
    out.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&65535u32.to_le_bytes());
    out.extend_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
    for (i, p) in packets.iter().enumerate() {
        let f = encode_ethernet(p);
        out.extend_from_slice(&((i / 1_000_000) as u32).to_le_bytes());
        out.extend_from_slice(&((i % 1_000_000) as u32).to_le_bytes());
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(&f);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let ps = vec![Packet::new(1, 2, 3, 4, 6), Packet::new(5, 6, 7, 8, 17), Packet::new(9, 9, 0, 0, 1)];
        let bytes = write(&ps);
        let t = parse(&bytes, "c.pcap").unwrap();
        assert_eq!(t.packets, ps[..2].to_vec());
        assert_eq!(t.skipped.not_tcp_udp, 1);
        let e = parse(&bytes[..bytes.len() - 3], "c.pcap").unwrap_err().to_string();
        assert!(e.starts_with("c.pcap: record 3 at byte"), "{e}");
        assert!(parse(&bytes[..10], "c.pcap").is_err());
        // A record longer than its packet or than the snapshot length, and another version.
        let mut long = bytes.clone();
        long[24 + 12..24 + 16].copy_from_slice(&10u32.to_le_bytes());
        let e = parse(&long, "c.pcap").unwrap_err().to_string();
        assert!(e.ends_with("exceeds the packet's length 10"), "{e}");
        let mut snap = bytes.clone();
        snap[16..20].copy_from_slice(&20u32.to_le_bytes());
        let e = parse(&snap, "c.pcap").unwrap_err().to_string();
        assert!(e.ends_with("exceeds the file's snapshot length 20"), "{e}");
        let mut version = bytes.clone();
        version[4..6].copy_from_slice(&9u16.to_le_bytes());
        assert!(parse(&version, "c.pcap").unwrap_err().to_string().contains("version 9"));
    }

    #[test]
    fn an_unread_link_type_and_a_pcap_read_as_classbench_are_named() {
        let mut cooked = write(&[Packet::new(1, 2, 3, 4, 6)]);
        cooked[20..24].copy_from_slice(&113u32.to_le_bytes());
        let e = parse(&cooked, "any.pcap").unwrap_err().to_string();
        assert!(e.contains("link type 113 (Linux cooked capture"), "{e}");
        let e = crate::trace::parse_trace(&write(&[]), "t.pcap", crate::trace::TraceFormat::ClassBench)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a ClassBench trace: it is a pcap trace"), "{e}");
    }
}
