//! In-place updates (`inplace_update_support`, RocksDB's `MemTable::Update`).

use std::sync::atomic::{AtomicBool, Ordering as MemOrder};
use std::sync::Arc;

use super::*;
use crate::config::MemTableConfig;
use crate::key::bytewise_internal_comparator;
use shale_format::statistics::{Statistics, Ticker};

fn inplace_mem(stats: Option<Arc<Statistics>>) -> MemTable {
    let cfg = MemTableConfig {
        inplace_update_support: true,
        inplace_update_num_locks: 7,
        statistics: stats,
        ..MemTableConfig::default()
    };
    MemTable::new(bytewise_internal_comparator(), 1).with_bloom_of(&cfg)
}

fn values(m: &Arc<MemTable>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = m.iter();
    it.seek_to_first();
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    out
}

#[test]
fn put_overwrites_in_place_when_value_fits() {
    let stats = Arc::new(Statistics::new());
    let m = Arc::new(inplace_mem(Some(stats.clone())));
    // Short values and long ones (a 2-byte varint length).
    for (key, first) in [(&b"short"[..], vec![b'a'; 10]), (&b"long"[..], vec![b'a'; 300])] {
        assert!(m.put(1, ValueType::Value, key, &first));
        let mem = m.approximate_memory_usage();
        let entries = m.num_entries();
        // Same size: in place; the entry keeps sequence 1.
        let same = vec![b'b'; first.len()];
        assert!(m.put(2, ValueType::Value, key, &same));
        assert_eq!(m.approximate_memory_usage(), mem, "same-size overwrite grows the memtable");
        assert_eq!(m.num_entries(), entries);
        assert_eq!(m.get(key, MAX_SEQUENCE_NUMBER), Some((1, ValueType::Value, same.clone())));
        // Shorter: in place.
        let shorter = vec![b'c'; first.len() - 3];
        assert!(m.put(3, ValueType::Value, key, &shorter));
        assert_eq!(m.approximate_memory_usage(), mem);
        assert_eq!(m.get(key, MAX_SEQUENCE_NUMBER), Some((1, ValueType::Value, shorter.clone())));
        // Longer than the stored value: appended with its own sequence.
        let longer = vec![b'd'; first.len() + 1];
        assert!(m.put(4, ValueType::Value, key, &longer));
        assert_eq!(m.num_entries(), entries + 1);
        assert_eq!(m.get(key, MAX_SEQUENCE_NUMBER), Some((4, ValueType::Value, longer)));
        // The older entry holds the in-place value (no snapshot keeps the first value).
        assert_eq!(m.get(key, 3), Some((1, ValueType::Value, shorter)));
    }
    assert_eq!(stats.ticker_count(Ticker::NumberKeysUpdated), 4);
    let all = values(&m);
    assert_eq!(all.len(), 4);
}

#[test]
fn any_shorter_value_is_written_in_place() {
    // Values are inline in their node (as RocksDB's): a value no longer than the one in
    // place is written over it, whatever the lengths (RocksDB's `MemTable::Update`:
    // `new_size <= prev_size`), the varint shrinking with it; a longer one is appended.
    let m = Arc::new(inplace_mem(None));
    m.put(1, ValueType::Value, b"k", &[b'x'; 200]);
    let mem = m.approximate_memory_usage();
    assert!(m.put(2, ValueType::Value, b"k", &[b'y'; 9]));
    assert!(m.put(3, ValueType::Value, b"k", &[b'z'; 9]));
    assert!(m.put(4, ValueType::Value, b"k", b"12345"));
    assert_eq!(m.approximate_memory_usage(), mem);
    assert_eq!(m.num_entries(), 1);
    assert_eq!(m.get(b"k", MAX_SEQUENCE_NUMBER), Some((1, ValueType::Value, b"12345".to_vec())));
    // 5 -> 6 bytes: longer, appended as a new entry.
    assert!(m.put(5, ValueType::Value, b"k", b"123456"));
    assert_eq!(m.num_entries(), 2);
    assert_eq!(m.get(b"k", MAX_SEQUENCE_NUMBER), Some((5, ValueType::Value, b"123456".to_vec())));
    assert_eq!(m.get(b"k", 4), Some((1, ValueType::Value, b"12345".to_vec())));
    let mut it = m.iter();
    it.seek_to_first();
    assert_eq!(it.value(), b"123456");
    assert!(!it.value_pinned(), "in-place memtables do not pin values");
}

#[test]
fn only_same_type_puts_update_in_place() {
    let m = Arc::new(inplace_mem(None));
    m.add(1, ValueType::Merge, b"k", b"operand");
    // The newest entry is a merge: the Put appends.
    m.put(2, ValueType::Value, b"k", b"v");
    assert_eq!(m.num_entries(), 2);
    m.add(3, ValueType::Deletion, b"k", b"");
    m.put(4, ValueType::Value, b"k", b"");
    assert_eq!(m.num_entries(), 4);
    // A merge never updates in place, even over a Put.
    m.put(5, ValueType::Merge, b"k", b"");
    assert_eq!(m.num_entries(), 5);
    // A wide-column entity over a Put appends; over an entity updates.
    m.put(6, ValueType::WideColumnEntity, b"e", b"entity");
    m.put(7, ValueType::WideColumnEntity, b"e", b"ENTITY");
    assert_eq!(m.num_entries(), 6);
    assert_eq!(m.get(b"e", MAX_SEQUENCE_NUMBER), Some((6, ValueType::WideColumnEntity, b"ENTITY".to_vec())));
}

#[test]
fn without_support_put_is_add() {
    let m = MemTable::new(bytewise_internal_comparator(), 1);
    m.put(1, ValueType::Value, b"k", b"aaaa");
    m.put(2, ValueType::Value, b"k", b"bbbb");
    assert_eq!(m.num_entries(), 2);
    assert_eq!(m.get(b"k", 1), Some((1, ValueType::Value, b"aaaa".to_vec())));
}

/// Readers (`get`, iterators, `for_each_version`) running while one writer overwrites the
/// same keys in place see a whole value each time: every value written is one byte
/// repeated, of a length tied to that byte.
#[test]
fn concurrent_readers_never_see_torn_values() {
    let m = Arc::new(inplace_mem(None));
    let keys: Vec<Vec<u8>> = (0..8).map(|i| format!("key{i}").into_bytes()).collect();
    let value = |round: usize| {
        let b = b'a' + (round % 26) as u8;
        // Out-of-line lengths above 16, shrinking over rounds (always in place).
        vec![b; 400 - (round % 26) * 3]
    };
    for k in &keys {
        m.put(1, ValueType::Value, k, &value(0));
    }
    let check = |v: &[u8]| {
        assert!(!v.is_empty());
        let b = v[0];
        assert!(v.iter().all(|&x| x == b), "torn value");
        assert_eq!(v.len(), 400 - usize::from(b - b'a') * 3, "length and bytes disagree");
    };
    let done = Arc::new(AtomicBool::new(false));
    let mut readers = Vec::new();
    for r in 0..2 {
        let (m, keys, done) = (m.clone(), keys.clone(), done.clone());
        readers.push(std::thread::spawn(move || {
            let mut reads = 0u64;
            while !done.load(MemOrder::Acquire) || reads < 100 {
                if r == 0 {
                    for k in &keys {
                        let (_, _, v) = m.get(k, MAX_SEQUENCE_NUMBER).unwrap();
                        check(&v);
                        m.for_each_version(k, MAX_SEQUENCE_NUMBER, |_, _, v| {
                            check(v);
                            true
                        });
                    }
                } else {
                    let mut it = m.iter();
                    it.seek_to_last();
                    while it.valid() {
                        check(it.value());
                        it.prev();
                    }
                }
                reads += 1;
            }
            reads
        }));
    }
    // Within a cycle of 26 rounds values shrink (in place); each cycle's first value is
    // longer than the last one and is appended.
    for round in 1..26 * 40 {
        let v = value(round % 26);
        if round % 26 == 0 {
            continue;
        }
        for k in &keys {
            m.put(round as u64 + 1, ValueType::Value, k, &v);
        }
    }
    done.store(true, MemOrder::Release);
    for r in readers {
        assert!(r.join().unwrap() >= 100);
    }
}
