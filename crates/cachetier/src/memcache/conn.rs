//! One connection to one memcached server: buffered request writing, reply reading with
//! timeouts, and the text and meta commands the tier uses. A connection that returned an error
//! is in an unknown state and must be dropped (the pool does so).

use super::check_key;
use super::parse::{error_reply, meta_header, text_store_status, value_header, Item, MetaHeader, StoreStatus};
use crate::endpoint::{Endpoint, Stream};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::time::Duration;

/// The store modes of meta set (`M` flag), the same as the text commands of the same name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetMode {
    /// Store unconditionally.
    Set,
    /// Store only if absent.
    Add,
    /// Store only if present.
    Replace,
}

/// A memcached connection.
pub struct McConn {
    stream: Stream,
    server: String,
    rbuf: Vec<u8>,
    rpos: usize,
    wbuf: Vec<u8>,
}

impl McConn {
    /// Connects with a timeout applying to the connect and to every read and write.
    pub fn connect(endpoint: &Endpoint, timeout: Duration) -> Result<Self> {
        let stream = endpoint.connect(timeout)?;
        Ok(Self { stream, server: endpoint.to_string(), rbuf: Vec::with_capacity(4096), rpos: 0, wbuf: Vec::new() })
    }

    /// The server's address, for messages.
    pub fn server(&self) -> &str {
        &self.server
    }

    fn io(&self, e: std::io::Error) -> Error {
        Error::io(&self.server, e)
    }

    fn flush(&mut self) -> Result<()> {
        let r = self.stream.write_all(&self.wbuf);
        self.wbuf.clear();
        r.map_err(|e| self.io(e))
    }

    fn fill(&mut self) -> Result<()> {
        if self.rpos > 0 && self.rpos == self.rbuf.len() {
            self.rbuf.clear();
            self.rpos = 0;
        }
        let start = self.rbuf.len();
        self.rbuf.resize(start + 16 * 1024, 0);
        let n = match self.stream.read(&mut self.rbuf[start..]) {
            Ok(n) => n,
            Err(e) => {
                self.rbuf.truncate(start);
                return Err(self.io(e));
            }
        };
        self.rbuf.truncate(start + n);
        if n == 0 {
            return Err(self.io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        Ok(())
    }

    /// Reads one `\r\n`-terminated line; returns its range in the read buffer (without `\r\n`).
    fn line(&mut self) -> Result<(usize, usize)> {
        loop {
            if let Some(i) = self.rbuf[self.rpos..].windows(2).position(|w| w == b"\r\n") {
                let (s, e) = (self.rpos, self.rpos + i);
                self.rpos = e + 2;
                return Ok((s, e));
            }
            if self.rpos > 0 {
                self.rbuf.drain(..self.rpos);
                self.rpos = 0;
            }
            self.fill()?;
        }
    }

    /// Reads `n` data bytes followed by `\r\n`.
    fn data(&mut self, n: usize) -> Result<Vec<u8>> {
        while self.rbuf.len() - self.rpos < n + 2 {
            if self.rpos > 0 {
                self.rbuf.drain(..self.rpos);
                self.rpos = 0;
            }
            self.fill()?;
        }
        let out = self.rbuf[self.rpos..self.rpos + n].to_vec();
        if &self.rbuf[self.rpos + n..self.rpos + n + 2] != b"\r\n" {
            return Err(Error::protocol(&self.server, "data block not terminated by CRLF"));
        }
        self.rpos += n + 2;
        Ok(out)
    }

    fn unexpected(&self, line: (usize, usize)) -> Error {
        let text = &self.rbuf[line.0..line.1];
        match error_reply(text) {
            Some(e) => Error::protocol(&self.server, e),
            None => Error::protocol(&self.server, format!("unexpected reply {:?}", String::from_utf8_lossy(text))),
        }
    }

    // ---------------------------------------------------------------- text protocol

    /// `gets` of several keys in one request (pipelined): one reply per key, `None` on a miss.
    pub fn gets_many(&mut self, keys: &[&[u8]]) -> Result<Vec<Option<Item>>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        self.wbuf.extend_from_slice(b"gets");
        for k in keys {
            check_key(k)?;
            self.wbuf.push(b' ');
            self.wbuf.extend_from_slice(k);
        }
        self.wbuf.extend_from_slice(b"\r\n");
        self.flush()?;
        let mut found: HashMap<Vec<u8>, Item> = HashMap::new();
        loop {
            let l = self.line()?;
            if &self.rbuf[l.0..l.1] == b"END" {
                break;
            }
            let (key, flags, len, cas) = match value_header(&self.rbuf[l.0..l.1]) {
                Some(h) => (h.key.to_vec(), h.flags, h.len, h.cas),
                None => return Err(self.unexpected(l)),
            };
            let data = self.data(len)?;
            found.insert(key, Item { data, flags, cas });
        }
        Ok(keys.iter().map(|k| found.remove(*k)).collect())
    }

    /// `gets` of one key.
    pub fn gets(&mut self, key: &[u8]) -> Result<Option<Item>> {
        Ok(self.gets_many(&[key])?.pop().flatten())
    }

    /// `set`/`add`/`replace`/`cas` (text protocol).
    pub fn store(
        &mut self,
        mode: SetMode,
        key: &[u8],
        data: &[u8],
        flags: u32,
        cas: Option<u64>,
    ) -> Result<StoreStatus> {
        check_key(key)?;
        let cmd: &[u8] = match (mode, cas) {
            (_, Some(_)) => b"cas",
            (SetMode::Set, None) => b"set",
            (SetMode::Add, None) => b"add",
            (SetMode::Replace, None) => b"replace",
        };
        self.wbuf.extend_from_slice(cmd);
        self.wbuf.push(b' ');
        self.wbuf.extend_from_slice(key);
        let tail = match cas {
            Some(c) => format!(" {flags} 0 {} {c}\r\n", data.len()),
            None => format!(" {flags} 0 {}\r\n", data.len()),
        };
        self.wbuf.extend_from_slice(tail.as_bytes());
        self.wbuf.extend_from_slice(data);
        self.wbuf.extend_from_slice(b"\r\n");
        self.flush()?;
        let l = self.line()?;
        text_store_status(&self.rbuf[l.0..l.1]).ok_or_else(|| self.unexpected(l))
    }

    /// `delete`: true if the key was there.
    pub fn delete(&mut self, key: &[u8]) -> Result<bool> {
        check_key(key)?;
        self.wbuf.extend_from_slice(b"delete ");
        self.wbuf.extend_from_slice(key);
        self.wbuf.extend_from_slice(b"\r\n");
        self.flush()?;
        let l = self.line()?;
        match &self.rbuf[l.0..l.1] {
            b"DELETED" => Ok(true),
            b"NOT_FOUND" => Ok(false),
            _ => Err(self.unexpected(l)),
        }
    }

    fn simple(&mut self, cmd: &[u8], want: &[u8]) -> Result<String> {
        self.wbuf.extend_from_slice(cmd);
        self.flush()?;
        let l = self.line()?;
        let text = &self.rbuf[l.0..l.1];
        if !text.starts_with(want) {
            return Err(self.unexpected(l));
        }
        Ok(String::from_utf8_lossy(text).into_owned())
    }

    /// `flush_all`: invalidates every item.
    pub fn flush_all(&mut self) -> Result<()> {
        self.simple(b"flush_all\r\n", b"OK").map(|_| ())
    }

    /// `version`: the server's version string.
    pub fn version(&mut self) -> Result<String> {
        let v = self.simple(b"version\r\n", b"VERSION ")?;
        Ok(v["VERSION ".len()..].to_string())
    }

    /// `stats` (or `stats <group>`): name → value.
    pub fn stats(&mut self, group: Option<&str>) -> Result<HashMap<String, String>> {
        let cmd = match group {
            Some(g) => format!("stats {g}\r\n"),
            None => "stats\r\n".to_string(),
        };
        self.wbuf.extend_from_slice(cmd.as_bytes());
        self.flush()?;
        let mut out = HashMap::new();
        loop {
            let l = self.line()?;
            let text = String::from_utf8_lossy(&self.rbuf[l.0..l.1]).into_owned();
            if text == "END" {
                return Ok(out);
            }
            let mut parts = text.splitn(3, ' ');
            match (parts.next(), parts.next(), parts.next()) {
                (Some("STAT"), Some(name), Some(value)) => {
                    out.insert(name.to_string(), value.to_string());
                }
                _ => return Err(self.unexpected(l)),
            }
        }
    }

    // ---------------------------------------------------------------- meta protocol

    fn meta_reply(&mut self) -> Result<(MetaHeader, Option<Vec<u8>>)> {
        let l = self.line()?;
        if self.rbuf[l.0..l.1].starts_with(b"SERVER_ERROR") {
            // The server refused this one command (typically "out of memory storing object" in a
            // tiny cache under load); the connection stays in sync. Callers decide what it means.
            return Ok((MetaHeader { code: *b"SE", len: None, flags: None, cas: None }, None));
        }
        let h = meta_header(&self.rbuf[l.0..l.1]).ok_or_else(|| self.unexpected(l))?;
        if matches!(&h.code, b"CL" | b"ER") {
            return Err(self.unexpected(l));
        }
        let data = match h.len {
            Some(n) => Some(self.data(n)?),
            None => None,
        };
        Ok((h, data))
    }

    /// `mg <key> v f c`: value, client flags and CAS in one round trip; `None` on a miss.
    pub fn mg(&mut self, key: &[u8]) -> Result<Option<Item>> {
        check_key(key)?;
        self.wbuf.extend_from_slice(b"mg ");
        self.wbuf.extend_from_slice(key);
        self.wbuf.extend_from_slice(b" v f c\r\n");
        self.flush()?;
        let (h, data) = self.meta_reply()?;
        match &h.code {
            b"VA" => {
                Ok(Some(Item { data: data.unwrap_or_default(), flags: h.flags.unwrap_or(0), cas: h.cas.unwrap_or(0) }))
            }
            b"EN" => Ok(None),
            other => Err(Error::protocol(&self.server, format!("mg: unexpected {}", String::from_utf8_lossy(other)))),
        }
    }

    fn push_ms(&mut self, key: &[u8], data: &[u8], flags: u32, mode: SetMode, cas: Option<u64>, quiet: bool) {
        self.wbuf.extend_from_slice(b"ms ");
        self.wbuf.extend_from_slice(key);
        let mode = match mode {
            SetMode::Set => 'S',
            SetMode::Add => 'E',
            SetMode::Replace => 'R',
        };
        let mut tail = format!(" {} F{flags} M{mode} c", data.len());
        if let Some(c) = cas {
            tail.push_str(&format!(" C{c}"));
        }
        if quiet {
            tail.push_str(" q");
        }
        tail.push_str("\r\n");
        self.wbuf.extend_from_slice(tail.as_bytes());
        self.wbuf.extend_from_slice(data);
        self.wbuf.extend_from_slice(b"\r\n");
    }

    fn ms_status(&self, h: &MetaHeader) -> Result<StoreStatus> {
        Ok(match &h.code {
            b"HD" => StoreStatus::Stored(h.cas.unwrap_or(0)),
            // A cache may always refuse to store: out of memory is "not stored", not a failure.
            b"NS" | b"SE" => StoreStatus::NotStored,
            b"EX" => StoreStatus::Exists,
            b"NF" => StoreStatus::NotFound,
            other => {
                return Err(Error::protocol(&self.server, format!("ms: unexpected {}", String::from_utf8_lossy(other))))
            }
        })
    }

    /// `ms`: stores with a mode, optionally comparing a CAS; returns the new CAS when stored.
    pub fn ms(&mut self, key: &[u8], data: &[u8], flags: u32, mode: SetMode, cas: Option<u64>) -> Result<StoreStatus> {
        check_key(key)?;
        self.push_ms(key, data, flags, mode, cas, false);
        self.flush()?;
        let (h, _) = self.meta_reply()?;
        self.ms_status(&h)
    }

    /// Pipelined quiet sets (`ms ... q` for every item, then `mn`): one round trip for a batch.
    /// Returns how many were not stored (a quiet `ms` answers only when it fails).
    pub fn ms_batch<'a>(&mut self, items: impl IntoIterator<Item = (&'a [u8], &'a [u8], u32)>) -> Result<usize> {
        for (key, data, flags) in items {
            check_key(key)?;
            self.push_ms(key, data, flags, SetMode::Set, None, true);
        }
        self.wbuf.extend_from_slice(b"mn\r\n");
        self.flush()?;
        let mut failed = 0;
        loop {
            let (h, _) = self.meta_reply()?;
            if &h.code == b"MN" {
                return Ok(failed);
            }
            failed += 1;
        }
    }

    /// `md <key>`: deletes; true if the key was there.
    pub fn md(&mut self, key: &[u8]) -> Result<bool> {
        check_key(key)?;
        self.wbuf.extend_from_slice(b"md ");
        self.wbuf.extend_from_slice(key);
        self.wbuf.extend_from_slice(b"\r\n");
        self.flush()?;
        let (h, _) = self.meta_reply()?;
        match &h.code {
            b"HD" => Ok(true),
            b"NF" => Ok(false),
            other => Err(Error::protocol(&self.server, format!("md: unexpected {}", String::from_utf8_lossy(other)))),
        }
    }
}
