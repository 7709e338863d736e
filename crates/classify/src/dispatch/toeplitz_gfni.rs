//! The low byte of the RSS Toeplitz hash of eight packets at once, with GFNI on AVX-512.
//!
//! Only the indirection table's index is needed to route a packet (7 bits for the standard
//! 128-entry table), and the Toeplitz hash over masked header fields is linear over GF(2) in
//! the header bits. So each of the 13 header bytes contributes an 8×8 bit matrix to the low
//! hash byte, and `GF2P8AFFINEQB` applies eight such matrices to 64 bytes in one instruction
//! (the technique of DPDK's `rte_thash_gfni`). One step: the eight packets' 13 bytes are placed
//! slot-major (one byte permutation per eight slots), two affine transforms give every slot's
//! contribution for every packet, and an XOR fold sums the slots: a few instructions per eight
//! packets instead of a table lookup per header byte and packet.
//!
//! The matrices are read off a [`FieldHasher`]'s tables (a table entry for a single set bit is
//! that bit's column), so this computes exactly what the tables compute; a test checks it
//! against them on random headers for several field sets. Used only where the CPU has the
//! features (checked at run time); everything else uses the tables.

use super::rss::FieldHasher;
use super::toeplitz::MAX_INPUT;
use crate::packet::Packet;

/// Where each Toeplitz input byte (big-endian field order: source address, destination
/// address, source port, destination port, protocol) lies in a [`Packet`] (`repr(C)`,
/// little-endian fields).
const PACKET_OFFSET: [u8; MAX_INPUT] = [3, 2, 1, 0, 7, 6, 5, 4, 9, 8, 11, 10, 12];

/// The bytes of a packet the kernel reads: its five fields, not the padding after them.
const FIELD_BYTES: u16 = (1 << MAX_INPUT) - 1;

// The kernel reads a packet's fields as its first 13 bytes.
const _: () = {
    assert!(std::mem::offset_of!(Packet, src) == 0);
    assert!(std::mem::offset_of!(Packet, dst) == 4);
    assert!(std::mem::offset_of!(Packet, sport) == 8);
    assert!(std::mem::offset_of!(Packet, dport) == 10);
    assert!(std::mem::offset_of!(Packet, proto) == 12);
    assert!(std::mem::size_of::<Packet>() == 16);
};

/// The low hash byte of eight packets per step, where the CPU can.
#[derive(Clone, Debug)]
pub struct GfniLowByte {
    /// Matrices of input slots 0–7 and 8–12 (one per 64-bit lane, zero beyond slot 12).
    matrices: [[i64; 8]; 2],
    /// Byte permutations putting slot s of packet j at byte 8·s + j (slots 0–7, then 8–12).
    permutations: [[u8; 64]; 2],
}

impl GfniLowByte {
    /// The kernel for `hasher`'s field set, or `None` where the CPU lacks AVX-512 (F, BW, VL,
    /// VBMI) or GFNI.
    pub fn new(hasher: &FieldHasher) -> Option<Self> {
        if !Self::supported() {
            return None;
        }
        Some(Self::build(hasher))
    }

    /// Whether this CPU runs the kernel.
    pub fn supported() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512vbmi")
                && std::arch::is_x86_feature_detected!("gfni")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    fn build(hasher: &FieldHasher) -> Self {
        let tables = hasher.tables();
        let mut matrices = [[0i64; 8]; 2];
        for (slot, table) in tables.iter().enumerate() {
            // GF2P8AFFINEQB: result bit b = parity(matrix byte 7 − b AND input byte).
            let mut m = 0u64;
            for b in 0..8 {
                let row = (0..8).fold(0u64, |row, t| row | (((table[1 << t] >> b) & 1) as u64) << t);
                m |= row << (8 * (7 - b));
            }
            matrices[slot / 8][slot % 8] = m as i64;
        }
        let mut permutations = [[0u8; 64]; 2];
        for (slot, &offset) in PACKET_OFFSET.iter().enumerate() {
            for j in 0..8 {
                permutations[slot / 8][8 * (slot % 8) + j] = (16 * j) as u8 + offset;
            }
        }
        Self { matrices, permutations }
    }

    /// Byte j of the result is the low byte of packet j's hash.
    #[inline]
    pub fn low_bytes(&self, packets: [&Packet; 8]) -> u64 {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: a `GfniLowByte` exists only where `supported()` found every feature the
            // kernel is compiled for (`new` is the only constructor).
            unsafe { self.low_bytes_avx512(packets) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = packets;
            unreachable!("GfniLowByte::new returns None off x86-64")
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi,gfni")]
    fn low_bytes_avx512(&self, p: [&Packet; 8]) -> u64 {
        use std::arch::x86_64::*;
        // Straight from the packets into registers: building lanes in memory first would stall
        // each 64-byte load on the narrower stores it spans.
        macro_rules! fields {
            ($p:expr) => {
                // SAFETY: `$p` is a valid `&Packet`; the mask reads only its first 13 bytes,
                // which are its fields (`repr(C)`, checked at compile time above); masked-off
                // bytes are not accessed.
                unsafe { _mm_maskz_loadu_epi8(FIELD_BYTES, ($p as *const Packet).cast()) }
            };
        }
        macro_rules! four {
            ($a:expr, $b:expr, $c:expr, $d:expr) => {
                _mm512_inserti32x4::<3>(
                    _mm512_inserti32x4::<2>(
                        _mm512_inserti32x4::<1>(_mm512_castsi128_si512(fields!($a)), fields!($b)),
                        fields!($c),
                    ),
                    fields!($d),
                )
            };
        }
        let a = four!(p[0], p[1], p[2], p[3]);
        let b = four!(p[4], p[5], p[6], p[7]);
        let [m0, m1] = &self.matrices;
        let [p0, p1] = &self.permutations;
        // SAFETY: each array is exactly 64 bytes, read unaligned.
        let (idx0, idx1, mat0, mat1) = unsafe {
            (
                _mm512_loadu_si512(p0.as_ptr().cast()),
                _mm512_loadu_si512(p1.as_ptr().cast()),
                _mm512_loadu_si512(m0.as_ptr().cast()),
                _mm512_loadu_si512(m1.as_ptr().cast()),
            )
        };
        let slots0 = _mm512_permutex2var_epi8(a, idx0, b);
        let slots1 = _mm512_permutex2var_epi8(a, idx1, b);
        let sum = _mm512_xor_si512(
            _mm512_gf2p8affine_epi64_epi8::<0>(slots0, mat0),
            _mm512_gf2p8affine_epi64_epi8::<0>(slots1, mat1),
        );
        let half = _mm256_xor_si256(_mm512_castsi512_si256(sum), _mm512_extracti64x4_epi64::<1>(sum));
        let quarter = _mm_xor_si128(_mm256_castsi256_si128(half), _mm256_extracti128_si256::<1>(half));
        (_mm_cvtsi128_si64(quarter) ^ _mm_extract_epi64::<1>(quarter)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::FieldMask;

    #[test]
    fn low_bytes_equal_the_tables_on_random_headers() {
        if !GfniLowByte::supported() {
            eprintln!("no AVX-512 VBMI + GFNI here: the table path is the only one in use");
            return;
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for fields in ["sip,dip,sport,dport,proto", "dport", "sip,dip", "dip/8,dport/8,proto", "sip/16,dip/16", "proto"]
        {
            let hasher = FieldHasher::new(FieldMask::parse(fields).unwrap());
            let kernel = GfniLowByte::new(&hasher).unwrap();
            for _ in 0..2_000 {
                let packets: [Packet; 8] = std::array::from_fn(|_| {
                    let (r, s) = (next(), next());
                    Packet::new(r as u32, (r >> 32) as u32, s as u16, (s >> 16) as u16, (s >> 32) as u8)
                });
                let got = kernel.low_bytes(std::array::from_fn(|j| &packets[j]));
                for (j, p) in packets.iter().enumerate() {
                    assert_eq!((got >> (8 * j)) as u8, hasher.hash(p) as u8, "{fields}, packet {j}: {p:?}");
                }
            }
        }
    }
}
