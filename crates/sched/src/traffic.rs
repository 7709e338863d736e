//! Innocent traffic for the simulator: packet and job sizes drawn from distributions or
//! replayed from a trace, and the statistics the optimal-attack solvers need.
//!
//! Units: packet sizes in bits (specs and traces in bytes), job sizes and time in microseconds,
//! so rates are bits per microsecond, i.e. Mbit/s (thesis §3.3.1 uses Gbps and seconds; only
//! ratios matter, and the displacement factor is dimensionless).

use crate::dist::Dist;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use superlinear_core::error::number_text;
use superlinear_core::Error;

/// Where innocent (packet, job) pairs come from.
#[derive(Clone, Debug)]
enum Source {
    /// Independent packet sizes (bytes) and job sizes (µs).
    Dists { packet: Dist, job: Dist },
    /// (bits, µs) pairs replayed in order, cycling.
    Trace(Vec<(u32, f64)>),
}

/// Innocent traffic: its size distributions and limits.
#[derive(Clone, Debug)]
pub struct InnocentTraffic {
    source: Source,
    /// Smallest and largest packet in bits (P_min, P_max).
    pub bits_min: u32,
    /// Largest packet in bits.
    pub bits_max: u32,
    /// Largest job size J_max in µs (the adversary's too).
    pub job_max: f64,
    /// Innocent flows (packets are spread uniformly over them).
    pub flows: u32,
}

/// Moments and samples of innocent traffic.
#[derive(Clone, Debug)]
pub struct InnocentStats {
    /// E[P] in bits.
    pub mean_bits: f64,
    /// E[J] in µs.
    pub mean_job: f64,
    /// Samples (bits, µs) for the solvers' integrals.
    pub samples: Vec<(f64, f64)>,
}

impl InnocentStats {
    /// r_max = E[P] / E[J] (bits/µs): the innocent rate the server sustains (§3.3.1).
    pub fn r_max(&self) -> f64 {
        self.mean_bits / self.mean_job
    }
}

/// The largest packet, in bytes: IPv4's 16-bit total length. The simulation's time grows with
/// the largest packet (its queue spans P_min to P_max), so a trace of megabyte "packets" would
/// run for minutes to model nothing a network carries.
pub const MAX_PACKET_BYTES: u32 = 65_535;

impl InnocentTraffic {
    /// Independent distributions: packets in bytes truncated to `[bytes_min, bytes_max]`, jobs
    /// in µs truncated to `(0, job_max]`.
    pub fn from_dists(
        packet_bytes: Dist,
        job_us: Dist,
        bytes_min: u32,
        bytes_max: u32,
        job_max: f64,
        flows: u32,
    ) -> Result<Self, Error> {
        if bytes_min == 0 || bytes_max < bytes_min {
            return Err(Error::config(format!(
                "packet sizes must satisfy 0 < min <= max bytes, got {bytes_min}..{bytes_max}"
            )));
        }
        if bytes_max > MAX_PACKET_BYTES {
            return Err(Error::config(format!(
                "packets of {bytes_max} bytes are too large (at most {MAX_PACKET_BYTES}, the largest IP packet)"
            )));
        }
        // Tails of a spread are cut to [min, max] (the model); a size the distribution always or
        // often takes outside it would be changed without a word, so it is refused.
        let fixed = match packet_bytes {
            Dist::Const(v) => vec![v],
            Dist::Uniform(lo, hi) => vec![lo, hi],
            Dist::Bimodal(a, b, _) => vec![a, b],
            _ => Vec::new(),
        };
        if let Some(v) = fixed.into_iter().find(|v| *v < bytes_min as f64 || *v > bytes_max as f64) {
            return Err(Error::config(format!(
                "--packet-size: {v} bytes is outside the packet sizes {bytes_min}..{bytes_max} (--pmin, --pmax)"
            )));
        }
        if !(job_max.is_finite() && job_max > 0.0) {
            return Err(Error::config(format!("the largest job size must be positive, got {}", number_text(job_max))));
        }
        if flows == 0 {
            return Err(Error::config("innocent traffic needs at least one flow"));
        }
        Ok(Self {
            source: Source::Dists { packet: packet_bytes, job: job_us },
            bits_min: bytes_min * 8,
            bits_max: bytes_max * 8,
            job_max,
            flows,
        })
    }

    /// Pairs read from a trace (`BYTES JOB_US` per line); P_min, P_max and J_max default to the
    /// trace's own extremes. A given `bytes_min` may lie below every innocent packet (the
    /// adversary's smallest packet may be smaller) and a given `job_max` above every innocent job,
    /// but a line beyond either is an error naming it: the bounds of the report (J_max / P_min)
    /// would otherwise be the trace's, not the ones asked for.
    pub fn from_trace(path: &str, bytes_min: Option<u32>, job_max: Option<f64>, flows: u32) -> Result<Self, Error> {
        let lines = read_job_trace_lines(path)?;
        if let Some(b) = bytes_min {
            if let Some(&(line, bits, _)) = lines.iter().find(|p| p.1 < b * 8) {
                let bytes = bits / 8;
                return Err(Error::input(
                    path,
                    Some(line),
                    format!("a packet of {bytes} bytes is below --pmin {b} (P_min, the smallest packet); give --pmin {bytes} or less"),
                ));
            }
        }
        if let Some(j) = job_max {
            if let Some(&(line, _, job)) = lines.iter().find(|p| p.2 > j) {
                return Err(Error::input(
                    path,
                    Some(line),
                    format!(
                        "a job of {job} µs is above --jmax {j} (J_max, the largest job); give --jmax {job} or more"
                    ),
                ));
            }
        }
        let pairs: Vec<(u32, f64)> = lines.into_iter().map(|(_, bits, job)| (bits, job)).collect();
        let lo = pairs.iter().map(|p| p.0).min().expect("non-empty");
        let hi = pairs.iter().map(|p| p.0).max().expect("non-empty");
        let jmax = pairs.iter().map(|p| p.1).fold(0.0, f64::max);
        if flows == 0 {
            return Err(Error::config("innocent traffic needs at least one flow"));
        }
        Ok(Self {
            source: Source::Trace(pairs),
            bits_min: bytes_min.map_or(lo, |b| b * 8),
            bits_max: hi,
            job_max: job_max.unwrap_or(jmax),
            flows,
        })
    }

    /// A deterministic stream of (bits, µs) pairs.
    pub fn sampler(&self, seed: u64) -> InnocentSampler<'_> {
        InnocentSampler { traffic: self, rng: Pcg64Mcg::seed_from_u64(seed), next: 0 }
    }

    /// E[P], E[J] and `n` samples (all of a trace when it is shorter than `n`).
    pub fn stats(&self, n: usize, seed: u64) -> InnocentStats {
        let samples: Vec<(f64, f64)> = match &self.source {
            Source::Trace(pairs) if pairs.len() <= n => pairs.iter().map(|&(b, j)| (b as f64, j)).collect(),
            _ => {
                let mut s = self.sampler(seed);
                (0..n.max(1)).map(|_| s.next_pair()).map(|(b, j)| (b as f64, j)).collect()
            }
        };
        let k = samples.len() as f64;
        InnocentStats {
            mean_bits: samples.iter().map(|s| s.0).sum::<f64>() / k,
            mean_job: samples.iter().map(|s| s.1).sum::<f64>() / k,
            samples,
        }
    }
}

/// Draws innocent (bits, µs) pairs.
pub struct InnocentSampler<'a> {
    traffic: &'a InnocentTraffic,
    rng: Pcg64Mcg,
    next: usize,
}

impl InnocentSampler<'_> {
    /// The next (bits, µs) pair.
    pub fn next_pair(&mut self) -> (u32, f64) {
        let t = self.traffic;
        match &t.source {
            Source::Dists { packet, job } => {
                let bytes =
                    packet.sample(&mut self.rng).round().clamp((t.bits_min / 8) as f64, (t.bits_max / 8) as f64);
                let j = job.sample(&mut self.rng).clamp(t.job_max * 1e-6, t.job_max);
                (bytes as u32 * 8, j)
            }
            Source::Trace(pairs) => {
                let p = pairs[self.next % pairs.len()];
                self.next += 1;
                p
            }
        }
    }

    /// A flow id for the next innocent packet.
    pub fn next_flow(&mut self) -> u32 {
        self.rng.gen_range(0..self.traffic.flows)
    }
}

/// The largest job a trace line may give, in µs: the bound of `--jmax` (python attack/cli.py
/// `MAX_JOB_US`), since a trace's largest job becomes J_max; past it the simulated clock runs
/// away (a job of 1e300 µs ended in "more than 2^32 arrivals", naming no line).
pub const MAX_TRACE_JOB_US: f64 = 1e9;

/// Reads a job trace: one `BYTES JOB_US` pair per line (whitespace or comma separated), `#`
/// comments and blank lines ignored. Errors name the file and line.
pub fn read_job_trace(path: &str) -> Result<Vec<(u32, f64)>, Error> {
    Ok(read_job_trace_lines(path)?.into_iter().map(|(_, bits, job)| (bits, job)).collect())
}

/// [`read_job_trace`] with each pair's line number (from 1): (line, bits, µs).
fn read_job_trace_lines(path: &str) -> Result<Vec<(usize, u32, f64)>, Error> {
    let text = superlinear_core::input::read_text(path)?;
    let mut pairs = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(|c: char| c == ',' || c.is_whitespace()).filter(|f| !f.is_empty()).collect();
        if fields.len() != 2 {
            return Err(Error::input(path, Some(i + 1), format!("expected 'BYTES JOB_US', got '{line}'")));
        }
        let bytes: u32 = fields[0].parse().ok().filter(|&b| b > 0).ok_or_else(|| {
            Error::input(path, Some(i + 1), format!("packet size '{}' is not a positive integer", fields[0]))
        })?;
        if bytes > MAX_PACKET_BYTES {
            return Err(Error::input(
                path,
                Some(i + 1),
                format!("packet size {bytes} is above {MAX_PACKET_BYTES} bytes, the largest IP packet"),
            ));
        }
        let job: f64 = fields[1].parse().ok().filter(|j: &f64| j.is_finite() && *j > 0.0).ok_or_else(|| {
            Error::input(path, Some(i + 1), format!("job size '{}' is not a positive number", fields[1]))
        })?;
        if job > MAX_TRACE_JOB_US {
            return Err(Error::input(
                path,
                Some(i + 1),
                format!("job size {} µs is above {MAX_TRACE_JOB_US:e} µs, the largest --jmax", fields[1]),
            ));
        }
        pairs.push((i + 1, bytes * 8, job));
    }
    if pairs.is_empty() {
        return Err(Error::input(path, None, "no (BYTES JOB_US) pairs in the file"));
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_packet_size_outside_the_bounds_is_refused_not_cut() {
        let traffic = |d| InnocentTraffic::from_dists(d, Dist::Const(1.0), 64, 1500, 10.0, 1);
        let e = traffic(Dist::Const(70_000.0)).err().unwrap().to_string();
        assert!(e.contains("--packet-size: 70000 bytes is outside the packet sizes 64..1500"), "{e}");
        assert!(traffic(Dist::Uniform(64.0, 9000.0)).is_err());
        assert!(traffic(Dist::Uniform(64.0, 1500.0)).is_ok());
        assert!(traffic(Dist::Normal(1250.0, 4000.0)).is_ok(), "a spread's tails are cut, as modelled");
    }

    #[test]
    fn job_traces_are_read_the_shared_way() {
        let p = superlinear_core::input::scratch_file("jobs", "jobs.txt", b"\xEF\xBB\xBF100 2.5\n# note\n64,1\n");
        assert_eq!(read_job_trace(&p).unwrap(), vec![(800, 2.5), (512, 1.0)]);
        assert!(read_job_trace("/dev/zero").unwrap_err().to_string().starts_with("/dev/zero: not a regular file"));
        let e = read_job_trace(&format!("{p}.none")).unwrap_err().to_string();
        assert!(e.ends_with("none: cannot read: no such file"), "{e}");
        std::fs::write(
            &p,
            b"200 1
65536 1
",
        )
        .unwrap();
        let e = read_job_trace(&p).unwrap_err().to_string();
        assert!(e.ends_with("jobs.txt:2: packet size 65536 is above 65535 bytes, the largest IP packet"), "{e}");
        std::fs::write(
            &p,
            b"65535 1
",
        )
        .unwrap();
        assert_eq!(read_job_trace(&p).unwrap(), vec![(65_535 * 8, 1.0)]);
        let p = superlinear_core::input::scratch_file("jobs", "huge-job.txt", b"1000 5\n1000 1e300\n");
        let e = read_job_trace(&p).unwrap_err().to_string();
        assert!(e.ends_with("huge-job.txt:2: job size 1e300 µs is above 1e9 µs, the largest --jmax"), "{e}");
    }

    #[test]
    fn a_trace_line_beyond_the_given_pmin_or_jmax_is_named_not_taken_as_the_bound() {
        let p = superlinear_core::input::scratch_file("jobs", "bounds.txt", b"# b us\n200 2\n\n40 1\n300 12.5\n");
        let e = InnocentTraffic::from_trace(&p, Some(64), Some(20.0), 1).err().unwrap().to_string();
        assert!(e.ends_with("bounds.txt:4: a packet of 40 bytes is below --pmin 64 (P_min, the smallest packet); give --pmin 40 or less"), "{e}");
        let e = InnocentTraffic::from_trace(&p, Some(40), Some(10.0), 1).err().unwrap().to_string();
        assert!(
            e.ends_with(
                "bounds.txt:5: a job of 12.5 µs is above --jmax 10 (J_max, the largest job); give --jmax 12.5 or more"
            ),
            "{e}"
        );
        // Within the bounds, the given ones stand (the adversary's packets and jobs may lie beyond
        // every innocent one); with none given, the trace's extremes.
        let t = InnocentTraffic::from_trace(&p, Some(32), Some(50.0), 1).unwrap();
        assert_eq!((t.bits_min, t.bits_max, t.job_max), (256, 2400, 50.0));
        let t = InnocentTraffic::from_trace(&p, None, None, 1).unwrap();
        assert_eq!((t.bits_min, t.bits_max, t.job_max), (320, 2400, 12.5));
    }
}
