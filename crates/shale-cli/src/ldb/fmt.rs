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

/// The output of a command.
pub type Out<'a> = dyn std::io::Write + 'a;

/// `DumpWideColumns`: the columns as `name:value` separated by spaces.
pub fn dump_columns(columns: &[(Vec<u8>, Vec<u8>)], hex: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let part = |out: &mut Vec<u8>, b: &[u8]| {
        if b.is_empty() {
            return;
        }
        if hex {
            out.extend_from_slice(b"0x");
            out.extend(to_hex(b).into_bytes());
        } else {
            out.extend_from_slice(b);
        }
    };
    for (i, (name, value)) in columns.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        part(&mut out, name);
        out.push(b':');
        part(&mut out, value);
    }
    out
}

const BIT_FLIP_L: u64 = 0x5997_3f00_3336_2349;
const BIT_FLIP_H: u64 = 0xc202_7976_92d6_3d58;

fn xxh3_avalanche(mut h: u64) -> u64 {
    h ^= h >> 37;
    h = h.wrapping_mul(0x1656_6791_9E37_79F9);
    h ^ (h >> 32)
}

/// RocksDB's BijectiveHash2x64 with seed 0 (util/hash.cc), used for public unique ids.
fn bijective_hash_2x64(in_high: u64, in_low: u64) -> (u64, u64) {
    let m = (in_low ^ in_high ^ BIT_FLIP_L) as u128 * 0x9E37_79B1_85EB_CA87u128;
    let mut lo = m as u64;
    let mut hi = (m >> 64) as u64;
    lo = lo.wrapping_add(0x3c0_0000_0000_0000);
    let ih = in_high ^ BIT_FLIP_H;
    hi = hi.wrapping_add(ih).wrapping_add((ih as u32 as u64).wrapping_mul(0x85EB_CA76));
    lo ^= hi.swap_bytes();
    let m = lo as u128 * 0xC2B2_AE3D_27D4_EB4Fu128;
    let lo = m as u64;
    let hi = ((m >> 64) as u64).wrapping_add(hi.wrapping_mul(0xC2B2_AE3D_27D4_EB4F));
    (xxh3_avalanche(hi), xxh3_avalanche(lo))
}

/// `unique_id(internal): {a,b} public_unique_id: XXXXXXXXXXXXXXXX-XXXXXXXXXXXXXXXX`.
pub fn unique_id_strings(id: [u64; 2]) -> (String, String) {
    let internal = format!("{{{},{}}}", id[0], id[1]);
    let (hi, lo) = bijective_hash_2x64(
        id[1].wrapping_add(17391078804906429400),
        id[0].wrapping_add(6417269962128484497),
    );
    let mut bytes = lo.to_le_bytes().to_vec();
    bytes.extend(hi.to_le_bytes());
    let h = to_hex(&bytes);
    (internal, format!("{}-{}", &h[..16], &h[16..]))
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
