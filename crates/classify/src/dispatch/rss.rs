//! Receive Side Scaling (paper §4.2): the Toeplitz hash over a configurable set of header
//! fields, its low bits indexing an indirection table that names the worker.
//!
//! Fields are hashed in the fixed order source address, destination address, source port,
//! destination port, protocol (network byte order), keeping only the selected ones: with
//! `sip,dip` and `sip,dip,sport,dport` this is exactly the RSS of a NIC (verified against
//! Microsoft's vectors); `proto` adds one byte.

use super::descriptor::{Descriptor, RouteDescriptors};
use super::toeplitz::{Toeplitz, MAX_INPUT};
use super::toeplitz_gfni::GfniLowByte;
use crate::packet::Packet;
use superlinear_core::dispatch::{Dispatcher, WorkerLoads};
use superlinear_core::Error;

/// Entries in the indirection table (a power of two; 128 as in the RSS specification).
pub const RETA_SIZE: usize = 128;

/// Which header fields are hashed, and how many high bits of each (a mask): 32 / 16 / 8 bits
/// mean the whole field, fewer a prefix of it (used by the rule-aware dispatcher).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct FieldMask {
    /// Source-address prefix bits (0 = not hashed).
    pub src: u8,
    /// Destination-address prefix bits.
    pub dst: u8,
    /// Source-port high bits.
    pub sport: u8,
    /// Destination-port high bits.
    pub dport: u8,
    /// Protocol bits (0 or 8).
    pub proto: u8,
}

/// The mask of a field's leading `bits` (32-bit fields).
pub(crate) fn mask32(bits: u8) -> u32 {
    if bits == 0 {
        0
    } else {
        u32::MAX << (32 - bits.min(32) as u32)
    }
}

/// The mask of a field's leading `bits` (16-bit fields).
pub(crate) fn mask16(bits: u8) -> u16 {
    if bits == 0 {
        0
    } else {
        u16::MAX << (16 - bits.min(16) as u32)
    }
}

impl FieldMask {
    /// The 5-tuple (whole fields).
    pub const FIVE_TUPLE: FieldMask = FieldMask { src: 32, dst: 32, sport: 16, dport: 16, proto: 8 };

    /// Parses a comma-separated field list: `sip`, `dip`, `sport`, `dport`, `proto` (aliases
    /// `src`, `dst`, `src-ip`, `dst-ip`, `src-port`, `dst-port`, `protocol`), or `5tuple`;
    /// an address may carry a prefix length (`dip/24`). An empty entry (`sip,,dip`) or a field
    /// named twice (`sip,src`, `5tuple,dport`) is refused: it was a typo that hashed other fields.
    pub fn parse(list: &str) -> Result<FieldMask, Error> {
        let mut m = FieldMask::default();
        let entries: Vec<&str> = list.split(',').map(str::trim).collect();
        if entries.len() > 1 && entries.iter().any(|f| f.is_empty()) {
            return Err(Error::config(format!("empty field in RSS field list '{list}'")));
        }
        for f in entries.into_iter().filter(|f| !f.is_empty()) {
            let (name, bits) = match f.split_once('/') {
                Some((n, b)) => (n, Some(b)),
                None => (f, None),
            };
            let (slot, width): (&mut u8, u8) = match name {
                "sip" | "src" | "src-ip" | "saddr" => (&mut m.src, 32),
                "dip" | "dst" | "dst-ip" | "daddr" => (&mut m.dst, 32),
                "sport" | "src-port" => (&mut m.sport, 16),
                "dport" | "dst-port" => (&mut m.dport, 16),
                "proto" | "protocol" => (&mut m.proto, 8),
                "5tuple" | "5-tuple" if bits.is_none() => {
                    if m != FieldMask::default() {
                        return Err(Error::config(format!("'{f}' in '{list}' names fields already named")));
                    }
                    m = FieldMask::FIVE_TUPLE;
                    continue;
                }
                other => {
                    return Err(Error::config(format!(
                        "unknown RSS field '{other}' (known: sip, dip, sport, dport, proto, 5tuple)"
                    )))
                }
            };
            if *slot != 0 {
                return Err(Error::config(format!("field '{name}' in '{list}' is named twice")));
            }
            *slot = match bits {
                None => width,
                Some(b) => b
                    .parse::<u8>()
                    .ok()
                    .filter(|&v| v >= 1 && v <= width)
                    .ok_or_else(|| Error::config(format!("bits in '{f}' must be 1..{width}")))?,
            };
        }
        if m == FieldMask::default() {
            return Err(Error::config("an RSS field list needs at least one field (sip, dip, sport, dport, proto)"));
        }
        Ok(m)
    }

    /// The canonical spelling (`sip,dip,sport,dport,proto`, prefixes as `dip/24`).
    pub fn name(&self) -> String {
        let mut parts = Vec::new();
        for (bits, width, n) in [
            (self.src, 32, "sip"),
            (self.dst, 32, "dip"),
            (self.sport, 16, "sport"),
            (self.dport, 16, "dport"),
            (self.proto, 8, "proto"),
        ] {
            if bits == width {
                parts.push(n.to_string());
            } else if bits > 0 {
                parts.push(format!("{n}/{bits}"));
            }
        }
        parts.join(",")
    }

    /// Hash input bytes of `p` under this mask; returns the length used.
    #[inline]
    pub fn input(&self, p: &Packet, out: &mut [u8; MAX_INPUT]) -> usize {
        let mut n = 0;
        if self.src > 0 {
            out[n..n + 4].copy_from_slice(&(p.src & mask32(self.src)).to_be_bytes());
            n += 4;
        }
        if self.dst > 0 {
            out[n..n + 4].copy_from_slice(&(p.dst & mask32(self.dst)).to_be_bytes());
            n += 4;
        }
        if self.sport > 0 {
            out[n..n + 2].copy_from_slice(&(p.sport & mask16(self.sport)).to_be_bytes());
            n += 2;
        }
        if self.dport > 0 {
            out[n..n + 2].copy_from_slice(&(p.dport & mask16(self.dport)).to_be_bytes());
            n += 2;
        }
        if self.proto > 0 {
            out[n] = p.proto & (0xffu16 << (8 - self.proto.min(8) as u32)) as u8;
            n += 1;
        }
        n
    }
}

/// The Toeplitz hash of one field selection, folded into 13 byte tables at fixed packet byte
/// slots (source address bytes 0–3, destination 4–7, source port 8–9, destination port 10–11,
/// protocol 12): a slot's table already holds its masked byte's contribution at the byte's
/// position in the hash input, and an unselected slot's table is zero. A hash is then 13
/// unconditional lookups, no input assembly and no branches (the dispatcher is the serial
/// part of every run).
#[derive(Clone)]
pub struct FieldHasher {
    tables: Box<[[u32; 256]; MAX_INPUT]>,
}

impl FieldHasher {
    /// Tables for `fields` with the standard key.
    pub fn new(fields: FieldMask) -> Self {
        let reference = Toeplitz::default();
        let mut tables = Box::new([[0u32; 256]; MAX_INPUT]);
        // Input position of each packet byte slot, and the mask of that byte.
        let widths = [(fields.src, 4usize), (fields.dst, 4), (fields.sport, 2), (fields.dport, 2), (fields.proto, 1)];
        let (mut slot, mut pos) = (0usize, 0usize);
        for (bits, bytes) in widths {
            for b in 0..bytes {
                if bits > 0 {
                    // Mask bits of this byte: the leading `bits` of the field.
                    let first_bit = (b * 8) as i32;
                    let keep = (bits as i32 - first_bit).clamp(0, 8) as u32;
                    let mask = if keep == 0 { 0u8 } else { (0xffu16 << (8 - keep)) as u8 };
                    for v in 0..256usize {
                        let mut input = [0u8; MAX_INPUT];
                        input[pos] = v as u8 & mask;
                        tables[slot][v] = reference.hash(&input[..=pos]);
                    }
                    pos += 1;
                }
                slot += 1;
            }
        }
        Self { tables }
    }

    /// Each input slot's contribution of each byte value (13 slots: the 5-tuple, big-endian).
    pub fn tables(&self) -> &[[u32; 256]; MAX_INPUT] {
        &self.tables
    }

    /// The hash of `p`.
    #[inline(always)]
    pub fn hash(&self, p: &Packet) -> u32 {
        let t = &self.tables;
        let (s, d) = (p.src.to_be_bytes(), p.dst.to_be_bytes());
        let (sp, dp) = (p.sport.to_be_bytes(), p.dport.to_be_bytes());
        (t[0][s[0] as usize] ^ t[1][s[1] as usize] ^ t[2][s[2] as usize] ^ t[3][s[3] as usize])
            ^ (t[4][d[0] as usize] ^ t[5][d[1] as usize] ^ t[6][d[2] as usize] ^ t[7][d[3] as usize])
            ^ (t[8][sp[0] as usize] ^ t[9][sp[1] as usize] ^ t[10][dp[0] as usize] ^ t[11][dp[1] as usize])
            ^ t[12][p.proto as usize]
    }
}

/// RSS: Toeplitz over the masked fields, indirection table entry `i` → worker `i mod k`.
pub struct RssToeplitzDispatcher {
    fields: FieldMask,
    hasher: FieldHasher,
    reta: Vec<u16>,
    reta_mask: usize,
    /// Eight low hash bytes per step, where the CPU can and the table index fits in a byte.
    gfni: Option<GfniLowByte>,
}

impl RssToeplitzDispatcher {
    /// RSS over `fields` for `k` workers with the standard key.
    pub fn new(fields: FieldMask, k: usize) -> Self {
        let k = k.clamp(1, u16::MAX as usize);
        // Table larger than k when k exceeds the standard size, so that every worker appears.
        let size = RETA_SIZE.max(k.next_power_of_two());
        let reta = (0..size).map(|i| (i % k) as u16).collect();
        let hasher = FieldHasher::new(fields);
        let gfni = if size <= 256 { GfniLowByte::new(&hasher) } else { None };
        Self { fields, hasher, reta, reta_mask: size - 1, gfni }
    }

    /// The 32-bit Toeplitz hash of `p` over the selected fields.
    #[inline]
    pub fn hash(&self, p: &Packet) -> u32 {
        self.hasher.hash(p)
    }

    /// The hashed fields.
    pub fn fields(&self) -> FieldMask {
        self.fields
    }

    #[inline(always)]
    fn worker(&self, p: &Packet) -> usize {
        self.reta[self.hasher.hash(p) as usize & self.reta_mask] as usize
    }
}

impl RouteDescriptors for RssToeplitzDispatcher {
    /// Eight packets per GFNI step where the CPU has it (the same workers as [`route`]:
    /// tested), one by one through the tables otherwise and for a remainder.
    ///
    /// [`route`]: Dispatcher::route
    #[inline]
    fn route_descriptors(&mut self, packets: &[Packet], descriptors: &[Descriptor], workers: &mut [u32]) {
        let mut done = 0;
        if let Some(gfni) = &self.gfni {
            for (ds, out) in descriptors.chunks_exact(8).zip(workers.chunks_exact_mut(8)) {
                let low = gfni.low_bytes(std::array::from_fn(|j| &packets[ds[j] as usize]));
                for (j, slot) in out.iter_mut().enumerate() {
                    *slot = self.reta[(low >> (8 * j)) as u8 as usize & self.reta_mask] as u32;
                }
            }
            done = descriptors.len() / 8 * 8;
        }
        for (d, slot) in descriptors[done..].iter().zip(&mut workers[done..]) {
            *slot = self.worker(&packets[*d as usize]) as u32;
        }
    }
}

impl Dispatcher<Packet> for RssToeplitzDispatcher {
    #[inline]
    fn route(&mut self, p: &Packet, _: &WorkerLoads<'_>) -> usize {
        self.worker(p)
    }

    fn home(&self, p: &Packet) -> Option<usize> {
        Some(self.worker(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_lists_parse_and_name() {
        assert_eq!(FieldMask::parse("sip,dip,sport,dport,proto").unwrap(), FieldMask::FIVE_TUPLE);
        assert_eq!(FieldMask::parse("5tuple").unwrap().name(), "sip,dip,sport,dport,proto");
        assert_eq!(FieldMask::parse("dst-port").unwrap().name(), "dport");
        assert_eq!(FieldMask::parse("dip/24,dport").unwrap().name(), "dip/24,dport");
        assert!(FieldMask::parse("dip/40").is_err());
        assert!(FieldMask::parse("mac").is_err());
        assert!(FieldMask::parse("").is_err());
        for twice in ["sip,,dip", "sip,", "sip,sip", "sip,src", "5tuple,dport", "dport,5tuple", "dip/24,dip"] {
            assert!(FieldMask::parse(twice).is_err(), "{twice}");
        }
    }

    #[test]
    fn rss_uses_the_verified_hash_and_spreads() {
        let d = RssToeplitzDispatcher::new(FieldMask::parse("sip,dip,sport,dport").unwrap(), 4);
        let p =
            Packet::new(u32::from_be_bytes([66, 9, 149, 187]), u32::from_be_bytes([161, 142, 100, 80]), 2794, 1766, 6);
        assert_eq!(d.hash(&p), 0x51cc_c178);
        let two = RssToeplitzDispatcher::new(FieldMask::parse("sip,dip").unwrap(), 4);
        assert_eq!(two.hash(&p), 0x323e_8fc2);
        // Masked fields hash like the masked input.
        let masked = FieldHasher::new(FieldMask::parse("dip/20,dport").unwrap());
        let mut buf = [0u8; MAX_INPUT];
        let n = FieldMask::parse("dip/20,dport").unwrap().input(&p, &mut buf);
        assert_eq!(masked.hash(&p), Toeplitz::default().hash(&buf[..n]));
        let mut d = RssToeplitzDispatcher::new(FieldMask::parse("dport").unwrap(), 8);
        let loads = WorkerLoads { dispatched: &[0; 8] };
        let mut counts = [0u32; 8];
        for port in 0..8000u16 {
            counts[d.route(&Packet::new(1, 2, 3, port, 17), &loads)] += 1;
        }
        assert!(counts.iter().all(|&c| (700..1300).contains(&c)), "{counts:?}");
        // Only the destination port matters.
        assert_eq!(d.route(&Packet::new(1, 2, 3, 80, 17), &loads), d.route(&Packet::new(9, 8, 7, 80, 6), &loads));
    }
}
