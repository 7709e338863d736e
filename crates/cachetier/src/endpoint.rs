//! Server addresses and the byte streams to them: TCP (`host:port`, loopback or any host the user
//! runs servers on) or a unix-domain socket (`/path/to/socket`, or `unix:/path`). Every stream has
//! connect, read and write timeouts, so a dead server costs a bounded wait, never a hang; a TCP
//! connect also reads the stop request (Ctrl-C) while it waits.

use crate::error::{Error, Result};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

/// The longest a TCP connect waits before the stop request is read again.
const CONNECT_SLICE: Duration = Duration::from_millis(50);

/// Where a server listens.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// `host:port`.
    Tcp { host: String, port: u16 },
    /// A unix-domain socket path.
    Unix(PathBuf),
}

impl Endpoint {
    /// Parses `host:port`, `[v6addr]:port`, `/path/socket` or `unix:/path/socket`.
    pub fn parse(text: &str) -> Result<Self> {
        let t = text.trim();
        if let Some(path) = t.strip_prefix("unix:") {
            return Ok(Endpoint::Unix(PathBuf::from(path)));
        }
        if t.starts_with('/') {
            return Ok(Endpoint::Unix(PathBuf::from(t)));
        }
        let (host, port) = t
            .rsplit_once(':')
            .ok_or_else(|| Error::config(format!("bad server address '{t}': expected host:port or /path/to/socket")))?;
        let port: u16 = port
            .parse()
            .map_err(|_| Error::config(format!("bad server address '{t}': port '{port}' is not a number")))?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() || port == 0 {
            return Err(Error::config(format!("bad server address '{t}': expected host:port")));
        }
        Ok(Endpoint::Tcp { host: host.to_string(), port })
    }

    /// Parses a comma-separated list of addresses.
    pub fn parse_list(text: &str) -> Result<Vec<Self>> {
        let list: Vec<Self> =
            text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(Endpoint::parse).collect::<Result<_>>()?;
        if list.is_empty() {
            return Err(Error::config("empty server list"));
        }
        Ok(list)
    }

    /// Opens a stream with the given timeouts (connect and each read/write).
    pub fn connect(&self, timeout: Duration) -> Result<Stream> {
        self.connect_with(timeout, timeout)
    }

    /// Opens a stream whose connect may wait `connect_timeout` and each read and write `timeout`.
    pub fn connect_with(&self, connect_timeout: Duration, timeout: Duration) -> Result<Stream> {
        let name = self.to_string();
        match self {
            Endpoint::Tcp { host, port } => {
                let addrs = (host.as_str(), *port).to_socket_addrs().map_err(|e| Error::io(&name, e))?;
                let mut last = Error::unavailable(&name, "host has no address");
                for addr in addrs {
                    match connect_unless_stopped(addr, connect_timeout) {
                        Ok(s) => {
                            // Request/response traffic of small messages: Nagle would add delays.
                            s.set_nodelay(true).map_err(|e| Error::io(&name, e))?;
                            s.set_read_timeout(Some(timeout)).map_err(|e| Error::io(&name, e))?;
                            s.set_write_timeout(Some(timeout)).map_err(|e| Error::io(&name, e))?;
                            return Ok(Stream::Tcp(s));
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => return Err(Error::io(&name, e)),
                        Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                            let waited =
                                format!("no answer to the connect within {:.1} s", connect_timeout.as_secs_f64());
                            last = Error::unavailable(&name, waited);
                        }
                        Err(e) => last = Error::io(&name, e),
                    }
                }
                Err(last)
            }
            Endpoint::Unix(path) => {
                let s = UnixStream::connect(path).map_err(|e| Error::io(&name, e))?;
                s.set_read_timeout(Some(timeout)).map_err(|e| Error::io(&name, e))?;
                s.set_write_timeout(Some(timeout)).map_err(|e| Error::io(&name, e))?;
                Ok(Stream::Unix(s))
            }
        }
    }

    /// Whether the server is on this machine (loopback or a unix socket), so that its processes'
    /// CPU time can be read from /proc.
    pub fn is_local(&self) -> bool {
        match self {
            Endpoint::Unix(_) => true,
            Endpoint::Tcp { host, .. } => host == "localhost" || host.starts_with("127.") || host == "::1",
        }
    }
}

/// `TcpStream::connect_timeout`, returning early (`Interrupted`) on a stop request. A host that
/// drops the handshake (a firewall, a full accept queue) holds a connect for its whole timeout,
/// and std's connect cannot be cancelled: it runs on a thread of its own, which a stop request
/// leaves behind to end by that timeout and drop what it made.
fn connect_unless_stopped(addr: SocketAddr, timeout: Duration) -> io::Result<TcpStream> {
    let (done, outcome) = mpsc::channel();
    thread::Builder::new().name("tcp-connect".into()).spawn(move || {
        // The receiver is gone when the caller stopped waiting: nothing is left to tell.
        let _ = done.send(TcpStream::connect_timeout(&addr, timeout));
    })?;
    loop {
        match outcome.recv_timeout(CONNECT_SLICE) {
            Ok(connected) => return connected,
            Err(RecvTimeoutError::Timeout) if superlinear_core::cancel::requested() => {
                return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted while connecting"));
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return Err(io::Error::other("the connecting thread ended")),
        }
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            Endpoint::Tcp { host, port } => write!(f, "{host}:{port}"),
            Endpoint::Unix(p) => write!(f, "{}", p.display()),
        }
    }
}

/// A connected byte stream.
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    /// Sets how long one read may wait (None: for ever).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(timeout),
            Stream::Unix(s) => s.set_read_timeout(timeout),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_addresses() {
        assert_eq!(
            Endpoint::parse("127.0.0.1:11211").unwrap(),
            Endpoint::Tcp { host: "127.0.0.1".into(), port: 11211 }
        );
        assert_eq!(Endpoint::parse("[::1]:5").unwrap(), Endpoint::Tcp { host: "::1".into(), port: 5 });
        assert_eq!(Endpoint::parse("/tmp/mc.sock").unwrap(), Endpoint::Unix("/tmp/mc.sock".into()));
        assert_eq!(Endpoint::parse("unix:/tmp/x").unwrap(), Endpoint::Unix("/tmp/x".into()));
        assert!(Endpoint::parse("localhost").is_err());
        assert!(Endpoint::parse("h:99999").is_err());
        assert_eq!(Endpoint::parse_list("a:1, b:2").unwrap().len(), 2);
        assert_eq!(Endpoint::parse("[::1]:5").unwrap().to_string(), "[::1]:5");
    }
}
