//! Values an iterator hands out stay valid across data-block boundaries (issue 13): the
//! user-facing iterator points at a value's bytes in the data block instead of copying
//! them, so the block must outlive the inner table iterator's step into the previous
//! block (moving backward, the value of a key is read before stepping past the key's
//! entries), or, with `pin_data`, the whole iterator.
//!
//! The database: 256-byte blocks, so every few keys start a new block; tables in L1 (many
//! files, so the level iterator changes file under the iterator), in L0 and in the
//! memtable, with overwrites and deletions across them. Blocks are read either without
//! filling the cache (`fill_cache(false)`: the iterator holds the only reference to a
//! block) or through a 1 KiB block cache that evicts all the time. After every step the
//! test churns the allocator (allocates block-sized buffers, fills them with garbage,
//! frees them): a block freed too early has its bytes overwritten, and the value read
//! then differs from the model's.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::BTreeMap;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale::{BlockBasedOptions, Cache, DBCompressionType, Options, ReadOptions, DB};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

const KEYS: u32 = 1500;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// A value of 20 to 150 bytes that names its key and version.
fn value(i: u32, version: u32, rng: &mut SmallRng) -> Vec<u8> {
    let len = rng.gen_range(20..150);
    let mut v = format!("v{version}-{i}-").into_bytes();
    while v.len() < len {
        v.push(b'a' + (v.len() % 26) as u8);
    }
    v
}

fn options(cache: &Cache) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(DBCompressionType::None);
    o.set_disable_auto_compactions(true);
    o.set_target_file_size_base(16 * 1024);
    // CompactRange then moves level 0 to level 1 (with dynamic level sizes, RocksDB's and
    // Shale's default, it goes to the last level).
    o.set_level_compaction_dynamic_level_bytes(false);
    let mut t = BlockBasedOptions::default();
    t.set_block_size(256);
    t.set_block_cache(cache);
    o.set_block_based_table_factory(&t);
    o
}

/// Allocates and frees block-sized buffers full of garbage: memory of a block freed too
/// early is handed out again and overwritten.
fn churn() {
    let bufs: Vec<Vec<u8>> = (0..64).map(|i| vec![0xA5 ^ i as u8; 200 + 8 * (i % 16)]).collect();
    std::hint::black_box(&bufs);
}

/// Writes the database: L1 (many files), then L0, then the memtable, each overwriting and
/// deleting some keys of the one before.
fn build(db: &DB, rng: &mut SmallRng) -> Model {
    let mut model = Model::new();
    // Two overlapping L0 files, so that the compaction into L1 merges and splits them
    // (one file would just be moved).
    for i in (0..KEYS).chain((0..KEYS).step_by(7)) {
        let v = value(i, 1, rng);
        db.put(key(i), &v).unwrap();
        model.insert(key(i), v);
        if i == KEYS - 1 {
            db.flush().unwrap();
        }
    }
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    for version in 2..4 {
        for _ in 0..KEYS / 4 {
            let i = rng.gen_range(0..KEYS);
            if rng.gen_bool(0.2) {
                db.delete(key(i)).unwrap();
                model.remove(&key(i));
            } else {
                let v = value(i, version, rng);
                db.put(key(i), &v).unwrap();
                model.insert(key(i), v);
            }
        }
        if version == 2 {
            db.flush().unwrap();
        }
    }
    model
}

fn read_options(fill_cache: bool, pin_data: bool) -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.fill_cache(fill_cache);
    ro.set_pin_data(pin_data);
    ro
}

/// A whole backward scan, then a whole forward one, then a random walk switching
/// direction, each step checked against the model after churning the allocator.
fn scan_and_walk(db: &DB, model: &Model, ro: ReadOptions, rng: &mut SmallRng, what: &str) {
    let keys: Vec<&Vec<u8>> = model.keys().collect();
    let mut it = db.raw_iterator_opt(ro);
    it.seek_to_last();
    for (n, (k, v)) in model.iter().rev().enumerate() {
        churn();
        assert_eq!(it.key(), Some(k.as_slice()), "{what}: backward, key {n} from the end");
        assert_eq!(
            it.value(),
            Some(v.as_slice()),
            "{what}: backward, value of {:?}",
            String::from_utf8_lossy(k)
        );
        it.prev();
    }
    assert!(!it.valid(), "{what}: backward scan goes past the first key");
    it.status().unwrap();
    it.seek_to_first();
    for (k, v) in model {
        churn();
        assert_eq!(it.key(), Some(k.as_slice()), "{what}: forward");
        assert_eq!(
            it.value(),
            Some(v.as_slice()),
            "{what}: forward, value of {:?}",
            String::from_utf8_lossy(k)
        );
        it.next();
    }
    assert!(!it.valid(), "{what}: forward scan goes past the last key");
    // A random walk, changing direction now and then.
    let mut pos = rng.gen_range(0..keys.len());
    it.seek(keys[pos]);
    for step in 0..4000 {
        churn();
        assert_eq!(it.key(), Some(keys[pos].as_slice()), "{what}: walk step {step}");
        assert_eq!(it.value(), Some(model[keys[pos]].as_slice()), "{what}: walk step {step}");
        let back = rng.gen_bool(0.5);
        for _ in 0..rng.gen_range(1..30) {
            if back && pos > 0 {
                it.prev();
                pos -= 1;
            } else if !back && pos + 1 < keys.len() {
                it.next();
                pos += 1;
            }
        }
    }
    it.status().unwrap();
}

/// With `pin_data`, every value handed out stays where it was, unchanged, while the
/// iterator lives: the addresses taken during a backward and a forward scan still hold
/// the values at the end.
fn pinned_for_life(db: &DB, model: &Model, fill_cache: bool) {
    let mut it = db.raw_iterator_opt(read_options(fill_cache, true));
    let mut seen: Vec<(*const u8, usize, &[u8])> = Vec::new();
    it.seek_to_last();
    for v in model.values().rev() {
        let got = it.value().unwrap();
        assert_eq!(got, v.as_slice());
        seen.push((got.as_ptr(), got.len(), v));
        it.prev();
        churn();
    }
    it.seek_to_first();
    for v in model.values() {
        let got = it.value().unwrap();
        assert_eq!(got, v.as_slice());
        seen.push((got.as_ptr(), got.len(), v));
        it.next();
        churn();
    }
    for _ in 0..8 {
        churn();
    }
    for (n, (ptr, len, want)) in seen.iter().enumerate() {
        // SAFETY: what this test checks: with pin_data the iterator (alive here) keeps the
        // blocks these bytes lie in.
        let now = unsafe { std::slice::from_raw_parts(*ptr, *len) };
        assert_eq!(now, *want, "value {n} moved or changed while the pin_data iterator lives");
    }
    drop(it);
}

#[test]
fn values_stay_valid_across_block_boundaries() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::new_lru_cache(1024);
    let db = DB::open(&options(&cache), dir.path()).unwrap();
    let mut rng = SmallRng::seed_from_u64(13);
    let model = build(&db, &mut rng);
    let l1 = db.property_value("rocksdb.num-files-at-level1").unwrap().unwrap();
    let l0 = db.property_value("rocksdb.num-files-at-level0").unwrap().unwrap();
    assert!(l1.parse::<u32>().unwrap() >= 3, "L1 has {l1} files: the level iterator must change files");
    assert_eq!(l0, "1");
    for fill_cache in [false, true] {
        for pin_data in [false, true] {
            let what = format!("fill_cache {fill_cache}, pin_data {pin_data}");
            scan_and_walk(&db, &model, read_options(fill_cache, pin_data), &mut rng, &what);
        }
        pinned_for_life(&db, &model, fill_cache);
    }
}
