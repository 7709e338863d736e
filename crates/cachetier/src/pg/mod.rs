//! PostgreSQL: a small synchronous client of the frontend/backend protocol v3 (startup with
//! trust, cleartext, MD5 or SCRAM-SHA-256 authentication; simple queries; named prepared
//! statements with text parameters; `COPY ... FROM STDIN`), a DSN parser, and a pool with
//! bounded, backed-off reconnects. Message encoding and the authentication exchanges come from
//! the `postgres-protocol` crate; the I/O is plain blocking sockets with timeouts, so a thread's
//! CPU clock measures exactly its own work.

mod conn;
mod dsn;
mod pool;

pub use conn::{PgConn, Row};
pub use dsn::Dsn;
pub use pool::{PgPool, RetryPolicy};
