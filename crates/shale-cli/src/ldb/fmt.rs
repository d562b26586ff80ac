//! RocksDB's text forms, shared by `shale ldb` and `shale sst_dump`: `Slice::ToString(hex)`
//! (upper-case hex, no prefix), `LDBCommand::StringToHex` (`0x` + upper-case hex),
//! `InternalKey::DebugString` (`'key' seq:N, type:T`), and the `Failed: ...` error form.

use shale_format::key::parse_internal_key;

/// A failed command: the text ldb prints after `Failed: `, and whether to print the usage.
#[derive(Debug)]
pub struct Failure {
    pub msg: String,
    pub usage: bool,
    /// Printed as is, without `Failed: ` (ldb's checks that print before any command runs).
    pub plain: bool,
}

pub type Res<T> = std::result::Result<T, Failure>;

impl Failure {
    pub fn new(msg: impl Into<String>) -> Failure {
        Failure { msg: msg.into(), usage: false, plain: false }
    }

    pub fn usage(msg: String) -> Failure {
        Failure { msg, usage: true, plain: false }
    }

    /// A message ldb prints on its own line, without `Failed: ` or the help text.
    pub fn plain(msg: impl Into<String>) -> Failure {
        Failure { msg: msg.into(), usage: false, plain: true }
    }

    pub fn io(e: std::io::Error) -> Failure {
        Failure::new(format!("IO error: {e}"))
    }

    pub fn db(e: shale::Error) -> Failure {
        Failure::new(e.to_string())
    }

    /// Prints the failure on stderr as ldb does.
    pub fn report(&self) {
        if self.usage {
            if !self.msg.is_empty() {
                eprintln!("{}", self.msg);
            }
            eprint!("{}", super::HELP);
        } else if self.plain {
            eprintln!("{}", self.msg);
        } else {
            eprintln!("Failed: {}", self.msg);
        }
    }
}

/// `Slice::ToString(hex)`: raw bytes, or upper-case hex without a prefix.
pub fn slice_to_string(b: &[u8], hex: bool) -> Vec<u8> {
    if hex {
        to_hex(b).into_bytes()
    } else {
        b.to_vec()
    }
}

pub fn to_hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push_str(&format!("{x:02X}"));
    }
    s
}

/// `LDBCommand::StringToHex`: `0x` followed by upper-case hex.
pub fn string_to_hex(b: &[u8]) -> String {
    format!("0x{}", to_hex(b))
}

/// ldb's `HexToString`: the input must start with `0x`.
pub fn hex_to_string(s: &str) -> Res<Vec<u8>> {
    // ldb prints this line and then aborts (an uncaught C++ exception, exit status 134);
    // Shale prints the same line and exits with status 1.
    let Some(h) = s.strip_prefix("0x") else {
        return Err(Failure::plain(format!("Invalid hex input {s}.  Must start with 0x")));
    };
    let h = h.as_bytes();
    let digit = |c: u8| -> Res<u8> {
        (c as char)
            .to_digit(16)
            .map(|d| d as u8)
            .ok_or_else(|| Failure::plain(format!("Invalid hex input {s}")))
    };
    let mut out = Vec::with_capacity(h.len() / 2 + 1);
    let mut i = 0;
    // An odd number of digits reads the first one alone, as ldb does.
    if h.len() % 2 == 1 {
        out.push(digit(h[0])?);
        i = 1;
    }
    while i < h.len() {
        out.push(digit(h[i])? << 4 | digit(h[i + 1])?);
        i += 2;
    }
    Ok(out)
}

/// `InternalKey::DebugString(hex)` of an encoded internal key.
pub fn ikey_debug(ikey: &[u8], hex: bool) -> Vec<u8> {
    match parse_internal_key(ikey) {
        Ok(p) => parsed_debug(p.user_key, p.sequence, p.value_type as u8, hex),
        Err(_) => {
            // RocksDB: "(bad)" followed by the escaped bytes.
            let mut r = b"(bad)".to_vec();
            r.extend(escape(ikey).into_bytes());
            r
        }
    }
}

/// `ParsedInternalKey::DebugString(log_err_key=true, hex)`.
pub fn parsed_debug(user_key: &[u8], seq: u64, t: u8, hex: bool) -> Vec<u8> {
    let mut r = b"'".to_vec();
    r.extend(slice_to_string(user_key, hex));
    r.extend(format!("' seq:{seq}, type:{t}").into_bytes());
    r
}

/// RocksDB's `EscapeString`: printable ASCII as is, others as `\xNN`.
pub fn escape(b: &[u8]) -> String {
    let mut s = String::new();
    for &c in b {
        if (b' '..=b'~').contains(&c) {
            s.push(c as char);
        } else {
            s.push_str(&format!("\\x{c:02x}"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_forms() {
        assert_eq!(string_to_hex(b"a\x01"), "0x6101");
        assert_eq!(hex_to_string("0x6101").unwrap(), b"a\x01");
        assert_eq!(hex_to_string("0x1").unwrap(), vec![1]);
        assert!(hex_to_string("61").is_err());
        assert!(hex_to_string("0xZZ").is_err());
        let k = shale_format::key::make_internal_key(b"c", 7, shale_format::key::ValueType::Value);
        assert_eq!(ikey_debug(&k, false), b"'c' seq:7, type:1");
        assert_eq!(ikey_debug(&k, true), b"'63' seq:7, type:1");
        assert_eq!(ikey_debug(b"x", false), b"(bad)x");
    }
}

/// The kind of a database file, from its name (RocksDB's ParseFileName, the kinds ldb needs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbFile {
    Wal(u64),
    Table(u64),
    Manifest(u64),
}

pub fn parse_db_file(name: &str) -> Option<DbFile> {
    let num = |s: &str| -> Option<u64> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    if let Some(rest) = name.strip_prefix("MANIFEST-") {
        Some(DbFile::Manifest(num(rest)?))
    } else if let Some(n) = name.strip_suffix(".log") {
        Some(DbFile::Wal(num(n)?))
    } else if let Some(n) = name.strip_suffix(".sst") {
        Some(DbFile::Table(num(n)?))
    } else {
        None
    }
}
