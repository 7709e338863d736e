//! The compact binary trace: magic `SLPT`, a little-endian u32 version (1), a u64 packet count,
//! then 13 bytes per packet: src (u32), dst (u32), sport (u16), dport (u16), proto (u8), all
//! little-endian. About a third of a ClassBench text trace, and read at memory speed.

use super::PacketTrace;
use crate::packet::Packet;
use superlinear_core::Error;

/// File magic.
pub const MAGIC: &[u8; 4] = &superlinear_core::input::SLPT_MAGIC;
/// Format version.
pub const VERSION: u32 = 1;
const RECORD: usize = 13;

/// Encodes packets.
pub fn write(packets: &[Packet]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + packets.len() * RECORD);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(packets.len() as u64).to_le_bytes());
    for p in packets {
        out.extend_from_slice(&p.src.to_le_bytes());
        out.extend_from_slice(&p.dst.to_le_bytes());
        out.extend_from_slice(&p.sport.to_le_bytes());
        out.extend_from_slice(&p.dport.to_le_bytes());
        out.push(p.proto);
    }
    out
}

/// Decodes a binary trace.
pub fn parse(bytes: &[u8], source: &str) -> Result<PacketTrace, Error> {
    let err = |m: String| Error::input(source, None, m);
    if bytes.len() < 16 || &bytes[..4] != MAGIC {
        return Err(err("not a binary packet trace (needs the SLPT header)".into()));
    }
    let version = u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(err(format!("binary trace version {version} is not supported (only {VERSION})")));
    }
    let count = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
    let body = &bytes[16..];
    let Some(announced) = count.checked_mul(RECORD as u64) else {
        return Err(err(format!(
            "header announces {count} packets, an impossible count (more than 2^64 bytes of packets)"
        )));
    };
    if announced != body.len() as u64 {
        return Err(err(format!(
            "header announces {count} packets ({announced} bytes) but {} bytes follow",
            body.len()
        )));
    }
    let packets = body
        .chunks_exact(RECORD)
        .map(|r| {
            Packet::new(
                u32::from_le_bytes([r[0], r[1], r[2], r[3]]),
                u32::from_le_bytes([r[4], r[5], r[6], r[7]]),
                u16::from_le_bytes([r[8], r[9]]),
                u16::from_le_bytes([r[10], r[11]]),
                r[12],
            )
        })
        .collect();
    Ok(PacketTrace { packets, generating_rule: None, skipped: Default::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let ps = vec![Packet::new(1, 2, 3, 4, 6), Packet::new(u32::MAX, 0, 65535, 0, 255)];
        let b = write(&ps);
        assert_eq!(parse(&b, "t").unwrap().packets, ps);
        assert!(parse(&b[..b.len() - 1], "t").unwrap_err().to_string().contains("announces 2 packets"));
        assert!(parse(b"SLPX", "t").is_err());
        let mut huge = b.clone();
        huge[8..16].copy_from_slice(&(1u64 << 63).to_le_bytes());
        let e = parse(&huge, "t").unwrap_err().to_string();
        assert_eq!(
            e,
            "t: header announces 9223372036854775808 packets, an impossible count (more than 2^64 bytes of packets)"
        );
    }
}
