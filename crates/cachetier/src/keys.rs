//! Which row each benchmark request asks for: uniform over the N rows, Zipf(α) (the skew study,
//! DistCache §6), or a hot set of H rows, uniform or Zipf(α) within it (Fig. 11 as the paper
//! shows it: the hit rate of k key-hashed replicas reaches ~100 % once they hold the H rows).
//! Ranks map to rows through an affine permutation of 0..N, so the hottest rows are scattered
//! over the key space without an N-entry table per thread. Zipf over all rows permutes with the
//! run's seed; a hot set permutes with a fixed seed ([`HOT_PERM_SEED`]), so every run and every
//! pre-fill of `hot:H` agrees on which H rows are hot.

use crate::error::{Error, Result};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Zipf};
use rand_pcg::Pcg64Mcg;

/// A key distribution over `rows` rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeyDist {
    Uniform,
    Zipf(f64),
    /// Requests over a hot set of `hot` rows only: uniform (`alpha` = None) or Zipf(α) by rank.
    Hot {
        hot: u64,
        alpha: Option<f64>,
    },
}

/// The permutation seed of every hot set.
pub const HOT_PERM_SEED: u64 = 0x5eed_0f11;

fn parse_alpha(t: &str, a: &str) -> Result<f64> {
    let alpha: f64 = a.parse().map_err(|_| Error::config(format!("bad zipf exponent in '{t}'")))?;
    if !(alpha.is_finite() && alpha > 0.0) {
        return Err(Error::config(format!("zipf exponent in '{t}' must be a positive finite number, got {a}")));
    }
    Ok(alpha)
}

impl KeyDist {
    /// Parses `uniform`, `zipf:ALPHA` / `zipfALPHA`, `hot:H` or `hot:H:zipf:ALPHA`.
    pub fn parse(text: &str) -> Result<Self> {
        let t = text.trim();
        if t == "uniform" {
            return Ok(KeyDist::Uniform);
        }
        if let Some(rest) = t.strip_prefix("hot:") {
            let (h, alpha) = match rest.split_once(':') {
                None => (rest, None),
                Some((h, z)) => match z.strip_prefix("zipf:") {
                    Some(a) => (h, Some(parse_alpha(t, a)?)),
                    None => return Err(Error::config(format!("bad hot set '{t}' (hot:H or hot:H:zipf:ALPHA)"))),
                },
            };
            let hot: u64 =
                h.replace('_', "").parse().map_err(|_| Error::config(format!("bad hot set size in '{t}'")))?;
            if hot == 0 {
                return Err(Error::config(format!("the hot set needs at least one row, got '{t}'")));
            }
            return Ok(KeyDist::Hot { hot, alpha });
        }
        if let Some(a) = t.strip_prefix("zipf") {
            return Ok(KeyDist::Zipf(parse_alpha(t, a.trim_start_matches(':'))?));
        }
        Err(Error::config(format!("unknown key distribution '{t}' (uniform, zipf:ALPHA, hot:H, hot:H:zipf:ALPHA)")))
    }

    /// A label for result rows.
    pub fn label(&self) -> String {
        match self {
            KeyDist::Uniform => "uniform".into(),
            KeyDist::Zipf(a) => format!("zipf{a}"),
            KeyDist::Hot { hot, alpha: None } => format!("hot{hot}"),
            KeyDist::Hot { hot, alpha: Some(a) } => format!("hot{hot}-zipf{a}"),
        }
    }

    /// The rows requests can ask for, out of `rows`.
    pub fn support(&self, rows: u64) -> u64 {
        match self {
            KeyDist::Hot { hot, .. } => (*hot).min(rows),
            _ => rows,
        }
    }
}

/// A per-thread stream of row ids.
pub struct KeyStream {
    rows: u64,
    /// Ranks drawn: 0..support.
    support: u64,
    /// Whether ranks go through the permutation (uniform over all rows does not need it).
    permute: bool,
    rng: Pcg64Mcg,
    zipf: Option<Zipf<f64>>,
    mul: u64,
    add: u64,
}

/// The inverse of `a` modulo `m` (gcd(a, m) = 1).
fn mod_inverse(a: u64, m: u64) -> u64 {
    let (mut t, mut new_t, mut r, mut new_r) = (0i128, 1i128, m as i128, (a % m.max(1)) as i128);
    while new_r != 0 {
        let q = r / new_r;
        (t, new_t) = (new_t, t - q * new_t);
        (r, new_r) = (new_r, r - q * new_r);
    }
    t.rem_euclid(m.max(1) as i128) as u64
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
        if let KeyDist::Hot { hot, .. } = dist {
            if hot > rows {
                return Err(Error::config(format!("hot:{hot}: the hot set is larger than the {rows} rows")));
            }
        }
        let support = dist.support(rows);
        let zipf = match dist {
            KeyDist::Uniform | KeyDist::Hot { alpha: None, .. } => None,
            KeyDist::Zipf(a) | KeyDist::Hot { alpha: Some(a), .. } => {
                Some(Zipf::new(support, a).map_err(|e| Error::config(format!("zipf({a}): {e}")))?)
            }
        };
        let perm_seed = if matches!(dist, KeyDist::Hot { .. }) { HOT_PERM_SEED } else { perm_seed };
        let mut prng = Pcg64Mcg::seed_from_u64(perm_seed);
        let mut mul = prng.gen_range(1..rows.max(2)) | 1;
        while gcd(mul, rows) != 1 {
            mul += 2;
        }
        let add = prng.gen_range(0..rows);
        let permute = dist != KeyDist::Uniform;
        Ok(Self { rows, support, permute, rng: Pcg64Mcg::seed_from_u64(seed), zipf, mul: mul % rows.max(1), add })
    }

    /// The next row id.
    #[inline]
    pub fn next_id(&mut self) -> u64 {
        if !self.permute {
            return self.rng.gen_range(0..self.rows);
        }
        let rank = match &self.zipf {
            None => self.rng.gen_range(0..self.support),
            Some(z) => (z.sample(&mut self.rng) as u64).clamp(1, self.support) - 1,
        };
        self.row_of(rank)
    }

    /// The row of popularity rank `rank` (0: the hottest).
    pub fn row_of(&self, rank: u64) -> u64 {
        ((rank as u128 * self.mul.max(1) as u128 + self.add as u128) % self.rows as u128) as u64
    }

    /// The popularity rank of row `id` (the inverse of [`KeyStream::row_of`]); for uniform over
    /// all rows, the row itself.
    pub fn rank_of(&self, id: u64) -> u64 {
        if !self.permute {
            return id;
        }
        let inv = mod_inverse(self.mul.max(1), self.rows);
        let shifted = (id % self.rows + self.rows - self.add % self.rows) % self.rows;
        ((shifted as u128 * inv as u128) % self.rows as u128) as u64
    }

    /// Whether requests can ask for row `id`.
    pub fn in_support(&self, id: u64) -> bool {
        self.support >= self.rows || self.rank_of(id) < self.support
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hot_set_larger_than_the_table_is_refused() {
        let e = KeyStream::new(KeyDist::parse("hot:500").unwrap(), 100, 1, 1).err().unwrap().to_string();
        assert!(e.contains("hot:500: the hot set is larger than the 100 rows"), "{e}");
        assert!(KeyStream::new(KeyDist::parse("hot:100").unwrap(), 100, 1, 1).is_ok());
    }

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
    fn hot_set_draws_only_its_rows_and_is_the_same_for_every_seed() {
        let d = KeyDist::parse("hot:300").unwrap();
        assert_eq!(d, KeyDist::Hot { hot: 300, alpha: None });
        assert_eq!(KeyDist::parse("hot:300:zipf:0.9").unwrap(), KeyDist::Hot { hot: 300, alpha: Some(0.9) });
        assert!(KeyDist::parse("hot:0").is_err() && KeyDist::parse("hot:x").is_err());
        assert!(KeyDist::parse("hot:10:pareto").is_err());
        let a = KeyStream::new(d, 1000, 1, 2).unwrap();
        let mut b = KeyStream::new(d, 1000, 77, 3).unwrap();
        let hot: Vec<u64> = (0..1000).filter(|&id| a.in_support(id)).collect();
        assert_eq!(hot.len(), 300);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..20_000 {
            let id = b.next_id();
            assert!(a.in_support(id), "row {id} outside the hot set");
            seen.insert(id);
        }
        assert_eq!(seen.len(), 300);
        for id in 0..1000 {
            assert_eq!(a.row_of(a.rank_of(id)), id);
        }
    }

    #[test]
    fn affine_map_is_a_permutation() {
        let s = KeyStream::new(KeyDist::Zipf(1.0), 100, 9, 1).unwrap();
        let mut seen: Vec<u64> = (0..100u64).map(|r| (r * s.mul + s.add) % 100).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..100).collect::<Vec<_>>());
    }
}
