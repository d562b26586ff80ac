//! The vector memtable (`MemtableFactory::Vector`): the same results as the skip list, and
//! really a vector (arrival order kept until a read sorts; memory as RocksDB's).

use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::comparator::ReverseBytewiseComparator;
use crate::config::MemTableConfig;
use crate::key::{bytewise_internal_comparator, make_internal_key};

fn vector_mem(icmp: InternalKeyComparator, reserve: usize) -> Arc<MemTable> {
    let cfg = MemTableConfig { vector_rep: Some(reserve), ..MemTableConfig::default() };
    Arc::new(MemTable::new(icmp, 1).with_bloom_of(&cfg))
}

fn reverse_icmp() -> InternalKeyComparator {
    InternalKeyComparator::new(Arc::new(ReverseBytewiseComparator))
}

fn forward(m: &Arc<MemTable>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = m.iter();
    it.seek_to_first();
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    out
}

fn backward(m: &Arc<MemTable>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = m.iter();
    it.seek_to_last();
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    out.reverse();
    out
}

fn key_at(it: &dyn InternalIterator) -> Option<Vec<u8>> {
    it.valid().then(|| it.key().to_vec())
}

/// Every read of `v` answers as the same read of `s`.
fn same_reads(v: &Arc<MemTable>, s: &Arc<MemTable>, rng: &mut SmallRng, keys: &[Vec<u8>], max_seq: u64) {
    assert_eq!(forward(v), forward(s));
    assert_eq!(backward(v), backward(s));
    assert_eq!(v.num_entries(), s.num_entries());
    assert_eq!(v.num_deletes(), s.num_deletes());
    assert_eq!(v.is_empty(), s.is_empty());
    let (mut vi, mut si) = (v.iter(), s.iter());
    for _ in 0..60 {
        let uk = &keys[rng.gen_range(0..keys.len())];
        let snap = rng.gen_range(0..=max_seq + 1);
        assert_eq!(v.get(uk, snap), s.get(uk, snap), "get {uk:?} at {snap}");
        let mut vv = Vec::new();
        let mut sv = Vec::new();
        v.for_each_version(uk, snap, |q, t, x| {
            vv.push((q, t, x.to_vec()));
            true
        });
        s.for_each_version(uk, snap, |q, t, x| {
            sv.push((q, t, x.to_vec()));
            true
        });
        assert_eq!(vv, sv);
        let target = make_internal_key(uk, snap.min(MAX_SEQUENCE_NUMBER), ValueType::Value);
        vi.seek(&target);
        si.seek(&target);
        assert_eq!(key_at(vi.as_ref()), key_at(si.as_ref()), "seek");
        // A few steps either way from there.
        for _ in 0..3 {
            if !vi.valid() {
                break;
            }
            vi.next();
            si.next();
            assert_eq!(key_at(vi.as_ref()), key_at(si.as_ref()), "next");
        }
        vi.seek_for_prev(&target);
        si.seek_for_prev(&target);
        assert_eq!(key_at(vi.as_ref()), key_at(si.as_ref()), "seek_for_prev");
        for _ in 0..3 {
            if !vi.valid() {
                break;
            }
            vi.prev();
            si.prev();
            assert_eq!(key_at(vi.as_ref()), key_at(si.as_ref()), "prev");
        }
    }
}

#[test]
fn vector_reads_as_the_skip_list_while_mutable_and_once_immutable() {
    const TYPES: [ValueType; 4] =
        [ValueType::Value, ValueType::Deletion, ValueType::Merge, ValueType::SingleDeletion];
    for (round, icmp) in [bytewise_internal_comparator(), reverse_icmp()].into_iter().enumerate() {
        let mut rng = SmallRng::seed_from_u64(0x5eed + round as u64);
        let keys: Vec<Vec<u8>> = (0..40).map(|i| format!("key{:03}", i * 7 % 40).into_bytes()).collect();
        let v = vector_mem(icmp.clone(), 0);
        let s = Arc::new(MemTable::new(icmp, 2));
        let mut seq = 0;
        for step in 0..600 {
            seq += 1;
            let uk = &keys[rng.gen_range(0..keys.len())];
            let t = TYPES[rng.gen_range(0..TYPES.len())];
            // Long and short values (the skip list keeps long ones out of line).
            let value = vec![b'a' + (step % 26) as u8; rng.gen_range(0..40)];
            assert!(v.add(seq, t, uk, &value));
            assert!(s.add(seq, t, uk, &value));
            if step % 150 == 149 {
                same_reads(&v, &s, &mut rng, &keys, seq);
            }
        }
        v.add(seq + 1, ValueType::RangeDeletion, b"key010", b"key020");
        s.add(seq + 1, ValueType::RangeDeletion, b"key010", b"key020");
        assert_eq!(v.range_tombstones(), s.range_tombstones());
        let covering = v.max_covering_tombstone_seq(b"key015", seq + 1);
        assert_eq!(covering, s.max_covering_tombstone_seq(b"key015", seq + 1));
        // (Under the reverse comparator the range is empty.)
        assert_eq!(covering, if round == 0 { seq + 1 } else { 0 });
        v.mark_immutable();
        s.mark_immutable();
        same_reads(&v, &s, &mut rng, &keys, seq + 1);
    }
}

#[test]
fn vector_keeps_arrival_order_until_an_immutable_read_sorts_it_in_place() {
    let m = vector_mem(bytewise_internal_comparator(), 16);
    let rep = Arc::clone(m.vector_rep().expect("a vector memtable"));
    for (seq, k) in [&b"m"[..], b"c", b"x", b"a"].iter().enumerate() {
        m.add(seq as u64 + 1, ValueType::Value, k, b"v");
    }
    let arrival: Vec<Vec<u8>> = [(&b"m"[..], 1), (b"c", 2), (b"x", 3), (b"a", 4)]
        .iter()
        .map(|(k, s)| make_internal_key(k, *s, ValueType::Value))
        .collect();
    // The skip list is empty: the entries are the vector's.
    assert!(m.points.is_empty());
    assert_eq!(rep.keys_in_vector_order(), arrival);
    // Reads of a mutable memtable sort a copy: the vector keeps its order.
    assert_eq!(m.get(b"c", 10).map(|(s, _, _)| s), Some(2));
    let sorted: Vec<Vec<u8>> = forward(&m).into_iter().map(|(k, _)| k).collect();
    let mut expected = arrival.clone();
    expected.sort();
    assert_eq!(sorted, expected);
    assert_eq!(rep.keys_in_vector_order(), arrival);
    assert!(!rep.is_sorted_in_place());
    // Immutable: turning so sorts nothing; the first read sorts the vector itself, once.
    m.mark_immutable();
    assert_eq!(rep.keys_in_vector_order(), arrival);
    let mut it = m.iter();
    it.seek_to_first();
    assert!(rep.is_sorted_in_place());
    assert_eq!(rep.keys_in_vector_order(), expected);
    assert_eq!(key_at(it.as_ref()), Some(expected[0].clone()));
}

#[test]
fn vector_memory_usage_is_the_arena_and_a_pointer_per_entry() {
    let m = vector_mem(bytewise_internal_comparator(), 0);
    let empty = m.approximate_memory_usage();
    for i in 0..1000u64 {
        m.add(i + 1, ValueType::Value, format!("k{i:05}").as_bytes(), &[7u8; 20]);
    }
    let rep = m.vector_rep().expect("a vector memtable");
    assert_eq!(rep.len(), 1000);
    assert_eq!(rep.memory_usage(), 1000 * 8);
    // Each entry: varint 14 | 6-byte key + 8 | varint 20 | 20 bytes = 36 bytes, no tower.
    let arena = m.points.arena_memory_usage();
    assert!(arena >= 36 * 1000, "arena {arena}");
    assert_eq!(m.approximate_memory_usage(), arena + 8000 + m.tombstones.memory_usage());
    assert!(m.approximate_memory_usage() > empty);
    // The same entries in a skip list take their towers and back links too.
    let s = MemTable::new(bytewise_internal_comparator(), 2);
    for i in 0..1000u64 {
        s.add(i + 1, ValueType::Value, format!("k{i:05}").as_bytes(), &[7u8; 20]);
    }
    assert!(s.points.arena_memory_usage() > arena);
}

#[test]
fn vector_takes_concurrent_inserts() {
    let m = vector_mem(bytewise_internal_comparator(), 0);
    let threads = 4u64;
    let per = 500u64;
    std::thread::scope(|sc| {
        for t in 0..threads {
            let m = &m;
            sc.spawn(move || {
                for i in 0..per {
                    let seq = t * per + i + 1;
                    m.add_concurrently(seq, ValueType::Value, format!("k{seq:06}").as_bytes(), b"v");
                }
            });
        }
    });
    let got = forward(&m);
    assert_eq!(got.len() as u64, threads * per);
    for (i, (k, _)) in got.iter().enumerate() {
        let seq = i as u64 + 1;
        assert_eq!(k, &make_internal_key(format!("k{seq:06}").as_bytes(), seq, ValueType::Value));
    }
}

#[test]
fn vector_iterator_sees_entries_appended_before_its_next_seek() {
    let m = vector_mem(bytewise_internal_comparator(), 0);
    m.add(1, ValueType::Value, b"b", b"1");
    let mut it = m.iter();
    it.seek_to_first();
    assert_eq!(key_at(it.as_ref()), Some(make_internal_key(b"b", 1, ValueType::Value)));
    m.add(2, ValueType::Value, b"a", b"2");
    it.seek_to_first();
    assert_eq!(key_at(it.as_ref()), Some(make_internal_key(b"a", 2, ValueType::Value)));
}

#[test]
fn vector_updates_in_place() {
    let cfg = MemTableConfig {
        vector_rep: Some(0),
        inplace_update_support: true,
        inplace_update_num_locks: 3,
        ..MemTableConfig::default()
    };
    let m = Arc::new(MemTable::new(bytewise_internal_comparator(), 1).with_bloom_of(&cfg));
    assert!(m.put(1, ValueType::Value, b"k", b"long value"));
    assert!(m.put(2, ValueType::Value, b"k", b"short"));
    // Overwritten in place: one entry, the first sequence, the new value.
    assert_eq!(m.num_entries(), 1);
    assert_eq!(m.get(b"k", 10), Some((1, ValueType::Value, b"short".to_vec())));
    // Longer than the slot: a new entry.
    assert!(m.put(3, ValueType::Value, b"k", b"a longer value now"));
    assert_eq!(m.num_entries(), 2);
    assert_eq!(m.get(b"k", 10), Some((3, ValueType::Value, b"a longer value now".to_vec())));
    assert_eq!(forward(&m).len(), 2);
}
