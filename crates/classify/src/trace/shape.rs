//! Traces with more or less temporal locality than a given one, over the same headers: what a
//! self-adjusting classifier gains from depends on it (paper §4.2), so benchmarks show both ends.
//!
//! * [`shuffled`]: the same packets in a seeded random order: each header as often as before,
//!   no temporal locality left.
//! * [`trains`]: packet trains: the first `n / length` packets, each repeated `length` times in
//!   a row (a flow's burst), for a trace of the same length with high temporal locality.

use crate::packet::Packet;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_pcg::Pcg64;

/// The packets in a random order (seeded).
pub fn shuffled(packets: &[Packet], seed: u64) -> Vec<Packet> {
    let mut out = packets.to_vec();
    out.shuffle(&mut Pcg64::seed_from_u64(seed));
    out
}

/// Trains of `length` copies of each of the first `packets.len() / length` packets (at least
/// one), as long as the input.
pub fn trains(packets: &[Packet], length: usize) -> Vec<Packet> {
    let length = length.max(1);
    let n = packets.len();
    packets.iter().take(n.div_ceil(length)).flat_map(|p| std::iter::repeat_n(*p, length)).take(n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_headers_other_order_and_trains_of_the_given_length() {
        let p: Vec<Packet> = (0..100u32).map(|i| Packet::new(i, i, 1, 2, 6)).collect();
        let s = shuffled(&p, 7);
        assert_ne!(s, p);
        let mut sorted = s.clone();
        sorted.sort_by_key(|q| q.src);
        assert_eq!(sorted, p);
        assert_eq!(shuffled(&p, 7), s, "seeded");
        let t = trains(&p, 16);
        assert_eq!(t.len(), 100);
        assert!(t[..16].iter().all(|q| q.src == 0) && t[16].src == 1 && t[99].src == 6);
    }
}
