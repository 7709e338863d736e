//! Key trace files: text (one unsigned 64-bit key per line; blank lines and `#` comments are
//! skipped) and a compact binary form (magic `SLKT`, u32 version 1, u64 count, then count
//! little-endian u64 keys). The reader picks the format from the magic bytes.

use crate::error::Error;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};

/// The first four bytes of a binary key trace.
pub const TRACE_MAGIC: &[u8; 4] = b"SLKT";
const VERSION: u32 = 1;

/// Reads a key trace, text or binary. Errors name the file and, for text, the line.
pub fn read_trace(path: &str) -> Result<Vec<u64>, Error> {
    let io = |e: std::io::Error| Error::input(path, None, e.to_string());
    let mut file = File::open(path).map_err(io)?;
    let mut magic = [0u8; 4];
    let got = read_up_to(&mut file, &mut magic).map_err(io)?;
    drop(file);
    let keys = if got == 4 && &magic == TRACE_MAGIC { read_binary(path)? } else { read_text(path)? };
    if keys.is_empty() {
        return Err(Error::input(path, None, "trace holds no keys"));
    }
    Ok(keys)
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            got => n += got,
        }
    }
    Ok(n)
}

fn read_text(path: &str) -> Result<Vec<u64>, Error> {
    let file = File::open(path).map_err(|e| Error::input(path, None, e.to_string()))?;
    let mut keys = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| Error::input(path, Some(i + 1), format!("cannot read line: {e}")))?;
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

fn read_binary(path: &str) -> Result<Vec<u64>, Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::input(path, None, e.to_string()))?;
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
    let count = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes")) as usize;
    let body = &bytes[16..];
    if body.len() != count.saturating_mul(8) {
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
    let io = |e: std::io::Error| Error::input(path, None, e.to_string());
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
    let io = |e: std::io::Error| Error::input(path, None, e.to_string());
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
        let dir = std::env::temp_dir().join(format!("superlinear-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name).to_string_lossy().into_owned()
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
}
