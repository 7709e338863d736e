//! Distributions of innocent packet sizes and job sizes (thesis §3.3.1: P and J are random
//! variables with densities f_P, f_J), written as short specs on the command line:
//! `const:V`, `uniform:LO:HI`, `exp:MEAN`, `normal:MEAN:SD`, `lognormal:MEDIAN:SIGMA`,
//! `bimodal:A:B:PROB_A`. Samples are truncated to a range given by the caller (packet sizes to
//! [P_min, P_max], job sizes to (0, J_max]), so means are taken from samples, not formulas.

use rand::Rng;
use rand_distr::{Distribution, Exp, LogNormal, Normal};
use superlinear_core::Error;

/// A one-dimensional distribution.
#[derive(Clone, Debug, PartialEq)]
pub enum Dist {
    /// Always `v`.
    Const(f64),
    /// Uniform on `[lo, hi]`.
    Uniform(f64, f64),
    /// Exponential with the given mean.
    Exp(f64),
    /// Normal(mean, sd).
    Normal(f64, f64),
    /// Log-normal with the given median and log-space sigma.
    LogNormal(f64, f64),
    /// `a` with probability `p`, else `b`.
    Bimodal(f64, f64, f64),
}

impl Dist {
    /// Parses a spec such as `uniform:64:1500`; `what` names the option in errors.
    pub fn parse(spec: &str, what: &str) -> Result<Self, Error> {
        let mut parts = spec.trim().split(':');
        let kind = parts.next().unwrap_or("");
        let nums: Vec<f64> = parts
            .map(|p| {
                p.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| Error::config(format!("{what}: '{p}' in '{spec}' is not a finite number")))
            })
            .collect::<Result<_, _>>()?;
        let arity = |n: usize, form: &str| -> Result<(), Error> {
            if nums.len() == n {
                Ok(())
            } else {
                Err(Error::config(format!("{what}: '{spec}' should look like '{form}'")))
            }
        };
        let positive = |v: f64, name: &str| -> Result<f64, Error> {
            if v > 0.0 {
                Ok(v)
            } else {
                Err(Error::config(format!("{what}: {name} must be positive in '{spec}'")))
            }
        };
        Ok(match kind {
            "const" => {
                arity(1, "const:V")?;
                Dist::Const(positive(nums[0], "V")?)
            }
            "uniform" => {
                arity(2, "uniform:LO:HI")?;
                if !(nums[0] >= 0.0 && nums[1] > nums[0]) {
                    return Err(Error::config(format!("{what}: uniform needs 0 <= LO < HI in '{spec}'")));
                }
                Dist::Uniform(nums[0], nums[1])
            }
            "exp" => {
                arity(1, "exp:MEAN")?;
                Dist::Exp(positive(nums[0], "MEAN")?)
            }
            "normal" => {
                arity(2, "normal:MEAN:SD")?;
                Dist::Normal(positive(nums[0], "MEAN")?, positive(nums[1], "SD")?)
            }
            "lognormal" => {
                arity(2, "lognormal:MEDIAN:SIGMA")?;
                Dist::LogNormal(positive(nums[0], "MEDIAN")?, positive(nums[1], "SIGMA")?)
            }
            "bimodal" => {
                arity(3, "bimodal:A:B:PROB_A")?;
                if !(0.0..=1.0).contains(&nums[2]) {
                    return Err(Error::config(format!("{what}: PROB_A must be in [0, 1] in '{spec}'")));
                }
                Dist::Bimodal(positive(nums[0], "A")?, positive(nums[1], "B")?, nums[2])
            }
            other => {
                return Err(Error::config(format!(
                    "{what}: unknown distribution '{other}' (known: const, uniform, exp, normal, lognormal, bimodal)"
                )))
            }
        })
    }

    /// One sample, not truncated.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match *self {
            Dist::Const(v) => v,
            Dist::Uniform(lo, hi) => rng.gen_range(lo..=hi),
            Dist::Exp(mean) => Exp::new(1.0 / mean).expect("positive mean").sample(rng),
            Dist::Normal(m, sd) => Normal::new(m, sd).expect("positive sd").sample(rng),
            Dist::LogNormal(median, sigma) => LogNormal::new(median.ln(), sigma).expect("positive sigma").sample(rng),
            Dist::Bimodal(a, b, p) => {
                if rng.gen::<f64>() < p {
                    a
                } else {
                    b
                }
            }
        }
    }

    /// Smallest and largest value the distribution can take, where finite.
    pub fn support(&self) -> (f64, f64) {
        match *self {
            Dist::Const(v) => (v, v),
            Dist::Uniform(lo, hi) => (lo, hi),
            Dist::Exp(_) | Dist::LogNormal(..) => (0.0, f64::INFINITY),
            Dist::Normal(..) => (f64::NEG_INFINITY, f64::INFINITY),
            Dist::Bimodal(a, b, _) => (a.min(b), a.max(b)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn parses_and_samples_within_support() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
        for spec in ["const:3", "uniform:64:1500", "exp:1", "normal:1:0.2", "lognormal:1:0.5", "bimodal:64:1500:0.5"] {
            let d = Dist::parse(spec, "--x").unwrap();
            let (lo, hi) = d.support();
            for _ in 0..1000 {
                let v = d.sample(&mut rng);
                assert!(v >= lo && v <= hi, "{spec}: {v}");
            }
        }
        for bad in ["", "uniform:5", "exp:-1", "zipf:1", "const:x", "uniform:9:3", "bimodal:1:2:3"] {
            assert!(Dist::parse(bad, "--x").is_err(), "{bad}");
        }
    }
}
