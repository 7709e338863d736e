//! The engine's error type: user mistakes (bad configs, unreadable traces) become one clear line.

use std::fmt;

/// What went wrong, in one line a user can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// An invalid parameter or combination of parameters.
    Config(String),
    /// An input file that cannot be read or parsed; `line` is 1-based where known.
    Input { path: String, line: Option<usize>, message: String },
}

impl Error {
    /// A configuration error.
    pub fn config(message: impl Into<String>) -> Self {
        Error::Config(message.into())
    }

    /// An input error at `path`, optionally at a 1-based line.
    pub fn input(path: impl Into<String>, line: Option<usize>, message: impl Into<String>) -> Self {
        Error::Input { path: path.into(), line, message: message.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config(m) => write!(f, "{m}"),
            Error::Input { path, line: Some(l), message } => write!(f, "{path}:{l}: {message}"),
            Error::Input { path, line: None, message } => write!(f, "{path}: {message}"),
        }
    }
}

impl std::error::Error for Error {}
