//! Synthetic traces of bursty and paced objects, the two kinds the thesis contrasts (§2.3.1,
//! §2.4.2): a *bursty* object arrives in request trains (a geometric number of requests a few
//! steps apart, then a long idle gap), a *paced* one at a steady period with some jitter. Object
//! rates follow a Zipf law and add up to one request per step, so a gap of g time units is about
//! g steps. Every object runs its own arrival process; the trace is their merge in time order.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufWriter, Write};
use superlinear_core::Error;

/// What to generate; as a config (`latency trace`), missing fields take the defaults and
/// unknown ones are rejected.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TraceSpec {
    /// Requests (steps).
    pub requests: usize,
    /// Objects.
    pub objects: usize,
    /// Share of the objects that are bursty.
    pub bursty_fraction: f64,
    /// Mean requests per train of a bursty object (at least 1).
    pub burst_length: f64,
    /// Mean steps between the requests of a train.
    pub burst_gap: f64,
    /// Zipf exponent of object popularity (0: equal rates).
    pub alpha: f64,
    /// Relative jitter of a paced object's period, in [0, 1).
    pub jitter: f64,
    /// Seed: the same spec and seed give the same trace.
    pub seed: u64,
}

impl Default for TraceSpec {
    fn default() -> Self {
        Self {
            requests: 100_000,
            objects: 1_000,
            bursty_fraction: 0.5,
            burst_length: 8.0,
            burst_gap: 2.0,
            alpha: 0.8,
            jitter: 0.2,
            seed: 1,
        }
    }
}

/// A generated trace and which objects are bursty.
#[derive(Clone, Debug)]
pub struct GeneratedTrace {
    /// Object of every request.
    pub requests: Vec<u32>,
    /// Whether each object is bursty.
    pub bursty: Vec<bool>,
}

impl TraceSpec {
    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |m: &str| Err(Error::config(m.to_string()));
        if self.requests == 0 || self.objects == 0 {
            return bad("a trace needs at least one request and one object");
        }
        if self.objects > u32::MAX as usize {
            return bad("too many objects (at most 2^32 - 1)");
        }
        if !(0.0..=1.0).contains(&self.bursty_fraction) {
            return bad("the bursty fraction must be between 0 and 1");
        }
        if !(self.burst_length.is_finite() && self.burst_length >= 1.0) {
            return bad("the burst length must be at least 1 request");
        }
        if !(self.burst_gap.is_finite() && self.burst_gap > 0.0) {
            return bad("the gap between requests of a burst must be positive");
        }
        if !(self.alpha.is_finite() && self.alpha >= 0.0) {
            return bad("the Zipf exponent must be a non-negative number");
        }
        if !(0.0..1.0).contains(&self.jitter) {
            return bad("the jitter must be in [0, 1)");
        }
        Ok(())
    }

    /// Generates the trace.
    pub fn generate(&self) -> Result<GeneratedTrace, Error> {
        self.validate()?;
        let m = self.objects;
        let mut rng = Pcg64Mcg::seed_from_u64(self.seed);
        // Popularity ranks and the bursty set are independent random permutations.
        let popularity = permutation(m, &mut rng);
        let kinds = permutation(m, &mut rng);
        let n_bursty = (self.bursty_fraction * m as f64).round() as usize;
        let mut bursty = vec![false; m];
        for &o in &kinds[..n_bursty] {
            bursty[o] = true;
        }
        let weights: Vec<f64> = (0..m).map(|r| 1.0 / ((r + 1) as f64).powf(self.alpha)).collect();
        let total: f64 = weights.iter().sum();
        let mut rate = vec![0.0; m];
        for (r, &o) in popularity.iter().enumerate() {
            rate[o] = weights[r] / total;
        }
        let mut left_in_train = vec![0u64; m];
        let mut heap = BinaryHeap::with_capacity(m);
        for o in 0..m {
            let cycle = self.cycle(rate[o], bursty[o]);
            heap.push(Reverse(((rng.gen::<f64>() * cycle).to_bits(), o as u32)));
            // times >= 0 order as bits
        }
        let mut requests = Vec::with_capacity(self.requests);
        while requests.len() < self.requests {
            if requests.len() % 65_536 == 0 {
                superlinear_core::cancel::check()?;
            }
            let Reverse((bits, o)) = heap.pop().expect("every object always has a next request");
            let t = f64::from_bits(bits);
            requests.push(o);
            let i = o as usize;
            let dt = if bursty[i] {
                if left_in_train[i] == 0 {
                    left_in_train[i] = self.train_length(&mut rng);
                }
                left_in_train[i] -= 1;
                if left_in_train[i] > 0 {
                    exponential(self.burst_gap, &mut rng)
                } else {
                    let idle = self.cycle(rate[i], true) - (self.burst_length - 1.0) * self.burst_gap;
                    exponential(idle.max(self.burst_gap), &mut rng)
                }
            } else {
                (1.0 + self.jitter * (2.0 * rng.gen::<f64>() - 1.0)) / rate[i]
            };
            heap.push(Reverse(((t + dt).to_bits(), o)));
        }
        Ok(GeneratedTrace { requests, bursty })
    }

    /// Mean time between trains (bursty) or requests (paced) at this rate.
    fn cycle(&self, rate: f64, bursty: bool) -> f64 {
        if bursty {
            self.burst_length / rate
        } else {
            1.0 / rate
        }
    }

    /// 1 + a geometric number of further requests, mean `burst_length`.
    fn train_length(&self, rng: &mut Pcg64Mcg) -> u64 {
        let extra = self.burst_length - 1.0;
        if extra <= 0.0 {
            return 1;
        }
        let q = extra / (1.0 + extra);
        1 + ((1.0 - rng.gen::<f64>()).ln() / q.ln()).floor() as u64
    }
}

fn permutation(n: usize, rng: &mut Pcg64Mcg) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        p.swap(i, rng.gen_range(0..=i));
    }
    p
}

fn exponential(mean: f64, rng: &mut Pcg64Mcg) -> f64 {
    -mean * (1.0 - rng.gen::<f64>()).ln()
}

/// Writes a text trace: `OBJECT STEP` per line, plus `LATENCY` (= Z, since a step is the time
/// unit) when per-object latencies are given.
pub fn write_text(path: &str, requests: &[u32], latencies: Option<&[u64]>) -> Result<(), Error> {
    let io = |e: std::io::Error| Error::input(path, None, e.to_string());
    let mut w = BufWriter::new(File::create(path).map_err(io)?);
    for (t, &o) in requests.iter().enumerate() {
        match latencies {
            Some(z) => writeln!(w, "{o} {t} {}", z[o as usize]),
            None => writeln!(w, "{o} {t}"),
        }
        .map_err(io)?;
    }
    w.flush().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_well_formed() {
        let spec = TraceSpec { requests: 20_000, objects: 200, ..TraceSpec::default() };
        let a = spec.generate().unwrap();
        let b = spec.generate().unwrap();
        assert_eq!(a.requests, b.requests);
        assert_eq!(a.requests.len(), 20_000);
        assert!(a.requests.iter().all(|&o| o < 200));
        assert_eq!(a.bursty.iter().filter(|&&x| x).count(), 100);
        let other = TraceSpec { seed: 2, ..spec }.generate().unwrap();
        assert_ne!(a.requests, other.requests);
    }

    #[test]
    fn bursty_objects_repeat_at_short_distance() {
        // Same rates (alpha 0): a bursty object's requests follow each other far more closely.
        let spec = TraceSpec { requests: 50_000, objects: 100, alpha: 0.0, burst_length: 10.0, ..TraceSpec::default() };
        let g = spec.generate().unwrap();
        let mut last = vec![None; 100];
        let (mut short, mut all) = ([0u64; 2], [0u64; 2]);
        for (t, &o) in g.requests.iter().enumerate() {
            if let Some(p) = last[o as usize] {
                let k = g.bursty[o as usize] as usize;
                all[k] += 1;
                short[k] += (t - p <= 10) as u64;
            }
            last[o as usize] = Some(t);
        }
        let frac = |k: usize| short[k] as f64 / all[k] as f64;
        assert!(frac(1) > 0.7, "bursty {}", frac(1));
        assert!(frac(0) < 0.05, "paced {}", frac(0));
    }

    #[test]
    fn bad_parameters() {
        for spec in [
            TraceSpec { objects: 0, ..TraceSpec::default() },
            TraceSpec { bursty_fraction: 1.5, ..TraceSpec::default() },
            TraceSpec { burst_length: 0.5, ..TraceSpec::default() },
            TraceSpec { burst_gap: 0.0, ..TraceSpec::default() },
            TraceSpec { alpha: f64::NAN, ..TraceSpec::default() },
            TraceSpec { jitter: 1.0, ..TraceSpec::default() },
        ] {
            assert!(spec.generate().is_err(), "{spec:?}");
        }
    }

    #[test]
    fn trace_spec_rejects_unknown_and_mistyped_fields_by_name() {
        let parse = |json: &str| {
            let de = &mut serde_json::Deserializer::from_str(json);
            serde_path_to_error::deserialize::<_, TraceSpec>(de).map_err(|e| format!("{}: {}", e.path(), e.inner()))
        };
        assert!(parse(r#"{"burst_lenght": 4}"#).unwrap_err().contains("unknown field `burst_lenght`"));
        assert!(parse(r#"{"objects": "many"}"#).unwrap_err().starts_with("objects: invalid type"));
        assert_eq!(parse(r#"{"objects": 7}"#).unwrap(), TraceSpec { objects: 7, ..TraceSpec::default() });
    }
}
