//! The benchmark's data set and its table: N rows of 16-byte keys and 48-byte values (paper
//! App. B: "1,000,000 key-value pairs of 16 byte keys and 48 byte values"), a version per row,
//! and the idempotent COPY loader.
//!
//! Values describe themselves (`v<version>.<id>.<checksum>.end`), so any reader can tell a wrong
//! value (another key's, or corrupted) from a right one without asking the database.

use crate::error::{Error, Result};
use crate::pg::PgConn;
use superlinear_core::hash::hash64;

/// Key length in bytes.
pub const KEY_LEN: usize = 16;
/// Value length in bytes.
pub const VALUE_LEN: usize = 48;

/// The key of row `id`: `k` and 15 decimal digits.
pub fn key(id: u64) -> [u8; KEY_LEN] {
    let mut out = [0u8; KEY_LEN];
    out.copy_from_slice(format!("k{:015}", id % 1_000_000_000_000_000).as_bytes());
    out
}

/// The row id of a key made by [`key`].
pub fn key_id(key: &[u8]) -> Option<u64> {
    if key.len() != KEY_LEN || key[0] != b'k' {
        return None;
    }
    std::str::from_utf8(&key[1..]).ok()?.parse().ok()
}

fn checksum(id: u64, tag: u64) -> u64 {
    hash64(id, tag ^ 0x5eed)
}

/// The value of row `id` with tag `tag` (the loader uses tag 1; writers choose their own).
pub fn value(id: u64, tag: u64) -> [u8; VALUE_LEN] {
    let mut out = [0u8; VALUE_LEN];
    let text =
        format!("v{:010}.{:015}.{:016x}.end", tag % 10_000_000_000, id % 1_000_000_000_000_000, checksum(id, tag));
    out.copy_from_slice(text.as_bytes());
    out
}

/// Checks that `v` is a well-formed value of row `id`; returns its tag.
pub fn check_value(id: u64, v: &[u8]) -> Option<u64> {
    if v.len() != VALUE_LEN {
        return None;
    }
    let text = std::str::from_utf8(v).ok()?;
    let tag: u64 = text.get(1..11)?.parse().ok()?;
    (v == value(id, tag)).then_some(tag)
}

/// Checks that a table name is a plain SQL identifier (it is interpolated into statements).
pub fn check_table(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(Error::config(format!("bad table name '{name}': use lowercase letters, digits and _")))
    }
}

/// The statements the cache-aside client prepares on every connection.
pub fn statements(table: &str) -> Vec<(&'static str, String)> {
    vec![
        ("sl_get", format!("SELECT v, ver FROM {table} WHERE k = $1")),
        (
            "sl_put",
            format!(
                "INSERT INTO {table} (k, v, ver) VALUES ($1, $2, 1) ON CONFLICT (k) \
                 DO UPDATE SET v = EXCLUDED.v, ver = {table}.ver + 1 RETURNING ver"
            ),
        ),
        ("sl_range", format!("SELECT k, v, ver FROM {table} WHERE k >= $1 AND k < $2")),
    ]
}

/// What the loader did.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LoadReport {
    /// Rows in the table afterwards.
    pub rows: u64,
    /// False when the table already held exactly this data set and nothing was done.
    pub loaded: bool,
}

/// How the loader's comment on its tables begins: a table without it is somebody else's.
const MARKER_PREFIX: &str = "superlinear kv ";

fn marker(rows: u64) -> String {
    format!("{MARKER_PREFIX}rows={rows} key={KEY_LEN} value={VALUE_LEN}")
}

/// Most rows the loader makes: a key is `k` and 15 decimal digits, so more rows would repeat keys.
pub const MAX_ROWS: u64 = 1_000_000_000_000_000;

/// Loads `rows` rows into `table` with COPY, in one transaction (readers see the old table or the
/// complete new one). Idempotent: a table already holding this data set is left alone unless
/// `force`. Rows get version 1 and the value of tag 1. A stop request (Ctrl-C) between batches
/// rolls the transaction back, so the table is as it was. A table of that name that this loader
/// did not make (no marker comment) is refused, `force` or not: it is replaced, so it would be lost.
pub fn load(conn: &mut PgConn, table: &str, rows: u64, force: bool) -> Result<LoadReport> {
    check_table(table)?;
    if rows == 0 {
        return Err(Error::config("the loader needs at least one row"));
    }
    if rows > MAX_ROWS {
        return Err(Error::config(format!("the loader makes at most {MAX_ROWS} rows (keys are k and 15 digits)")));
    }
    let found = conn.simple(&format!(
        "SELECT to_regclass('{table}') IS NOT NULL, obj_description(to_regclass('{table}'), 'pg_class')"
    ))?;
    let (exists, comment) = found.first().map_or((false, None), |r| (r.text(0) == Some("t"), r.text(1)));
    if exists && !comment.is_some_and(|c| c.starts_with(MARKER_PREFIX)) {
        return Err(Error::config(format!(
            "table {table} exists and was not made by superlinear (its comment is not the loader's): \
             loading would replace it; name another --table or drop it yourself"
        )));
    }
    if !force && comment == Some(marker(rows).as_str()) {
        let n = conn.simple(&format!("SELECT count(*) FROM {table}"))?;
        if n.first().and_then(|r| r.int(0)) == Some(rows as i64) {
            return Ok(LoadReport { rows, loaded: false });
        }
    }
    conn.simple(&format!(
        "BEGIN; DROP TABLE IF EXISTS {table}; \
         CREATE TABLE {table} (k text NOT NULL, v text NOT NULL, ver bigint NOT NULL DEFAULT 1)"
    ))?;
    let result = (|| {
        const CHUNK: u64 = 2048;
        let mut buf = Vec::new();
        let mut chunks: Vec<Vec<u8>> = Vec::new();
        let mut copied = 0;
        let mut id = 0;
        while id < rows {
            buf.clear();
            for i in id..(id + CHUNK).min(rows) {
                buf.extend_from_slice(&key(i));
                buf.push(b'\t');
                buf.extend_from_slice(&value(i, 1));
                buf.extend_from_slice(b"\t1\n");
            }
            chunks.push(buf.clone());
            id += CHUNK;
            if chunks.len() == 64 || id >= rows {
                if superlinear_core::cancel::requested() {
                    return Err(Error::config("interrupted"));
                }
                copied +=
                    conn.copy_in(&format!("COPY {table} (k, v, ver) FROM STDIN"), chunks.iter().map(Vec::as_slice))?;
                chunks.clear();
            }
        }
        conn.simple(&format!(
            "ALTER TABLE {table} ADD PRIMARY KEY (k); COMMENT ON TABLE {table} IS '{}'; COMMIT",
            marker(rows)
        ))?;
        conn.simple(&format!("ANALYZE {table}"))?;
        Ok(copied)
    })();
    match result {
        Ok(copied) => Ok(LoadReport { rows: copied, loaded: true }),
        Err(e) => {
            let _ = conn.simple("ROLLBACK");
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_values_have_the_paper_sizes_and_check() {
        assert_eq!(&key(42), b"k000000000000042");
        assert_eq!(key_id(&key(123_456)), Some(123_456));
        let v = value(7, 3);
        assert_eq!(v.len(), 48);
        assert_eq!(check_value(7, &v), Some(3));
        assert_eq!(check_value(8, &v), None, "another key's value is wrong");
        let mut bad = v;
        bad[20] ^= 1;
        assert_eq!(check_value(7, &bad), None);
    }

    #[test]
    fn table_names_are_checked() {
        assert!(check_table("superlinear_kv").is_ok());
        assert!(check_table("kv; drop table x").is_err());
        assert!(check_table("Kv").is_err());
    }
}
