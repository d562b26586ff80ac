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

    fn find_shortest_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        let min_len = start.len().min(limit.len());
        let diff = start.iter().zip(limit).take_while(|(a, b)| a == b).count();
        if diff >= min_len {
            return; // one is a prefix of the other
        }
        let byte = start[diff];
        if byte < 0xff && byte + 1 < limit[diff] {
            start[diff] += 1;
            start.truncate(diff + 1);
            return;
        }
        // RocksDB also tries a later byte of `start` that can be incremented.
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

/// Compares two timestamps, as rust-rocksdb's `CompareTsFn` (timestamps are issue 15's).
pub type CompareTsFn = dyn Fn(&[u8], &[u8]) -> Ordering;

/// Compares two keys ignoring timestamps, as rust-rocksdb's `CompareWithoutTsFn`.
pub type CompareWithoutTsFn = dyn Fn(&[u8], bool, &[u8], bool) -> Ordering;

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
    fn reverse_orders_backwards() {
        let c = ReverseBytewiseComparator;
        assert_eq!(c.compare(b"a", b"b"), Ordering::Greater);
        assert_eq!(c.name(), "rocksdb.ReverseBytewiseComparator");
    }
}
