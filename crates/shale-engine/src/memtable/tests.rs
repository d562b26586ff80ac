use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as MemOrder};
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::comparator::ReverseBytewiseComparator;
use crate::key::{bytewise_internal_comparator, make_internal_key, parse_internal_key};

fn reverse_icmp() -> InternalKeyComparator {
    InternalKeyComparator::new(Arc::new(ReverseBytewiseComparator))
}

#[test]
fn get_sees_newest_entry_visible_at_snapshot() {
    for icmp in [bytewise_internal_comparator(), reverse_icmp()] {
        let long_key = vec![b'L'; 500]; // longer than get's stack buffer
        let m = MemTable::new(icmp, 3);
        for key in [&b"k"[..], &long_key[..]] {
            assert!(m.add(1, ValueType::Value, key, b"v1"));
            assert!(m.add(5, ValueType::Value, key, b"v5"));
            assert!(m.add(7, ValueType::Deletion, key, b""));
            assert!(m.add(9, ValueType::Merge, key, b"m9"));
            assert!(m.add(12, ValueType::SingleDeletion, key, b""));
        }
        m.add(3, ValueType::Value, b"j", b"j3");
        m.add(4, ValueType::Value, b"ka", b"ka4");
        for key in [&b"k"[..], &long_key[..]] {
            let got = |s| m.get(key, s);
            assert_eq!(got(0), None);
            assert_eq!(got(1), Some((1, ValueType::Value, b"v1".to_vec())));
            assert_eq!(got(4), Some((1, ValueType::Value, b"v1".to_vec())));
            assert_eq!(got(5), Some((5, ValueType::Value, b"v5".to_vec())));
            assert_eq!(got(6), Some((5, ValueType::Value, b"v5".to_vec())));
            assert_eq!(got(7), Some((7, ValueType::Deletion, vec![])));
            assert_eq!(got(10), Some((9, ValueType::Merge, b"m9".to_vec())));
            assert_eq!(got(MAX_SEQUENCE_NUMBER), Some((12, ValueType::SingleDeletion, vec![])));
            assert_eq!(got(u64::MAX), Some((12, ValueType::SingleDeletion, vec![])));
        }
        assert_eq!(m.get(b"j", 2), None);
        assert_eq!(m.get(b"j", 3), Some((3, ValueType::Value, b"j3".to_vec())));
        assert_eq!(m.get(b"ka", 100), Some((4, ValueType::Value, b"ka4".to_vec())));
        assert_eq!(m.get(b"", 100), None);
        assert_eq!(m.get(b"kb", 100), None);
        assert_eq!(m.get(b"a", 100), None);
        assert_eq!(m.get(b"zzz", 100), None);
        assert!(!m.add(5, ValueType::Value, b"k", b"again"), "same key, seq and type is refused");
        assert_eq!(m.get(b"k", 5), Some((5, ValueType::Value, b"v5".to_vec())));
    }
}

#[test]
fn range_tombstone_coverage_matches_brute_force() {
    for (icmp, reverse) in [(bytewise_internal_comparator(), false), (reverse_icmp(), true)] {
        let m = MemTable::new(icmp.clone(), 1);
        assert_eq!(m.max_covering_tombstone_seq(b"x", 100), 0);
        let mut rng = SmallRng::seed_from_u64(7);
        let key = |rng: &mut SmallRng| vec![b'a' + rng.gen_range(0..12u8)];
        let mut model = Vec::new();
        for seq in 1..60 {
            let (mut s, mut e) = (key(&mut rng), key(&mut rng));
            if (s > e) != reverse {
                std::mem::swap(&mut s, &mut e);
            }
            assert!(m.add(seq, ValueType::RangeDeletion, &s, &e));
            model.push((s, e, seq));
        }
        assert!(m.get(b"a", 100).is_none(), "tombstones are not point entries");
        for probe in 0..14u8 {
            let uk = [b'a' + probe - 1];
            for snap in [0, 1, 10, 30, 59, 100] {
                let want = model
                    .iter()
                    .filter(|(s, e, seq)| {
                        *seq <= snap && icmp.compare_user(s, &uk).is_le() && icmp.compare_user(&uk, e).is_lt()
                    })
                    .map(|t| t.2)
                    .max()
                    .unwrap_or(0);
                assert_eq!(m.max_covering_tombstone_seq(&uk, snap), want, "key {uk:?} snap {snap}");
            }
        }
        let ts = m.range_tombstones();
        assert_eq!(ts.len(), 59);
        for w in ts.windows(2) {
            assert_eq!(icmp.compare(&w[0].0, &w[1].0), Ordering::Less);
        }
        for (start, end) in &ts {
            let p = parse_internal_key(start).unwrap();
            assert_eq!(p.value_type, ValueType::RangeDeletion);
            let (s, e, _) = model.iter().find(|t| t.2 == p.sequence).unwrap();
            assert_eq!((p.user_key, &end[..]), (&s[..], &e[..]));
        }
    }
}

#[test]
fn counters_seqnos_and_point_iteration() {
    let m = Arc::new(MemTable::new(bytewise_internal_comparator(), 42));
    assert_eq!(m.id(), 42);
    assert!(m.is_empty());
    assert_eq!(m.first_seqno(), MAX_SEQUENCE_NUMBER);
    assert_eq!(m.earliest_seqno(), MAX_SEQUENCE_NUMBER);
    m.add(10, ValueType::RangeDeletion, b"a", b"c");
    assert!(!m.is_empty(), "a tombstone alone makes the memtable non-empty");
    assert_eq!(m.first_seqno(), 10);
    assert_eq!(m.earliest_seqno(), 10);
    m.add(11, ValueType::Value, b"b", b"vb");
    m.add(12, ValueType::Deletion, b"a", b"");
    m.add(13, ValueType::SingleDeletion, b"c", b"");
    m.add(14, ValueType::Merge, b"b", b"mb");
    assert_eq!((m.num_entries(), m.num_deletes(), m.num_range_deletes()), (5, 1, 1));
    assert_eq!(m.first_seqno(), 10);
    m.set_earliest_seqno(8);
    assert_eq!(m.earliest_seqno(), 8);

    let mut it = m.iter();
    drop(Arc::clone(&m)); // the iterator holds its own reference
    it.seek_to_first();
    let mut got = Vec::new();
    while it.valid() {
        got.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    let want = vec![
        (make_internal_key(b"a", 12, ValueType::Deletion), vec![]),
        (make_internal_key(b"b", 14, ValueType::Merge), b"mb".to_vec()),
        (make_internal_key(b"b", 11, ValueType::Value), b"vb".to_vec()),
        (make_internal_key(b"c", 13, ValueType::SingleDeletion), vec![]),
    ];
    assert_eq!(got, want, "point entries only, in internal-key order");
    it.seek_for_prev(&make_internal_key(b"b", 12, ValueType::Value));
    assert_eq!(it.key(), &want[1].0[..]);
    it.seek(&make_internal_key(b"b", 12, ValueType::Value));
    assert_eq!(it.key(), &want[2].0[..]);
    assert!(it.status().is_ok());
}

#[test]
fn memory_usage_grows_with_inserts() {
    let m = MemTable::new(bytewise_internal_comparator(), 1);
    let empty = m.approximate_memory_usage();
    // As RocksDB's (its head node is in the arena): an empty memtable is not 0 bytes.
    assert!(empty > 0, "an empty memtable reports its head node");
    let mut last = empty;
    for i in 0..20_000u64 {
        m.add(i + 1, ValueType::Value, format!("key{i:08}").as_bytes(), &[b'v'; 100]);
        let now = m.approximate_memory_usage();
        assert!(now >= last);
        last = now;
    }
    // Each entry holds at least its 11-byte key, 8-byte trailer, 100-byte value, 1 pointer.
    assert!(last - empty >= 20_000 * (11 + 8 + 100 + 8), "usage {last}");
    assert!(last - empty < 20_000 * 300, "usage {last} is far above the data size");
    let before = m.approximate_memory_usage();
    m.add(1_000_000, ValueType::RangeDeletion, b"a", b"b");
    assert!(m.approximate_memory_usage() > before, "tombstones count too");
}

fn mix(i: u64) -> u64 {
    let mut x = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

fn conc_key(i: u64) -> Vec<u8> {
    format!("{:016x}", mix(i)).into_bytes()
}

fn conc_value(i: u64) -> Vec<u8> {
    format!("value-{i}-{:x}", mix(i)).into_bytes()
}

/// Checks that an entry seen by a reader is exactly one the writer inserted.
fn check_entry(ikey: &[u8], value: &[u8]) {
    let p = parse_internal_key(ikey).expect("torn internal key");
    assert_eq!(p.value_type, ValueType::Value);
    let i = p.sequence - 1;
    assert_eq!(p.user_key, &conc_key(i)[..], "key does not match its sequence");
    assert_eq!(value, &conc_value(i)[..], "value does not match its key");
}

#[test]
fn concurrent_readers_see_consistent_sorted_entries() {
    const N: u64 = 200_000;
    let icmp = bytewise_internal_comparator();
    let m = Arc::new(MemTable::new(icmp.clone(), 9));
    let published = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let mut readers = Vec::new();
        for r in 0..2u64 {
            let (m, icmp, published, done) = (&m, &icmp, &published, &done);
            readers.push(s.spawn(move || {
                let mut rng = SmallRng::seed_from_u64(r);
                let mut it = m.iter();
                let mut rounds = 0u64;
                while !done.load(MemOrder::Acquire) {
                    rounds += 1;
                    // Every entry published before now must be found by get.
                    let n = published.load(MemOrder::Acquire);
                    if n > 0 {
                        let i = rng.gen_range(0..n);
                        assert_eq!(
                            m.get(&conc_key(i), MAX_SEQUENCE_NUMBER),
                            Some((i + 1, ValueType::Value, conc_value(i)))
                        );
                    }
                    // Forward walk from a random seek (or the start).
                    let target =
                        make_internal_key(&conc_key(rng.gen()), MAX_SEQUENCE_NUMBER, ValueType::Value);
                    if rounds.is_multiple_of(8) {
                        it.seek_to_first();
                    } else {
                        it.seek(&target);
                        if it.valid() {
                            assert_ne!(icmp.compare(it.key(), &target), Ordering::Less);
                        }
                    }
                    let mut prev: Option<Vec<u8>> = None;
                    for _ in 0..64 {
                        if !it.valid() {
                            break;
                        }
                        check_entry(it.key(), it.value());
                        if let Some(p) = &prev {
                            assert_eq!(icmp.compare(p, it.key()), Ordering::Less, "forward order");
                        }
                        prev = Some(it.key().to_vec());
                        it.next();
                    }
                    // Backward walk from a seek_for_prev (or the end).
                    if rounds % 8 == 1 {
                        it.seek_to_last();
                    } else {
                        it.seek_for_prev(&target);
                        if it.valid() {
                            assert_ne!(icmp.compare(it.key(), &target), Ordering::Greater);
                        }
                    }
                    let mut prev: Option<Vec<u8>> = None;
                    for _ in 0..16 {
                        if !it.valid() {
                            break;
                        }
                        check_entry(it.key(), it.value());
                        if let Some(p) = &prev {
                            assert_eq!(icmp.compare(it.key(), p), Ordering::Less, "backward order");
                        }
                        prev = Some(it.key().to_vec());
                        it.prev();
                    }
                }
                rounds
            }));
        }
        for i in 0..N {
            assert!(m.add(i + 1, ValueType::Value, &conc_key(i), &conc_value(i)));
            published.store(i + 1, MemOrder::Release);
        }
        done.store(true, MemOrder::Release);
        for r in readers {
            assert!(r.join().unwrap() > 0, "reader did no work");
        }
    });
    let mut it = m.iter();
    it.seek_to_first();
    let mut count = 0;
    let mut prev: Option<Vec<u8>> = None;
    while it.valid() {
        check_entry(it.key(), it.value());
        if let Some(p) = &prev {
            assert_eq!(icmp.compare(p, it.key()), Ordering::Less);
        }
        prev = Some(it.key().to_vec());
        count += 1;
        it.next();
    }
    assert_eq!(count, N);
    assert_eq!(m.num_entries(), N);
}

#[test]
fn add_from_several_threads_is_serialized() {
    let m = MemTable::new(bytewise_internal_comparator(), 1);
    std::thread::scope(|s| {
        for t in 0..3u64 {
            let m = &m;
            s.spawn(move || {
                for i in 0..5000u64 {
                    let seq = t * 5000 + i + 1;
                    assert!(m.add(seq, ValueType::Value, &conc_key(seq - 1), &conc_value(seq - 1)));
                }
            });
        }
    });
    assert_eq!(m.num_entries(), 15_000);
    assert_eq!(m.first_seqno(), 1);
    for i in 0..15_000u64 {
        assert_eq!(m.get(&conc_key(i), MAX_SEQUENCE_NUMBER), Some((i + 1, ValueType::Value, conc_value(i))));
    }
}

/// The read path's range conversion (`add_redundant_range_tombstone`): added while the
/// memtable is active, no ingestion holds the family's lock and the sequence is not below
/// an ingestion's; refused otherwise.
#[test]
fn redundant_range_tombstones_respect_immutability_and_ingestion() {
    let m = MemTable::new(bytewise_internal_comparator(), 1);
    let lock = parking_lot::RwLock::new(());
    m.add(5, ValueType::Deletion, b"b", b"");
    assert!(m.add_redundant_range_tombstone(7, b"a", b"c", &lock));
    assert_eq!((m.num_entries(), m.num_range_deletes()), (2, 1));
    assert_eq!(m.max_covering_tombstone_seq(b"b", 7), 7);
    assert_eq!(m.max_covering_tombstone_seq(b"b", 6), 0, "invisible below its sequence");
    // An ingestion under way holds the lock shared.
    {
        let _ingest = lock.read();
        assert!(!m.add_redundant_range_tombstone(8, b"d", b"e", &lock));
    }
    // An ingestion assigned sequence 20: conversions read below it are refused.
    m.bump_ingest_barrier(20);
    m.bump_ingest_barrier(10);
    assert!(!m.add_redundant_range_tombstone(19, b"d", b"e", &lock));
    assert!(m.add_redundant_range_tombstone(20, b"d", b"e", &lock));
    m.mark_immutable();
    assert!(!m.add_redundant_range_tombstone(30, b"f", b"g", &lock));
    assert_eq!(m.num_range_deletes(), 2);
}
