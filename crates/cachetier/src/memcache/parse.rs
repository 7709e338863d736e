//! Parsing of memcached reply lines (text and meta protocol), separate from the socket code so
//! that every reply form is unit-tested without a server.

/// A cached item as returned by `gets` or `mg`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// The stored bytes.
    pub data: Vec<u8>,
    /// The 32-bit client flags stored with the item.
    pub flags: u32,
    /// The item's CAS unique (0 where the command did not ask for it).
    pub cas: u64,
}

/// Outcome of a storage command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreStatus {
    /// Stored (`STORED` / `HD`); carries the new CAS where the meta command returned it.
    Stored(u64),
    /// Not stored: `add` on an existing key, `replace` on a missing one (`NOT_STORED` / `NS`).
    NotStored,
    /// CAS mismatch: someone changed the item since it was read (`EXISTS` / `EX`).
    Exists,
    /// CAS given but the item is gone (`NOT_FOUND` / `NF`).
    NotFound,
}

/// A parsed header line of a value: `VALUE <key> <flags> <bytes> [<cas>]`.
#[derive(Debug, PartialEq, Eq)]
pub struct ValueHeader<'a> {
    pub key: &'a [u8],
    pub flags: u32,
    pub len: usize,
    pub cas: u64,
}

fn num<T: std::str::FromStr>(tok: &[u8]) -> Option<T> {
    std::str::from_utf8(tok).ok()?.parse().ok()
}

/// Parses `VALUE <key> <flags> <bytes> [<cas>]` (without the line end).
pub fn value_header(line: &[u8]) -> Option<ValueHeader<'_>> {
    let mut it = line.split(|&b| b == b' ').filter(|t| !t.is_empty());
    if it.next()? != b"VALUE" {
        return None;
    }
    let key = it.next()?;
    let flags = num(it.next()?)?;
    let len = num(it.next()?)?;
    let cas = match it.next() {
        Some(t) => num(t)?,
        None => 0,
    };
    Some(ValueHeader { key, flags, len, cas })
}

/// A meta reply header: `VA <len> <flags>*`, `HD <flags>*`, `EN`, `NS`, `EX`, `NF`, `MN`.
#[derive(Debug, PartialEq, Eq)]
pub struct MetaHeader {
    /// The two-letter code.
    pub code: [u8; 2],
    /// The data length for `VA`.
    pub len: Option<usize>,
    /// Client flags (`f`), if returned.
    pub flags: Option<u32>,
    /// CAS (`c`), if returned.
    pub cas: Option<u64>,
}

/// Parses a meta reply line (without the line end).
pub fn meta_header(line: &[u8]) -> Option<MetaHeader> {
    let mut it = line.split(|&b| b == b' ').filter(|t| !t.is_empty());
    let code_tok = it.next()?;
    if code_tok.len() != 2 {
        return None;
    }
    let code = [code_tok[0], code_tok[1]];
    let len = if &code == b"VA" { Some(num(it.next()?)?) } else { None };
    let (mut flags, mut cas) = (None, None);
    for tok in it {
        match tok.first()? {
            b'f' => flags = Some(num(&tok[1..])?),
            b'c' => cas = Some(num(&tok[1..])?),
            _ => {}
        }
    }
    Some(MetaHeader { code, len, flags, cas })
}

/// Maps a text-protocol storage reply to a status.
pub fn text_store_status(line: &[u8]) -> Option<StoreStatus> {
    Some(match line {
        b"STORED" => StoreStatus::Stored(0),
        b"NOT_STORED" => StoreStatus::NotStored,
        b"EXISTS" => StoreStatus::Exists,
        b"NOT_FOUND" => StoreStatus::NotFound,
        _ => return None,
    })
}

/// Whether a line is one of memcached's error replies; returns its text.
pub fn error_reply(line: &[u8]) -> Option<String> {
    if line == b"ERROR" || line.starts_with(b"CLIENT_ERROR") || line.starts_with(b"SERVER_ERROR") {
        Some(String::from_utf8_lossy(line).into_owned())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_headers() {
        let h = value_header(b"VALUE k1 5 48 77").unwrap();
        assert_eq!((h.key, h.flags, h.len, h.cas), (&b"k1"[..], 5, 48, 77));
        assert_eq!(value_header(b"VALUE k 0 3").unwrap().cas, 0);
        assert!(value_header(b"VALUE k x 3").is_none());
        assert!(value_header(b"END").is_none());
    }

    #[test]
    fn meta_headers() {
        let h = meta_header(b"VA 48 f7 c123").unwrap();
        assert_eq!((&h.code, h.len, h.flags, h.cas), (b"VA", Some(48), Some(7), Some(123)));
        let h = meta_header(b"HD c9").unwrap();
        assert_eq!((&h.code, h.cas), (b"HD", Some(9)));
        assert_eq!(&meta_header(b"EN").unwrap().code, b"EN");
        assert!(meta_header(b"VA x").is_none());
    }

    #[test]
    fn store_and_error_replies() {
        assert_eq!(text_store_status(b"STORED"), Some(StoreStatus::Stored(0)));
        assert_eq!(text_store_status(b"EXISTS"), Some(StoreStatus::Exists));
        assert!(error_reply(b"SERVER_ERROR out of memory").is_some());
        assert!(error_reply(b"STORED").is_none());
    }
}
