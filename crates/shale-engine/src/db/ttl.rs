//! TTL databases, as RocksDB's DBWithTTL (`utilities/ttl`), in its on-disk format so that
//! RocksDB opened with `DBWithTTL` reads Shale's data and the other way round.
//!
//! ```text
//! stored value:  +----------------------+---------------------------+
//!                | the user's value     | write time: fixed32 LE,   |
//!                |                      | seconds since 1970 (i32)  |
//!                +----------------------+---------------------------+
//! ```
//!
//! - Every Put and Merge of a TTL database, in every family, gets the 4-byte suffix when it
//!   is written (`WriteBatch::with_value_suffix`); deletions and range deletions do not.
//! - Wide-column entities: RocksDB's DBWithTTL overrides neither PutEntity nor GetEntity
//!   (StackableDB passes them to the base database), so `put_entity` writes an entity with
//!   no suffix and `get_entity` returns what is stored: an entity as it is, a plain value
//!   as the default column with its suffix. A batch holding an entity written through the
//!   TTL write path is NotSupported ("PutEntityCF not implemented"), as RocksDB's.
//! - Reads (get, multi_get, pinned gets, iterators) strip it. A value shorter than 4 bytes
//!   or with a write time before 2013-05-10 (RocksDB's `kMinTimestamp`, 1368146402) is
//!   Corruption, RocksDB's guard against a plain database opened as a TTL one.
//! - Expiry happens only in compaction, as in RocksDB: the newest Put of a key that no
//!   snapshot sees, whose write time + the family's TTL is before now, is removed (turned
//!   into a deletion, dropped at the bottommost level). Until then a stale value is still
//!   returned by reads, as RocksDB's.
//! - Each family's TTL in seconds (`Options::ttl_db`): the database's, or the
//!   descriptor's `ColumnFamilyTtl::Duration`, or `i32::MAX` for `Disabled` (as
//!   rust-rocksdb passes it); 0 for a family created later (RocksDB's CreateColumnFamily on
//!   a TTL database). Zero or less never expires; the suffix is written all the same.

use super::cf::CfHandle;
use crate::error::{Error, Result};

/// Bytes of the write-time suffix.
pub const TS_LEN: usize = 4;
/// RocksDB's `DBWithTTLImpl::kMinTimestamp`.
const MIN_TIMESTAMP: i32 = 1_368_146_402;

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// The suffix for a value written now.
pub fn timestamp_suffix() -> [u8; TS_LEN] {
    (now_secs() as i32).to_le_bytes()
}

fn write_time(value: &[u8]) -> Option<i32> {
    let ts = value.get(value.len().checked_sub(TS_LEN)?..)?;
    Some(i32::from_le_bytes([ts[0], ts[1], ts[2], ts[3]]))
}

/// The user's value of a stored one (RocksDB's SanityCheckTimestamp, then StripTS).
pub fn strip(mut value: Vec<u8>) -> Result<Vec<u8>> {
    match write_time(&value) {
        None => Err(Error::corruption("Error: value's length less than timestamp's")),
        Some(t) if t < MIN_TIMESTAMP => {
            Err(Error::corruption("Error: Timestamp < ttl feature release time!"))
        }
        Some(_) => {
            value.truncate(value.len() - TS_LEN);
            Ok(value)
        }
    }
}

/// How many bytes reads of family `cf` strip from each value.
pub fn suffix_len(cf: &CfHandle) -> usize {
    if cf.config().ttl_db.is_some() {
        TS_LEN
    } else {
        0
    }
}

/// RocksDB's `IsStale`: written more than `ttl` seconds before `now`.
fn is_stale(value: &[u8], ttl: i32, now: i64) -> bool {
    if ttl <= 0 {
        return false;
    }
    match write_time(value) {
        Some(t) => i64::from(t) + i64::from(ttl) < now,
        None => false,
    }
}

/// The compaction filter of a TTL family with a positive TTL (None otherwise): true for a
/// stale value. The clock is read once per compaction, as RocksDB's filter reads it per
/// compaction job's filter instance.
pub fn stale_filter(cf: &CfHandle) -> Option<impl Fn(&[u8]) -> bool> {
    let ttl = cf.config().ttl_db.filter(|t| *t > 0)?;
    let now = now_secs();
    Some(move |v: &[u8]| is_stale(v, ttl, now))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_and_checks() {
        let mut v = b"value".to_vec();
        v.extend_from_slice(&1_700_000_000i32.to_le_bytes());
        assert_eq!(write_time(&v), Some(1_700_000_000));
        assert_eq!(strip(v.clone()).unwrap(), b"value");
        assert!(is_stale(&v, 10, 1_700_000_011));
        assert!(!is_stale(&v, 10, 1_700_000_010));
        assert!(!is_stale(&v, 0, i64::MAX));
        assert!(!is_stale(&v, i32::MAX, 1_700_000_011));
        assert_eq!(strip(b"abc".to_vec()).unwrap_err().kind(), crate::ErrorKind::Corruption);
        let mut old = b"v".to_vec();
        old.extend_from_slice(&1000i32.to_le_bytes());
        assert_eq!(strip(old).unwrap_err().kind(), crate::ErrorKind::Corruption);
    }
}
