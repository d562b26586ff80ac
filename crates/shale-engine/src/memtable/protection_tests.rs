//! `memtable_protection_bytes_per_key` and `paranoid_memory_checks` (helper cfopt, issue 33).

use std::cmp::Ordering as CmpOrdering;
use std::sync::atomic::{AtomicBool, Ordering as MemOrder};
use std::sync::Arc;

use super::*;
use crate::config::MemTableConfig;
use crate::error::ErrorKind;
use crate::key::{bytewise_internal_comparator, lookup_key};

fn protected(n: u8) -> MemTable {
    let cfg = MemTableConfig { protection_bytes_per_key: n, ..MemTableConfig::default() };
    MemTable::new(bytewise_internal_comparator(), 1).with_bloom_of(&cfg)
}

/// Rewrites the stored bytes of `key`'s newest entry (value and checksum bytes) with
/// `stored`, as a stray write would, without touching its checksum.
fn overwrite_stored(m: &MemTable, key: &[u8], stored: &[u8]) {
    let lookup = lookup_key(key, MAX_SEQUENCE_NUMBER);
    // SAFETY: this test is the only thread using `m`.
    let wrote = unsafe { m.points.overwrite_value(&lookup, stored, |_| Some(())) };
    assert!(wrote, "the entry's bytes were rewritten");
}

#[test]
fn protected_entries_read_back_without_their_checksum_bytes() {
    for n in [1u8, 2, 4, 8] {
        let m = Arc::new(protected(n));
        m.add(1, ValueType::Value, b"a", b"va");
        m.add(2, ValueType::Merge, b"b", b"m1");
        m.add(3, ValueType::Merge, b"b", b"m2");
        m.add(4, ValueType::Deletion, b"c", b"");
        m.add(5, ValueType::Value, b"d", &[7u8; 300]);
        assert_eq!(m.get(b"a", 10), Some((1, ValueType::Value, b"va".to_vec())), "n={n}");
        assert_eq!(m.get(b"c", 10), Some((4, ValueType::Deletion, Vec::new())));
        assert_eq!(m.get(b"d", 10).map(|e| e.2), Some(vec![7u8; 300]));
        let mut seen = Vec::new();
        m.for_each_version(b"b", 10, |s, _, v| {
            seen.push((s, v.to_vec()));
            true
        });
        assert_eq!(seen, vec![(3, b"m2".to_vec()), (2, b"m1".to_vec())]);
        assert_eq!(m.count_successive_merges(b"b", 10, 5), 2);
        let mut it = m.iter();
        it.seek_to_first();
        let mut values = Vec::new();
        while it.valid() {
            values.push(it.value().to_vec());
            it.next();
        }
        it.status().unwrap();
        assert_eq!(values, vec![b"va".to_vec(), b"m2".to_vec(), b"m1".to_vec(), Vec::new(), vec![7u8; 300]]);
        // The arena holds the checksum bytes too.
        let (_, stored) = m.points.seek_entry(&lookup_key(b"a", 10)).unwrap();
        assert_eq!(stored.len(), 2 + usize::from(n));
    }
}

#[test]
fn a_corrupted_entry_answers_corruption_to_every_reader() {
    for n in [1u8, 2, 4, 8] {
        let m = Arc::new(protected(n));
        m.add(1, ValueType::Value, b"a", b"va");
        m.add(2, ValueType::Value, b"b", b"vb");
        m.add(3, ValueType::Value, b"c", b"vc");
        let (_, stored) = m.points.seek_entry(&lookup_key(b"b", 10)).unwrap();
        let mut bad = stored.to_vec();
        bad[0] ^= 0x40; // "vb" becomes "6b": the value changed, the checksum did not
        overwrite_stored(&m, b"b", &bad);
        let e = m.try_get(b"b", 10).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption, "n={n}");
        assert!(e.to_string().contains("per key-value checksum verification failed"), "{e}");
        assert_eq!(m.try_get(b"a", 10).unwrap().map(|e| e.2), Some(b"va".to_vec()), "others read");
        assert!(m.try_for_each_version(b"b", 10, |_, _, _| panic!("a corrupted value handed out")).is_err());
        // An iterator (and so a flush) stops at the entry with the Corruption.
        let mut it = m.iter();
        it.seek_to_first();
        assert!(it.valid());
        it.next();
        assert!(!it.valid());
        assert_eq!(it.status().unwrap_err().kind(), ErrorKind::Corruption);
        it.seek(&lookup_key(b"c", 10));
        assert!(it.valid() && it.status().is_ok(), "a new seek clears the error");
        it.seek(&lookup_key(b"b", 10));
        assert_eq!(it.status().unwrap_err().kind(), ErrorKind::Corruption);
    }
    // Without protection the same stray write goes unnoticed (what the option is for).
    let m = protected(0);
    m.add(1, ValueType::Value, b"b", b"vb");
    overwrite_stored(&m, b"b", b"6b");
    assert_eq!(m.get(b"b", 10).map(|e| e.2), Some(b"6b".to_vec()));
}

#[test]
fn in_place_updates_keep_the_checksum_right() {
    let cfg = MemTableConfig {
        protection_bytes_per_key: 4,
        inplace_update_support: true,
        inplace_update_num_locks: 4,
        ..MemTableConfig::default()
    };
    let m = MemTable::new(bytewise_internal_comparator(), 1).with_bloom_of(&cfg);
    m.put(1, ValueType::Value, b"k", b"long value");
    m.put(2, ValueType::Value, b"k", b"short");
    assert_eq!(m.num_entries(), 1, "updated in place");
    assert_eq!(m.get(b"k", 10), Some((1, ValueType::Value, b"short".to_vec())));
}

/// A user comparator whose order can be turned around after entries went in: the list is
/// then out of order for it, as a corrupted list would be.
struct Flippable(AtomicBool);

impl crate::comparator::Comparator for Flippable {
    fn name(&self) -> &str {
        "test.Flippable"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> CmpOrdering {
        if self.0.load(MemOrder::Relaxed) {
            b.cmp(a)
        } else {
            a.cmp(b)
        }
    }
}

fn flippable(paranoid: bool) -> (Arc<MemTable>, Arc<Flippable>) {
    let cmp = Arc::new(Flippable(AtomicBool::new(false)));
    let icmp = InternalKeyComparator::new(cmp.clone());
    let cfg = MemTableConfig { paranoid_memory_checks: paranoid, ..MemTableConfig::default() };
    let m = Arc::new(MemTable::new(icmp, 1).with_bloom_of(&cfg));
    for (i, k) in [b"a", b"b", b"c", b"d", b"e"].iter().enumerate() {
        m.add(i as u64 + 1, ValueType::Value, &k[..], b"v");
    }
    (m, cmp)
}

#[test]
fn paranoid_checks_find_keys_out_of_order() {
    let (m, cmp) = flippable(true);
    // In order: every read works.
    let mut it = m.iter();
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(n, 5);
    assert!(m.try_get(b"c", 10).unwrap().is_some());
    cmp.0.store(true, MemOrder::Relaxed);
    // Stepping forward now goes backward in the comparator's order.
    let mut it = m.iter();
    it.seek_to_first();
    assert!(it.valid());
    it.next();
    assert!(!it.valid());
    let e = it.status().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    assert!(e.to_string().contains("Out-of-order keys found in skiplist"), "{e}");
    // Stepping backward searches from the top for the last key before the current one (as
    // RocksDB's `FindLessThan`): in the flipped order no key is before "e", so the step
    // ends the iteration (RocksDB's reports the disorder only where its search compares two
    // linked nodes) and never lands on a key out of order with an ok status.
    let mut it = m.iter();
    it.seek_to_last();
    assert!(it.valid());
    it.prev();
    assert!(!it.valid());
    assert!(it.status().is_ok() || it.status().unwrap_err().kind() == ErrorKind::Corruption);
    // Without the checks the same list reads on, out of order.
    let (m, cmp) = flippable(false);
    cmp.0.store(true, MemOrder::Relaxed);
    let mut it = m.iter();
    it.seek_to_first();
    it.next();
    assert!(it.valid() && it.status().is_ok());
}

/// `memtable_verify_per_key_checksum_on_seek` (helper cfblob, issue 33): a search checks the
/// entries it passes on its way, so a stray write to an entry no read lands on is found by
/// a lookup of the key after it; without the option (or without protection bytes) only the
/// entry landed on is checked, as RocksDB's.
#[test]
fn verify_on_seek_checks_the_entries_a_search_passes() {
    let make = |verify: bool, n: u8| {
        let cfg = MemTableConfig {
            protection_bytes_per_key: n,
            verify_checksum_on_seek: verify,
            ..MemTableConfig::default()
        };
        let m = Arc::new(MemTable::new(bytewise_internal_comparator(), 1).with_bloom_of(&cfg));
        // Every node one level high: each search for "c" walks a, b, c at level 0, so it
        // compares against "b" whatever heights earlier tests drew on this thread.
        crate::memtable::skiplist::force_height_for_tests(1);
        m.add(1, ValueType::Value, b"a", b"va");
        m.add(2, ValueType::Value, b"b", b"vb");
        m.add(3, ValueType::Value, b"c", b"vc");
        crate::memtable::skiplist::force_height_for_tests(0);
        if n > 0 {
            let (_, stored) = m.points.seek_entry(&lookup_key(b"b", 10)).unwrap();
            let mut bad = stored.to_vec();
            bad[0] ^= 0x40;
            overwrite_stored(&m, b"b", &bad);
        }
        m
    };
    // The search for "c" compares against "b" (its predecessor) at level 0.
    let m = make(true, 4);
    let e = m.try_get(b"c", 10).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    assert!(e.to_string().contains("per key-value checksum verification failed"), "{e}");
    assert!(m.try_for_each_version(b"c", 10, |_, _, _| true).is_err(), "a version walk's seek too");
    let mut it = m.iter();
    it.seek(&lookup_key(b"c", 10));
    assert!(!it.valid());
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::Corruption, "an iterator's seek too");
    it.seek_for_prev(&lookup_key(b"c", 0));
    assert!(!it.valid());
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::Corruption, "and its seek_for_prev");
    // Off: the landing entry alone is checked, and "c" is sound.
    let m = make(false, 4);
    assert_eq!(m.try_get(b"c", 10).unwrap().map(|e| e.2), Some(b"vc".to_vec()));
    let mut it = m.iter();
    it.seek(&lookup_key(b"c", 10));
    assert!(it.valid() && it.status().is_ok());
    // On without protection bytes: nothing to check (RocksDB's callback is not set).
    let m = make(true, 0);
    assert_eq!(m.try_get(b"c", 10).unwrap().map(|e| e.2), Some(b"vc".to_vec()));
}

/// `allow_data_in_errors` (helper dbmisc, issue 33): the memtable's Corruption messages keep
/// the key out unless it is set; set, they name it in RocksDB's words.
#[test]
fn corruption_messages_name_the_key_only_with_allow_data_in_errors() {
    for allow in [false, true] {
        let cfg = MemTableConfig {
            protection_bytes_per_key: 8,
            allow_data_in_errors: allow,
            ..MemTableConfig::default()
        };
        let m = MemTable::new(bytewise_internal_comparator(), 1).with_bloom_of(&cfg);
        m.add(7, ValueType::Value, b"secret", b"vb");
        overwrite_stored(&m, b"secret", &[b'x'; 10]);
        let e = m.try_get(b"secret", 10).unwrap_err().to_string();
        assert!(e.contains("Corrupted memtable entry, per key-value checksum verification failed."), "{e}");
        // "secret" in RocksDB's upper-case hex.
        let named = "Unrecognized value type: 1. User key: 736563726574. seq: 7.";
        assert_eq!(e.contains(named), allow, "allow={allow}: {e}");
        assert!(!e.contains("secret"), "{e}");

        let cmp = Arc::new(Flippable(AtomicBool::new(false)));
        let cfg = MemTableConfig {
            paranoid_memory_checks: true,
            allow_data_in_errors: allow,
            ..MemTableConfig::default()
        };
        let m = Arc::new(MemTable::new(InternalKeyComparator::new(cmp.clone()), 1).with_bloom_of(&cfg));
        m.add(1, ValueType::Value, b"a", b"v");
        m.add(2, ValueType::Value, b"b", b"v");
        cmp.0.store(true, MemOrder::Relaxed);
        let mut it = m.iter();
        it.seek_to_first();
        it.next();
        let e = it.status().unwrap_err().to_string();
        assert!(e.contains("Out-of-order keys found in skiplist."), "{e}");
        // The internal keys "a"@1 and "b"@2 (type 1), in upper-case hex.
        let named = " prev key: 610101000000000000 next key: 620102000000000000";
        assert_eq!(e.contains(named), allow, "allow={allow}: {e}");
    }
}

/// `data_size` is RocksDB's `get_data_size`: per entry added, the varint32 lengths, the
/// internal key, the value and the protection bytes (range deletions included).
#[test]
fn data_size_counts_the_encoded_entries_with_their_protection_bytes() {
    for n in [0u8, 1, 8] {
        let m = protected(n);
        m.add(1, ValueType::Value, b"key1", &[b'v'; 200]);
        m.add(2, ValueType::Deletion, b"key2", b"");
        m.add(3, ValueType::RangeDeletion, b"a", b"b");
        let p = u64::from(n);
        // 1 + 12 + 2 + 200; 1 + 12 + 1 + 0; 1 + 9 + 1 + 1.
        assert_eq!(m.data_size(), (215 + p) + (14 + p) + (12 + p), "{n} protection bytes");
    }
}
