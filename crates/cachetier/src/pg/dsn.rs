//! Connection strings: `postgresql://user:password@host:port/dbname?host=/socket/dir` URLs and
//! libpq's `key=value` form (`host=/tmp port=5433 user=me dbname=db password=...`). A host that
//! starts with `/` is a unix-socket directory, as in libpq. A value in the `key=value` form may be
//! single-quoted (spaces inside; `\'` and `\\` escaped), as in libpq.

use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use std::path::PathBuf;
use std::time::Duration;

/// The longest `connect_timeout` taken, in seconds.
const MAX_CONNECT_TIMEOUT_S: u64 = 3600;

/// A parsed connection string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dsn {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Option<String>,
    pub dbname: String,
    /// `connect_timeout`: how long a connect may wait, in place of the caller's I/O timeout.
    pub connect_timeout: Option<Duration>,
}

fn percent_decode(s: &str) -> Result<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).map_err(|_| Error::config("bad %-escape in DSN"))?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| Error::config(format!("bad %-escape '%{hex}' in DSN")))?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| Error::config("DSN is not valid UTF-8 after %-decoding"))
}

impl Dsn {
    /// Parses a URL or key=value connection string.
    pub fn parse(text: &str) -> Result<Self> {
        let t = text.trim();
        let default_user = std::env::var("USER").unwrap_or_else(|_| "postgres".into());
        let mut dsn = Dsn {
            host: "localhost".into(),
            port: 5432,
            user: default_user,
            password: None,
            dbname: String::new(),
            connect_timeout: None,
        };
        let bad = |why: &str| Error::config(format!("bad PostgreSQL DSN '{t}': {why}"));
        if let Some(rest) = t.strip_prefix("postgresql://").or_else(|| t.strip_prefix("postgres://")) {
            let (main, query) = rest.split_once('?').unwrap_or((rest, ""));
            let (auth_host, db) = main.split_once('/').unwrap_or((main, ""));
            let (auth, hostport) = match auth_host.rsplit_once('@') {
                Some((a, h)) => (Some(a), h),
                None => (None, auth_host),
            };
            if let Some(a) = auth {
                let (u, p) = match a.split_once(':') {
                    Some((u, p)) => (u, Some(p)),
                    None => (a, None),
                };
                if !u.is_empty() {
                    dsn.user = percent_decode(u)?;
                }
                dsn.password = p.map(percent_decode).transpose()?;
            }
            if !hostport.is_empty() {
                let (h, p) = if let Some(stripped) = hostport.strip_prefix('[') {
                    let (h, rest) = stripped.split_once(']').ok_or_else(|| bad("unclosed ["))?;
                    (h.to_string(), rest.strip_prefix(':'))
                } else {
                    match hostport.rsplit_once(':') {
                        Some((h, p)) => (h.to_string(), Some(p)),
                        None => (hostport.to_string(), None),
                    }
                };
                if !h.is_empty() {
                    dsn.host = percent_decode(&h)?;
                }
                if let Some(p) = p {
                    dsn.port = p.parse().map_err(|_| bad("port is not a number from 1 to 65535"))?;
                }
            }
            dsn.dbname = percent_decode(db)?;
            for pair in query.split('&').filter(|s| !s.is_empty()) {
                let (k, v) = pair.split_once('=').ok_or_else(|| bad("query parameter without '='"))?;
                dsn.set(k, &percent_decode(v)?).map_err(|e| bad(&e))?;
            }
        } else {
            for (k, v) in key_values(t).map_err(|e| bad(&e))? {
                dsn.set(&k, &v).map_err(|e| bad(&e))?;
            }
        }
        if dsn.dbname.is_empty() {
            dsn.dbname = dsn.user.clone();
        }
        Ok(dsn)
    }

    fn set(&mut self, key: &str, value: &str) -> std::result::Result<(), String> {
        match key {
            "host" => self.host = value.to_string(),
            "port" => {
                self.port = value.parse().map_err(|_| format!("port '{value}' is not a number from 1 to 65535"))?
            }
            "user" => self.user = value.to_string(),
            "password" => self.password = Some(value.to_string()),
            "dbname" => self.dbname = value.to_string(),
            "sslmode" if value == "disable" || value == "prefer" || value == "allow" => {}
            "sslmode" => return Err(format!("sslmode={value} is not supported (TLS is not implemented)")),
            "connect_timeout" => {
                let seconds: u64 = value.trim().parse().map_err(|_| {
                    format!(
                        "connect_timeout '{value}' is not a whole number of seconds from 1 to {MAX_CONNECT_TIMEOUT_S}"
                    )
                })?;
                if !(1..=MAX_CONNECT_TIMEOUT_S).contains(&seconds) {
                    return Err(format!(
                        "connect_timeout {seconds}: from 1 to {MAX_CONNECT_TIMEOUT_S} seconds (a connect here always \
                         has a limit)"
                    ));
                }
                self.connect_timeout = Some(Duration::from_secs(seconds));
            }
            "application_name" => {}
            other => return Err(format!("unknown parameter '{other}'")),
        }
        Ok(())
    }

    /// How long a connect may wait: the DSN's `connect_timeout`, else `io_timeout`.
    pub fn connect_timeout_or(&self, io_timeout: Duration) -> Duration {
        self.connect_timeout.unwrap_or(io_timeout)
    }

    /// Where to connect: a TCP address, or the socket file in the socket directory.
    pub fn endpoint(&self) -> Endpoint {
        if self.host.starts_with('/') {
            Endpoint::Unix(PathBuf::from(&self.host).join(format!(".s.PGSQL.{}", self.port)))
        } else {
            Endpoint::Tcp { host: self.host.clone(), port: self.port }
        }
    }

    /// The DSN without its password, for messages and result files.
    pub fn redacted(&self) -> String {
        format!("postgresql://{}@{}:{}/{}", self.user, self.host, self.port, self.dbname)
    }
}

/// The pairs of libpq's `key=value` form: spaces may surround `=`, and a value may be
/// single-quoted, with `\'` and `\\` standing for a quote and a backslash.
fn key_values(text: &str) -> std::result::Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    let mut chars = text.chars().peekable();
    let skip_spaces = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
    };
    loop {
        skip_spaces(&mut chars);
        if chars.peek().is_none() {
            return Ok(pairs);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        skip_spaces(&mut chars);
        if chars.next() != Some('=') {
            return Err(format!("'{key}' is not key=value"));
        }
        skip_spaces(&mut chars);
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    None => return Err(format!("the quoted value of '{key}' has no closing quote")),
                    Some('\'') => break,
                    Some('\\') => value.push(chars.next().unwrap_or('\\')),
                    Some(c) => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                value.push(if c == '\\' { chars.next().unwrap_or('\\') } else { c });
            }
        }
        pairs.push((key, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_urls() {
        let d = Dsn::parse("postgresql://bob:p%40ss@db.example:6543/kv").unwrap();
        assert_eq!(
            (d.user.as_str(), d.password.as_deref(), d.host.as_str(), d.port),
            ("bob", Some("p@ss"), "db.example", 6543)
        );
        assert_eq!(d.dbname, "kv");
        let d = Dsn::parse("postgresql://u@/db?host=/tmp/pg&port=5999").unwrap();
        assert_eq!(d.endpoint(), Endpoint::Unix("/tmp/pg/.s.PGSQL.5999".into()));
        assert!(Dsn::parse("postgresql://h:notaport/db").is_err());
    }

    #[test]
    fn parses_key_value() {
        let d = Dsn::parse("host=127.0.0.1 port=5433 user=me dbname=x").unwrap();
        assert_eq!(d.endpoint(), Endpoint::Tcp { host: "127.0.0.1".into(), port: 5433 });
        assert!(Dsn::parse("host=a bogus").is_err());
        assert!(Dsn::parse("host=a sslmode=require").is_err());
        assert!(!Dsn::parse("user=a password=secret").unwrap().redacted().contains("secret"));
        let d = Dsn::parse(r"user = 'my user' password='it\'s' dbname=db").unwrap();
        assert_eq!((d.user.as_str(), d.password.as_deref(), d.dbname.as_str()), ("my user", Some("it's"), "db"));
        let e = Dsn::parse("user='superlinear dbname=postgres").unwrap_err().to_string();
        assert!(e.contains("the quoted value of 'user' has no closing quote"), "{e}");
        assert!(Dsn::parse("host=a port").unwrap_err().to_string().contains("'port' is not key=value"));
    }

    #[test]
    fn connect_timeout_is_taken_and_checked() {
        let d = Dsn::parse("postgresql://u@h/db?connect_timeout=3").unwrap();
        assert_eq!(d.connect_timeout_or(Duration::from_secs(10)), Duration::from_secs(3));
        assert_eq!(Dsn::parse("host=h").unwrap().connect_timeout_or(Duration::from_secs(10)), Duration::from_secs(10));
        for bad in ["abc", "-5", "0", "3601", "1.5"] {
            let e = Dsn::parse(&format!("host=h connect_timeout={bad}")).unwrap_err().to_string();
            assert!(e.contains("connect_timeout"), "{bad}: {e}");
        }
    }
}
