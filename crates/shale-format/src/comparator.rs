//! User-key comparators: bytewise (RocksDB's default), reverse bytewise, and user-supplied
//! ones. The name is what RocksDB records in the MANIFEST and in every SST's properties,
//! so the built-in names are RocksDB's own.

use std::cmp::Ordering;
use std::sync::Arc;

/// Orders user keys. `name` must stay stable for the life of a database: a database opened
/// with a comparator of another name is refused.
pub trait Comparator: Send + Sync {
    fn name(&self) -> &str;
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering;

    /// May shorten `start` to any key in `[start, limit)`; used for index separators.
    fn find_shortest_separator(&self, _start: &mut Vec<u8>, _limit: &[u8]) {}

    /// May change `key` to any key `>= key`; used for the last index entry.
    fn find_short_successor(&self, _key: &mut Vec<u8>) {}

    /// True when `compare` is plain byte order (enables the fast paths that compare slices).
    fn is_bytewise(&self) -> bool {
        false
    }

    /// The size of the user-defined timestamp every user key ends with (RocksDB's
    /// `Comparator::timestamp_size`); 0 for a comparator without timestamps.
    fn timestamp_size(&self) -> usize {
        0
    }

    /// Orders two timestamps (`timestamp_size` bytes each), older first.
    fn compare_timestamp(&self, _a: &[u8], _b: &[u8]) -> Ordering {
        Ordering::Equal
    }

    /// Orders two user keys ignoring their timestamps; `a_has_ts` / `b_has_ts` say whether
    /// each carries one (RocksDB's `CompareWithoutTimestamp`).
    fn compare_without_timestamp(&self, a: &[u8], a_has_ts: bool, b: &[u8], b_has_ts: bool) -> Ordering {
        // Comparators with timestamps override this; the rest have none to strip.
        let ts = self.timestamp_size();
        let a = if a_has_ts { split_ts(a, ts).0 } else { a };
        let b = if b_has_ts { split_ts(b, ts).0 } else { b };
        self.compare(a, b)
    }
}

pub type ComparatorRef = Arc<dyn Comparator>;

pub const BYTEWISE_NAME: &str = "leveldb.BytewiseComparator";
pub const REVERSE_BYTEWISE_NAME: &str = "rocksdb.ReverseBytewiseComparator";

/// Lexicographic byte order, RocksDB's default comparator.
#[derive(Debug, Default, Clone, Copy)]
pub struct BytewiseComparator;

impl Comparator for BytewiseComparator {
    fn name(&self) -> &str {
        BYTEWISE_NAME
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        a.cmp(b)
    }

    /// RocksDB 11.8.1's `BytewiseComparatorImpl::FindShortestSeparator`, byte for byte, so
    /// index keys come out as RocksDB writes them.
    fn find_shortest_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        let min_len = start.len().min(limit.len());
        let diff = start.iter().zip(limit).take_while(|(a, b)| a == b).count();
        if diff >= min_len {
            return; // one is a prefix of the other
        }
        let (byte, limit_byte) = (start[diff], limit[diff]);
        if byte >= limit_byte {
            return; // `limit` is smaller, or `start` is already the shortest
        }
        if diff < limit.len() - 1 || byte + 1 < limit_byte {
            // Still below `limit`: it is longer, or its byte is at least two greater.
            start[diff] += 1;
            start.truncate(diff + 1);
            return;
        }
        // Incrementing would reach `limit`: increment the first later byte that can grow.
        for i in diff + 1..start.len() {
            if start[i] < 0xff {
                start[i] += 1;
                start.truncate(i + 1);
                return;
            }
        }
    }

    fn find_short_successor(&self, key: &mut Vec<u8>) {
        if let Some(i) = key.iter().position(|&b| b != 0xff) {
            key[i] += 1;
            key.truncate(i + 1);
        }
    }

    fn is_bytewise(&self) -> bool {
        true
    }
}

pub const BYTEWISE_U64TS_NAME: &str = "leveldb.BytewiseComparator.u64ts";
pub const REVERSE_BYTEWISE_U64TS_NAME: &str = "rocksdb.ReverseBytewiseComparator.u64ts";

/// The size of RocksDB's built-in timestamps: a u64, fixed 8 bytes little-endian.
pub const U64_TS_SIZE: usize = 8;

/// RocksDB's `ComparatorWithU64TsImpl` (util/comparator.cc): user keys end with an 8-byte
/// little-endian u64 timestamp; keys order by the part before it (bytewise, or reverse
/// bytewise), then by timestamp descending, so the newest version of a key comes first.
/// Its name is the underlying comparator's with `.u64ts` appended, as RocksDB records it.
#[derive(Debug, Default, Clone, Copy)]
pub struct U64TsComparator {
    reverse: bool,
}

impl U64TsComparator {
    /// `leveldb.BytewiseComparator.u64ts` (RocksDB's `BytewiseComparatorWithU64Ts()`).
    pub fn bytewise() -> Self {
        U64TsComparator { reverse: false }
    }

    /// `rocksdb.ReverseBytewiseComparator.u64ts`.
    pub fn reverse_bytewise() -> Self {
        U64TsComparator { reverse: true }
    }

    /// The comparator RocksDB registers under `name`, if it is one of these two.
    pub fn by_name(name: &str) -> Option<Self> {
        match name {
            BYTEWISE_U64TS_NAME => Some(Self::bytewise()),
            REVERSE_BYTEWISE_U64TS_NAME => Some(Self::reverse_bytewise()),
            _ => None,
        }
    }
}

/// Splits a user key into the key proper and its `ts` trailing bytes (a shorter key is all key).
#[inline]
pub fn split_ts(key: &[u8], ts: usize) -> (&[u8], &[u8]) {
    key.split_at(key.len().saturating_sub(ts))
}

/// A u64 timestamp in RocksDB's encoding (fixed 8 bytes little-endian).
pub fn encode_u64_ts(ts: u64) -> [u8; U64_TS_SIZE] {
    ts.to_le_bytes()
}

/// Decodes a u64 timestamp; a short slice reads as its bytes padded with zeros.
pub fn decode_u64_ts(ts: &[u8]) -> u64 {
    let mut b = [0u8; U64_TS_SIZE];
    let n = ts.len().min(U64_TS_SIZE);
    b[..n].copy_from_slice(&ts[..n]);
    u64::from_le_bytes(b)
}

impl Comparator for U64TsComparator {
    fn name(&self) -> &str {
        if self.reverse {
            REVERSE_BYTEWISE_U64TS_NAME
        } else {
            BYTEWISE_U64TS_NAME
        }
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        let (ak, ats) = split_ts(a, U64_TS_SIZE);
        let (bk, bts) = split_ts(b, U64_TS_SIZE);
        let o = if self.reverse { bk.cmp(ak) } else { ak.cmp(bk) };
        o.then_with(|| decode_u64_ts(bts).cmp(&decode_u64_ts(ats)))
    }

    fn timestamp_size(&self) -> usize {
        U64_TS_SIZE
    }

    fn compare_timestamp(&self, a: &[u8], b: &[u8]) -> Ordering {
        decode_u64_ts(a).cmp(&decode_u64_ts(b))
    }

    fn compare_without_timestamp(&self, a: &[u8], a_has_ts: bool, b: &[u8], b_has_ts: bool) -> Ordering {
        let a = if a_has_ts { split_ts(a, U64_TS_SIZE).0 } else { a };
        let b = if b_has_ts { split_ts(b, U64_TS_SIZE).0 } else { b };
        if self.reverse {
            b.cmp(a)
        } else {
            a.cmp(b)
        }
    }
}

/// A comparator with timestamps seen over user keys that have none: the order of
/// `compare_without_timestamp`, the same name (what a table's properties record). The
/// tables of a family with `persist_user_defined_timestamps = false` are written and read
/// in it (RocksDB's block builder and block iterators strip and pad the timestamps with
/// the family's comparator; every timestamp in such a table is the minimum one, so the
/// order is the same). Index keys are not shortened, as with RocksDB's `.u64ts` comparators.
pub struct TsStrippedComparator {
    inner: ComparatorRef,
}

impl TsStrippedComparator {
    pub fn new(inner: ComparatorRef) -> Self {
        TsStrippedComparator { inner }
    }
}

impl Comparator for TsStrippedComparator {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        self.inner.compare_without_timestamp(a, false, b, false)
    }
}

/// Reverse byte order, RocksDB's `ReverseBytewiseComparator`.
#[derive(Debug, Default, Clone, Copy)]
pub struct ReverseBytewiseComparator;

impl Comparator for ReverseBytewiseComparator {
    fn name(&self) -> &str {
        REVERSE_BYTEWISE_NAME
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        b.cmp(a)
    }

    /// RocksDB 11.8.1's `ReverseBytewiseComparatorImpl::FindShortestSeparator`: cut `start`
    /// just after the first byte where it is greater than `limit` (so still before `limit`
    /// in reverse order), unless that is its last byte. Its `FindShortSuccessor` does nothing.
    fn find_shortest_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        let min_len = start.len().min(limit.len());
        let diff = start.iter().zip(limit).take_while(|(a, b)| a == b).count();
        if diff == min_len {
            return;
        }
        if start[diff] > limit[diff] && diff < start.len() - 1 {
            start.truncate(diff + 1);
        }
    }
}

/// The function type rust-rocksdb takes for a user comparator.
///
/// As in rust-rocksdb, no `Send + Sync` bound: code written for rust-rocksdb passes plain
/// `Box<dyn Fn(&[u8], &[u8]) -> Ordering>` values. See `FnComparator` for the contract.
pub type CompareFn = dyn Fn(&[u8], &[u8]) -> Ordering;

/// A comparator made of a name and a function, as `Options::set_comparator` builds it.
pub struct FnComparator {
    name: String,
    compare: Box<CompareFn>,
}

// SAFETY: not proven by the compiler. rust-rocksdb's `CompareFn` carries no `Send + Sync`
// bound and RocksDB calls the function from its background threads; Shale keeps that
// signature and that contract: the function must be callable from any thread at once
// (a pure function of its arguments, as a comparator is by definition). A closure that
// captures thread-bound state (`Rc`, `Cell`) breaks the contract, exactly as it would
// with rust-rocksdb. The box is only ever called through `&self` (never moved out or
// mutated), and dropped with the comparator.
unsafe impl Send for FnComparator {}
// SAFETY: see the `Send` impl above.
unsafe impl Sync for FnComparator {}

impl FnComparator {
    pub fn new(name: impl Into<String>, compare: Box<CompareFn>) -> Self {
        FnComparator { name: name.into(), compare }
    }
}

impl Comparator for FnComparator {
    fn name(&self) -> &str {
        &self.name
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        (self.compare)(a, b)
    }
}

/// Compares two timestamps, as rust-rocksdb's `CompareTsFn`.
pub type CompareTsFn = dyn Fn(&[u8], &[u8]) -> Ordering;

/// Compares two keys ignoring timestamps, as rust-rocksdb's `CompareWithoutTsFn`.
pub type CompareWithoutTsFn = dyn Fn(&[u8], bool, &[u8], bool) -> Ordering;

/// A comparator with user-defined timestamps made of rust-rocksdb's three functions, as
/// `Options::set_comparator_with_ts` builds it (RocksDB's `rocksdb_comparator_with_ts_create`).
pub struct FnTsComparator {
    name: String,
    ts_size: usize,
    compare: Box<CompareFn>,
    compare_ts: Box<CompareTsFn>,
    compare_without_ts: Box<CompareWithoutTsFn>,
}

// SAFETY: as for `FnComparator` above: the functions must be callable from any thread at
// once (rust-rocksdb's contract, RocksDB calls them from background threads); they are only
// called through `&self` and dropped with the comparator.
unsafe impl Send for FnTsComparator {}
// SAFETY: see the `Send` impl above.
unsafe impl Sync for FnTsComparator {}

impl FnTsComparator {
    pub fn new(
        name: impl Into<String>,
        ts_size: usize,
        compare: Box<CompareFn>,
        compare_ts: Box<CompareTsFn>,
        compare_without_ts: Box<CompareWithoutTsFn>,
    ) -> Self {
        FnTsComparator { name: name.into(), ts_size, compare, compare_ts, compare_without_ts }
    }
}

impl Comparator for FnTsComparator {
    fn name(&self) -> &str {
        &self.name
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        (self.compare)(a, b)
    }

    fn timestamp_size(&self) -> usize {
        self.ts_size
    }

    fn compare_timestamp(&self, a: &[u8], b: &[u8]) -> Ordering {
        (self.compare_ts)(a, b)
    }

    fn compare_without_timestamp(&self, a: &[u8], a_has_ts: bool, b: &[u8], b_has_ts: bool) -> Ordering {
        // The user's function slices the timestamp off itself: never hand it a key too short.
        let ts = self.ts_size;
        if (a_has_ts && a.len() < ts) || (b_has_ts && b.len() < ts) {
            let a = if a_has_ts { split_ts(a, ts).0 } else { a };
            let b = if b_has_ts { split_ts(b, ts).0 } else { b };
            return a.cmp(b);
        }
        (self.compare_without_ts)(a, a_has_ts, b, b_has_ts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytewise_separator_stays_between() {
        let c = BytewiseComparator;
        let cases: &[(&[u8], &[u8])] = &[
            (b"abcdefgh", b"abzzz"),
            (b"abc", b"abcd"),
            (b"a\xff\xffq", b"b"),
            (b"foo", b"foo"),
            (b"helloworld", b"hellp"),
        ];
        for (start, limit) in cases {
            let mut s = start.to_vec();
            c.find_shortest_separator(&mut s, limit);
            assert!(s.as_slice() >= *start, "{s:?} below {start:?}");
            assert!(start == limit || s.as_slice() < *limit, "{s:?} not below {limit:?}");
            assert!(s.len() <= start.len());
        }
        let mut s = b"abcdefgh".to_vec();
        c.find_shortest_separator(&mut s, b"abzzz");
        assert_eq!(s, b"abd");
    }

    #[test]
    fn separators_are_rocksdb_11s() {
        let sep = |c: &dyn Comparator, start: &[u8], limit: &[u8]| {
            let mut s = start.to_vec();
            c.find_shortest_separator(&mut s, limit);
            s
        };
        let b = &BytewiseComparator;
        // db_bench's fillseq keys: the differing byte goes up by one and `limit` is longer.
        let k = |n: u64| [&n.to_be_bytes()[..], b"00000000"].concat();
        assert_eq!(sep(b, &k(3), &k(4)), 4u64.to_be_bytes());
        // `limit` ends at the differing byte, one above: a later byte of `start` grows.
        assert_eq!(sep(b, b"aa1aaa", b"aa2"), b"aa1b");
        assert_eq!(sep(b, b"aa1\xff\xffq", b"aa2"), b"aa1\xff\xffr");
        assert_eq!(sep(b, b"aa1", b"aa2"), b"aa1");
        // `limit` below `start` (misuse) or a prefix: unchanged.
        assert_eq!(sep(b, b"aa3", b"aa1"), b"aa3");
        assert_eq!(sep(b, b"aa", b"aab"), b"aa");
        let r = &ReverseBytewiseComparator;
        assert_eq!(sep(r, b"aa3aa", b"aa1bb"), b"aa3");
        assert_eq!(sep(r, b"aa3", b"aa1bb"), b"aa3");
        assert_eq!(sep(r, b"aa1aa", b"aa3bb"), b"aa1aa");
        assert_eq!(sep(r, b"aa", b"aab"), b"aa");
        let mut k = b"abc".to_vec();
        r.find_short_successor(&mut k);
        assert_eq!(k, b"abc", "RocksDB's reverse comparator keeps successors as they are");
    }

    #[test]
    fn bytewise_successor() {
        let c = BytewiseComparator;
        let mut k = b"\xff\xffabc".to_vec();
        c.find_short_successor(&mut k);
        assert_eq!(k, b"\xff\xffb");
        let mut k = b"\xff\xff".to_vec();
        c.find_short_successor(&mut k);
        assert_eq!(k, b"\xff\xff");
    }

    #[test]
    fn u64ts_orders_key_then_newest_first() {
        let c = U64TsComparator::bytewise();
        let k = |key: &[u8], ts: u64| [key, &encode_u64_ts(ts)[..]].concat();
        assert_eq!(c.name(), "leveldb.BytewiseComparator.u64ts");
        assert_eq!(c.compare(&k(b"a", 1), &k(b"b", 9)), Ordering::Less);
        assert_eq!(c.compare(&k(b"a", 9), &k(b"a", 1)), Ordering::Less, "newer first");
        // 256 > 1 although its first little-endian byte is smaller.
        assert_eq!(c.compare(&k(b"a", 256), &k(b"a", 1)), Ordering::Less);
        assert_eq!(c.compare_timestamp(&encode_u64_ts(256), &encode_u64_ts(1)), Ordering::Greater);
        assert_eq!(c.compare_without_timestamp(&k(b"a", 3), true, b"a", false), Ordering::Equal);
        let r = U64TsComparator::reverse_bytewise();
        assert_eq!(r.compare(&k(b"a", 1), &k(b"b", 9)), Ordering::Greater);
        assert_eq!(r.compare(&k(b"a", 9), &k(b"a", 1)), Ordering::Less);
        assert_eq!(
            U64TsComparator::by_name("rocksdb.ReverseBytewiseComparator.u64ts").map(|c| c.name().len()),
            Some(39)
        );
    }

    #[test]
    fn reverse_orders_backwards() {
        let c = ReverseBytewiseComparator;
        assert_eq!(c.compare(b"a", b"b"), Ordering::Greater);
        assert_eq!(c.name(), "rocksdb.ReverseBytewiseComparator");
    }
}
