//! Mapping real job sizes and job-per-bit ratios to the integer priorities of an HFFS queue.
//!
//! An integer priority queue needs a finite span (thesis §4.2.1). Sizes and ratios vary over
//! orders of magnitude, so they are spaced logarithmically: with 4096 buckets over six decades
//! neighbouring buckets differ by 0.34 %, far below any job-size prediction error, and within
//! a bucket jobs are served first come, first served. Values outside the range go to the end
//! buckets.

/// A logarithmic scale from `[lo, hi]` onto `0..buckets`.
#[derive(Clone, Copy, Debug)]
pub struct LogScale {
    ln_lo: f64,
    per_ln: f64,
    top: u32,
}

impl LogScale {
    /// The scale over `[lo, hi]` (positive, `lo < hi`) with `buckets ≥ 2` buckets.
    pub fn new(lo: f64, hi: f64, buckets: u64) -> Self {
        assert!(lo > 0.0 && hi > lo && buckets >= 2, "log scale needs 0 < lo < hi and 2+ buckets");
        let top = (buckets.min(u32::MAX as u64) - 1) as u32;
        Self { ln_lo: lo.ln(), per_ln: top as f64 / (hi.ln() - lo.ln()), top }
    }

    /// The bucket of `x` (monotone non-decreasing in `x`).
    #[inline]
    pub fn bucket(&self, x: f64) -> u32 {
        if x.is_nan() || x <= 0.0 {
            return 0;
        }
        let b = (x.ln() - self.ln_lo) * self.per_ln;
        if b <= 0.0 {
            0
        } else if b >= self.top as f64 {
            self.top
        } else {
            b as u32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotone_and_clamped() {
        let s = LogScale::new(1e-3, 1e3, 4096);
        assert_eq!(s.bucket(0.0), 0);
        assert_eq!(s.bucket(1e-9), 0);
        assert_eq!(s.bucket(1e9), 4095);
        let mut last = 0;
        for i in 0..1000 {
            let b = s.bucket(1e-3 * 1.0139_f64.powi(i));
            assert!(b >= last);
            last = b;
        }
        assert!(s.bucket(1.0) > 2040 && s.bucket(1.0) < 2056);
    }
}
