//! Ctrl-C for long native runs: one process-wide flag that the CLI sets when the user interrupts
//! and that every long loop (workload generation, dispatch, workers, sweeps of the benches)
//! reads between slices of work, so a run stops within a fraction of a second. A cancelled run
//! returns [`crate::Error`] `interrupted` and nothing half-computed. One flag per process is
//! enough: a command runs one native call at a time, and clears the flag before the next.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Requests every running loop to stop.
pub fn request() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// Clears a request (before a new run starts).
pub fn clear() {
    REQUESTED.store(false, Ordering::Relaxed);
}

/// Whether a stop was requested: one relaxed load, cheap enough for every slice of a loop.
#[inline(always)]
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// `Err(interrupted)` once a stop was requested: `cancel::check()?` between slices of work.
pub fn check() -> Result<(), crate::Error> {
    if requested() {
        Err(interrupted())
    } else {
        Ok(())
    }
}

/// The error a cancelled run returns.
pub fn interrupted() -> crate::Error {
    crate::Error::config("interrupted")
}
