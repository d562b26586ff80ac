//! A table file's internal unique id, as RocksDB 11.8.1's `GetSstInternalUniqueId`
//! (`table/unique_id.cc`): what the MANIFEST records of each table (VersionEdit custom
//! field 12, `kUniqueId`) and what `verify_sst_unique_id_in_manifest` compares with the id
//! the table's own properties give when the table is opened.
//!
//! ```text
//! db_session_id (13..=24 base-36 digits, RocksDB writes 20)
//!     = a (all but the last 12 digits) | b (the last 12 digits)
//!     session upper = a >> 2;  session lower = (b & (2^62 - 1)) | (a << 62)
//! id[0] = session lower
//! id[1] = high 64 bits of XXH3-128(db_id, seed = session upper) XOR orig_file_number
//! ```
//! Without `force`, a missing db id, session id or file number gives no id (the MANIFEST then
//! records none). With it (the check at open), a session id that does not decode is hashed
//! instead: session upper/lower = the high/low halves of XXH3-128(session id) (seed 0),
//! lower made odd-or-nonzero as RocksDB's fallback.

/// The session id's two halves (RocksDB's `DecodeSessionId`); None when it is not 13 to 24
/// base-36 digits.
fn decode_session_id(id: &str) -> Option<(u64, u64)> {
    let s = id.as_bytes();
    if !(13..=24).contains(&s.len()) {
        return None;
    }
    let parse = |digits: &[u8]| -> Option<u64> {
        digits.iter().try_fold(0u64, |v, &c| {
            let d = match c {
                b'0'..=b'9' => c - b'0',
                b'A'..=b'Z' => c - b'A' + 10,
                b'a'..=b'z' => c - b'a' + 10,
                _ => return None,
            };
            Some(v.wrapping_mul(36).wrapping_add(u64::from(d)))
        })
    };
    let (hi, lo) = s.split_at(s.len() - 12);
    let a = parse(hi)?;
    let b = parse(lo)?;
    Some((a >> 2, (b & (u64::MAX >> 2)) | (a << 62)))
}

/// The internal unique id of the table `orig_file_number` written by database `db_id` in
/// session `db_session_id` (see the module comment for `force`).
pub fn internal_unique_id(
    db_id: &str,
    db_session_id: &str,
    orig_file_number: u64,
    force: bool,
) -> Option<[u64; 2]> {
    if !force && (db_id.is_empty() || orig_file_number == 0 || db_session_id.is_empty()) {
        return None;
    }
    let (upper, lower) = match decode_session_id(db_session_id) {
        Some(halves) => halves,
        None if !force => return None,
        None => {
            let h = xxhash_rust::xxh3::xxh3_128(db_session_id.as_bytes());
            let (upper, lower) = ((h >> 64) as u64, h as u64);
            (upper, if lower == 0 { upper | 1 } else { lower })
        }
    };
    let db_a = (xxhash_rust::xxh3::xxh3_128_with_seed(db_id.as_bytes(), upper) >> 64) as u64;
    Some([lower, db_a ^ orig_file_number])
}

/// RocksDB's `InternalUniqueIdToHumanString` of a two-word id: `{id0,id1}`.
pub fn human_string(id: &[u64; 2]) -> String {
    format!("{{{},{}}}", id[0], id[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_need_every_part_unless_forced() {
        let sid = "2PPN9X9E0HT2ML2DBY53";
        let id = internal_unique_id("db", sid, 7, false).unwrap();
        // Another file of the same session differs in the second word only, by the number.
        let other = internal_unique_id("db", sid, 8, false).unwrap();
        assert_eq!(id[0], other[0]);
        assert_eq!(id[1] ^ other[1], 7 ^ 8);
        assert_eq!(internal_unique_id("", sid, 7, false), None);
        assert_eq!(internal_unique_id("db", sid, 0, false), None);
        assert_eq!(internal_unique_id("db", "short", 7, false), None);
        assert!(internal_unique_id("db", "short", 7, true).is_some());
        assert_eq!(human_string(&[1, 2]), "{1,2}");
    }
}
