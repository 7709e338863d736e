//! Input files a user names (key, packet, latency and job traces, rule files, update schedules),
//! read the one way every reader shares, so that each mistake is one line naming the file before
//! any work: a folder, a device or pipe that never ends, a file larger than the memory its parsed
//! form needs, an io error (in words, never `(os error N)`), bytes that are not UTF-8 text (with
//! their line), and a UTF-8 byte-order mark, which some editors write and which is stripped
//! rather than read as part of the first field.
//!
//! It lives in `superlinear-core` because every crate with a file reader already depends on it.

use crate::error::Error;
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// Bytes of memory that reading a binary file (pcap, pcapng, the binary key and packet traces)
/// may take per byte of the file, at most: the file's bytes, held while the parsed form, no
/// larger than they are, is built beside them.
pub const BINARY_BYTES_PER_FILE_BYTE: u64 = 2;

/// Bytes of memory that reading a text file may take per byte of the file, at most: the worst
/// case among the readers is a text trace of short lines (`1\n` becomes an 8-byte key; a
/// distinct object of a few characters a hash-map entry of some 40 bytes). The Python front's
/// text files use the same factor (`common/input_files.py`).
pub const TEXT_BYTES_PER_FILE_BYTE: u64 = 8;

/// The share of MemAvailable a file may plan on: the rest stays for the run and other programs.
const USABLE_PERCENT: u64 = 80;

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The whole of the input file `path`, after refusing what cannot or should not be read; sized
/// for a binary form ([`BINARY_BYTES_PER_FILE_BYTE`]): [`into_text`] checks a text form's.
pub fn read_bytes(path: &str) -> Result<Vec<u8>, Error> {
    let fail = |m: String| Error::input(path, None, m);
    // Checked before opening: a folder or a device is refused in words.
    let meta = std::fs::metadata(path).map_err(|e| fail(format!("cannot read: {}", io_words(&e))))?;
    if let Some(why) = not_a_file(&meta) {
        return Err(fail(why.into()));
    }
    let memory = Memory::now();
    let limit = memory.largest_file(BINARY_BYTES_PER_FILE_BYTE);
    if meta.len() > limit {
        return Err(fail(memory.too_large(meta.len(), BINARY_BYTES_PER_FILE_BYTE, false)));
    }
    let file = File::open(path).map_err(|e| fail(format!("cannot read: {}", io_words(&e))))?;
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(usize::try_from(meta.len()).unwrap_or(usize::MAX))
        .map_err(|_| fail(format!("cannot read: not enough memory for its {}", size_text(meta.len()))))?;
    // A file that grows while it is read (a log being written, a /proc file, which reports size
    // 0) is read up to the limit and refused past it, not read until memory runs out.
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| fail(format!("cannot read: {}", io_words(&e))))?;
    if bytes.len() as u64 > limit {
        return Err(fail(memory.too_large(bytes.len() as u64, BINARY_BYTES_PER_FILE_BYTE, true)));
    }
    Ok(bytes)
}

/// The text of the input file `path`: [`read_bytes`], then [`into_text`].
pub fn read_text(path: &str) -> Result<String, Error> {
    into_text(read_bytes(path)?, path)
}

/// The bytes of file `path` as text, one leading byte-order mark stripped; a text larger than
/// its parsed form can fit in memory ([`TEXT_BYTES_PER_FILE_BYTE`]) is refused, and bytes that
/// are not UTF-8 are an error naming their line.
pub fn into_text(mut bytes: Vec<u8>, path: &str) -> Result<String, Error> {
    let memory = Memory::now();
    if bytes.len() as u64 > memory.largest_file(TEXT_BYTES_PER_FILE_BYTE) {
        return Err(Error::input(path, None, memory.too_large(bytes.len() as u64, TEXT_BYTES_PER_FILE_BYTE, false)));
    }
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let line = line_of(e.as_bytes(), e.utf8_error().valid_up_to());
        Error::input(path, Some(line), "not UTF-8 text")
    })?;
    match first_control_byte(text.as_bytes()) {
        Some(at) => {
            let byte = text.as_bytes()[at];
            Err(Error::input(path, Some(line_of(text.as_bytes(), at)), control_byte_words(byte)))
        }
        None => Ok(text),
    }
}

/// What a file holding control byte `byte` is told: ESC starts a terminal's colour codes (a
/// captured log), the others are binary.
pub fn control_byte_words(byte: u8) -> String {
    let guess = if byte == 0x1b { "terminal colour codes?" } else { "a binary file?" };
    format!("not text: control byte 0x{byte:02x} ({guess})")
}

/// The offset of the first control byte no text file holds: NUL and the other C0 controls but
/// tab, line feed, vertical tab, form feed and carriage return. A file of NUL bytes is valid
/// UTF-8, and a key trace's reader would take it as one key.
fn first_control_byte(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
}

/// Borrowed bytes as text, one leading byte-order mark stripped; `Err` holds the 1-based line of
/// the first byte that is not UTF-8 or is a control byte no text holds (for readers that word
/// that error themselves). For packet header lines, whose parsed form is smaller than the line:
/// [`read_bytes`]'s size check holds.
pub fn utf8_text(bytes: &[u8]) -> Result<&str, usize> {
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|e| line_of(bytes, e.valid_up_to()))?;
    match first_control_byte(bytes) {
        Some(at) => Err(line_of(bytes, at)),
        None => Ok(text),
    }
}

/// What a key-trace reader says of a packet trace it was given (after naming its kind).
pub const PACKET_TRACE_HINT: &str = "a key trace holds one integer key per line, or is binary SLKT; predict and \
     advise classify packets with --rules RULES --trace TRACE, and python -m superlinear.classify.flow_keys TRACE OUT \
     turns a ClassBench trace into flow keys";

// The magic numbers of the packet trace files, here where every reader can see them: the packet
// trace readers (`superlinear-classify`) detect their format by them, and the key-trace readers
// refuse such a file by name ([`packet_trace_kind`]).

/// The project's binary packet trace (SLPT).
pub const SLPT_MAGIC: [u8; 4] = *b"SLPT";
/// A pcapng file's first block type (Section Header Block).
pub const PCAPNG_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];
/// Classic pcap: microsecond and nanosecond timestamps, in either byte order.
pub const PCAP_MAGICS: [[u8; 4]; 4] =
    [[0xd4, 0xc3, 0xb2, 0xa1], [0xa1, 0xb2, 0xc3, 0xd4], [0x4d, 0x3c, 0xb2, 0xa1], [0xa1, 0xb2, 0x3c, 0x4d]];

/// The kind of packet trace `bytes` hold, for a key-trace reader given one: a magic number
/// (pcap, pcapng, the binary SLPT), or a first line of five or more integer fields (a ClassBench
/// header trace: a key trace has one, a latency trace at most three). Such a file was refused
/// as "not UTF-8 text" or as a key of 7 columns, which did not say what it was.
pub fn packet_trace_kind(bytes: &[u8]) -> Option<&'static str> {
    match bytes.get(..4) {
        Some(m) if m == SLPT_MAGIC => return Some("binary (SLPT)"),
        Some(m) if m == PCAPNG_MAGIC => return Some("pcapng"),
        Some(m) if PCAP_MAGICS.iter().any(|p| p == m) => return Some("pcap"),
        _ => {}
    }
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    let head = &bytes[..bytes.len().min(4096)];
    let text = String::from_utf8_lossy(head);
    let first = text.lines().map(|l| l.split('#').next().unwrap_or("").trim()).find(|l| !l.is_empty())?;
    let fields: Vec<&str> = first.split_whitespace().collect();
    (fields.len() >= 5 && fields.iter().all(|f| f.parse::<u64>().is_ok())).then_some("ClassBench header")
}

/// The memory a file may plan on: the usable share of MemAvailable (unknown: no limit).
struct Memory {
    available: Option<u64>,
}

impl Memory {
    fn now() -> Self {
        Self { available: mem_available() }
    }

    fn usable(&self) -> Option<u64> {
        self.available.map(|a| a / 100 * USABLE_PERCENT)
    }

    /// The largest file whose parsed form, at `per_byte` bytes per byte of the file, fits.
    fn largest_file(&self, per_byte: u64) -> u64 {
        self.usable().map_or(u64::MAX, |u| u / per_byte)
    }

    /// Why a file of `size` bytes (at least that many, `over`, where reading stopped there) is
    /// not read.
    fn too_large(&self, size: u64, per_byte: u64, over: bool) -> String {
        let avail = self.available.map_or_else(|| "unknown".into(), size_text);
        let usable = self.usable().map_or_else(|| "unknown".into(), size_text);
        format!(
            "too large to read: {}{} (reading it needs about {} of memory, but only {usable} of the {avail} available \
             may be used)",
            if over { "over " } else { "" },
            size_text(size),
            size_text(size.saturating_mul(per_byte)),
        )
    }
}

/// The 1-based line holding byte `offset`.
fn line_of(bytes: &[u8], offset: usize) -> usize {
    1 + bytes[..offset].iter().filter(|&&b| b == b'\n').count()
}

/// Why a file of this kind is not read: a folder, a pipe (`<(zcat t.gz)`: readable once, while
/// runs read their inputs once per repeat, and a second read would wait forever), a device or a
/// socket (which may never end).
fn not_a_file(meta: &std::fs::Metadata) -> Option<&'static str> {
    let kind = meta.file_type();
    if kind.is_dir() {
        Some("a folder, not a file")
    } else if kind.is_fifo() {
        Some("a pipe, which can be read only once, while a run may read its input again; write it to a file first")
    } else if kind.is_file() {
        None
    } else {
        Some("not a regular file (a device or socket, which may never end; give a file)")
    }
}

/// MemAvailable of `/proc/meminfo` in bytes; `None` where it cannot be read.
pub fn mem_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_available(&info)
}

fn parse_mem_available(info: &str) -> Option<u64> {
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// A byte count as a user reads it (kB, MB, GB, TB), as the Python front writes it.
pub fn size_text(bytes: u64) -> String {
    let n = bytes as f64;
    for (unit, scale) in [("TB", 1e12), ("GB", 1e9), ("MB", 1e6)] {
        if n >= scale {
            return format!("{:.1} {unit}", n / scale);
        }
    }
    format!("{:.0} kB", n / 1e3)
}

/// An io error in words: "no such file", "permission denied", "a folder, not a file", otherwise
/// the system's own words, without the `(os error N)` a user cannot act on.
pub fn io_words(e: &std::io::Error) -> String {
    match (e.kind(), e.raw_os_error()) {
        (ErrorKind::NotFound, _) => "no such file".into(),
        (ErrorKind::PermissionDenied, _) => "permission denied".into(),
        (_, Some(libc::EISDIR)) => "a folder, not a file".into(),
        (_, Some(libc::ENOTDIR)) => "no such file (a part of the path is a file, not a folder)".into(),
        (_, Some(_)) => {
            let text = e.to_string();
            let words = text.split(" (os error").next().unwrap_or(&text);
            let mut chars = words.chars();
            chars.next().map_or_else(String::new, |c| c.to_lowercase().chain(chars).collect())
        }
        (kind, None) => kind.to_string(),
    }
}

/// A file holding `body`, named `name` in a scratch folder of this process (under the system's
/// temporary folder, `tag` naming the folder): the readers' tests, in every crate, write their
/// inputs with it. A test binary has no hook at its exit, so each folder outlives its process;
/// the folders of `tag` whose process has ended are removed here instead, when this process
/// makes its own.
#[doc(hidden)]
pub fn scratch_file(tag: &str, name: &str, body: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("superlinear-{tag}-{}", std::process::id()));
    if !dir.exists() {
        remove_ended_scratch(tag);
    }
    std::fs::create_dir_all(&dir).expect("a scratch folder under the temporary folder");
    let p = dir.join(name);
    std::fs::write(&p, body).expect("a scratch file");
    p.to_string_lossy().into_owned()
}

/// Removes the scratch folders of `tag` left by processes that have ended (no `/proc/PID`).
fn remove_ended_scratch(tag: &str) {
    let prefix = format!("superlinear-{tag}-");
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(&prefix)) else { continue };
        if !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) && !Path::new("/proc").join(pid).exists() {
            // Another test binary may be sweeping too: whoever comes second finds it gone.
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_folders_of_ended_processes_are_removed() {
        // A process id above the kernel's limit (2^22) is never running.
        let stale = std::env::temp_dir().join("superlinear-sweep-4294967295");
        let kept = std::env::temp_dir().join("superlinear-sweep-4294967295x");
        for d in [&stale, &kept] {
            std::fs::create_dir_all(d).unwrap();
        }
        let p = scratch_file("sweep", "a.txt", b"a");
        assert!(!stale.exists() && kept.exists() && Path::new(&p).exists());
        std::fs::remove_dir_all(&kept).unwrap();
    }

    fn tmp(name: &str, body: &[u8]) -> String {
        scratch_file("input", name, body)
    }

    fn problem(path: &str) -> String {
        read_bytes(path).unwrap_err().to_string()
    }

    #[test]
    fn reads_a_file_and_strips_one_bom() {
        let p = tmp("bom.txt", b"\xEF\xBB\xBF\xEF\xBB\xBFa\n");
        assert_eq!(read_bytes(&p).unwrap(), b"\xEF\xBB\xBF\xEF\xBB\xBFa\n");
        assert_eq!(read_text(&p).unwrap(), "\u{feff}a\n");
        assert_eq!(utf8_text(b"\xEF\xBB\xBFx"), Ok("x"));
        assert_eq!(utf8_text(b"a\tb\r\n\x0cc\n"), Ok("a\tb\r\n\x0cc\n"));
        assert_eq!(control_byte_words(0x1b), "not text: control byte 0x1b (terminal colour codes?)");
        assert_eq!(utf8_text(b"a\nb\n\0\0"), Err(3));
        let nul = scratch_file("input", "nul.txt", &[0; 64]);
        assert_eq!(
            read_text(&nul).unwrap_err().to_string(),
            format!("{nul}:1: not text: control byte 0x00 (a binary file?)")
        );
        assert_eq!(utf8_text(b"x"), Ok("x"));
    }

    #[test]
    fn packet_traces_are_told_from_key_traces() {
        assert_eq!(packet_trace_kind(b"SLPT\x01\0\0\0"), Some("binary (SLPT)"));
        assert_eq!(packet_trace_kind(&[0xd4, 0xc3, 0xb2, 0xa1, 2, 0]), Some("pcap"));
        assert_eq!(packet_trace_kind(&[0x0a, 0x0d, 0x0d, 0x0a, 0]), Some("pcapng"));
        assert_eq!(packet_trace_kind(b"\xEF\xBB\xBF1 2 3 4 6\n"), Some("ClassBench header"));
        assert_eq!(
            packet_trace_kind(b"# c\n\n4230358908\t1695668051\t0\t1712\t6\t0\t379\n"),
            Some("ClassBench header")
        );
        for key_trace in [&b"1\n2\n"[..], b"a 1.5 20\n", b"1 2 3 4 x\n", b"", b"SLKT"] {
            assert_eq!(packet_trace_kind(key_trace), None);
        }
    }

    #[test]
    fn non_utf8_names_its_line() {
        let p = tmp("latin1.txt", b"ok\nstill ok\nbad \xE9\n");
        assert_eq!(read_text(&p).unwrap_err().to_string(), format!("{p}:3: not UTF-8 text"));
        assert_eq!(utf8_text(b"\xEF\xBB\xBFa\n\xff"), Err(2));
    }

    #[test]
    fn what_is_not_a_file_is_refused_in_words() {
        assert_eq!(problem("/nonexistent/x"), "/nonexistent/x: cannot read: no such file");
        let dir = std::env::temp_dir();
        let d = dir.to_string_lossy();
        assert_eq!(problem(&d), format!("{d}: a folder, not a file"));
        assert!(problem("/dev/zero").starts_with("/dev/zero: not a regular file"));
        assert!(problem("/dev/null").starts_with("/dev/null: not a regular file"));
        let f = tmp("plain", b"x");
        let under = format!("{f}/y");
        assert_eq!(
            problem(&under),
            format!("{under}: cannot read: no such file (a part of the path is a file, not a folder)")
        );
    }

    #[test]
    fn a_pipe_is_refused_before_it_is_opened() {
        let fifo = format!("{}.fifo", tmp("pipe", b""));
        let _ = std::fs::remove_file(&fifo);
        if !std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
            return; // no mkfifo here: nothing to check
        }
        // Opening a pipe without a writer would block: the check comes first.
        assert!(problem(&fifo).starts_with(&format!("{fifo}: a pipe, which can be read only once")));
        std::fs::remove_file(&fifo).unwrap();
    }

    #[test]
    fn io_errors_have_no_errno() {
        let e = std::io::Error::from_raw_os_error(libc::ENODEV);
        assert_eq!(io_words(&e), "no such device");
        assert_eq!(io_words(&std::io::Error::from_raw_os_error(libc::EACCES)), "permission denied");
        assert_eq!(io_words(&std::io::Error::from(ErrorKind::UnexpectedEof)), "unexpected end of file");
    }

    #[test]
    fn file_larger_than_memory_is_refused_before_reading() {
        let Some(avail) = mem_available() else { return };
        let size = avail.saturating_mul(2);
        let p = tmp("huge.sparse", b"");
        let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        if f.set_len(size).is_err() {
            return; // a file system without sparse files of that size: nothing to check
        }
        let e = problem(&p);
        std::fs::remove_file(&p).unwrap();
        assert!(e.starts_with(&format!("{p}: too large to read: ")), "{e}");
        assert!(e.contains("of memory, but only") && e.ends_with("available may be used)"), "{e}");
    }

    #[test]
    fn meminfo_is_parsed() {
        assert_eq!(parse_mem_available("MemTotal: 8 kB\nMemAvailable:    4 kB\n"), Some(4096));
        assert_eq!(parse_mem_available("MemTotal: 8 kB\n"), None);
        assert_eq!(size_text(40 << 30), "42.9 GB");
        assert_eq!(size_text(512), "1 kB");
    }
}
