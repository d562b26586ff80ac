//! User-defined timestamps left out of a table (RocksDB's `persist_user_defined_timestamps
//! = false`): the iterator adapters between keys with a timestamp and keys without one.
//!
//! ```text
//! memtable key:   user key | ts (ts_sz bytes) | seq/type (8)
//!    flush (Replace):   user key | 00..00     | seq/type     (RocksDB's logical strip)
//!    table builder:     user key              | seq/type     (stored without it)
//!    table read (Pad):  user key | 00..00     | seq/type     (RocksDB's min-timestamp pad)
//! ```
//! The minimum timestamp is `ts_sz` zero bytes, as RocksDB's (`kMinU64Ts` for the `.u64ts`
//! comparators, the only ones the option is allowed with).

use crate::iter::InternalIterator;
use crate::key::{pad_ikey_ts, strip_ikey_ts, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK};

/// What [`MinTsIter`] does to each key of the iterator below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinTsMode {
    /// The keys below hold no timestamp: the minimum one is appended (a table's keys).
    Pad,
    /// The keys below hold one: it is replaced by the minimum one (a flush's memtable
    /// keys, RocksDB's `TimestampStrippingIterator`). Used walking forward from the first
    /// entry; a seek goes to the iterator below with the target as given.
    Replace,
}

/// A seek target (with a timestamp) as a key without one, for the keys of a table that all
/// hold the minimum timestamp: the target's own key and trailer when its timestamp is the
/// minimum, else (every stored version of its key sorts after it) the first entry of its
/// key (`forward`) or the last entry before it (`!forward`).
pub fn target_without_ts(target: &[u8], ts: usize, forward: bool) -> Vec<u8> {
    if target.len() < 8 + ts {
        return target.to_vec();
    }
    let uk_end = target.len() - 8;
    let ts_bytes = &target[uk_end - ts..uk_end];
    if ts_bytes.iter().all(|&b| b == 0) {
        return strip_ikey_ts(target, ts);
    }
    let mut v = target[..uk_end - ts].to_vec();
    let trailer = if forward { (MAX_SEQUENCE_NUMBER << 8) | VALUE_TYPE_FOR_SEEK as u64 } else { u64::MAX };
    v.extend_from_slice(&trailer.to_le_bytes());
    v
}

/// A user key (a range tombstone's end) with the minimum timestamp appended.
pub fn user_key_with_min_ts(user_key: &[u8], ts: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(user_key.len() + ts);
    v.extend_from_slice(user_key);
    v.resize(user_key.len() + ts, 0);
    v
}

/// An iterator whose keys carry the minimum timestamp (see [`MinTsMode`]).
pub struct MinTsIter {
    inner: Box<dyn InternalIterator>,
    ts: usize,
    mode: MinTsMode,
    key: Vec<u8>,
    /// The newest timestamp passed in `Replace` mode (u64 little-endian, as the `.u64ts`
    /// comparators), None before any: a flush's cutoff (RocksDB's `GetNewestUDT`).
    newest: Option<u64>,
}

impl MinTsIter {
    pub fn new(inner: Box<dyn InternalIterator>, ts: usize, mode: MinTsMode) -> MinTsIter {
        MinTsIter { inner, ts, mode, key: Vec::new(), newest: None }
    }

    /// The newest timestamp the keys below held (`Replace` mode).
    pub fn newest_ts(&self) -> Option<u64> {
        self.newest
    }

    fn fix(&mut self) {
        if !self.inner.valid() {
            return;
        }
        let k = self.inner.key();
        match self.mode {
            MinTsMode::Pad => self.key = pad_ikey_ts(k, self.ts, 0),
            MinTsMode::Replace => {
                if k.len() >= 8 + self.ts {
                    let uk_end = k.len() - 8;
                    let t = crate::comparator::decode_u64_ts(&k[uk_end - self.ts..uk_end]);
                    self.newest = Some(self.newest.map_or(t, |n| n.max(t)));
                }
                self.key = pad_ikey_ts(&strip_ikey_ts(k, self.ts), self.ts, 0);
            }
        }
    }

    fn target(&self, target: &[u8], forward: bool) -> Vec<u8> {
        match self.mode {
            MinTsMode::Pad => target_without_ts(target, self.ts, forward),
            MinTsMode::Replace => target.to_vec(),
        }
    }
}

impl InternalIterator for MinTsIter {
    crate::forward_iter_values!(inner);
    crate::forward_iter_moves!(inner, fix, fix);
    fn seek(&mut self, target: &[u8]) {
        let t = self.target(target, true);
        self.inner.seek(&t);
        self.fix();
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        let t = self.target(target, false);
        self.inner.seek_for_prev(&t);
        self.fix();
    }
    fn key(&self) -> &[u8] {
        &self.key
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{make_internal_key, ValueType};

    #[test]
    fn targets_map_to_keys_without_timestamps() {
        let min = make_internal_key(b"k\0\0\0\0\0\0\0\0", 7, ValueType::Value);
        assert_eq!(target_without_ts(&min, 8, true), make_internal_key(b"k", 7, ValueType::Value));
        let newer = make_internal_key(b"k\x05\0\0\0\0\0\0\0", 7, ValueType::Value);
        let t = target_without_ts(&newer, 8, true);
        assert_eq!(t, make_internal_key(b"k", MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK));
        let t = target_without_ts(&newer, 8, false);
        assert_eq!(&t[..1], b"k");
        assert_eq!(crate::key::trailer(&t), u64::MAX);
    }
}
