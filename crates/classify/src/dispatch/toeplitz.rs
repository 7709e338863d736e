//! The Toeplitz hash of Receive Side Scaling (Microsoft RSS specification): each set bit i of
//! the input (most significant bit of the first byte first) XORs in the 32-bit window of the
//! key starting at bit i. Precomputed as one 256-entry table per input byte, so a hash is one
//! lookup and XOR per byte.

/// The standard 40-byte key of the Microsoft RSS verification suite (also most NICs' default).
pub const MICROSOFT_KEY: [u8; 40] = [
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b,
    0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac,
    0x01, 0xfa,
];

/// The longest input hashed (src, dst, sport, dport, proto).
pub const MAX_INPUT: usize = 13;

/// The 32 key bits starting at bit `i`.
fn window(key: &[u8], i: usize) -> u32 {
    let mut w = 0u64;
    for b in 0..5 {
        w = (w << 8) | *key.get(i / 8 + b).unwrap_or(&0) as u64;
    }
    (w >> (8 - i % 8)) as u32
}

/// Bit-by-bit Toeplitz hash, the specification's definition.
pub fn toeplitz_reference(key: &[u8], input: &[u8]) -> u32 {
    let mut h = 0u32;
    for (byte_i, &byte) in input.iter().enumerate() {
        for bit in 0..8 {
            if byte & (0x80 >> bit) != 0 {
                h ^= window(key, byte_i * 8 + bit);
            }
        }
    }
    h
}

/// A table-driven Toeplitz hasher for inputs up to [`MAX_INPUT`] bytes.
#[derive(Clone)]
pub struct Toeplitz {
    tables: Box<[[u32; 256]; MAX_INPUT]>,
}

impl Toeplitz {
    /// Tables for `key` (at least `MAX_INPUT + 4` bytes long).
    pub fn new(key: &[u8]) -> Self {
        let mut tables = Box::new([[0u32; 256]; MAX_INPUT]);
        for (i, t) in tables.iter_mut().enumerate() {
            let w: [u32; 8] = std::array::from_fn(|bit| window(key, i * 8 + bit));
            for (v, slot) in t.iter_mut().enumerate() {
                *slot = (0..8).filter(|bit| v & (0x80 >> bit) != 0).fold(0, |h, bit| h ^ w[bit]);
            }
        }
        Self { tables }
    }

    /// The hash of `input` (at most [`MAX_INPUT`] bytes).
    #[inline]
    pub fn hash(&self, input: &[u8]) -> u32 {
        input.iter().zip(self.tables.iter()).fold(0, |h, (&b, t)| h ^ t[b as usize])
    }
}

impl Default for Toeplitz {
    fn default() -> Self {
        Self::new(&MICROSOFT_KEY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(a: [u8; 4]) -> [u8; 4] {
        a
    }

    /// The published RSS verification vectors (IPv4): source, destination, source port,
    /// destination port, hash without ports, hash with ports (TCP/UDP).
    /// (source, destination, source port, destination port, hash without ports, with ports).
    type Vector = ([u8; 4], [u8; 4], u16, u16, u32, u32);

    const VECTORS: [Vector; 5] = [
        ([66, 9, 149, 187], [161, 142, 100, 80], 2794, 1766, 0x323e_8fc2, 0x51cc_c178),
        ([199, 92, 111, 2], [65, 69, 140, 83], 14230, 4739, 0xd718_262a, 0xc626_b0ea),
        ([24, 19, 198, 95], [12, 22, 207, 184], 12898, 38024, 0xd2d0_a5de, 0x5c2b_394a),
        ([38, 27, 205, 30], [209, 142, 163, 6], 48228, 2217, 0x8298_9176, 0xafc7_327f),
        ([153, 39, 163, 191], [202, 188, 127, 2], 44251, 1303, 0x5d18_09c5, 0x10e8_28a2),
    ];

    #[test]
    fn microsoft_verification_vectors() {
        let t = Toeplitz::default();
        for (src, dst, sp, dp, h2, h4) in VECTORS {
            let mut input = Vec::new();
            input.extend_from_slice(&ip(src));
            input.extend_from_slice(&ip(dst));
            assert_eq!(toeplitz_reference(&MICROSOFT_KEY, &input), h2);
            assert_eq!(t.hash(&input), h2);
            input.extend_from_slice(&sp.to_be_bytes());
            input.extend_from_slice(&dp.to_be_bytes());
            assert_eq!(toeplitz_reference(&MICROSOFT_KEY, &input), h4);
            assert_eq!(t.hash(&input), h4);
        }
    }
}
