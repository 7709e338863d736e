//! The cache tier's error type: every failure is one line a user can act on, naming the server
//! (replica address, database DSN) and what went wrong.

use std::fmt;
use std::io;

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A bad parameter, address or DSN.
    Config(String),
    /// A server that cannot be reached or stopped answering (connect refused, timeout, reset).
    Unavailable { server: String, detail: String },
    /// A server that answered something this client does not understand.
    Protocol { server: String, detail: String },
    /// An error reported by PostgreSQL (SQLSTATE code and message).
    Database { code: String, message: String },
}

impl Error {
    /// A configuration error.
    pub fn config(message: impl Into<String>) -> Self {
        Error::Config(message.into())
    }

    /// `server` cannot be reached or failed mid-conversation.
    pub fn unavailable(server: impl Into<String>, detail: impl fmt::Display) -> Self {
        Error::Unavailable { server: server.into(), detail: detail.to_string() }
    }

    /// `server` answered something unexpected.
    pub fn protocol(server: impl Into<String>, detail: impl fmt::Display) -> Self {
        Error::Protocol { server: server.into(), detail: detail.to_string() }
    }

    /// Whether retrying (on a fresh connection, after a pause) may succeed: unreachable servers
    /// and the PostgreSQL errors that mean "the server is going away or not ready yet".
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Unavailable { .. } => true,
            // 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 08xxx
            // connection exceptions, 40001/40P01 serialization failure and deadlock.
            Error::Database { code, .. } => {
                code.starts_with("08") || code.starts_with("57P") || code == "40001" || code == "40P01"
            }
            _ => false,
        }
    }

    /// An I/O error talking to `server`, classified: broken connections are `Unavailable`.
    pub fn io(server: &str, e: io::Error) -> Self {
        Error::unavailable(server, describe_io(&e))
    }
}

fn describe_io(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => "timed out".into(),
        io::ErrorKind::ConnectionRefused => "connection refused (is the server running?)".into(),
        io::ErrorKind::UnexpectedEof => "connection closed by the server".into(),
        _ => e.to_string(),
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config(m) => write!(f, "{m}"),
            Error::Unavailable { server, detail } => write!(f, "{server}: unavailable: {detail}"),
            Error::Protocol { server, detail } => write!(f, "{server}: protocol error: {detail}"),
            Error::Database { code, message } => write!(f, "postgresql error {code}: {message}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<Error> for superlinear_core::Error {
    fn from(e: Error) -> Self {
        superlinear_core::Error::config(e.to_string())
    }
}

/// Result with the cache tier's error.
pub type Result<T> = std::result::Result<T, Error>;
