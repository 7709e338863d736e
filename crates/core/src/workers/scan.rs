//! The linear scan shared by the static and the move-to-front list, so that the two differ only
//! in self-adjustment and never in how fast they compare keys.

/// Position of `key` in `items`, scanning from the front in chunks the compiler vectorises.
#[inline]
pub fn position(items: &[u64], key: u64) -> Option<usize> {
    const CHUNK: usize = 8;
    let mut chunks = items.chunks_exact(CHUNK);
    let mut base = 0;
    for chunk in &mut chunks {
        // Branch-free test of the whole chunk first; only a hit pays for the exact position.
        if chunk.iter().fold(false, |acc, &x| acc | (x == key)) {
            return chunk.iter().position(|&x| x == key).map(|i| base + i);
        }
        base += CHUNK;
    }
    chunks.remainder().iter().position(|&x| x == key).map(|i| base + i)
}
