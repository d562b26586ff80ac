//! Internal keys: a user key tagged with a sequence number and a value type.
//!
//! ```text
//! internal key = user_key | fixed64 LE ( sequence << 8 | value_type )
//! ```
//! Order: user key ascending by the user comparator, then the packed trailer descending,
//! so for one user key the newest entry comes first.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::coding::{decode_fixed64, put_fixed64};
use crate::comparator::ComparatorRef;
use crate::error::{Error, Result};

pub type SequenceNumber = u64;

/// The largest sequence number: 56 bits.
pub const MAX_SEQUENCE_NUMBER: SequenceNumber = (1 << 56) - 1;

/// RocksDB's value types (db/dbformat.h) that Shale writes or reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ValueType {
    Deletion = 0x0,
    Value = 0x1,
    Merge = 0x2,
    SingleDeletion = 0x7,
    RangeDeletion = 0xF,
    /// RocksDB's `kTypeBlobIndex`: the value is a blob index (BlobDB, `blob/format.rs`).
    BlobIndex = 0x11,
    /// RocksDB's `kTypeWideColumnEntity`: the value is a wide-column entity
    /// (`wide_columns.rs`).
    WideColumnEntity = 0x16,
}

/// RocksDB's `kTypeDeletionWithTimestamp` byte.
pub const DELETION_WITH_TIMESTAMP: u8 = 0x14;

/// The type used when building a seek key: the highest type, so that a seek key sorts
/// before every entry of the same user key and sequence.
pub const VALUE_TYPE_FOR_SEEK: ValueType = ValueType::RangeDeletion;

/// The type of a key that looks up entries at a sequence number: the highest type stored
/// (a wide-column entity, 0x16), so that the key sorts before every entry of that sequence.
/// (Index separators, which tables persist, keep `VALUE_TYPE_FOR_SEEK`.)
pub const VALUE_TYPE_FOR_LOOKUP: ValueType = ValueType::WideColumnEntity;

impl ValueType {
    #[inline]
    pub fn from_u8(b: u8) -> Option<ValueType> {
        Some(match b {
            0x0 => ValueType::Deletion,
            // kTypeDeletionWithTimestamp: RocksDB's memtable (hence its tables) stores a
            // deletion in a family with user-defined timestamps with this type; it reads as
            // a deletion (docs/timestamps.md).
            DELETION_WITH_TIMESTAMP => ValueType::Deletion,
            0x1 => ValueType::Value,
            0x2 => ValueType::Merge,
            0x7 => ValueType::SingleDeletion,
            0xF => ValueType::RangeDeletion,
            0x11 => ValueType::BlobIndex,
            0x16 => ValueType::WideColumnEntity,
            _ => return None,
        })
    }
}

pub fn pack_seq_and_type(seq: SequenceNumber, t: ValueType) -> u64 {
    debug_assert!(seq <= MAX_SEQUENCE_NUMBER);
    (seq << 8) | t as u64
}

/// `pack_seq_and_type` for an entry of a family with user-defined timestamps (`with_ts`): a
/// deletion there is stored as `DELETION_WITH_TIMESTAMP` (0x14), as RocksDB's memtable
/// inserter (`DeleteCF`) and `SstFileWriter::DeleteWithTimestamp` store it; it reads back as
/// a Deletion.
pub fn pack_seq_and_type_ts(seq: SequenceNumber, t: ValueType, with_ts: bool) -> u64 {
    if with_ts && t == ValueType::Deletion {
        (seq << 8) | DELETION_WITH_TIMESTAMP as u64
    } else {
        pack_seq_and_type(seq, t)
    }
}

/// Appends `user_key | trailer` to `dst`.
pub fn append_internal_key(dst: &mut Vec<u8>, user_key: &[u8], seq: SequenceNumber, t: ValueType) {
    dst.extend_from_slice(user_key);
    put_fixed64(dst, pack_seq_and_type(seq, t));
}

pub fn make_internal_key(user_key: &[u8], seq: SequenceNumber, t: ValueType) -> Vec<u8> {
    let mut v = Vec::with_capacity(user_key.len() + 8);
    append_internal_key(&mut v, user_key, seq, t);
    v
}

/// The user-key part of an internal key. Callers pass keys that are at least 8 bytes
/// (checked on decode by [`parse_internal_key`]); a shorter key yields an empty slice.
#[inline]
pub fn user_key(ikey: &[u8]) -> &[u8] {
    &ikey[..ikey.len().saturating_sub(8)]
}

/// Byte order of `a` and `b` (`<[u8]>::cmp`): the first 8 bytes compared as one big-endian
/// integer, inline, then the rest. Keys that differ in their first 8 bytes (db_bench's, and
/// most integer-keyed ones) are decided without a call to memcmp.
#[inline]
pub fn bytewise_compare(a: &[u8], b: &[u8]) -> Ordering {
    if let (Some(x), Some(y)) = (a.first_chunk::<8>(), b.first_chunk::<8>()) {
        let (x, y) = (u64::from_be_bytes(*x), u64::from_be_bytes(*y));
        if x != y {
            return x.cmp(&y);
        }
        return a[8..].cmp(&b[8..]);
    }
    a.cmp(b)
}

/// The packed `seq << 8 | type` trailer of an internal key (0 for a short key).
#[inline]
pub fn trailer(ikey: &[u8]) -> u64 {
    if ikey.len() < 8 {
        return 0;
    }
    decode_fixed64(&ikey[ikey.len() - 8..])
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParsedInternalKey<'a> {
    pub user_key: &'a [u8],
    pub sequence: SequenceNumber,
    pub value_type: ValueType,
}

/// Splits an internal key, failing with Corruption on a short key or an unknown type.
/// Inlined: every iterator step parses a key.
#[inline]
pub fn parse_internal_key(ikey: &[u8]) -> Result<ParsedInternalKey<'_>> {
    if ikey.len() < 8 {
        return Err(bad_internal_key(ikey, None));
    }
    let t = trailer(ikey);
    match ValueType::from_u8((t & 0xff) as u8) {
        Some(value_type) => Ok(ParsedInternalKey { user_key: user_key(ikey), sequence: t >> 8, value_type }),
        None => Err(bad_internal_key(ikey, Some(t))),
    }
}

#[cold]
fn bad_internal_key(ikey: &[u8], trailer: Option<u64>) -> Error {
    match trailer {
        None => Error::corruption(format!("internal key too short: {} bytes", ikey.len())),
        Some(t) => Error::corruption(format!("unknown value type {:#x} in internal key", t & 0xff)),
    }
}

/// Orders internal keys: user key by the user comparator, then trailer descending.
#[derive(Clone)]
pub struct InternalKeyComparator {
    user: ComparatorRef,
    bytewise: bool,
    /// The user comparator's timestamp size (0: no user-defined timestamps).
    ts_sz: usize,
}

impl InternalKeyComparator {
    pub fn new(user: ComparatorRef) -> Self {
        let bytewise = user.is_bytewise();
        let ts_sz = user.timestamp_size();
        InternalKeyComparator { user, bytewise, ts_sz }
    }

    /// The size of the timestamp each user key ends with (0: none).
    #[inline]
    pub fn timestamp_size(&self) -> usize {
        self.ts_sz
    }

    /// Orders user keys (both carrying their timestamp) by the key proper only: with no
    /// timestamps, `compare_user`.
    #[inline]
    pub fn compare_user_without_ts(&self, a: &[u8], b: &[u8]) -> Ordering {
        if self.ts_sz == 0 {
            self.compare_user(a, b)
        } else {
            self.user.compare_without_timestamp(a, true, b, true)
        }
    }

    /// The user key without its timestamp (the key itself when there are none).
    #[inline]
    pub fn strip_ts<'a>(&self, user_key: &'a [u8]) -> &'a [u8] {
        &user_key[..user_key.len().saturating_sub(self.ts_sz)]
    }

    pub fn user_comparator(&self) -> &ComparatorRef {
        &self.user
    }

    /// True when user keys are in plain byte order (RocksDB's BytewiseComparator): then the
    /// hot loops compare in place with [`bytewise_compare`] instead of through the comparator.
    #[inline]
    pub fn is_bytewise(&self) -> bool {
        self.bytewise
    }

    /// Counted in the perf context's `user_key_comparison_count`, as RocksDB's
    /// `UserComparatorWrapper::Compare`.
    #[inline]
    pub fn compare_user(&self, a: &[u8], b: &[u8]) -> Ordering {
        crate::perf::count(crate::perf::Field::UserKeyComparisonCount, 1);
        self.compare_user_uncounted(a, b)
    }

    #[inline]
    fn compare_user_uncounted(&self, a: &[u8], b: &[u8]) -> Ordering {
        if self.bytewise {
            bytewise_compare(a, b)
        } else {
            self.user.compare(a, b)
        }
    }

    /// `compare` without the perf count, for a loop that counts its comparisons and adds
    /// them once (the memtable's skiplist search, the hottest comparison loop).
    #[inline]
    pub fn compare_uncounted(&self, a: &[u8], b: &[u8]) -> Ordering {
        match self.compare_user_uncounted(user_key(a), user_key(b)) {
            Ordering::Equal => trailer(b).cmp(&trailer(a)),
            o => o,
        }
    }

    #[inline]
    pub fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        match self.compare_user(user_key(a), user_key(b)) {
            Ordering::Equal => trailer(b).cmp(&trailer(a)),
            o => o,
        }
    }

    /// Shortens `start` to an internal key in `[start, limit)` for an index block.
    pub fn find_shortest_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        let su = user_key(start);
        let mut tmp = su.to_vec();
        self.user.find_shortest_separator(&mut tmp, user_key(limit));
        if tmp.len() < su.len() && self.compare_user(su, &tmp) == Ordering::Less {
            put_fixed64(&mut tmp, pack_seq_and_type(MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK));
            debug_assert_eq!(self.compare(start, &tmp), Ordering::Less);
            debug_assert_eq!(self.compare(&tmp, limit), Ordering::Less);
            *start = tmp;
        }
    }

    /// Changes `key` to a short internal key `>= key` for the last index entry.
    pub fn find_short_successor(&self, key: &mut Vec<u8>) {
        let uk = user_key(key);
        let mut tmp = uk.to_vec();
        self.user.find_short_successor(&mut tmp);
        if tmp.len() < uk.len() && self.compare_user(uk, &tmp) == Ordering::Less {
            put_fixed64(&mut tmp, pack_seq_and_type(MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK));
            *key = tmp;
        }
    }
}

impl std::fmt::Debug for InternalKeyComparator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "InternalKeyComparator({})", self.user.name())
    }
}

/// A key to look up `user_key` as of `seq`: the internal key that sorts before every entry
/// of `user_key` visible at `seq`.
pub fn lookup_key(user_key: &[u8], seq: SequenceNumber) -> Vec<u8> {
    make_internal_key(user_key, seq, VALUE_TYPE_FOR_LOOKUP)
}

/// `lookup_key` for a family with user-defined timestamps: its seek type is
/// `DELETION_WITH_TIMESTAMP` (0x14), above every type such a family stores, so the key sorts
/// before a RocksDB-written deletion of the same sequence too.
pub fn lookup_key_ts(user_key: &[u8], seq: SequenceNumber) -> Vec<u8> {
    let mut v = Vec::with_capacity(user_key.len() + 8);
    v.extend_from_slice(user_key);
    put_fixed64(&mut v, (seq << 8) | DELETION_WITH_TIMESTAMP as u64);
    v
}

/// `ikey` with the last `ts` bytes of its user key left out (RocksDB's
/// `StripTimestampFromInternalKey`); a key too short to hold them is returned whole.
pub fn strip_ikey_ts(ikey: &[u8], ts: usize) -> Vec<u8> {
    if ikey.len() < 8 + ts {
        return ikey.to_vec();
    }
    let (uk, tail) = ikey.split_at(ikey.len() - 8);
    let mut v = Vec::with_capacity(ikey.len() - ts);
    v.extend_from_slice(&uk[..uk.len() - ts]);
    v.extend_from_slice(tail);
    v
}

/// `ikey` with a timestamp of `ts` bytes of `fill` appended to its user key: 0 is RocksDB's
/// minimum timestamp (`PadInternalKeyWithMinTimestamp`), 0xff its maximum
/// (`PadInternalKeyWithMaxTimestamp`). A key shorter than a trailer is returned whole.
pub fn pad_ikey_ts(ikey: &[u8], ts: usize, fill: u8) -> Vec<u8> {
    if ikey.len() < 8 {
        return ikey.to_vec();
    }
    let (uk, tail) = ikey.split_at(ikey.len() - 8);
    let mut v = Vec::with_capacity(ikey.len() + ts);
    v.extend_from_slice(uk);
    v.resize(uk.len() + ts, fill);
    v.extend_from_slice(tail);
    v
}

/// Shortcut for tests and callers that want the default ordering.
pub fn bytewise_internal_comparator() -> InternalKeyComparator {
    InternalKeyComparator::new(Arc::new(crate::comparator::BytewiseComparator))
}

/// The per-entry protection checksum of a key and its value, of which RocksDB's per
/// key-value protection keeps the low 1, 2, 4 or 8 bytes (little-endian): the XXH3 of the
/// value seeded with the XXH3 of the key. Used by the memtable
/// (`memtable_protection_bytes_per_key`) and by parsed blocks
/// (`block_protection_bytes_per_key`, `table::block`). The bytes never leave memory, so the
/// hash need not be RocksDB's `ProtectionInfo64`.
#[inline]
pub fn kv_checksum(key: &[u8], value: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(value, xxhash_rust::xxh3::xxh3_64(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The inline comparison orders every pair as `<[u8]>::cmp` does: keys shorter
        /// than 8 bytes, equal first 8 bytes, prefixes of each other, high bytes.
        #[test]
        fn bytewise_compare_is_slice_order(
            a in proptest::collection::vec(proptest::sample::select(vec![0u8, 1, 0x7f, 0x80, 0xff]), 0..20),
            b in proptest::collection::vec(proptest::sample::select(vec![0u8, 1, 0x7f, 0x80, 0xff]), 0..20),
        ) {
            proptest::prop_assert_eq!(bytewise_compare(&a, &b), a.cmp(&b));
            proptest::prop_assert_eq!(bytewise_compare(&a, &a), Ordering::Equal);
            let mut c = a.clone();
            c.extend_from_slice(&b);
            proptest::prop_assert_eq!(bytewise_compare(&a, &c), a.cmp(&c));
            proptest::prop_assert_eq!(bytewise_compare(&c, &a), c.cmp(&a));
        }
    }

    #[test]
    fn newer_entries_sort_first() {
        let c = bytewise_internal_comparator();
        let a = make_internal_key(b"k", 10, ValueType::Value);
        let b = make_internal_key(b"k", 9, ValueType::Value);
        let d = make_internal_key(b"k", 10, ValueType::Deletion);
        assert_eq!(c.compare(&a, &b), Ordering::Less);
        assert_eq!(c.compare(&a, &d), Ordering::Less, "same seq: higher type first");
        assert_eq!(c.compare(&lookup_key(b"k", 10), &a), Ordering::Less);
        assert_eq!(c.compare(&make_internal_key(b"j", 1, ValueType::Value), &a), Ordering::Less);
    }

    #[test]
    fn parse_rejects_bad_keys() {
        let k = make_internal_key(b"user", 77, ValueType::SingleDeletion);
        let p = parse_internal_key(&k).unwrap();
        assert_eq!((p.user_key, p.sequence, p.value_type), (&b"user"[..], 77, ValueType::SingleDeletion));
        assert!(parse_internal_key(b"short").is_err());
        let mut bad = k.clone();
        let n = bad.len();
        bad[n - 8] = 0x33;
        assert_eq!(parse_internal_key(&bad).unwrap_err().kind(), crate::ErrorKind::Corruption);
    }

    #[test]
    fn separator_is_between() {
        let c = bytewise_internal_comparator();
        let mut s = make_internal_key(b"abcdefgh", 5, ValueType::Value);
        let l = make_internal_key(b"abzzz", 9, ValueType::Value);
        c.find_shortest_separator(&mut s, &l);
        assert_eq!(user_key(&s), b"abd");
        assert_eq!(c.compare(&s, &l), Ordering::Less);
    }
}
