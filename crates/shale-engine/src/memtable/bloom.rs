//! The memtable's Bloom filter of prefixes (and whole keys), RocksDB's `DynamicBloom` as
//! `memtable_prefix_bloom_size_ratio` and `memtable_whole_key_filtering` configure it.
//!
//! ```text
//! bits  : write_buffer_size * ratio * 8, rounded up to whole 512-bit cache lines
//! words : [AtomicU64; lines * 8]     line = fast_range32(lo32(h), lines)
//! probes: 6 bits in one line: bit = h2 >> 23 (0..511), then h2 *= 0x9e3779b9
//! h     : xxh3-64 of the prefix (or key), RocksDB's hash64; h2 = hi32(h)
//! ```
//! In memory only (never written), so the layout is Shale's own; the probe scheme is
//! FastLocalBloom's (`table/filter.rs`). Adds set bits with atomic `fetch_or` while readers
//! test them with plain loads: a reader may miss a key added concurrently (and not yet
//! visible in the skiplist either), never one whose insertion it can see.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::slice_transform::SliceTransformRef;
use crate::table::filter::hash64;

/// RocksDB's memtable Bloom probe count (hard coded to 6 there too).
const NUM_PROBES: u32 = 6;
const WORDS_PER_LINE: usize = 8;
const PROBE_MULT: u32 = 0x9e37_79b9;

/// A concurrent Bloom filter of fixed size.
pub struct DynamicBloom {
    words: Box<[AtomicU64]>,
    lines: u32,
}

impl DynamicBloom {
    /// A filter of at least `total_bits` bits (whole 512-bit lines, at least one).
    pub fn new(total_bits: u64) -> DynamicBloom {
        let lines = total_bits.div_ceil(512).clamp(1, u32::MAX as u64 / 2) as u32;
        let words = (0..lines as usize * WORDS_PER_LINE).map(|_| AtomicU64::new(0)).collect();
        DynamicBloom { words, lines }
    }

    fn probes(&self, key: &[u8]) -> (usize, u32) {
        let h = hash64(key);
        let line = (((h as u32 as u64) * self.lines as u64) >> 32) as usize;
        (line * WORDS_PER_LINE, (h >> 32) as u32)
    }

    pub fn add(&self, key: &[u8]) {
        let (base, mut h2) = self.probes(key);
        for _ in 0..NUM_PROBES {
            let bit = (h2 >> 23) as usize;
            self.words[base + bit / 64].fetch_or(1u64 << (bit % 64), Ordering::Relaxed);
            h2 = h2.wrapping_mul(PROBE_MULT);
        }
    }

    /// False only if `key` was certainly not added.
    pub fn may_contain(&self, key: &[u8]) -> bool {
        let (base, mut h2) = self.probes(key);
        for _ in 0..NUM_PROBES {
            let bit = (h2 >> 23) as usize;
            if self.words[base + bit / 64].load(Ordering::Relaxed) & (1u64 << (bit % 64)) == 0 {
                return false;
            }
            h2 = h2.wrapping_mul(PROBE_MULT);
        }
        true
    }

    /// Bytes of memory the filter holds.
    pub fn size(&self) -> usize {
        self.words.len() * 8
    }
}

/// A memtable's Bloom with what it holds: prefixes of `extractor` (when there is one) and
/// whole keys (with `whole_key_filtering`). With user-defined timestamps it holds user keys
/// without their timestamp (RocksDB's `StripTimestampFromUserKey` before `Add`/`MayContain`),
/// so every version of a key, and a lookup at any read timestamp, meet the same bits.
pub struct MemTableBloom {
    pub bloom: DynamicBloom,
    pub extractor: Option<SliceTransformRef>,
    pub whole_key_filtering: bool,
    /// Bytes of user-defined timestamp at the end of each user key (0 without).
    pub ts_sz: usize,
}

impl MemTableBloom {
    /// RocksDB's rule: a Bloom exists when there is a prefix extractor or whole-key
    /// filtering, and `write_buffer_size * ratio * 8` bits is not zero.
    pub fn for_options(
        write_buffer_size: usize,
        ratio: f64,
        extractor: Option<SliceTransformRef>,
        whole_key_filtering: bool,
    ) -> Option<MemTableBloom> {
        let bits = ((write_buffer_size as f64 * ratio.clamp(0.0, 0.25)) as u64).saturating_mul(8);
        if bits == 0 || (extractor.is_none() && !whole_key_filtering) {
            return None;
        }
        Some(MemTableBloom { bloom: DynamicBloom::new(bits), extractor, whole_key_filtering, ts_sz: 0 })
    }

    /// This filter for a family whose user keys end in `ts_sz` bytes of timestamp.
    pub fn with_timestamp_size(mut self, ts_sz: usize) -> MemTableBloom {
        self.ts_sz = ts_sz;
        self
    }

    /// `user_key` without its timestamp (a key shorter than a timestamp is kept whole).
    fn strip<'a>(&self, user_key: &'a [u8]) -> &'a [u8] {
        match user_key.len().checked_sub(self.ts_sz) {
            Some(n) => &user_key[..n],
            None => user_key,
        }
    }

    /// Records a user key written to the memtable (RocksDB's `MemTable::Add`).
    pub fn add(&self, user_key: &[u8]) {
        let user_key = self.strip(user_key);
        if let Some(p) = self.extractor.as_deref().and_then(|t| t.transform(user_key)) {
            self.bloom.add(p);
        }
        if self.whole_key_filtering {
            self.bloom.add(user_key);
        }
    }

    /// For `get` (RocksDB's `MemTable::Get`): the whole key when whole keys are held, else
    /// the key's prefix; None when neither applies (not checked).
    pub fn get_may_contain(&self, user_key: &[u8]) -> Option<bool> {
        let user_key = self.strip(user_key);
        let found = if self.whole_key_filtering {
            self.bloom.may_contain(user_key)
        } else {
            self.bloom.may_contain(self.extractor.as_deref()?.transform(user_key)?)
        };
        count_check(found);
        Some(found)
    }

    /// For a prefix seek to `user_key`: false when its prefix is certainly absent.
    pub fn seek_may_match(&self, user_key: &[u8]) -> bool {
        let user_key = self.strip(user_key);
        match self.extractor.as_deref().and_then(|t| t.transform(user_key)) {
            Some(p) => {
                let found = self.bloom.may_contain(p);
                count_check(found);
                found
            }
            None => true,
        }
    }
}

/// The perf context's `bloom_memtable_hit_count` / `bloom_memtable_miss_count`, counted
/// where RocksDB's `MemTable::Get` and `MemTableIterator::Seek` count them: once per check.
fn count_check(found: bool) {
    use crate::perf::{count, Field};
    count(if found { Field::BloomMemtableHitCount } else { Field::BloomMemtableMissCount }, 1);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slice_transform::SliceTransform;
    use std::sync::Arc;

    #[test]
    fn no_false_negatives_and_few_false_positives() {
        let b = DynamicBloom::new(10_000 * 10);
        for i in 0..10_000u32 {
            b.add(format!("key{i}").as_bytes());
        }
        for i in 0..10_000u32 {
            assert!(b.may_contain(format!("key{i}").as_bytes()));
        }
        let fp = (0..10_000u32).filter(|i| b.may_contain(format!("other{i}").as_bytes())).count();
        assert!(fp < 300, "{fp} false positives of 10000 at 10 bits per key");
    }

    #[test]
    fn memtable_bloom_follows_rocksdb_rules() {
        let fixed = Some(Arc::new(SliceTransform::create_fixed_prefix(3)));
        assert!(MemTableBloom::for_options(1 << 20, 0.0, fixed.clone(), false).is_none());
        assert!(MemTableBloom::for_options(1 << 20, 0.1, None, false).is_none());
        assert!(MemTableBloom::for_options(1 << 20, 0.1, None, true).is_some());

        let m = MemTableBloom::for_options(1 << 20, 0.1, fixed.clone(), false).unwrap();
        m.add(b"abc1");
        assert_eq!(m.get_may_contain(b"abc9"), Some(true), "same prefix");
        assert_eq!(m.get_may_contain(b"xyz1"), Some(false));
        assert_eq!(m.get_may_contain(b"ab"), None, "out of the domain: not checked");
        assert!(m.seek_may_match(b"abc"));
        assert!(!m.seek_may_match(b"xyz"));

        let w = MemTableBloom::for_options(1 << 20, 0.1, fixed, true).unwrap();
        w.add(b"abc1");
        assert_eq!(w.get_may_contain(b"abc1"), Some(true));
        assert_eq!(w.get_may_contain(b"abc9"), Some(false), "whole keys are checked for get");
        assert!(w.seek_may_match(b"abc5"));
    }

    #[test]
    fn memtable_prefix_seek_skips_a_memtable_without_the_prefix() {
        use crate::key::{bytewise_internal_comparator, make_internal_key, ValueType};
        use crate::memtable::MemTable;
        let o = crate::config::MemTableConfig {
            write_buffer_size: 64 << 20,
            prefix_extractor: Some(Arc::new(SliceTransform::create_fixed_prefix(3))),
            prefix_bloom_ratio: 0.1,
            ..Default::default()
        };
        let mem = Arc::new(MemTable::new(bytewise_internal_comparator(), 1).with_bloom_of(&o));
        assert!(mem.has_bloom());
        for (i, k) in [&b"aaa1"[..], b"aaa2", b"ccc1"].iter().enumerate() {
            mem.add(i as u64 + 1, ValueType::Value, k, b"v");
        }
        let target = make_internal_key(b"bbb", 100, ValueType::Value);
        // Total order: the seek lands on the next prefix's key.
        let mut it = mem.iter();
        it.seek(&target);
        assert!(it.valid());
        assert_eq!(crate::key::user_key(it.key()), b"ccc1");
        // Prefix seek: the Bloom excludes "bbb", so nothing.
        let mut it = mem.iter_prefix_filtered();
        it.seek(&target);
        assert!(!it.valid());
        it.seek(&make_internal_key(b"aaa", 100, ValueType::Value));
        assert!(it.valid());
        assert_eq!(crate::key::user_key(it.key()), b"aaa1");
        // get of a key whose prefix is absent: answered by the Bloom.
        assert!(mem.get(b"bbb1", 100).is_none());
        assert!(mem.get(b"aaa2", 100).is_some());
    }

    #[test]
    fn hash_memtable_prefix_iterators_stay_in_their_bucket() {
        use crate::key::{bytewise_internal_comparator, make_internal_key, user_key, ValueType};
        use crate::memtable::MemTable;
        let o = crate::config::MemTableConfig {
            write_buffer_size: 64 << 20,
            prefix_extractor: Some(Arc::new(SliceTransform::create_fixed_prefix(3))),
            hash_rep: true,
            ..Default::default()
        };
        let mem = Arc::new(MemTable::new(bytewise_internal_comparator(), 1).with_bloom_of(&o));
        for (i, k) in [&b"aaa1"[..], b"aaa2", b"bbb1", b"bbb2"].iter().enumerate() {
            mem.add(i as u64 + 1, ValueType::Value, k, b"v");
        }
        let mut it = mem.iter_prefix_filtered();
        it.seek_to_first();
        assert!(!it.valid(), "no total order in a hash memtable's prefix iterator");
        it.seek_to_last();
        assert!(!it.valid());
        it.seek(&make_internal_key(b"aaa", 100, ValueType::Value));
        let mut got = Vec::new();
        while it.valid() {
            got.push(user_key(it.key()).to_vec());
            it.next();
        }
        assert_eq!(got, vec![b"aaa1".to_vec(), b"aaa2".to_vec()]);
        it.seek_for_prev(&make_internal_key(b"bbb9", 0, ValueType::Value));
        let mut got = Vec::new();
        while it.valid() {
            got.push(user_key(it.key()).to_vec());
            it.prev();
        }
        assert_eq!(got, vec![b"bbb2".to_vec(), b"bbb1".to_vec()]);
        // The total-order iterator sees everything.
        let mut it = mem.iter();
        it.seek_to_first();
        let mut n = 0;
        while it.valid() {
            n += 1;
            it.next();
        }
        assert_eq!(n, 4);
    }
}
