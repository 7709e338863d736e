//! Key trace files: text (one unsigned 64-bit key per line; blank lines and `#` comments are
//! skipped) and a compact binary form (magic `SLKT`, u32 version 1, u64 count, then count
//! little-endian u64 keys). The reader picks the format from the magic bytes.

use crate::error::Error;
use crate::input;
use std::fs::File;
use std::io::{BufWriter, Write};

/// The first four bytes of a binary key trace.
pub const TRACE_MAGIC: &[u8; 4] = b"SLKT";
const VERSION: u32 = 1;

/// Reads a key trace, text or binary. Errors name the file and, for text, the line.
pub fn read_trace(path: &str) -> Result<Vec<u64>, Error> {
    let bytes = input::read_bytes(path)?;
    if let Some(kind) = input::packet_trace_kind(&bytes) {
        return Err(Error::input(
            path,
            None,
            format!("a {kind} packet trace, not a key trace ({})", input::PACKET_TRACE_HINT),
        ));
    }
    let keys = if bytes.starts_with(TRACE_MAGIC) {
        parse_binary_trace(&bytes, path)?
    } else {
        parse_text(&input::into_text(bytes, path)?, path)?
    };
    if keys.is_empty() {
        return Err(Error::input(path, None, "trace holds no keys"));
    }
    Ok(keys)
}

fn parse_text(text: &str, path: &str) -> Result<Vec<u64>, Error> {
    let mut keys = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let text = line.split('#').next().unwrap_or("").trim();
        if text.is_empty() {
            continue;
        }
        let key = text.parse::<u64>().map_err(|_| {
            let shown: String = text.chars().take(40).collect();
            Error::input(path, Some(i + 1), format!("expected an unsigned 64-bit integer key, got '{shown}'"))
        })?;
        keys.push(key);
    }
    Ok(keys)
}

/// The keys of a binary trace's bytes (magic included); `path` names it in errors.
pub fn parse_binary_trace(bytes: &[u8], path: &str) -> Result<Vec<u64>, Error> {
    if bytes.len() < 16 {
        return Err(Error::input(path, None, "binary trace header is truncated"));
    }
    let version = u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(Error::input(
            path,
            None,
            format!("unsupported binary trace version {version} (expected {VERSION})"),
        ));
    }
    let count = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
    let body = &bytes[16..];
    let Some(announced) = count.checked_mul(8) else {
        return Err(Error::input(
            path,
            None,
            format!("binary trace announces {count} keys, an impossible count (more than 2^64 bytes of keys)"),
        ));
    };
    if body.len() as u64 != announced {
        return Err(Error::input(
            path,
            None,
            format!("binary trace announces {count} keys but holds {} bytes of keys", body.len()),
        ));
    }
    Ok(body.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
}

/// Writes keys as a binary trace.
pub fn write_binary_trace(path: &str, keys: &[u64]) -> Result<(), Error> {
    let io = |e: std::io::Error| Error::input(path, None, format!("cannot write: {}", input::io_words(&e)));
    let mut w = BufWriter::new(File::create(path).map_err(io)?);
    w.write_all(TRACE_MAGIC).map_err(io)?;
    w.write_all(&VERSION.to_le_bytes()).map_err(io)?;
    w.write_all(&(keys.len() as u64).to_le_bytes()).map_err(io)?;
    for k in keys {
        w.write_all(&k.to_le_bytes()).map_err(io)?;
    }
    w.flush().map_err(io)
}

/// Writes keys as a text trace, one per line.
pub fn write_text_trace(path: &str, keys: &[u64]) -> Result<(), Error> {
    let io = |e: std::io::Error| Error::input(path, None, format!("cannot write: {}", input::io_words(&e)));
    let mut w = BufWriter::new(File::create(path).map_err(io)?);
    for k in keys {
        writeln!(w, "{k}").map_err(io)?;
    }
    w.flush().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> String {
        crate::input::scratch_file("trace", name, b"")
    }

    #[test]
    fn binary_and_text_round_trip() {
        let keys = vec![5, 1, u64::MAX, 0, 5];
        let (b, t) = (tmp("k.bin"), tmp("k.txt"));
        write_binary_trace(&b, &keys).unwrap();
        write_text_trace(&t, &keys).unwrap();
        assert_eq!(read_trace(&b).unwrap(), keys);
        assert_eq!(read_trace(&t).unwrap(), keys);
    }

    #[test]
    fn bad_text_line_is_named() {
        let p = tmp("bad.txt");
        std::fs::write(&p, "1\n# comment\n\n2\nx7\n").unwrap();
        let err = read_trace(&p).unwrap_err().to_string();
        assert!(err.ends_with(":5: expected an unsigned 64-bit integer key, got 'x7'"), "{err}");
    }

    #[test]
    fn truncated_binary_is_rejected() {
        let p = tmp("trunc.bin");
        write_binary_trace(&p, &[1, 2, 3]).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        std::fs::write(&p, &bytes[..bytes.len() - 3]).unwrap();
        assert!(read_trace(&p).unwrap_err().to_string().contains("announces 3 keys"));
    }

    #[test]
    fn text_with_a_bom_and_bad_utf8() {
        let p = tmp("bom.txt");
        std::fs::write(&p, b"\xEF\xBB\xBF3221225985\n7\n").unwrap();
        assert_eq!(read_trace(&p).unwrap(), vec![3_221_225_985, 7]);
        std::fs::write(&p, b"1\n2\n\xff3\n").unwrap();
        assert_eq!(read_trace(&p).unwrap_err().to_string(), format!("{p}:3: not UTF-8 text"));
    }

    #[test]
    fn impossible_key_count_is_named() {
        let p = tmp("huge.bin");
        let mut bytes = TRACE_MAGIC.to_vec();
        bytes.extend_from_slice(&VERSION.to_le_bytes());
        bytes.extend_from_slice(&(1u64 << 63).to_le_bytes());
        std::fs::write(&p, &bytes).unwrap();
        let e = read_trace(&p).unwrap_err().to_string();
        assert!(
            e.ends_with("announces 9223372036854775808 keys, an impossible count (more than 2^64 bytes of keys)"),
            "{e}"
        );
    }

    #[test]
    fn devices_and_folders_are_refused() {
        assert!(read_trace("/dev/zero").unwrap_err().to_string().starts_with("/dev/zero: not a regular file"));
        let d = std::env::temp_dir().to_string_lossy().into_owned();
        assert_eq!(read_trace(&d).unwrap_err().to_string(), format!("{d}: a folder, not a file"));
    }
}
