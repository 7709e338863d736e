//! The fast sender: prebuilt frames out of one device through an AF_PACKET raw socket, in
//! `sendmmsg(2)` batches (one system call per batch, not per packet).
//!
//! The sender runs on a thread of its own, optionally pinned to one CPU, which enters the
//! sending namespace first (see [`crate::netns`]). Two ways to stop: after `count` packets
//! (the exact check sends the trace once, optionally paced to `rate_pps`) or after `seconds`
//! (throughput: as fast as possible, looping over the trace). Both can be combined; `start`
//! picks the first frame, and the report says where the next call should continue, so a
//! caller can send in slices (and stay responsive to Ctrl-C between them). A stop requested
//! through `superlinear_core::cancel` ends a send between two calls with `interrupted`.
//!
//! A frame the device refuses (`ENOBUFS`: veth's peer backlog was full, so the packet never
//! reached the receiving side) is sent again after a short pause, never skipped: every counted
//! packet was delivered, in trace order.
//!
//! The socket is opened with protocol 0, so it receives nothing, and bound to the device.
//! It needs CAP_NET_RAW.

use crate::frame::Frames;
use crate::netns;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};
use superlinear_core::cancel;
use superlinear_core::cputime::{pin_current_thread, thread_cpu_ns};
use superlinear_core::error::number_text;
use superlinear_core::Error;

/// Largest batch per `sendmmsg` call (the kernel caps one call at UIO_MAXIOV = 1024).
pub const MAX_BATCH: usize = 1024;
/// Consecutive refusals after which the device is considered stuck.
const MAX_REFUSALS_IN_A_ROW: u32 = 100_000;

/// What to send and how.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SendSpec {
    /// Network namespace to send from (`None`: the caller's).
    pub netns: Option<String>,
    /// The sending device.
    pub device: String,
    /// Index of the first frame (modulo the number of frames).
    pub start: usize,
    /// Stop after this many packets.
    pub count: Option<u64>,
    /// Stop after this many seconds.
    pub seconds: Option<f64>,
    /// Pace to this many packets per second (`None`: as fast as possible).
    pub rate_pps: Option<f64>,
    /// Frames per `sendmmsg` call.
    pub batch: usize,
    /// Pin the sender thread to this CPU.
    pub cpu: Option<usize>,
}

impl Default for SendSpec {
    fn default() -> Self {
        Self {
            netns: None,
            device: String::new(),
            start: 0,
            count: None,
            seconds: None,
            rate_pps: None,
            batch: 256,
            cpu: None,
        }
    }
}

/// What a send did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SendReport {
    /// Packets the device accepted.
    pub sent: u64,
    /// The frame to continue with.
    pub next: usize,
    /// Wall time from the first to the end of the last call, nanoseconds.
    pub elapsed_ns: u64,
    /// The sender thread's CPU time over the same span, nanoseconds.
    pub cpu_ns: u64,
    /// `sendmmsg` calls that sent at least one frame.
    pub calls: u64,
    /// Refusals (`ENOBUFS`/`EAGAIN`), each followed by a retry of the same frame.
    pub refused: u64,
}

impl SendSpec {
    fn validate(&self, frames: &Frames) -> Result<(), Error> {
        if frames.is_empty() {
            return Err(Error::config("no frames to send (the trace is empty)"));
        }
        self.validate_for(MAX_BATCH)
    }

    /// Checks the batch against a sender's `max_batch`, when to stop and the pace.
    pub fn validate_for(&self, max_batch: usize) -> Result<(), Error> {
        if self.batch == 0 || self.batch > max_batch {
            return Err(Error::config(format!("batch must be 1..={max_batch}, got {}", self.batch)));
        }
        if self.count.is_none() && self.seconds.is_none() {
            return Err(Error::config("a send needs a packet count or a duration"));
        }
        if let Some(s) = self.seconds {
            if !(s.is_finite() && s > 0.0) {
                return Err(Error::config(format!(
                    "duration must be a positive number of seconds, got {}",
                    number_text(s)
                )));
            }
        }
        if let Some(r) = self.rate_pps {
            if !(r.is_finite() && r > 0.0) {
                return Err(Error::config(format!(
                    "rate must be a positive number of packets/s, got {}",
                    number_text(r)
                )));
            }
        }
        Ok(())
    }
}

/// An AF_PACKET raw socket bound to one device, send-only.
struct PacketSocket {
    fd: OwnedFd,
}

impl PacketSocket {
    fn open(device: &str) -> Result<Self, Error> {
        let ifindex = netns::ifindex(device)?;
        // SAFETY: a plain system call with constant arguments; it returns a new descriptor or -1.
        let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            let e = std::io::Error::last_os_error();
            return Err(Error::config(format!("cannot open an AF_PACKET socket: {e} (needs CAP_NET_RAW)")));
        }
        // SAFETY: `raw` is a freshly opened descriptor that nothing else owns or closes.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: sockaddr_ll is plain old data (integers and a byte array); all zeroes is a
        // valid value of it.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = 0; // receive nothing
        addr.sll_ifindex = ifindex as i32;
        // SAFETY: `addr` is a valid, initialised sockaddr_ll that lives across the call, and the
        // length passed is exactly its size; bind only reads it.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_ll).cast::<libc::sockaddr>(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            return Err(Error::config(format!("cannot bind an AF_PACKET socket to '{device}': {e}")));
        }
        Ok(Self { fd })
    }

    /// One `sendmmsg` call; the number of messages sent, or the error.
    fn send_batch(&self, msgs: &mut [libc::mmsghdr]) -> Result<usize, std::io::Error> {
        // SAFETY: every header in `msgs` points at one iovec (owned by the caller, alive and
        // unmoved for the call) whose base/len describe a live frame slice; the socket is
        // bound, so msg_name is null. The kernel only reads the frames (the iovec's `*mut` is
        // the C type, nothing is written through it) and writes each header's msg_len, inside
        // `msgs`, which is exclusively borrowed here.
        let n = unsafe { libc::sendmmsg(self.fd.as_raw_fd(), msgs.as_mut_ptr(), msgs.len() as libc::c_uint, 0) };
        if n < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
}

/// Sends frames as `spec` says, from a thread of its own; blocks until it is done.
pub fn send(frames: &Frames, spec: &SendSpec) -> Result<SendReport, Error> {
    spec.validate(frames)?;
    std::thread::scope(|s| {
        s.spawn(|| send_from_this_thread(frames, spec))
            .join()
            .unwrap_or_else(|_| Err(Error::config("the sender thread panicked")))
    })
}

fn send_from_this_thread(frames: &Frames, spec: &SendSpec) -> Result<SendReport, Error> {
    if let Some(cpu) = spec.cpu {
        pin_current_thread(cpu);
    }
    if let Some(ns) = &spec.netns {
        netns::enter(ns)?;
    }
    let socket = PacketSocket::open(&spec.device)?;
    let n = frames.len();
    let batch = spec.batch;
    let empty = libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 };
    let mut iovs = vec![empty; batch];
    // SAFETY: mmsghdr is plain old data (integers and raw pointers); all zeroes (null pointers,
    // zero lengths) is a valid value of it.
    let mut msgs: Vec<libc::mmsghdr> = (0..batch).map(|_| unsafe { std::mem::zeroed() }).collect();
    for (m, iov) in msgs.iter_mut().zip(iovs.iter_mut()) {
        m.msg_hdr.msg_iov = iov;
        m.msg_hdr.msg_iovlen = 1;
    }
    let limit = spec.count.unwrap_or(u64::MAX);
    let duration = spec.seconds.map(Duration::from_secs_f64);
    let mut report = SendReport { next: spec.start % n, ..Default::default() };
    let mut refused_in_a_row = 0u32;
    let t0 = Instant::now();
    let c0 = thread_cpu_ns();
    while report.sent < limit {
        // Ctrl-C (superlinear_core::cancel): stop between calls, not at the end of a duration.
        cancel::check()?;
        if duration.is_some_and(|d| t0.elapsed() >= d) {
            break;
        }
        if let Some(rate) = spec.rate_pps {
            let due = Duration::from_secs_f64(report.sent as f64 / rate);
            let now = t0.elapsed();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        let want = (limit - report.sent).min(batch as u64) as usize;
        for (j, iov) in iovs[..want].iter_mut().enumerate() {
            let f = frames.get((report.next + j) % n);
            iov.iov_base = f.as_ptr() as *mut libc::c_void;
            iov.iov_len = f.len();
        }
        match socket.send_batch(&mut msgs[..want]) {
            Ok(sent) => {
                report.sent += sent as u64;
                report.next = (report.next + sent) % n;
                report.calls += 1;
                refused_in_a_row = 0;
            }
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOBUFS | libc::EAGAIN | libc::EINTR)) => {
                report.refused += 1;
                refused_in_a_row += 1;
                if refused_in_a_row >= MAX_REFUSALS_IN_A_ROW {
                    return Err(Error::config(format!(
                        "device '{}' refused {MAX_REFUSALS_IN_A_ROW} sends in a row: {e}",
                        spec.device
                    )));
                }
                std::thread::sleep(Duration::from_micros(20));
            }
            Err(e) => return Err(Error::config(format!("sending on '{}' failed: {e}", spec.device))),
        }
    }
    report.elapsed_ns = t0.elapsed().as_nanos() as u64;
    report.cpu_ns = thread_cpu_ns().saturating_sub(c0);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use superlinear_classify::packet::Packet;
    use superlinear_classify::trace::encode::Macs;

    fn frames() -> Frames {
        Frames::build(&[Packet::new(1, 2, 3, 4, 17)], &Macs { dst: [2, 0, 0, 0, 0, 2], src: [2, 0, 0, 0, 0, 1] })
    }

    #[test]
    fn specs_are_checked_before_anything_is_opened() {
        let f = frames();
        let base = SendSpec { device: "lo".into(), count: Some(1), ..Default::default() };
        assert!(send(&f, &SendSpec { count: None, ..base.clone() }).unwrap_err().to_string().contains("count"));
        assert!(send(&f, &SendSpec { seconds: Some(0.0), ..base.clone() }).is_err());
        assert!(send(&f, &SendSpec { rate_pps: Some(-1.0), ..base.clone() }).is_err());
        assert!(send(&f, &SendSpec { batch: 0, ..base.clone() }).is_err());
        let empty = Frames::build(&[], &Macs { dst: [0; 6], src: [0; 6] });
        assert!(send(&empty, &base).unwrap_err().to_string().contains("empty"));
        let e = send(&f, &SendSpec { device: "no-such-dev-x".into(), ..base }).unwrap_err();
        assert!(e.to_string().starts_with("network interface 'no-such-dev-x' does not exist"), "{e}");
    }
}
