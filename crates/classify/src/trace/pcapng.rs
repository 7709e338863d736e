//! pcapng files: a sequence of blocks (type, total length, body, total length again). Section
//! headers fix the byte order; interface descriptions give each interface's link type;
//! enhanced and simple packet blocks carry frames. Other block types are skipped.

use super::encode::encode_ethernet;
use super::frame::{self, LINKTYPE_ETHERNET};
use super::{PacketTrace, Skipped};
use superlinear_core::Error;

const SHB: u32 = 0x0a0d_0d0a;
const IDB: u32 = 1;
const SPB: u32 = 3;
const EPB: u32 = 6;
const BYTE_ORDER_MAGIC: u32 = 0x1a2b_3c4d;
const MAX_BLOCK: usize = 1 << 24;

/// Parses a pcapng file.
pub fn parse(bytes: &[u8], source: &str) -> Result<PacketTrace, Error> {
    let mut trace = PacketTrace::default();
    let mut skipped = Skipped::default();
    let mut little = true;
    let mut linktypes: Vec<u32> = Vec::new();
    let mut at = 0usize;
    let mut block = 0usize;
    while at < bytes.len() {
        block += 1;
        let err = |m: String| Error::input(source, None, format!("block {block} at byte {at}: {m}"));
        if bytes.len() - at < 12 {
            return Err(err("truncated block header".into()));
        }
        let raw_type: [u8; 4] = bytes[at..at + 4].try_into().expect("4 bytes");
        if u32::from_le_bytes(raw_type) == SHB {
            let magic: [u8; 4] = bytes[at + 8..at + 12].try_into().expect("4 bytes");
            little = match (u32::from_le_bytes(magic), u32::from_be_bytes(magic)) {
                (BYTE_ORDER_MAGIC, _) => true,
                (_, BYTE_ORDER_MAGIC) => false,
                _ => return Err(err("section header with a bad byte-order magic".into())),
            };
            linktypes.clear();
        } else if block == 1 {
            return Err(err("not a pcapng file (no section header block first)".into()));
        }
        let rd = |o: usize| -> Option<u32> {
            let b: [u8; 4] = bytes.get(o..o + 4)?.try_into().ok()?;
            Some(if little { u32::from_le_bytes(b) } else { u32::from_be_bytes(b) })
        };
        let btype = rd(at).expect("checked");
        let len = rd(at + 4).expect("checked") as usize;
        if len < 12 || !len.is_multiple_of(4) || len > MAX_BLOCK {
            return Err(err(format!("bad block length {len}")));
        }
        let Some(body) = bytes.get(at + 8..at + len - 4) else {
            return Err(err(format!("block of {len} bytes runs past the end of the file")));
        };
        if rd(at + len - 4) != Some(len as u32) {
            return Err(err("trailing block length differs from the leading one".into()));
        }
        let body_u32 = |o: usize| -> Option<u32> {
            let b: [u8; 4] = body.get(o..o + 4)?.try_into().ok()?;
            Some(if little { u32::from_le_bytes(b) } else { u32::from_be_bytes(b) })
        };
        match btype {
            IDB => {
                let lt = body.get(0..2).ok_or_else(|| err("interface block too short".into()))?;
                let lt = if little { u16::from_le_bytes([lt[0], lt[1]]) } else { u16::from_be_bytes([lt[0], lt[1]]) };
                frame::check_linktype(lt as u32).map_err(|e| err(format!("interface {}: {e}", linktypes.len())))?;
                linktypes.push(lt as u32);
            }
            EPB => {
                let iface = body_u32(0).ok_or_else(|| err("packet block too short".into()))? as usize;
                let caplen = body_u32(12).ok_or_else(|| err("packet block too short".into()))? as usize;
                let orig = body_u32(16).ok_or_else(|| err("packet block too short".into()))? as usize;
                if caplen > orig {
                    return Err(err(format!("captured length {caplen} exceeds the packet's length {orig}")));
                }
                let data = body
                    .get(20..20 + caplen)
                    .ok_or_else(|| err(format!("captured length {caplen} exceeds the block")))?;
                let lt = *linktypes.get(iface).ok_or_else(|| err(format!("packet on undeclared interface {iface}")))?;
                match frame::decode(lt, data) {
                    Ok(p) => trace.packets.push(p),
                    Err(s) => s.count(&mut skipped),
                }
            }
            SPB => {
                let orig = body_u32(0).ok_or_else(|| err("simple packet block too short".into()))? as usize;
                let data = &body[4..];
                let data = &data[..orig.min(data.len())];
                // A simple packet block belongs to the first interface (pcapng §4.4): it needs one.
                let lt =
                    *linktypes.first().ok_or_else(|| err("simple packet block before any interface block".into()))?;
                match frame::decode(lt, data) {
                    Ok(p) => trace.packets.push(p),
                    Err(s) => s.count(&mut skipped),
                }
            }
            _ => {}
        }
        at += len;
    }
    trace.skipped = skipped;
    Ok(trace)
}

fn block(out: &mut Vec<u8>, btype: u32, body: &[u8]) {
    let padded = body.len().div_ceil(4) * 4;
    let len = (12 + padded) as u32;
    out.extend_from_slice(&btype.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(body);
    out.resize(out.len() + padded - body.len(), 0);
    out.extend_from_slice(&len.to_le_bytes());
}

/// Writes packets as a little-endian pcapng file with one Ethernet interface.
pub fn write(packets: &[crate::packet::Packet]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut shb = Vec::new();
    shb.extend_from_slice(&BYTE_ORDER_MAGIC.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    block(&mut out, SHB, &shb);
    let mut idb = Vec::new();
    idb.extend_from_slice(&(LINKTYPE_ETHERNET as u16).to_le_bytes());
    idb.extend_from_slice(&0u16.to_le_bytes());
    idb.extend_from_slice(&65535u32.to_le_bytes());
    block(&mut out, IDB, &idb);
    for (i, p) in packets.iter().enumerate() {
        let f = encode_ethernet(p);
        let mut epb = Vec::with_capacity(20 + f.len());
        epb.extend_from_slice(&0u32.to_le_bytes());
        epb.extend_from_slice(&0u32.to_le_bytes());
        epb.extend_from_slice(&(i as u32).to_le_bytes());
        epb.extend_from_slice(&(f.len() as u32).to_le_bytes());
        epb.extend_from_slice(&(f.len() as u32).to_le_bytes());
        epb.extend_from_slice(&f);
        block(&mut out, EPB, &epb);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;

    #[test]
    fn round_trip_and_errors() {
        let ps = vec![Packet::new(1, 2, 3, 4, 6), Packet::new(5, 6, 7, 8, 17), Packet::new(9, 9, 0, 0, 1)];
        let bytes = write(&ps);
        assert_eq!(super::super::TraceFormat::detect(&bytes), super::super::TraceFormat::PcapNg);
        let t = parse(&bytes, "c.pcapng").unwrap();
        assert_eq!(t.packets, ps[..2].to_vec());
        assert_eq!(t.skipped.not_tcp_udp, 1);
        let e = parse(&bytes[..bytes.len() - 5], "c.pcapng").unwrap_err().to_string();
        assert!(e.starts_with("c.pcapng: block 5 at byte"), "{e}");
    }
}
