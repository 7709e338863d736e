//! Packet traces: ClassBench header traces, pcap and pcapng captures (Ethernet or raw IPv4,
//! TCP and UDP; every other frame is counted and skipped), and a compact binary form.
//!
//! Readers never panic on bad input: a malformed file is one error line naming the file and
//! the line (text) or the record and byte offset (binary).

pub mod binary;
pub mod classbench;
pub mod encode;
pub mod frame;
pub mod pcap;
pub mod pcapng;
pub mod shape;

use crate::packet::Packet;
use superlinear_core::Error;

/// Frames a capture reader skipped, by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Not IPv4 (ARP, IPv6, other EtherTypes, other link types).
    pub not_ipv4: u64,
    /// IPv4 but neither TCP nor UDP, or a non-first fragment (no ports).
    pub not_tcp_udp: u64,
    /// Cut short (capture length below the headers).
    pub truncated: u64,
}

impl Skipped {
    /// All skipped frames.
    pub fn total(&self) -> u64 {
        self.not_ipv4 + self.not_tcp_udp + self.truncated
    }
}

/// A trace read from a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PacketTrace {
    /// The packets in order.
    pub packets: Vec<Packet>,
    /// ClassBench traces only: the filter each header was generated from (not necessarily its
    /// first match).
    pub generating_rule: Option<Vec<u32>>,
    /// Frames skipped by capture readers.
    pub skipped: Skipped,
}

/// Trace file formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// Decide from the first bytes.
    Auto,
    /// ClassBench header trace (text).
    ClassBench,
    /// pcap (libpcap), microsecond or nanosecond, either byte order.
    Pcap,
    /// pcapng.
    PcapNg,
    /// This project's compact binary form.
    Binary,
}

impl TraceFormat {
    /// Parses `auto`, `classbench`, `pcap`, `pcapng`, `binary`.
    pub fn parse(s: &str) -> Result<TraceFormat, Error> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" | "" => Ok(TraceFormat::Auto),
            "classbench" | "cb" | "text" => Ok(TraceFormat::ClassBench),
            "pcap" => Ok(TraceFormat::Pcap),
            "pcapng" => Ok(TraceFormat::PcapNg),
            "binary" | "bin" | "slpt" => Ok(TraceFormat::Binary),
            other => Err(Error::config(format!(
                "unknown trace format '{other}' (known: auto, classbench, pcap, pcapng, binary)"
            ))),
        }
    }

    /// The format's name, as `parse` takes it.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Auto => "auto",
            TraceFormat::ClassBench => "classbench",
            TraceFormat::Pcap => "pcap",
            TraceFormat::PcapNg => "pcapng",
            TraceFormat::Binary => "binary",
        }
    }

    /// Recognises a format by its magic number; text otherwise.
    pub fn detect(bytes: &[u8]) -> TraceFormat {
        match bytes.get(..4) {
            Some(m) if m == binary::MAGIC => TraceFormat::Binary,
            Some(m) if m == superlinear_core::input::PCAPNG_MAGIC => TraceFormat::PcapNg,
            Some(m) if pcap::is_magic(m) => TraceFormat::Pcap,
            _ => TraceFormat::ClassBench,
        }
    }
}

/// Parses trace bytes; `source` names the file in errors.
pub fn parse_trace(bytes: &[u8], source: &str, format: TraceFormat) -> Result<PacketTrace, Error> {
    let format = if format == TraceFormat::Auto { TraceFormat::detect(bytes) } else { format };
    match format {
        TraceFormat::Binary => binary::parse(bytes, source),
        TraceFormat::Pcap => pcap::parse(bytes, source),
        TraceFormat::PcapNg => pcapng::parse(bytes, source),
        TraceFormat::ClassBench | TraceFormat::Auto => {
            let detected = TraceFormat::detect(bytes);
            if detected != TraceFormat::ClassBench {
                // Only a ClassBench trace asked for by name gets here with another's magic number.
                return Err(Error::input(
                    source,
                    None,
                    format!(
                        "not a ClassBench trace: it is a {} trace (give that --trace-format, or auto)",
                        detected.name()
                    ),
                ));
            }
            let text = superlinear_core::input::utf8_text(bytes).map_err(|line| {
                Error::input(
                    source,
                    Some(line),
                    "not a ClassBench trace (not UTF-8 text, or a control byte) nor a pcap, pcapng or binary trace",
                )
            })?;
            classbench::parse(text, source)
        }
    }
}

/// Reads a trace file.
pub fn read_trace(path: &str, format: TraceFormat) -> Result<PacketTrace, Error> {
    parse_trace(&superlinear_core::input::read_bytes(path)?, path, format)
}

/// Encodes packets in `format` (`Auto` means binary).
pub fn encode_trace(packets: &[Packet], format: TraceFormat) -> Vec<u8> {
    match format {
        TraceFormat::Pcap => pcap::write(packets),
        TraceFormat::PcapNg => pcapng::write(packets),
        TraceFormat::ClassBench => classbench::to_text(packets, None).into_bytes(),
        TraceFormat::Binary | TraceFormat::Auto => binary::write(packets),
    }
}

/// How many of `packets` a reader of `format` skips: a frame (pcap, pcapng) carries ports for
/// TCP and UDP only, and the frame decoder passes over the others (`frame::decode`), while the
/// binary and ClassBench forms keep every header.
pub fn skipped_on_reading(packets: &[Packet], format: TraceFormat) -> usize {
    match format {
        TraceFormat::Pcap | TraceFormat::PcapNg => packets.iter().filter(|p| p.proto != 6 && p.proto != 17).count(),
        _ => 0,
    }
}

/// Writes packets to `path` in `format`.
pub fn write_trace(path: &str, packets: &[Packet], format: TraceFormat) -> Result<(), Error> {
    std::fs::write(path, encode_trace(packets, format))
        .map_err(|e| Error::input(path, None, format!("cannot write: {}", superlinear_core::input::io_words(&e))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_format_reader_skips_what_is_neither_tcp_nor_udp() {
        let packets = [Packet::new(1, 2, 3, 4, 6), Packet::new(1, 2, 3, 4, 17), Packet::new(1, 2, 0, 0, 1)];
        for format in [TraceFormat::Pcap, TraceFormat::PcapNg] {
            assert_eq!(skipped_on_reading(&packets, format), 1);
            let read = parse_trace(&encode_trace(&packets, format), "t", format).unwrap();
            assert_eq!(read.packets.len(), 2);
        }
        assert_eq!(skipped_on_reading(&packets, TraceFormat::Binary), 0);
    }

    #[test]
    fn a_text_trace_with_a_bom_is_classbench() {
        let p = superlinear_core::input::scratch_file("packet-trace", "t.txt", b"\xEF\xBB\xBF3221225985 1 2 3 6\n");
        let t = read_trace(&p, TraceFormat::Auto).unwrap();
        assert_eq!(t.packets, vec![Packet::new(3_221_225_985, 1, 2, 3, 6)]);
        let e = read_trace("/dev/zero", TraceFormat::Auto).unwrap_err().to_string();
        assert!(e.starts_with("/dev/zero: not a regular file"), "{e}");
    }
}
