//! One PostgreSQL connection speaking protocol v3: startup and authentication, simple queries,
//! named prepared statements executed with text parameters (Parse once; then Bind/Execute/Sync,
//! one round trip per query), and `COPY ... FROM STDIN`. After an error reported by the server
//! the connection is resynchronised at the next ReadyForQuery and stays usable; after a transport
//! error it is broken and must be dropped.

use super::dsn::Dsn;
use crate::endpoint::Stream;
use crate::error::{Error, Result};
use bytes::{BufMut, BytesMut};
use fallible_iterator::FallibleIterator;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256, SCRAM_SHA_256};
use postgres_protocol::message::backend::{ErrorFields, Message};
use postgres_protocol::message::frontend;
use postgres_protocol::IsNull;
use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

/// The longest one socket read waits before the stop request is read again.
const READ_SLICE: Duration = Duration::from_millis(100);

/// One result row: each column's text, `None` for NULL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row(pub Vec<Option<Vec<u8>>>);

impl Row {
    /// Column `i` as UTF-8 text (`None` for NULL or out of range).
    pub fn text(&self, i: usize) -> Option<&str> {
        self.0.get(i)?.as_deref().and_then(|b| std::str::from_utf8(b).ok())
    }

    /// Column `i` parsed as an integer.
    pub fn int(&self, i: usize) -> Option<i64> {
        self.text(i)?.parse().ok()
    }
}

/// A PostgreSQL connection.
pub struct PgConn {
    stream: Stream,
    server: String,
    rbuf: BytesMut,
    wbuf: BytesMut,
    backend_pid: i32,
    broken: bool,
    /// How long a read may wait for the server's next bytes.
    timeout: Duration,
}

fn db_error(fields: ErrorFields<'_>) -> Error {
    let (mut code, mut message) = (String::new(), String::new());
    let mut it = fields;
    while let Ok(Some(f)) = it.next() {
        match f.type_() {
            b'C' => code = String::from_utf8_lossy(f.value_bytes()).into_owned(),
            b'M' => message = String::from_utf8_lossy(f.value_bytes()).into_owned(),
            _ => {}
        }
    }
    Error::Database { code, message }
}

impl PgConn {
    /// Connects and authenticates; `timeout` bounds the connect and every read and write (the
    /// DSN's `connect_timeout`, where it has one, the connect and the startup's reads instead).
    pub fn connect(dsn: &Dsn, timeout: Duration) -> Result<Self> {
        let endpoint = dsn.endpoint();
        // The DSN's connect_timeout bounds the connect and each wait of the startup, as in libpq.
        let connecting = dsn.connect_timeout_or(timeout);
        let stream = endpoint.connect_with(connecting, timeout)?;
        let server = format!("postgresql {}", dsn.redacted());
        // Reads wait in slices, so that a stop request is read while a server hangs ([`Self::read`]).
        stream.set_read_timeout(Some(timeout.min(READ_SLICE))).map_err(|e| Error::io(&server, e))?;
        let mut c = PgConn {
            stream,
            server,
            rbuf: BytesMut::with_capacity(16 * 1024),
            wbuf: BytesMut::with_capacity(4096),
            backend_pid: 0,
            broken: false,
            timeout: connecting,
        };
        let params = [
            ("user", dsn.user.as_str()),
            ("database", dsn.dbname.as_str()),
            ("application_name", "superlinear"),
            ("client_encoding", "UTF8"),
        ];
        frontend::startup_message(params.iter().copied(), &mut c.wbuf).map_err(|e| c.proto(e))?;
        c.flush()?;
        c.authenticate(dsn)?;
        loop {
            match c.read()? {
                Message::BackendKeyData(k) => c.backend_pid = k.process_id(),
                Message::ReadyForQuery(_) => {
                    c.timeout = timeout;
                    return Ok(c);
                }
                Message::ErrorResponse(e) => return Err(db_error(e.fields())),
                _ => {}
            }
        }
    }

    fn authenticate(&mut self, dsn: &Dsn) -> Result<()> {
        let server = self.server.clone();
        let password = || {
            dsn.password
                .clone()
                .ok_or_else(|| Error::config(format!("{server}: the server asks for a password; put it in the DSN")))
        };
        loop {
            match self.read()? {
                Message::AuthenticationOk => return Ok(()),
                Message::AuthenticationCleartextPassword => {
                    let pw = password()?;
                    frontend::password_message(pw.as_bytes(), &mut self.wbuf).map_err(|e| self.proto(e))?;
                    self.flush()?;
                }
                Message::AuthenticationMd5Password(body) => {
                    let hash = md5_hash(dsn.user.as_bytes(), password()?.as_bytes(), body.salt());
                    frontend::password_message(hash.as_bytes(), &mut self.wbuf).map_err(|e| self.proto(e))?;
                    self.flush()?;
                }
                Message::AuthenticationSasl(body) => {
                    let mut mechanisms = body.mechanisms();
                    let mut scram = false;
                    while let Some(m) = mechanisms.next().map_err(|e| self.proto(e))? {
                        scram |= m == SCRAM_SHA_256;
                    }
                    if !scram {
                        return Err(Error::protocol(&self.server, "server offers no supported SASL mechanism"));
                    }
                    let mut sasl = ScramSha256::new(password()?.as_bytes(), ChannelBinding::unsupported());
                    frontend::sasl_initial_response(SCRAM_SHA_256, sasl.message(), &mut self.wbuf)
                        .map_err(|e| self.proto(e))?;
                    self.flush()?;
                    match self.read()? {
                        Message::AuthenticationSaslContinue(b) => sasl.update(b.data()).map_err(|e| self.proto(e))?,
                        Message::ErrorResponse(e) => return Err(db_error(e.fields())),
                        _ => return Err(Error::protocol(&self.server, "unexpected message during SCRAM")),
                    }
                    frontend::sasl_response(sasl.message(), &mut self.wbuf).map_err(|e| self.proto(e))?;
                    self.flush()?;
                    match self.read()? {
                        Message::AuthenticationSaslFinal(b) => sasl.finish(b.data()).map_err(|e| self.proto(e))?,
                        Message::ErrorResponse(e) => return Err(db_error(e.fields())),
                        _ => return Err(Error::protocol(&self.server, "unexpected message during SCRAM")),
                    }
                }
                Message::ErrorResponse(e) => return Err(db_error(e.fields())),
                Message::NoticeResponse(_) | Message::ParameterStatus(_) => {}
                _ => return Err(Error::protocol(&self.server, "unsupported authentication method")),
            }
        }
    }

    /// The server process serving this connection (its CPU time is in /proc when local).
    pub fn backend_pid(&self) -> i32 {
        self.backend_pid
    }

    /// Whether a transport error left the connection unusable.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    fn proto(&mut self, e: impl std::fmt::Display) -> Error {
        self.broken = true;
        Error::protocol(&self.server, e)
    }

    fn flush(&mut self) -> Result<()> {
        let r = self.stream.write_all(&self.wbuf);
        self.wbuf.clear();
        r.map_err(|e| {
            self.broken = true;
            Error::io(&self.server, e)
        })
    }

    /// The next message. A server that sends nothing for `timeout` fails the read; meanwhile a
    /// stop request (Ctrl-C, SIGTERM) is read every [`READ_SLICE`], so that a hanging (not dead)
    /// server holds a run up no longer than that.
    fn read(&mut self) -> Result<Message> {
        // Set at the first slice that passes without bytes (no clock read while the server answers).
        let mut waiting_since: Option<Instant> = None;
        loop {
            match Message::parse(&mut self.rbuf) {
                Ok(Some(m)) => return Ok(m),
                Ok(None) => {}
                Err(e) => return Err(self.proto(e)),
            }
            let mut chunk = [0u8; 16 * 1024];
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    self.broken = true;
                    return Err(Error::io(&self.server, std::io::ErrorKind::UnexpectedEof.into()));
                }
                Ok(n) => {
                    self.rbuf.put_slice(&chunk[..n]);
                    waiting_since = None;
                }
                Err(e) if self.waits_on(&e, &mut waiting_since) => {}
                Err(e) => {
                    self.broken = true;
                    if superlinear_core::cancel::requested() {
                        return Err(Error::unavailable(&self.server, "interrupted while waiting for its answer"));
                    }
                    return Err(Error::io(&self.server, e));
                }
            }
        }
    }

    /// Whether a read that ended with `e` goes on waiting: it was a slice that passed without
    /// bytes, no stop is requested, and less than `timeout` has passed since the server's last
    /// bytes (`since`, set at the first such slice, which counts as waited).
    fn waits_on(&self, e: &std::io::Error, since: &mut Option<Instant>) -> bool {
        if !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted)
            || superlinear_core::cancel::requested()
        {
            return false;
        }
        let first = since.get_or_insert_with(|| {
            let now = Instant::now();
            now.checked_sub(self.timeout.min(READ_SLICE)).unwrap_or(now)
        });
        first.elapsed() < self.timeout
    }

    /// Reads replies up to ReadyForQuery, collecting data rows; the first server error is
    /// returned after the connection is back in sync.
    fn collect(&mut self) -> Result<(Vec<Row>, Option<String>)> {
        let mut rows = Vec::new();
        let mut tag = None;
        let mut error = None;
        loop {
            match self.read()? {
                Message::DataRow(body) => {
                    let buf = body.buffer();
                    let mut cols = Vec::new();
                    let mut ranges = body.ranges();
                    while let Some(r) = ranges.next().map_err(|e| self.proto(e))? {
                        cols.push(r.map(|r| buf[r].to_vec()));
                    }
                    rows.push(Row(cols));
                }
                Message::CommandComplete(c) => tag = c.tag().ok().map(str::to_string),
                Message::ErrorResponse(e) if error.is_none() => error = Some(db_error(e.fields())),
                Message::ReadyForQuery(_) => break,
                Message::CopyInResponse(_) => {
                    // A COPY FROM STDIN sent as a plain query: refuse it and resync.
                    frontend::copy_fail("COPY FROM STDIN needs copy_in()", &mut self.wbuf)
                        .map_err(|e| self.proto(e))?;
                    self.flush()?;
                }
                _ => {}
            }
        }
        match error {
            Some(e) => Err(e),
            None => Ok((rows, tag)),
        }
    }

    /// Runs one or more SQL statements with the simple query protocol; returns the last rows.
    pub fn simple(&mut self, sql: &str) -> Result<Vec<Row>> {
        frontend::query(sql, &mut self.wbuf).map_err(|e| self.proto(e))?;
        self.flush()?;
        Ok(self.collect()?.0)
    }

    /// Prepares a named statement (parameter types inferred by the server).
    pub fn prepare(&mut self, name: &str, sql: &str) -> Result<()> {
        frontend::parse(name, sql, std::iter::empty(), &mut self.wbuf).map_err(|e| self.proto(e))?;
        frontend::sync(&mut self.wbuf);
        self.flush()?;
        self.collect().map(|_| ())
    }

    /// Executes a prepared statement with text parameters (`None` = NULL): Bind, Execute and
    /// Sync in one write, one round trip.
    pub fn execute(&mut self, name: &str, params: &[Option<&[u8]>]) -> Result<Vec<Row>> {
        let r = frontend::bind(
            "",
            name,
            std::iter::once(0i16),
            params.iter(),
            |p, buf| match p {
                Some(bytes) => {
                    buf.put_slice(bytes);
                    Ok(IsNull::No)
                }
                None => Ok(IsNull::Yes),
            },
            std::iter::once(0i16),
            &mut self.wbuf,
        );
        if r.is_err() {
            return Err(self.proto("cannot encode parameters"));
        }
        frontend::execute("", 0, &mut self.wbuf).map_err(|e| self.proto(e))?;
        frontend::sync(&mut self.wbuf);
        self.flush()?;
        Ok(self.collect()?.0)
    }

    /// `COPY ... FROM STDIN` (text format): streams the chunks, each a run of complete lines;
    /// returns the number of rows copied.
    pub fn copy_in<'a>(&mut self, sql: &str, chunks: impl IntoIterator<Item = &'a [u8]>) -> Result<u64> {
        frontend::query(sql, &mut self.wbuf).map_err(|e| self.proto(e))?;
        self.flush()?;
        loop {
            match self.read()? {
                Message::CopyInResponse(_) => break,
                Message::ErrorResponse(e) => {
                    let err = db_error(e.fields());
                    self.collect().ok();
                    return Err(err);
                }
                _ => {}
            }
        }
        for chunk in chunks {
            frontend::CopyData::new(chunk).map_err(|e| self.proto(e))?.write(&mut self.wbuf);
            if self.wbuf.len() >= 256 * 1024 {
                self.flush()?;
            }
        }
        frontend::copy_done(&mut self.wbuf);
        self.flush()?;
        let (_, tag) = self.collect()?;
        Ok(tag.and_then(|t| t.rsplit(' ').next().and_then(|n| n.parse().ok())).unwrap_or(0))
    }
}

impl Drop for PgConn {
    fn drop(&mut self) {
        if !self.broken {
            frontend::terminate(&mut self.wbuf);
            let _ = self.stream.write_all(&self.wbuf);
        }
    }
}
