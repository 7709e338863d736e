//! Which row each benchmark request asks for: uniform over the N rows (paper App. B) or Zipf(α)
//! (the skew study, DistCache §6). Zipf ranks map to rows through a seeded affine permutation of
//! 0..N, so the hottest rows are scattered over the key space without an N-entry table per
//! thread.

use crate::error::{Error, Result};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Zipf};
use rand_pcg::Pcg64Mcg;

/// A key distribution over `rows` rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeyDist {
    Uniform,
    Zipf(f64),
}

impl KeyDist {
    /// Parses `uniform` or `zipf:ALPHA` / `zipfALPHA`.
    pub fn parse(text: &str) -> Result<Self> {
        let t = text.trim();
        if t == "uniform" {
            return Ok(KeyDist::Uniform);
        }
        if let Some(a) = t.strip_prefix("zipf") {
            let a = a.trim_start_matches(':');
            let alpha: f64 = a.parse().map_err(|_| Error::config(format!("bad zipf exponent in '{t}'")))?;
            if !(alpha.is_finite() && alpha > 0.0) {
                return Err(Error::config(format!("zipf exponent must be positive, got {alpha}")));
            }
            return Ok(KeyDist::Zipf(alpha));
        }
        Err(Error::config(format!("unknown key distribution '{t}' (uniform, zipf:ALPHA)")))
    }

    /// A label for result rows.
    pub fn label(&self) -> String {
        match self {
            KeyDist::Uniform => "uniform".into(),
            KeyDist::Zipf(a) => format!("zipf{a}"),
        }
    }
}

/// A per-thread stream of row ids.
pub struct KeyStream {
    rows: u64,
    rng: Pcg64Mcg,
    zipf: Option<Zipf<f64>>,
    mul: u64,
    add: u64,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl KeyStream {
    /// A stream over `rows` rows; `perm_seed` must be shared by all threads of a run (it defines
    /// which rows are hot), `seed` differs per thread.
    pub fn new(dist: KeyDist, rows: u64, perm_seed: u64, seed: u64) -> Result<Self> {
        if rows == 0 {
            return Err(Error::config("the key space needs at least one row"));
        }
        let zipf = match dist {
            KeyDist::Uniform => None,
            KeyDist::Zipf(a) => Some(Zipf::new(rows, a).map_err(|e| Error::config(format!("zipf({a}): {e}")))?),
        };
        let mut prng = Pcg64Mcg::seed_from_u64(perm_seed);
        let mut mul = prng.gen_range(1..rows.max(2)) | 1;
        while gcd(mul, rows) != 1 {
            mul += 2;
        }
        let add = prng.gen_range(0..rows);
        Ok(Self { rows, rng: Pcg64Mcg::seed_from_u64(seed), zipf, mul: mul % rows.max(1), add })
    }

    /// The next row id.
    #[inline]
    pub fn next_id(&mut self) -> u64 {
        match &self.zipf {
            None => self.rng.gen_range(0..self.rows),
            Some(z) => {
                let rank = (z.sample(&mut self.rng) as u64).clamp(1, self.rows) - 1;
                ((rank as u128 * self.mul.max(1) as u128 + self.add as u128) % self.rows as u128) as u64
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_hot_row_is_a_permuted_rank() {
        let mut s = KeyStream::new(KeyDist::Zipf(0.99), 1000, 5, 1).unwrap();
        let mut counts = vec![0u32; 1000];
        for _ in 0..50_000 {
            counts[s.next_id() as usize] += 1;
        }
        let top = *counts.iter().max().unwrap() as f64 / 50_000.0;
        assert!(top > 0.08, "top share {top}");
        assert!(KeyDist::parse("zipf:0.9").is_ok() && KeyDist::parse("zipf0.99").is_ok());
        assert!(KeyDist::parse("zipf:-1").is_err() && KeyDist::parse("pareto").is_err());
    }

    #[test]
    fn affine_map_is_a_permutation() {
        let s = KeyStream::new(KeyDist::Zipf(1.0), 100, 9, 1).unwrap();
        let mut seen: Vec<u64> = (0..100u64).map(|r| (r * s.mul + s.add) % 100).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..100).collect::<Vec<_>>());
    }
}
