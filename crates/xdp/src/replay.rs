//! The in-kernel trace replayer of the throughput study (`xdp-bench --generator xdp-live`):
//! `bpf/replay.bpf.c` run with `BPF_PROG_RUN` in live-frames mode on the sending device, so one
//! system call puts thousands of trace frames on the wire without a socket buffer per packet.
//! The `sendmmsg` sender ([`superlinear_nftbench::sender`]) builds a socket buffer per packet,
//! which takes several sender CPUs per saturated worker (docs/results/xdp.md).
//!
//! It takes the same [`SendSpec`] and gives the same [`SendReport`] as the `sendmmsg` sender:
//! a count (paced or not) or a duration, a start in the trace, a CPU to run on. What it counts as
//! sent is what the program handed to `XDP_TX`; a frame the device then drops (its peer's ring
//! full) is not seen by the receiver, which the dispatcher's own count shows.

use crate::datapath::{kernel_err, load_xdp, Aligned};
use aya::maps::{Array, MapData};
use aya::util::nr_cpus;
use aya::{Ebpf, EbpfLoader};
use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use superlinear_classify::trace::encode::FRAME_LEN;
use superlinear_core::cancel;
use superlinear_core::cputime::{pin_current_thread, thread_cpu_ns};
use superlinear_core::Error;
use superlinear_nftbench::frame::{Frames, STRIDE};
use superlinear_nftbench::netns;
use superlinear_nftbench::sender::{SendReport, SendSpec};

static ALIGNED: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/replay.bpf.o")));
/// The replayer's BPF object (empty when clang was missing at build time).
static OBJECT: &[u8] = &ALIGNED.0;

/// Most frames live mode hands to the device per batch (the kernel's TEST_XDP_MAX_BATCH).
pub const MAX_LIVE_BATCH: usize = 256;
/// Frames of a CPU's first unpaced `BPF_PROG_RUN` call; later calls are sized from the rate
/// last seen on that CPU (kept across sends, so a sender that works in slices stays busy).
const FIRST_CALL: u64 = 1 << 16;
/// Seconds an unpaced call aims to last. Every live-frames call sets up and tears down a page
/// pool, which sleeps for an RCU grace period, so calls must be long for the sender to be busy;
/// short enough that a duration ends on time.
const CALL_SECONDS: f64 = 0.5;
/// Seconds of the trace a paced call sends at once (the pace holds over calls, not frames).
const PACED_CALL_SECONDS: f64 = 0.05;
const MAX_CALL: u64 = 1 << 26;

const BPF_PROG_TEST_RUN: libc::c_long = 10;
const BPF_F_TEST_XDP_LIVE_FRAMES: u32 = 1 << 1;

/// The `test` member of `union bpf_attr` (linux/bpf.h), as `BPF_PROG_TEST_RUN` reads it.
#[repr(C, align(8))]
#[derive(Default)]
struct TestRunAttr {
    prog_fd: u32,
    retval: u32,
    data_size_in: u32,
    data_size_out: u32,
    data_in: u64,
    data_out: u64,
    repeat: u32,
    duration: u32,
    ctx_size_in: u32,
    ctx_size_out: u32,
    ctx_in: u64,
    ctx_out: u64,
    flags: u32,
    cpu: u32,
    batch_size: u32,
    /// Explicit, so that no byte the kernel checks for zero is uninitialised padding.
    _pad: u32,
}

/// `struct xdp_md` (linux/bpf.h): the context live mode takes (the device to send from).
#[repr(C)]
#[derive(Default)]
struct XdpMd {
    data: u32,
    data_end: u32,
    data_meta: u32,
    ingress_ifindex: u32,
    rx_queue_index: u32,
    egress_ifindex: u32,
}

/// One CPU's place in the trace (`struct sl_cursor`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Cursor {
    next: u64,
    sent: u64,
}

// SAFETY: `Cursor` is two u64s with no padding; every bit pattern is a valid value.
unsafe impl aya::Pod for Cursor {}

/// One trace frame slot (`struct sl_frame`).
#[repr(C)]
#[derive(Clone, Copy)]
struct FrameSlot([u8; STRIDE]);

// SAFETY: a plain byte array; every bit pattern is a valid value.
unsafe impl aya::Pod for FrameSlot {}

/// The frame a live-frames run starts from: the program writes a trace frame over it in full.
/// A static, not a const, so that the pointer handed to the kernel is to one lasting place.
static BLANK_FRAME: [u8; FRAME_LEN] = [0; FRAME_LEN];

/// The replayer loaded with one trace's frames; shared by the sender threads.
pub struct LiveReplayer {
    /// The program and the other maps, alive as long as this handle.
    _object: Mutex<Ebpf>,
    prog_fd: i32,
    /// Each CPU's cursor (`replay_cursors`), taken out of the object.
    cursors: Mutex<Array<MapData, Cursor>>,
    frames: usize,
    /// Frames per second last seen on each CPU (0: none yet).
    rates: Vec<AtomicU64>,
}

impl LiveReplayer {
    /// Loads the replayer and copies `frames` into its map.
    pub fn new(frames: &Frames) -> Result<Self, Error> {
        if OBJECT.is_empty() {
            return Err(Error::config("this build has no XDP trace replayer (clang was missing at build time)"));
        }
        if frames.is_empty() {
            return Err(Error::config("no frames to replay (the trace is empty)"));
        }
        let cpus = nr_cpus().map_err(|(_, e)| kernel_err("count possible CPUs", e))?;
        let mut ebpf = EbpfLoader::new()
            .set_max_entries("replay_frames", frames.len() as u32)
            .set_max_entries("replay_cursors", cpus as u32)
            .load(OBJECT)
            .map_err(|e| kernel_err("load the replayer's BPF object", e))?;
        {
            let mut slots: Array<_, FrameSlot> = Array::try_from(ebpf.map_mut("replay_frames").expect("in the object"))
                .map_err(|e| kernel_err("replay_frames", e))?;
            for i in 0..frames.len() {
                let mut slot = FrameSlot([0; STRIDE]);
                let f = frames.get(i);
                slot.0[..f.len()].copy_from_slice(f);
                slots.set(i as u32, slot, 0).map_err(|e| kernel_err(&format!("write replay_frames[{i}]"), e))?;
            }
            let mut settings: Array<_, u64> = Array::try_from(ebpf.map_mut("replay_settings").expect("in the object"))
                .map_err(|e| kernel_err("replay_settings", e))?;
            settings.set(0, frames.len() as u64, 0).map_err(|e| kernel_err("write replay_settings", e))?;
        }
        let prog = load_xdp(&mut ebpf, "sl_replay", "the replayer program")?;
        let prog_fd = prog.fd().map_err(|e| kernel_err("replayer program", e))?.as_fd().as_raw_fd();
        let cursors = Array::try_from(ebpf.take_map("replay_cursors").expect("in the object"))
            .map_err(|e| kernel_err("replay_cursors", e))?;
        Ok(Self {
            _object: Mutex::new(ebpf),
            prog_fd,
            cursors: Mutex::new(cursors),
            frames: frames.len(),
            rates: (0..cpus).map(|_| AtomicU64::new(0)).collect(),
        })
    }

    fn cursor(&self, cpu: usize) -> Result<Cursor, Error> {
        let cursors = self.cursors.lock().unwrap_or_else(|p| p.into_inner());
        cursors.get(&(cpu as u32), 0).map_err(|e| kernel_err("read replay_cursors", e))
    }

    /// Sends as `spec` says, from a thread of its own pinned to `spec.cpu` (or to the CPU it
    /// starts on); blocks until it is done.
    pub fn send(&self, spec: &SendSpec) -> Result<SendReport, Error> {
        spec.validate_for(MAX_LIVE_BATCH)?;
        std::thread::scope(|s| {
            s.spawn(|| self.send_from_this_thread(spec))
                .join()
                .unwrap_or_else(|_| Err(Error::config("the replayer thread panicked")))
        })
    }

    fn send_from_this_thread(&self, spec: &SendSpec) -> Result<SendReport, Error> {
        // SAFETY: sched_getcpu takes no arguments and only returns a number (or -1).
        let here = unsafe { libc::sched_getcpu() };
        let cpu = spec.cpu.unwrap_or(here.max(0) as usize);
        // The cursor is the CPU's: the thread must not move while it replays.
        if !pin_current_thread(cpu) {
            return Err(Error::config(format!("cannot run the replayer on CPU {cpu}")));
        }
        if let Some(ns) = &spec.netns {
            netns::enter(ns)?;
        }
        let ifindex = netns::ifindex(&spec.device)?;
        let start = (spec.start % self.frames) as u64;
        self.cursors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .set(cpu as u32, Cursor { next: start, sent: 0 }, 0)
            .map_err(|e| kernel_err("write replay_cursors", e))?;
        let limit = spec.count.unwrap_or(u64::MAX);
        let duration = spec.seconds.map(Duration::from_secs_f64);
        let left_at_start = spec.seconds.unwrap_or(CALL_SECONDS);
        let mut report = SendReport { next: start as usize, ..Default::default() };
        let t0 = Instant::now();
        let c0 = thread_cpu_ns();
        let rate_seen = self.rates.get(cpu).ok_or_else(|| Error::config(format!("CPU {cpu} is not a possible CPU")))?;
        let call_for = |rate: f64, seconds: f64| ((rate * seconds) as u64).clamp(spec.batch as u64, MAX_CALL);
        let mut call = match rate_seen.load(Ordering::Relaxed) {
            0 => FIRST_CALL,
            r => call_for(r as f64, left_at_start.min(CALL_SECONDS)),
        };
        while report.sent < limit {
            // Ctrl-C (superlinear_core::cancel): stop between calls, not at the end of a duration.
            cancel::check()?;
            let left = duration.map(|d| d.saturating_sub(t0.elapsed()).as_secs_f64());
            if left.is_some_and(|l| l <= 0.0) {
                break;
            }
            let want = match spec.rate_pps {
                Some(rate) => {
                    let due = Duration::from_secs_f64(report.sent as f64 / rate);
                    let now = t0.elapsed();
                    if due > now {
                        std::thread::sleep(due - now);
                    }
                    ((rate * PACED_CALL_SECONDS) as u64).max(spec.batch as u64)
                }
                None => call,
            };
            let want = want.min(limit - report.sent).min(MAX_CALL);
            let t = Instant::now();
            self.run(ifindex, want as u32, spec.batch as u32)?;
            let took = t.elapsed().as_secs_f64();
            let c = self.cursor(cpu)?;
            let done = c.sent - report.sent;
            report.sent = c.sent;
            report.next = c.next as usize;
            report.calls += 1;
            if done > 0 && took > 0.0 {
                // The rate seen includes the call's fixed cost, so the next call errs short.
                let rate = done as f64 / took;
                if spec.rate_pps.is_none() {
                    rate_seen.store(rate as u64, Ordering::Relaxed);
                }
                call = call_for(rate, left.map_or(CALL_SECONDS, |l| (l - took).clamp(0.0, CALL_SECONDS)));
            }
        }
        report.elapsed_ns = t0.elapsed().as_nanos() as u64;
        report.cpu_ns = thread_cpu_ns().saturating_sub(c0);
        Ok(report)
    }

    /// One `BPF_PROG_RUN` in live-frames mode: `repeat` runs of the program on the device.
    fn run(&self, ifindex: u32, repeat: u32, batch: u32) -> Result<(), Error> {
        let ctx = XdpMd { data_end: FRAME_LEN as u32, ingress_ifindex: ifindex, ..Default::default() };
        let attr = TestRunAttr {
            prog_fd: self.prog_fd as u32,
            data_size_in: FRAME_LEN as u32,
            data_in: BLANK_FRAME.as_ptr() as u64,
            repeat,
            ctx_size_in: std::mem::size_of::<XdpMd>() as u32,
            ctx_in: (&ctx as *const XdpMd) as u64,
            flags: BPF_F_TEST_XDP_LIVE_FRAMES,
            batch_size: batch,
            ..Default::default()
        };
        // SAFETY: `attr` is a valid, fully initialised `test` member of union bpf_attr (no implicit
        // padding: every byte is a field), and the size passed is exactly its size (the kernel
        // zero-extends shorter unions and requires the bytes past `batch_size` to be zero). The pointers in
        // it (`BLANK_FRAME`, `ctx`) point at live buffers of the stated sizes that outlive the call;
        // in live-frames mode the kernel only reads them (no data_out or ctx_out is given).
        let rc = unsafe {
            libc::syscall(
                libc::SYS_bpf,
                BPF_PROG_TEST_RUN,
                &attr as *const TestRunAttr,
                std::mem::size_of::<TestRunAttr>(),
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            // A signal stopped the run; the cursor says how far it got.
            Some(libc::EINTR) => Ok(()),
            Some(libc::EINVAL) => Err(Error::config(format!(
                "the kernel refused a live-frames run ({e}): XDP live frames need Linux 5.18 or newer"
            ))),
            _ => Err(kernel_err("run the replayer (BPF_PROG_RUN, live frames)", e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_structs_have_their_uapi_sizes() {
        // linux/bpf.h: the `test` member of union bpf_attr ends at byte 76 (8-aligned: 80);
        // struct xdp_md is six u32s.
        assert_eq!(std::mem::size_of::<TestRunAttr>(), 80);
        assert_eq!(std::mem::offset_of!(TestRunAttr, flags), 64);
        assert_eq!(std::mem::offset_of!(TestRunAttr, batch_size), 72);
        assert_eq!(std::mem::size_of::<XdpMd>(), 24);
        assert_eq!(std::mem::size_of::<FrameSlot>(), STRIDE);
    }
}
