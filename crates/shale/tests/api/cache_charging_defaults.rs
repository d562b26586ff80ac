//! What a block cache is charged for with rust-rocksdb 0.25's options, which cannot set
//! RocksDB's `cache_usage_options`: building a table's filter and opening its reader charge
//! nothing (RocksDB's default for `kFilterConstruction` and `kBlockBasedTableReader`), while
//! `cache_index_and_filter_blocks` charges the index and filter blocks themselves.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{BlockBasedOptions, Cache, Options, DB};

fn open_and_flush(cache: &Cache, index_and_filter_in_cache: bool) -> (tempfile::TempDir, DB, usize, usize) {
    let tmp = tempfile::tempdir().unwrap();
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(cache);
    t.set_bloom_filter(10.0, false);
    t.set_cache_index_and_filter_blocks(index_and_filter_in_cache);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, tmp.path()).unwrap();
    for i in 0..5000 {
        db.put(format!("key{i:06}"), vec![b'v'; 50]).unwrap();
    }
    let before = cache.get_usage();
    db.flush().unwrap();
    // Shale opens a table at its first read. An absent key inside its range is answered by
    // the filter, so no data block enters the cache.
    assert_eq!(db.get(b"key000100x").unwrap(), None);
    let after = cache.get_usage();
    (tmp, db, before, after)
}

#[test]
fn building_a_filter_and_opening_a_table_charge_nothing_by_default() {
    let cache = Cache::new_lru_cache(64 << 20);
    let (_tmp, db, before, after) = open_and_flush(&cache, false);
    // The flush built a bloom filter of 5000 keys (about 6 KiB) and the read opened the
    // table's reader, which holds its index and filter: neither is charged to the cache.
    assert_eq!(after, before, "filter construction or the table reader was charged");
    let mem: u64 = db.property_int_value("rocksdb.estimate-table-readers-mem").unwrap().unwrap();
    assert!(mem > 6000, "the reader holds its index and filter ({mem} bytes)");
}

#[test]
fn index_and_filter_blocks_in_the_cache_are_charged_there() {
    let cache = Cache::new_lru_cache(64 << 20);
    let (_tmp, _db, before, after) = open_and_flush(&cache, true);
    // The filter of 5000 keys at 10 bits per key is about 6 KiB; the index is smaller.
    assert!(after >= before + 6000, "usage {before} -> {after}");
}
