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

/// A number as an error message quotes it: Rust's `{}` writes 1e308 as 309 digits, so very large
/// and very small magnitudes are written in exponent form (`1e308`, `2.5e-9`).
pub fn number_text(x: f64) -> String {
    let a = x.abs();
    if a != 0.0 && a.is_finite() && !(1e-4..1e15).contains(&a) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

#[cfg(test)]
mod tests {
    use super::number_text;

    #[test]
    fn numbers_in_messages_stay_short() {
        assert_eq!(number_text(1e308), "1e308");
        assert_eq!(number_text(-2.5e-9), "-2.5e-9");
        assert_eq!(number_text(0.5), "0.5");
        assert_eq!(number_text(0.0), "0");
        assert_eq!(number_text(f64::INFINITY), "inf");
        assert_eq!(number_text(123456.0), "123456");
    }
}
