use super::*;
use crate::iter::InternalIterator;
use crate::key::{bytewise_internal_comparator, make_internal_key, user_key, ValueType};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::cmp::Ordering;

fn ikey(i: usize) -> Vec<u8> {
    make_internal_key(format!("key{:05}", i * 3).as_bytes(), 100 + i as u64, ValueType::Value)
}

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

fn build(n: usize, interval: usize) -> (Arc<Block>, Entries) {
    let (data, entries, est) = build_bytes(n, interval);
    assert_eq!(data.len(), est);
    (Arc::new(Block::new(data).unwrap()), entries)
}

/// A block of `n` entries (`ikey(i)`, values of 0 to 3 repeats) with restarts every
/// `interval`: its bytes, its entries, and the builder's size estimate before `finish`.
fn build_bytes(n: usize, interval: usize) -> (Vec<u8>, Entries, usize) {
    let mut b = BlockBuilder::new(interval);
    let mut entries = Vec::new();
    for i in 0..n {
        let v = format!("value-{i}").repeat(i % 4).into_bytes();
        b.add(&ikey(i), &v);
        entries.push((ikey(i), v));
    }
    let est = b.current_size_estimate();
    (b.finish().to_vec(), entries, est)
}

#[test]
fn forward_backward_and_seeks_over_every_key() {
    let icmp = bytewise_internal_comparator();
    for (n, interval) in [(1, 16), (16, 16), (17, 16), (200, 16), (100, 1), (50, 7)] {
        let (block, entries) = build(n, interval);
        assert_eq!(block.num_restarts(), n.div_ceil(interval));
        let mut it = block.iter(&icmp);
        it.seek_to_first();
        for (k, v) in &entries {
            assert!(it.valid());
            assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
            it.next();
        }
        assert!(!it.valid());
        it.seek_to_last();
        for (k, _) in entries.iter().rev() {
            assert_eq!(it.key(), &k[..]);
            it.prev();
        }
        assert!(!it.valid());
        for (i, (k, _)) in entries.iter().enumerate() {
            it.seek(k);
            assert_eq!(it.key(), &k[..]);
            it.seek_for_prev(k);
            assert_eq!(it.key(), &k[..]);
            // A user key between i and i+1.
            let between = make_internal_key(format!("key{:05}", i * 3 + 1).as_bytes(), 5, ValueType::Value);
            it.seek(&between);
            if i + 1 < n {
                assert_eq!(it.key(), &entries[i + 1].0[..]);
            } else {
                assert!(!it.valid());
            }
            it.seek_for_prev(&between);
            assert_eq!(it.key(), &k[..]);
            if i > 0 {
                it.prev();
                assert_eq!(it.key(), &entries[i - 1].0[..]);
                it.next();
                it.next();
                if i + 1 < n {
                    assert_eq!(it.key(), &entries[i + 1].0[..]);
                }
            }
        }
        it.seek(&make_internal_key(b"a", 1, ValueType::Value));
        assert_eq!(it.key(), &entries[0].0[..]);
        it.seek_for_prev(&make_internal_key(b"a", 1, ValueType::Value));
        assert!(!it.valid());
        it.status().unwrap();
    }
}

/// `steps` random moves of `it` (next, prev, seek, seek to first and last; with `all_seeks`
/// also seek_for_prev and seek_for_get), each checked against the entry list it was built from.
fn random_walk(
    it: &mut BlockIter,
    entries: &[(Vec<u8>, Vec<u8>)],
    rng: &mut SmallRng,
    steps: usize,
    all_seeks: bool,
) {
    let n = entries.len();
    let mut pos: Option<usize> = None;
    for _ in 0..steps {
        match rng.gen_range(0..12) {
            0 => {
                it.seek_to_last();
                pos = Some(n - 1);
            }
            1 => {
                let i = rng.gen_range(0..n);
                it.seek(&entries[i].0);
                pos = Some(i);
            }
            2 if all_seeks => {
                let i = rng.gen_range(0..n);
                it.seek_for_prev(&entries[i].0);
                pos = Some(i);
            }
            3 if all_seeks => {
                let i = rng.gen_range(0..n);
                assert!(it.seek_for_get(&entries[i].0));
                pos = Some(i);
            }
            2..=6 if pos.is_some() => {
                it.prev();
                pos = pos.and_then(|p| p.checked_sub(1));
            }
            _ if pos.is_some() => {
                it.next();
                pos = pos.map(|p| p + 1).filter(|&p| p < n);
            }
            _ => {
                it.seek_to_first();
                pos = Some(0);
            }
        }
        it.status().unwrap();
        match pos {
            Some(p) => assert_eq!((it.key(), it.value()), (&entries[p].0[..], &entries[p].1[..])),
            None => assert!(!it.valid()),
        }
    }
}

/// Random walks of next/prev/seeks against the entry list: the prev cache must give the
/// same entry (key and value) as a scan from the restart point.
#[test]
fn random_walk_mixes_prev_next_and_seeks() {
    let icmp = bytewise_internal_comparator();
    let mut rng = SmallRng::seed_from_u64(11);
    for (n, interval) in [(200, 16), (37, 5), (10, 1), (64, 64)] {
        let (block, entries) = build(n, interval);
        let mut it = block.iter(&icmp);
        random_walk(&mut it, &entries, &mut rng, 5000, false);
        it.status().unwrap();
    }
}

#[test]
fn empty_block_and_reset() {
    let mut b = BlockBuilder::new(16);
    assert!(b.is_empty());
    let data = b.finish().to_vec();
    assert_eq!(data.len(), 8);
    let block = Arc::new(Block::new(data).unwrap());
    let mut it = block.iter(&bytewise_internal_comparator());
    it.seek_to_first();
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());
    b.reset();
    b.add(b"k\0\0\0\0\0\0\0\x01", b"v");
    assert_eq!(Block::new(b.finish().to_vec()).unwrap().num_restarts(), 1);
}

#[test]
fn index_block_delta_values_and_user_keys() {
    let icmp = bytewise_internal_comparator();
    for (delta, user) in [(true, true), (true, false), (false, false), (false, true)] {
        for interval in [1, 4] {
            let mut b = BlockBuilder::new_index(interval, delta);
            let mut prev = None;
            let mut handles = Vec::new();
            let mut offset = 0;
            for i in 0..40usize {
                let h = BlockHandle::new(offset, 4000 + (i as u64 * 37) % 300);
                offset += h.size + BLOCK_TRAILER_SIZE as u64;
                let k = ikey(i);
                let stored = if user { user_key(&k).to_vec() } else { k.clone() };
                b.add_index(&stored, h, prev);
                prev = Some(h);
                handles.push((k, h));
            }
            let block = Arc::new(Block::new(b.finish().to_vec()).unwrap());
            let fmt = IndexFormat { key_is_user_key: user, value_delta_encoded: delta, ..Default::default() };
            let mut it = block.index_iter(&icmp, fmt);
            it.seek_to_first();
            for (_, h) in &handles {
                assert_eq!(it.handle(), *h);
                it.next();
            }
            assert!(!it.valid());
            it.seek_to_last();
            for (_, h) in handles.iter().rev() {
                assert_eq!(it.handle(), *h);
                it.prev();
            }
            // Backward from the middle, with a step forward in between.
            it.seek(&handles[30].0);
            it.prev();
            it.prev();
            assert_eq!(it.handle(), handles[28].1);
            it.next();
            assert_eq!(it.handle(), handles[29].1);
            it.prev();
            it.prev();
            assert_eq!(it.handle(), handles[27].1);
            for (k, h) in &handles {
                it.seek(k);
                assert_eq!(it.handle(), *h, "delta {delta} user {user}");
            }
            it.status().unwrap();
        }
    }
}

#[test]
fn corrupt_blocks_error_instead_of_panicking() {
    let icmp = bytewise_internal_comparator();
    let (block, _) = build(100, 16);
    let good = block.data().to_vec();
    let mut rng = SmallRng::seed_from_u64(7);
    let mut saw_error = false;
    for round in 0..3000 {
        let mut data = good.clone();
        if round % 3 == 0 {
            data.truncate(rng.gen_range(0..good.len()));
        } else {
            for _ in 0..rng.gen_range(1..4) {
                let i = rng.gen_range(0..data.len());
                data[i] ^= 1 << rng.gen_range(0..8);
            }
        }
        let Ok(b) = Block::new(data) else {
            saw_error = true;
            continue;
        };
        let b = Arc::new(b);
        let mut it = b.iter(&icmp);
        it.seek_to_first();
        let mut steps = 0;
        while it.valid() && steps < 1000 {
            it.next();
            steps += 1;
        }
        saw_error |= it.status().is_err();
        it.seek_to_last();
        while it.valid() && steps < 2000 {
            it.prev();
            steps += 1;
        }
        it.seek(&ikey(50));
        it.seek_for_prev(&ikey(50));
        let mut idx = b.index_iter(&icmp, IndexFormat { value_delta_encoded: true, ..Default::default() });
        idx.seek_to_first();
        idx.seek(&ikey(3));
        idx.seek_to_last();
        if idx.valid() {
            idx.prev();
        }
    }
    assert!(saw_error);
    assert_eq!(Block::new(vec![1, 2]).unwrap_err().kind(), crate::ErrorKind::Corruption);
    assert!(Block::new(vec![0, 0, 0, 0xff, 0xff, 0xff, 0x7f]).is_err());
}

/// Corrupted data blocks: a seek by the in-place bytewise scan ends where the generic
/// one does, with the same key and value, or with the same Corruption message.
#[test]
fn corrupt_blocks_seek_as_the_generic_order_does() {
    let fast = bytewise_internal_comparator();
    let slow = InternalKeyComparator::new(Arc::new(PlainOrder));
    let (block, _) = build(100, 16);
    let good = block.data().to_vec();
    let mut rng = SmallRng::seed_from_u64(11);
    let mut errors = 0;
    for round in 0..3000 {
        let mut data = good.clone();
        if round % 3 == 0 {
            data.truncate(rng.gen_range(0..good.len()));
        } else {
            for _ in 0..rng.gen_range(1..4) {
                let i = rng.gen_range(0..data.len());
                data[i] ^= 1 << rng.gen_range(0..8);
            }
        }
        let Ok(b) = Block::new(data) else { continue };
        let b = Arc::new(b);
        let (mut f, mut g) = (b.iter(&fast), b.iter(&slow));
        for t in [0, 1, 7, 8, 9, 50, 51, 98, 99, 100] {
            f.seek(&ikey(t));
            g.seek(&ikey(t));
            assert_eq!(f.valid(), g.valid(), "round {round}, target {t}");
            if f.valid() {
                assert_eq!((f.key(), f.value()), (g.key(), g.value()), "round {round}, target {t}");
            }
            let (fs, gs) = (f.status(), g.status());
            assert_eq!(
                fs.as_ref().map_err(|e| e.to_string()),
                gs.as_ref().map_err(|e| e.to_string()),
                "round {round}, target {t}"
            );
            errors += usize::from(fs.is_err());
        }
    }
    assert!(errors > 0, "some corruption is met by a seek");
}

#[test]
fn hash_indexed_block_is_read_by_binary_search() {
    // Build a normal block, then splice in a fake 3-bucket hash map and set the flag.
    let (block, entries) = build(30, 16);
    let mut data = block.data().to_vec();
    let n = data.len();
    let footer = decode_fixed32(&data[n - 4..]);
    data.truncate(n - 4);
    data.extend_from_slice(&[0xff, 0xff, 0xff]);
    data.extend_from_slice(&3u16.to_le_bytes());
    put_fixed32(&mut data, footer | HASH_INDEX_FLAG);
    let b = Arc::new(Block::new(data).unwrap());
    let mut it = b.iter(&bytewise_internal_comparator());
    it.seek(&entries[20].0);
    assert_eq!(it.key(), &entries[20].0[..]);
}

/// A data block with RocksDB's hash index: the footer carries the flag, the estimate counts
/// the index, `seek_for_get` lands where `seek` does for present keys (every version of a
/// key, with snapshots between them), and says "not here, not later" for absent ones.
#[test]
fn hash_index_seek_for_get() {
    use crate::key::lookup_key;
    let icmp = bytewise_internal_comparator();
    for interval in [1, 4, 16] {
        let mut b = BlockBuilder::new_with_hash_index(interval, 0.75);
        let mut entries = Vec::new();
        for i in 0..120usize {
            let uk = format!("key{:05}", i * 3);
            // Every fifth key has three versions (possibly across two intervals: a collision).
            for v in 0..(if i % 5 == 0 { 3 } else { 1 }) {
                let k = make_internal_key(uk.as_bytes(), 1000 - v, ValueType::Value);
                b.add(&k, format!("v{i}-{v}").as_bytes());
                entries.push(k);
            }
        }
        let est = b.current_size_estimate();
        let data = b.finish().to_vec();
        assert_eq!(data.len(), est, "interval {interval}");
        let footer = u32::from_le_bytes(data[data.len() - 4..].try_into().unwrap());
        assert_ne!(footer & (1 << 31), 0);
        let block = Arc::new(Block::new(data).unwrap());
        assert!(block.hash_buckets.is_some());
        let mut plain = block.iter(&icmp);
        let mut hashed = block.iter(&icmp);
        for k in &entries {
            let uk = user_key(k);
            for seq in [1001, 999, 998, 997] {
                let target = lookup_key(uk, seq);
                plain.seek(&target);
                let may = hashed.seek_for_get(&target);
                hashed.status().unwrap();
                let want_here = plain.valid() && user_key(plain.key()) == uk;
                if want_here {
                    assert!(may && hashed.valid(), "{:?}@{seq}", String::from_utf8_lossy(uk));
                    assert_eq!(hashed.key(), plain.key());
                    assert_eq!(hashed.value(), plain.value());
                } else {
                    assert!(!may || !hashed.valid() || user_key(hashed.key()) != uk);
                }
            }
        }
        // Absent keys between present ones: none is found, most are ruled out by the index.
        let mut ruled_out = 0;
        for i in 0..119usize {
            let target = lookup_key(format!("key{:05}", i * 3 + 1).as_bytes(), 2000);
            let may = hashed.seek_for_get(&target);
            hashed.status().unwrap();
            if !may {
                ruled_out += 1;
            } else if hashed.valid() {
                assert_ne!(user_key(hashed.key()), user_key(&target));
            }
        }
        assert!(ruled_out > 60, "interval {interval}: only {ruled_out} of 119 ruled out");
        // Past the last key: may be in the next block.
        assert!(hashed.seek_for_get(&lookup_key(b"zzz", 5)));
        assert!(!hashed.valid());
    }
}

/// More than 254 restart intervals: no hash index, and none for later blocks of the same
/// builder either (RocksDB's BlockBuilder).
#[test]
fn hash_index_off_past_253_restarts() {
    let mut b = BlockBuilder::new_with_hash_index(1, 0.75);
    for i in 0..300 {
        b.add(&ikey(i), b"v");
    }
    let data = b.finish().to_vec();
    assert_eq!(u32::from_le_bytes(data[data.len() - 4..].try_into().unwrap()), 300);
    assert!(Block::new(data).unwrap().hash_buckets.is_none());
    b.reset();
    b.add(&ikey(1), b"v");
    let data = b.finish().to_vec();
    assert_eq!(u32::from_le_bytes(data[data.len() - 4..].try_into().unwrap()), 1);
}

/// The backward cache (each restart interval decoded once on the first `prev` into it,
/// later `prev` steps served from it) against a model: random sequences of next, prev,
/// seek, seek_for_prev, seek_to_first and seek_to_last over blocks with restart intervals
/// of 1, 2 and 16, keys of varied lengths (shared prefixes shorter and longer than 16
/// bytes, several versions of a user key) and values of varied lengths; every step's key
/// and value must be the model's. Seek targets are present keys, keys between them,
/// other versions of present user keys, and keys before the first and after the last.
#[test]
fn backward_cache_matches_a_model() {
    let icmp = bytewise_internal_comparator();
    let mut rng = SmallRng::seed_from_u64(13);
    for interval in [1usize, 2, 16] {
        for n_users in [1usize, 2, 3, 17, 40, 150] {
            // Sorted, distinct user keys: a short stem, or a long shared one, and a suffix.
            let mut users: Vec<Vec<u8>> = (0..n_users)
                .map(|_| {
                    let stem: &[u8] = match rng.gen_range(0..3) {
                        0 => b"k",
                        1 => b"a-long-prefix-shared-by-keys/",
                        _ => b"a-long-prefix-shared-by-keys/and-longer-still/",
                    };
                    let mut k = stem.to_vec();
                    for _ in 0..rng.gen_range(1..6) {
                        k.push(b'a' + rng.gen_range(0..4u8));
                    }
                    k
                })
                .collect();
            users.sort();
            users.dedup();
            let mut entries: Entries = Vec::new();
            for (u, uk) in users.iter().enumerate() {
                // Newest first: sequence numbers decrease within a user key.
                for v in 0..rng.gen_range(1..4u64) {
                    let k = make_internal_key(uk, 1000 - 10 * v, ValueType::Value);
                    let val = format!("v{u}.{v}").repeat(rng.gen_range(0..5)).into_bytes();
                    entries.push((k, val));
                }
            }
            let mut b = BlockBuilder::new(interval);
            for (k, v) in &entries {
                b.add(k, v);
            }
            let block = Arc::new(Block::new(b.finish().to_vec()).unwrap());
            let n = entries.len();
            let mut it = block.iter(&icmp);
            let mut pos: Option<usize> = None;
            for step in 0..4000 {
                let target = || -> Vec<u8> {
                    let mut r = SmallRng::seed_from_u64(step);
                    match r.gen_range(0..5) {
                        0 => entries[r.gen_range(0..n)].0.clone(),
                        1 => {
                            // Another version of a present user key (between or around them).
                            let uk = user_key(&entries[r.gen_range(0..n)].0).to_vec();
                            make_internal_key(&uk, 1005 - r.gen_range(0..40), ValueType::Value)
                        }
                        2 => {
                            // A user key between present ones (or past the last).
                            let mut uk = user_key(&entries[r.gen_range(0..n)].0).to_vec();
                            uk.push(b'0');
                            make_internal_key(&uk, 500, ValueType::Value)
                        }
                        3 => make_internal_key(b"", 7, ValueType::Value),
                        _ => make_internal_key(b"zzz", 7, ValueType::Value),
                    }
                };
                match rng.gen_range(0..20) {
                    0 => {
                        it.seek_to_first();
                        pos = Some(0);
                    }
                    1 => {
                        it.seek_to_last();
                        pos = Some(n - 1);
                    }
                    2 | 3 => {
                        let t = target();
                        it.seek(&t);
                        pos = entries.iter().position(|(k, _)| icmp.compare(k, &t) != Ordering::Less);
                    }
                    4 | 5 => {
                        let t = target();
                        it.seek_for_prev(&t);
                        pos = entries.iter().rposition(|(k, _)| icmp.compare(k, &t) != Ordering::Greater);
                    }
                    6..=13 if pos.is_some() => {
                        it.prev();
                        pos = pos.and_then(|p| p.checked_sub(1));
                    }
                    _ if pos.is_some() => {
                        it.next();
                        pos = pos.map(|p| p + 1).filter(|&p| p < n);
                    }
                    _ => {
                        it.seek_to_last();
                        pos = Some(n - 1);
                    }
                }
                match pos {
                    Some(p) => assert_eq!(
                        (it.key(), it.value()),
                        (&entries[p].0[..], &entries[p].1[..]),
                        "interval {interval}, {n} entries, step {step}"
                    ),
                    None => assert!(!it.valid(), "interval {interval}, {n} entries, step {step}"),
                }
            }
            it.status().unwrap();
        }
    }
}

/// Byte order through the comparator trait (not flagged bytewise): the generic path that
/// the in-place bytewise comparisons of `KeyOrder::InternalBytewise` must agree with.
struct PlainOrder;

impl crate::comparator::Comparator for PlainOrder {
    fn name(&self) -> &str {
        "test.PlainOrder"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        a.cmp(b)
    }
}

proptest::proptest! {
    /// Data and index blocks of random keys (short, long, sharing prefixes, versions of one
    /// key): every seek, seek_for_prev and seek_for_get lands on the same entry with the
    /// in-place bytewise order as with the comparator called through the trait.
    #[test]
    fn bytewise_fast_order_matches_the_comparator(
        keys in proptest::collection::btree_set(
            (proptest::collection::vec(proptest::sample::select(vec![b'a', b'b', 0u8, 0xff]), 0..12), 0u64..4),
            1..80,
        ),
        targets in proptest::collection::vec(
            (proptest::collection::vec(proptest::sample::select(vec![b'a', b'b', 0u8, 0xff]), 0..12), 0u64..5),
            1..30,
        ),
        interval in 1usize..5,
    ) {
        let fast = bytewise_internal_comparator();
        let slow = InternalKeyComparator::new(Arc::new(PlainOrder));
        let mut ikeys: Vec<Vec<u8>> =
            keys.iter().map(|(k, s)| make_internal_key(k, *s, ValueType::Value)).collect();
        ikeys.sort_by(|a, b| fast.compare(a, b));
        ikeys.dedup();
        let mut b = BlockBuilder::new(interval);
        let mut ib = BlockBuilder::new_index(interval, true);
        let mut prev = None;
        for (i, k) in ikeys.iter().enumerate() {
            b.add(k, &i.to_le_bytes());
            let h = crate::table::format::BlockHandle::new(i as u64 * 105, 100);
            ib.add_index(k, h, prev);
            prev = Some(h);
        }
        let data = Arc::new(Block::new(b.finish().to_vec()).unwrap());
        let index = Arc::new(Block::new(ib.finish().to_vec()).unwrap());
        let fmt = IndexFormat { value_delta_encoded: true, ..Default::default() };
        for (t, s) in &targets {
            let target = make_internal_key(t, *s, ValueType::Value);
            let (mut f, mut g) = (data.iter(&fast), data.iter(&slow));
            f.seek(&target);
            g.seek(&target);
            proptest::prop_assert_eq!(f.valid(), g.valid());
            if f.valid() {
                proptest::prop_assert_eq!((f.key(), f.value()), (g.key(), g.value()));
            }
            // The cursor a seek leaves steps on as the generic one does, both ways.
            for step in 0..3 {
                if !f.valid() {
                    break;
                }
                if step == 1 {
                    f.prev();
                    g.prev();
                } else {
                    f.next();
                    g.next();
                }
                proptest::prop_assert_eq!(f.valid(), g.valid());
                if f.valid() {
                    proptest::prop_assert_eq!((f.key(), f.value()), (g.key(), g.value()));
                }
            }
            f.seek(&target);
            g.seek(&target);
            if f.valid() {
                f.prev();
                g.prev();
                proptest::prop_assert_eq!(f.valid(), g.valid());
                if f.valid() {
                    proptest::prop_assert_eq!((f.key(), f.value()), (g.key(), g.value()));
                }
            }
            f.seek_for_prev(&target);
            g.seek_for_prev(&target);
            proptest::prop_assert_eq!(f.valid(), g.valid());
            if f.valid() {
                proptest::prop_assert_eq!(f.key(), g.key());
            }
            let (ff, gg) = (f.seek_for_get(&target), g.seek_for_get(&target));
            proptest::prop_assert_eq!(ff, gg);
            proptest::prop_assert_eq!(f.valid(), g.valid());
            if f.valid() {
                proptest::prop_assert_eq!(f.key(), g.key());
            }
            let (mut fi, mut gi) = (index.index_iter(&fast, fmt), index.index_iter(&slow, fmt));
            fi.seek(&target);
            gi.seek(&target);
            proptest::prop_assert_eq!(fi.valid(), gi.valid());
            if fi.valid() {
                proptest::prop_assert_eq!((fi.key(), fi.handle()), (gi.key(), gi.handle()));
            }
        }
    }
}

/// An index block of `keys` (user keys, one internal key each) with restart interval
/// `interval`, flagged uniform when `uniform_cv` >= 0 and its keys are spread evenly.
fn index_block(
    keys: &[Vec<u8>],
    interval: usize,
    user: bool,
    uniform_cv: f64,
) -> (Arc<Block>, Vec<BlockHandle>) {
    let mut b = BlockBuilder::new_index(interval, true).with_uniform_cv_threshold(uniform_cv, user);
    let mut prev = None;
    let mut handles = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        let h = BlockHandle::new(i as u64 * (4000 + BLOCK_TRAILER_SIZE as u64), 4000);
        let ik = make_internal_key(k, 7, ValueType::Value);
        b.add_index(if user { k } else { &ik }, h, prev);
        prev = Some(h);
        handles.push(h);
    }
    (Arc::new(Block::new(b.finish().to_vec()).unwrap()), handles)
}

/// Where a seek of `target` lands in the block (the handle, None past the end), and the key
/// comparisons it made (the perf context's count).
fn seek_with(block: &Arc<Block>, fmt: IndexFormat, target: &[u8]) -> (Option<BlockHandle>, u64) {
    let icmp = bytewise_internal_comparator();
    let mut ctx = crate::perf::PerfContext::default();
    ctx.reset();
    let mut it = block.index_iter(&icmp, fmt);
    it.seek(target);
    let count = ctx.metric(crate::perf::PerfMetric::UserKeyComparisonCount);
    it.status().unwrap();
    (it.valid().then(|| it.handle()), count)
}

#[test]
fn interpolation_index_search_finds_every_key_with_fewer_comparisons() {
    crate::perf::set_perf_stats(crate::perf::PerfStatsLevel::EnableCount);
    // 4096 evenly spread keys sharing a prefix: the builder flags the block uniform.
    let keys: Vec<Vec<u8>> =
        (0..4096u64).map(|i| [b"tenant-7/".as_slice(), &(i * 1000).to_be_bytes()].concat()).collect();
    for user in [false, true] {
        let (block, handles) = index_block(&keys, 1, user, 0.2);
        assert!(block.is_uniform());
        let base = IndexFormat { key_is_user_key: user, value_delta_encoded: true, ..Default::default() };
        let (mut binary_cmp, mut interp_cmp, mut auto_cmp) = (0, 0, 0);
        for (i, k) in keys.iter().enumerate() {
            for (target, want) in [
                (make_internal_key(k, 9, ValueType::Value), Some(handles[i])),
                // Between key i and key i+1: the index entry of key i+1.
                (
                    make_internal_key(
                        &[b"tenant-7/".as_slice(), &(i as u64 * 1000 + 1).to_be_bytes()].concat(),
                        9,
                        ValueType::Value,
                    ),
                    handles.get(i + 1).copied(),
                ),
            ] {
                let (b, c) = seek_with(&block, base, &target);
                let (p, d) = seek_with(
                    &block,
                    IndexFormat { search: IndexBlockSearch::Interpolation, ..base },
                    &target,
                );
                let (a, e) =
                    seek_with(&block, IndexFormat { search: IndexBlockSearch::Auto, ..base }, &target);
                assert_eq!((b, p, a), (want, want, want), "key {i}");
                binary_cmp += c;
                interp_cmp += d;
                auto_cmp += e;
            }
        }
        // Binary search probes log2(4096) = 12 restart keys a seek; interpolation on evenly
        // spread keys lands in a few probes, then binary search over the last 8 or fewer.
        assert!(interp_cmp * 2 < binary_cmp, "interpolation {interp_cmp} vs binary {binary_cmp}");
        assert_eq!(auto_cmp, interp_cmp);
        // Keys before the shared prefix, after it, and shorter than it.
        for (t, want) in [(&b"a"[..], Some(handles[0])), (b"tenant-", Some(handles[0])), (b"zz", None)] {
            let target = make_internal_key(t, 9, ValueType::Value);
            for search in [IndexBlockSearch::Interpolation, IndexBlockSearch::Auto] {
                assert_eq!(seek_with(&block, IndexFormat { search, ..base }, &target).0, want);
            }
        }
    }
    // Without the flag, `Auto` searches binary: the same count as `Binary`.
    let (block, _) = index_block(&keys, 1, false, -1.0);
    assert!(!block.is_uniform());
    let base = IndexFormat { value_delta_encoded: true, ..Default::default() };
    let target = make_internal_key(&keys[1234], 9, ValueType::Value);
    let auto = seek_with(&block, IndexFormat { search: IndexBlockSearch::Auto, ..base }, &target);
    assert_eq!(auto, seek_with(&block, base, &target));
    let interp = seek_with(&block, IndexFormat { search: IndexBlockSearch::Interpolation, ..base }, &target);
    assert_eq!(interp.0, auto.0);
    assert!(interp.1 < auto.1);
    crate::perf::set_perf_stats(crate::perf::PerfStatsLevel::Disable);
}

proptest::proptest! {
    /// Interpolation search lands where binary search does, on any key set (skewed ones
    /// included, where it falls back to binary search) and any target.
    #[test]
    fn interpolation_index_search_matches_binary(
        keys in proptest::collection::btree_set(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..12), 1..300),
        targets in proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..12), 1..40),
        interval in 1usize..4,
        user in proptest::prelude::any::<bool>(),
    ) {
        let keys: Vec<Vec<u8>> = keys.into_iter().collect();
        let (block, _) = index_block(&keys, interval, user, -1.0);
        let base = IndexFormat { key_is_user_key: user, value_delta_encoded: true, ..Default::default() };
        let interp = IndexFormat { search: IndexBlockSearch::Interpolation, ..base };
        for t in targets.iter().chain(&keys) {
            for seq in [0, 7, 100] {
                let target = make_internal_key(t, seq, ValueType::Value);
                proptest::prop_assert_eq!(seek_with(&block, interp, &target).0, seek_with(&block, base, &target).0);
            }
        }
    }
}

/// RocksDB's read-amplification bitmap at one byte a bit: reading every entry's value once
/// counts exactly the bytes of the entries, and reading one again counts nothing more.
#[test]
fn read_amp_bitmap_counts_each_entry_once() {
    use crate::statistics::{Statistics, Ticker};
    let icmp = bytewise_internal_comparator();
    let (block, entries) = build(100, 16);
    let stats = Arc::new(Statistics::new());
    let data = block.data().to_vec();
    let block = Arc::new(Block::new(data).unwrap().with_read_amp(1, Some(&stats)));
    let total = stats.ticker_count(Ticker::ReadAmpTotalReadBytes);
    assert_eq!(total, block.restart_offset as u64);
    assert_eq!(stats.ticker_count(Ticker::ReadAmpEstimateUsefulBytes), 0);
    let mut it = block.iter(&icmp);
    // Keys alone mark nothing: RocksDB marks in `value()`.
    it.seek_to_first();
    while it.valid() {
        it.next();
    }
    assert_eq!(stats.ticker_count(Ticker::ReadAmpEstimateUsefulBytes), 0);
    it.seek(&entries[10].0);
    assert_eq!(it.value(), &entries[10].1[..]);
    let one = stats.ticker_count(Ticker::ReadAmpEstimateUsefulBytes);
    assert!(one > 0);
    assert_eq!(it.value(), &entries[10].1[..]);
    it.seek(&entries[10].0);
    let _ = it.value();
    assert_eq!(stats.ticker_count(Ticker::ReadAmpEstimateUsefulBytes), one);
    it.seek_to_first();
    while it.valid() {
        let _ = it.value();
        it.next();
    }
    assert_eq!(stats.ticker_count(Ticker::ReadAmpEstimateUsefulBytes), total);
    // A second cursor on the same block finds every bit set.
    let mut again = block.iter(&icmp);
    again.seek_to_last();
    while again.valid() {
        let _ = again.value();
        again.prev();
    }
    assert_eq!(stats.ticker_count(Ticker::ReadAmpEstimateUsefulBytes), total);
    assert_eq!(stats.ticker_count(Ticker::ReadAmpTotalReadBytes), total);
}

/// Wider bits: the estimate of reading everything is the entries' bytes within a bit at each
/// end; half the entries, about half of them. The width is rounded down to a power of two.
#[test]
fn read_amp_bitmap_estimates_with_wider_bits() {
    use crate::statistics::{Statistics, Ticker};
    let icmp = bytewise_internal_comparator();
    let (block, _) = build(400, 16);
    for (bytes_per_bit, unit) in [(32u32, 32u64), (7, 4), (16, 16), (100, 64)] {
        let stats = Arc::new(Statistics::new());
        let b =
            Arc::new(Block::new(block.data().to_vec()).unwrap().with_read_amp(bytes_per_bit, Some(&stats)));
        assert_eq!(b.read_amp().unwrap().bytes_per_bit() as u64, unit);
        let total = stats.ticker_count(Ticker::ReadAmpTotalReadBytes);
        let mut it = b.iter(&icmp);
        it.seek_to_first();
        let mut i = 0;
        while it.valid() {
            if i % 2 == 0 {
                let _ = it.value();
            }
            i += 1;
            it.next();
        }
        let half = stats.ticker_count(Ticker::ReadAmpEstimateUsefulBytes);
        assert!(half > total / 4 && half < total * 3 / 4, "{bytes_per_bit}: {half} of {total}");
        it.seek_to_first();
        while it.valid() {
            let _ = it.value();
            it.next();
        }
        let all = stats.ticker_count(Ticker::ReadAmpEstimateUsefulBytes);
        // The offset is drawn below `bytes_per_bit` as given, not below the rounded width, as
        // RocksDB's is: when it is `unit` or more, the first entry's start bit wraps (32-bit
        // arithmetic) and that entry counts nothing, so the estimate may lack one entry.
        let first_entry = if u64::from(bytes_per_bit) > unit { total / 400 + unit } else { 0 };
        assert!(
            all <= total + unit && all + 2 * unit + first_entry >= total,
            "{bytes_per_bit}: {all} of {total}"
        );
    }
}

/// No bitmap without statistics or with 0 bytes a bit, and none on an empty block.
#[test]
fn read_amp_bitmap_needs_statistics_and_entries() {
    use crate::statistics::{Statistics, Ticker};
    let (block, _) = build(10, 16);
    let stats = Arc::new(Statistics::new());
    assert!(Block::new(block.data().to_vec()).unwrap().with_read_amp(8, None).read_amp().is_none());
    assert!(Block::new(block.data().to_vec()).unwrap().with_read_amp(0, Some(&stats)).read_amp().is_none());
    let empty = BlockBuilder::new(16).finish().to_vec();
    assert!(Block::new(empty).unwrap().with_read_amp(8, Some(&stats)).read_amp().is_none());
    assert_eq!(stats.ticker_count(Ticker::ReadAmpTotalReadBytes), 0);
}

/// The separated layout's bytes, as RocksDB 11.8.1's `BlockBuilder` writes them for two
/// entries with a restart interval of 1: `0 | 2 | 1 | value_offset 0 | "k1"`,
/// `0 | 2 | 2 | 1 | "k2"`, then the values `a`, `bb`, the restarts, the values-section offset
/// and the footer with bit 28.
#[test]
fn separated_layout_bytes() {
    let mut b = BlockBuilder::new(1).with_separated_values();
    b.add(b"k1", b"a");
    b.add(b"k2", b"bb");
    let est = b.current_size_estimate();
    let data = b.finish().to_vec();
    let mut want = vec![0, 2, 1, 0, b'k', b'1', 0, 2, 2, 1, b'k', b'2', b'a', b'b', b'b'];
    want.extend_from_slice(&0u32.to_le_bytes());
    want.extend_from_slice(&6u32.to_le_bytes());
    want.extend_from_slice(&12u32.to_le_bytes());
    want.extend_from_slice(&(2u32 | 1 << 28).to_le_bytes());
    assert_eq!(data, want);
    assert_eq!(data.len(), est);
}

#[test]
fn separated_layout_damage_is_corruption() {
    let mut b = BlockBuilder::new(2).with_separated_values();
    for i in 0..5 {
        b.add(&ikey(i), b"value");
    }
    let data = b.finish().to_vec();
    let n = data.len();
    // The values-section offset past the restart array.
    let mut bad = data.clone();
    bad[n - 8..n - 4].copy_from_slice(&(n as u32).to_le_bytes());
    assert_eq!(Block::new(bad).unwrap_err().kind(), crate::ErrorKind::Corruption);
    // A value length running past the values.
    let mut bad = data.clone();
    bad[2] = 0x7f;
    assert_eq!(Block::new(bad).unwrap_err().kind(), crate::ErrorKind::Corruption);
    // A restart point inside an entry.
    let mut bad = data;
    let r1 = n - 8 - 4 * 3 + 4;
    bad[r1..r1 + 4].copy_from_slice(&1u32.to_le_bytes());
    assert_eq!(Block::new(bad).unwrap_err().kind(), crate::ErrorKind::Corruption);
    // Too short for the values-section offset.
    assert!(Block::new((1u32 << 28).to_le_bytes().to_vec()).is_err());
}

proptest::proptest! {
    /// The same entries written with keys and values together and apart (with and without
    /// the hash index, any restart interval) read back the same: forward, backward, seeks and
    /// hash-index point lookups.
    #[test]
    fn separated_and_interleaved_layouts_read_the_same(
        keys in proptest::collection::btree_set(
            proptest::collection::vec(proptest::sample::select(vec![b'a', b'b', 0u8, 0xff]), 0..10),
            0..60,
        ),
        value_lens in proptest::collection::vec(0usize..40, 60),
        interval in 1usize..20,
        hashed in proptest::bool::ANY,
    ) {
        let icmp = bytewise_internal_comparator();
        let entries: Entries = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (make_internal_key(k, 7, ValueType::Value), vec![i as u8; value_lens[i]]))
            .collect();
        let builder = || if hashed { BlockBuilder::new_with_hash_index(interval, 0.75) } else { BlockBuilder::new(interval) };
        let (mut plain, mut apart) = (builder(), builder().with_separated_values());
        for (k, v) in &entries {
            plain.add(k, v);
            apart.add(k, v);
        }
        let est = apart.current_size_estimate();
        let apart_bytes = apart.finish().to_vec();
        proptest::prop_assert_eq!(apart_bytes.len(), est);
        let plain = Arc::new(Block::new(plain.finish().to_vec()).unwrap());
        let apart = Arc::new(Block::new(apart_bytes).unwrap());
        // The rewritten block is the ordinary layout, byte for byte.
        proptest::prop_assert_eq!(&plain.data, &apart.data);
        let mut it = apart.iter(&icmp);
        it.seek_to_first();
        for (k, v) in &entries {
            proptest::prop_assert!(it.valid());
            proptest::prop_assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
            it.next();
        }
        proptest::prop_assert!(!it.valid());
        it.seek_to_last();
        for (k, v) in entries.iter().rev() {
            proptest::prop_assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
            it.prev();
        }
        proptest::prop_assert!(!it.valid());
        for (k, v) in &entries {
            it.seek(k);
            proptest::prop_assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
            if hashed {
                proptest::prop_assert!(it.seek_for_get(k));
                proptest::prop_assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
            }
        }
    }
}

/// `build`'s block, unparsed: its bytes and entries.
fn build_raw(n: usize, interval: usize) -> (Vec<u8>, Entries) {
    let (data, entries, _) = build_bytes(n, interval);
    (data, entries)
}

const CHECKSUM_ERROR: &str = "Corrupted block entry: per key-value checksum verification failed.";

#[test]
fn protection_zero_keeps_no_checksums() {
    let (raw, _) = build_raw(40, 16);
    let block = Block::new(raw).unwrap().protected(0).unwrap();
    assert!(block.kv_protection().is_none());
    assert_eq!(block.extra_memory(), 0);
    let icmp = bytewise_internal_comparator();
    let block = Arc::new(block);
    let it = block.iter(&icmp);
    assert!(!it.protected, "a cursor over an unprotected block checks nothing");
}

#[test]
fn protection_widths_keep_n_bytes_an_entry_and_every_move_passes() {
    let icmp = bytewise_internal_comparator();
    let mut rng = SmallRng::seed_from_u64(33);
    for bytes in [1u8, 2, 4, 8] {
        for (n, interval) in [(200, 16), (37, 5), (10, 1), (17, 16), (1, 16)] {
            let (raw, entries) = build_raw(n, interval);
            let block = Block::new(raw).unwrap().protected(bytes).unwrap();
            let kv = block.kv_protection().expect("protected");
            assert_eq!(kv.sums.len(), n * usize::from(bytes));
            assert!(kv.bases.is_none(), "the builder's intervals are uniform");
            assert_eq!(block.extra_memory(), n * usize::from(bytes), "charged as RocksDB's checksum_size_");
            let block = Arc::new(block);
            let mut it = block.iter(&icmp);
            random_walk(&mut it, &entries, &mut rng, 3000, true);
        }
    }
}

#[test]
fn protected_block_corrupted_in_memory_gives_corruption() {
    let icmp = bytewise_internal_comparator();
    // Entry 7's value, "value-7" three times, lies whole in the block.
    let (raw, entries) = build_raw(40, 16);
    let at = raw.windows(21).position(|w| w == b"value-7value-7value-7").unwrap() + 3;
    // Unprotected, the flipped byte goes unnoticed: the value read is just different.
    let mut plain = Block::new(raw.clone()).unwrap();
    plain.corrupt_byte_for_test(at);
    let plain = Arc::new(plain);
    let mut it = plain.iter(&icmp);
    it.seek(&entries[7].0);
    assert!(it.valid());
    assert_ne!(it.value(), &entries[7].1[..]);
    it.status().unwrap();
    for bytes in [1u8, 2, 4, 8] {
        let mut block = Block::new(raw.clone()).unwrap().protected(bytes).unwrap();
        block.corrupt_byte_for_test(at);
        let block = Arc::new(block);
        let mut it = block.iter(&icmp);
        // A scan passes entries 0..7, then stops at entry 7 with Corruption.
        it.seek_to_first();
        for (k, _) in &entries[..7] {
            assert_eq!(it.key(), &k[..]);
            it.next();
        }
        assert!(!it.valid());
        let e = it.status().unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Corruption);
        let msg = e.to_string();
        assert!(msg.contains(CHECKSUM_ERROR), "{msg}");
        assert!(msg.contains("Entry index: 7."), "{msg}");
        // A seek to it, a seek_for_prev, a point lookup and a backward scan find it too.
        it.seek(&entries[7].0);
        assert!(!it.valid() && it.status().is_err());
        it.seek_for_prev(&entries[7].0);
        assert!(!it.valid() && it.status().is_err());
        it.seek_for_get(&entries[7].0);
        assert!(it.status().unwrap_err().to_string().contains(CHECKSUM_ERROR));
        it.seek(&entries[9].0);
        it.status().unwrap();
        it.prev();
        it.status().unwrap();
        assert_eq!(it.key(), &entries[8].0[..]);
        it.prev();
        assert!(!it.valid() && it.status().unwrap_err().to_string().contains(CHECKSUM_ERROR));
        // Other entries still read.
        it.seek(&entries[20].0);
        it.status().unwrap();
        assert_eq!(it.value(), &entries[20].1[..]);
    }
}

#[test]
fn protected_index_block_checks_keys_and_handles() {
    let icmp = bytewise_internal_comparator();
    for delta in [true, false] {
        for bytes in [1u8, 2, 4, 8] {
            let mut b = BlockBuilder::new_index(4, delta);
            let mut prev = None;
            let mut handles = Vec::new();
            let mut offset = 0;
            for i in 0..40usize {
                let h = BlockHandle::new(offset, 4000 + (i as u64 * 37) % 300);
                offset += h.size + BLOCK_TRAILER_SIZE as u64;
                b.add_index(&ikey(i), h, prev);
                prev = Some(h);
                handles.push((ikey(i), h));
            }
            let raw = b.finish().to_vec();
            let fmt = IndexFormat { value_delta_encoded: delta, ..Default::default() };
            let block = Arc::new(Block::new(raw.clone()).unwrap().protected_index(bytes, fmt).unwrap());
            assert_eq!(block.extra_memory(), 40 * usize::from(bytes));
            let mut it = block.index_iter(&icmp, fmt);
            it.seek_to_last();
            for (_, h) in handles.iter().rev() {
                assert_eq!(it.handle(), *h);
                it.prev();
            }
            it.status().unwrap();
            for (k, h) in &handles {
                it.seek(k);
                assert_eq!(it.handle(), *h);
            }
            it.status().unwrap();
            // Flip a byte of entry 12's key (a restart entry, stored whole; the byte before
            // its trailer).
            let k12 = &handles[12].0;
            let at = raw.windows(k12.len()).position(|w| w == &k12[..]).unwrap();
            let mut bad = Block::new(raw.clone()).unwrap().protected_index(bytes, fmt).unwrap();
            bad.corrupt_byte_for_test(at + k12.len() - 9);
            let bad = Arc::new(bad);
            let mut it = bad.index_iter(&icmp, fmt);
            it.seek_to_first();
            let mut seen = 0;
            while it.valid() {
                seen += 1;
                it.next();
            }
            let msg = it.status().unwrap_err().to_string();
            assert!(msg.contains(CHECKSUM_ERROR) && msg.contains("Entry index: 12."), "{msg}");
            assert_eq!(seen, 12);
        }
    }
}

#[test]
fn protected_meta_block_checks_its_entries() {
    let mut b = BlockBuilder::new(1);
    for i in 0..10 {
        b.add(format!("meta.{i}").as_bytes(), format!("handle-{i}").as_bytes());
    }
    let raw = b.finish().to_vec();
    let block = Arc::new(Block::new(raw.clone()).unwrap().protected(4).unwrap());
    assert_eq!(block.entries().unwrap().len(), 10);
    let at = raw.windows(8).position(|w| w == b"handle-5").unwrap();
    let mut bad = Block::new(raw).unwrap().protected(4).unwrap();
    bad.corrupt_byte_for_test(at);
    let msg = Arc::new(bad).entries().unwrap_err().to_string();
    assert!(msg.contains(CHECKSUM_ERROR) && msg.contains("Entry index: 5."), "{msg}");
}

#[test]
fn protection_refuses_other_widths() {
    let (raw, _) = build_raw(5, 16);
    let e = Block::new(raw).unwrap().protected(3).unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
}

#[test]
fn protection_of_uneven_restart_intervals_keeps_their_bases() {
    let icmp = bytewise_internal_comparator();
    // Every entry stored whole (interval 1), then only some of them kept as restart
    // points: intervals of 3, 1, 5 and 3 entries.
    let (raw, entries) = build_raw(12, 1);
    let restarts_at = raw.len() - 4 - 4 * 12;
    let offset = |i: usize| &raw[restarts_at + 4 * i..restarts_at + 4 * i + 4];
    let mut uneven = raw[..restarts_at].to_vec();
    for i in [0, 3, 4, 9] {
        uneven.extend_from_slice(offset(i));
    }
    uneven.extend_from_slice(&4u32.to_le_bytes());
    let block = Block::new(uneven).unwrap().protected(2).unwrap();
    let kv = block.kv_protection().unwrap();
    assert_eq!(kv.bases.as_deref(), Some(&[0u32, 3, 4, 9][..]));
    assert_eq!(block.extra_memory(), 12 * 2 + 4 * 4);
    let block = Arc::new(block);
    let mut it = block.iter(&icmp);
    for (i, (k, v)) in entries.iter().enumerate() {
        it.seek(k);
        assert_eq!((it.key(), it.value()), (&k[..], &v[..]), "entry {i}");
    }
    it.seek_to_last();
    for (k, _) in entries.iter().rev() {
        assert_eq!(it.key(), &k[..]);
        it.prev();
    }
    it.status().unwrap();
}
