//! Bindings of `superlinear_core::memory_probe`: the machine's memory speed sampled between the
//! points of a timed run, for its record.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::time::Duration;
use superlinear_core::memory_probe::{l2_bytes, MemoryProbe as CoreProbe};

/// Without a readable L2 size (no sysfs, as on macOS): ¾ of 256 KiB, the smallest L2 of
/// current x86-64 and Arm server cores, so the walk stays within it.
const FALLBACK_BYTES: usize = 192 << 10;

/// A random walk over three quarters of one core's L2 (or `bytes`, at most 1 GiB), and a
/// multiply chain.
#[pyclass(frozen, module = "superlinear._native", name = "MemoryProbe")]
struct MemoryProbe {
    inner: CoreProbe,
    /// Whether the size came from the machine's L2 (else the fallback or the caller's).
    sized_by_l2: bool,
}

#[pymethods]
impl MemoryProbe {
    #[new]
    #[pyo3(signature = (bytes = None, seed = 1))]
    fn new(bytes: Option<usize>, seed: u64) -> MemoryProbe {
        let l2 = l2_bytes();
        let size = bytes.unwrap_or_else(|| l2.map_or(FALLBACK_BYTES, |b| b / 4 * 3));
        MemoryProbe { inner: CoreProbe::new(size, seed), sized_by_l2: bytes.is_none() && l2.is_some() }
    }

    /// Bytes the walk covers.
    #[getter]
    fn bytes(&self) -> usize {
        self.inner.bytes()
    }

    /// Whether the walk's size is three quarters of the L2 that Linux reports for CPU 0.
    #[getter]
    fn sized_by_l2(&self) -> bool {
        self.sized_by_l2
    }

    /// The L2 size Linux reports for CPU 0, or None.
    #[staticmethod]
    fn l2_bytes() -> Option<usize> {
        l2_bytes()
    }

    /// Walks for `window_ms` (0 to 1,000), then multiplies for as long: (walk and multiply
    /// thread-CPU ns per step, the thread's CPU time over the windows' wall-clock time).
    fn sample(&self, py: Python<'_>, window_ms: f64) -> PyResult<(f64, f64, f64)> {
        if !(0.0..=1000.0).contains(&window_ms) {
            return Err(PyValueError::new_err(format!("window_ms {window_ms}: 0 to 1,000")));
        }
        let window = Duration::from_secs_f64(window_ms / 1e3);
        let s = py.allow_threads(|| self.inner.sample(window));
        Ok((s.walk_ns, s.alu_ns, s.cpu_share))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<MemoryProbe>()
}
