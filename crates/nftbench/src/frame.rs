//! The frames of a whole trace in one buffer, built once and sent many times by the
//! [`crate::sender`]. The frames themselves are the classify crate's
//! ([`superlinear_classify::trace::encode`]: valid Ethernet/IPv4/TCP/UDP, checksums included).

use superlinear_classify::packet::Packet;
use superlinear_classify::trace::encode::{write_frame, Macs, FRAME_LEN};

/// Distance between frames in a [`Frames`] buffer (cache-line friendly).
pub const STRIDE: usize = 64;

/// The frames of a whole trace in one buffer, [`STRIDE`] bytes apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frames {
    bytes: Vec<u8>,
}

impl Frames {
    /// Builds the frame of every packet (IP identification = index mod 2^16).
    pub fn build(packets: &[Packet], macs: &Macs) -> Self {
        let mut bytes = vec![0u8; packets.len() * STRIDE];
        for (i, (p, slot)) in packets.iter().zip(bytes.chunks_exact_mut(STRIDE)).enumerate() {
            write_frame(p, macs, i as u16, &mut slot[..FRAME_LEN]);
        }
        Self { bytes }
    }

    /// Number of frames.
    pub fn len(&self) -> usize {
        self.bytes.len() / STRIDE
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Frame `i`.
    pub fn get(&self, i: usize) -> &[u8] {
        &self.bytes[i * STRIDE..i * STRIDE + FRAME_LEN]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_i_is_packet_i_with_identification_i() {
        let macs = Macs { dst: [0x02, 0x53, 0x4c, 0, 0, 2], src: [0x02, 0x53, 0x4c, 0, 0, 1] };
        let packets: Vec<Packet> =
            (0..300u32).map(|i| Packet::new(i, !i, i as u16, 7, [6, 17, 1][i as usize % 3])).collect();
        let frames = Frames::build(&packets, &macs);
        assert_eq!(frames.len(), packets.len());
        let mut want = [0u8; FRAME_LEN];
        for (i, p) in packets.iter().enumerate() {
            write_frame(p, &macs, i as u16, &mut want);
            assert_eq!(frames.get(i), &want[..], "frame {i}");
        }
    }
}
