//! Entering a named network namespace from the calling thread, and looking up a device there.
//!
//! `setns(2)` with `CLONE_NEWNET` moves only the calling thread, so the sender runs on a thread
//! of its own that enters the namespace before it opens its socket (a socket belongs to the
//! namespace it was created in). Names are those of `ip netns` (`/var/run/netns/NAME`); a name
//! with a `/` is taken as a path (e.g. `/proc/PID/ns/net`).

use std::ffi::CString;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use superlinear_core::input::io_words;
use superlinear_core::Error;

/// Where `ip netns` keeps named namespaces.
pub const NETNS_RUN_DIR: &str = "/var/run/netns";

/// The file of a namespace name (or the name itself when it is a path).
pub fn namespace_path(name: &str) -> PathBuf {
    if name.contains('/') {
        PathBuf::from(name)
    } else {
        PathBuf::from(NETNS_RUN_DIR).join(name)
    }
}

/// Moves the calling thread into network namespace `name`.
pub fn enter(name: &str) -> Result<(), Error> {
    let path = namespace_path(name);
    let file = File::open(&path)
        .map_err(|e| Error::config(format!("network namespace '{name}' ({}): {}", path.display(), io_words(&e))))?;
    // SAFETY: the descriptor is open for the whole call (owned by `file`, closed after it);
    // setns only reads it and changes the calling thread's namespace, no memory is involved.
    let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        return Err(Error::config(format!("cannot enter network namespace '{name}': {e} (needs CAP_SYS_ADMIN)")));
    }
    Ok(())
}

/// The index of device `name` in the calling thread's namespace.
pub fn ifindex(name: &str) -> Result<u32, Error> {
    let c = CString::new(name).map_err(|_| Error::config(format!("device name '{name}' holds a NUL byte")))?;
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call, which only reads it.
    let idx = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if idx == 0 {
        let e = std::io::Error::last_os_error();
        let why = if e.raw_os_error() == Some(libc::ENODEV) {
            "does not exist in this network namespace (`ip link` lists those that do)".to_string()
        } else {
            format!("cannot be looked up: {}", io_words(&e))
        };
        return Err(Error::config(format!("network interface '{name}' {why}")));
    }
    Ok(idx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths() {
        assert_eq!(namespace_path("a"), PathBuf::from("/var/run/netns/a"));
        assert_eq!(namespace_path("/proc/1/ns/net"), PathBuf::from("/proc/1/ns/net"));
        assert!(ifindex("lo").unwrap() >= 1);
        let e = ifindex("no-such-dev-x").unwrap_err().to_string();
        assert_eq!(e, "network interface 'no-such-dev-x' does not exist in this network namespace (`ip link` lists those that do)");
        let e = std::thread::spawn(|| enter("superlinear-no-such-namespace")).join().unwrap().unwrap_err();
        assert!(e.to_string().starts_with("network namespace 'superlinear-no-such-namespace'"), "{e}");
    }
}
