//! The LRU cache's low-priority pool (issue 33, helper cache): RocksDB 11.8.1's
//! `LRUCacheShard` keeps `low_pri_pool_ratio` of its capacity for low-priority entries (data
//! blocks) above the bottom pool (blobs of a blob cache), so a stream of blob reads through a
//! cache shared with the tables evicts blobs before data blocks.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::statistics::Ticker;
use shale::{BlockBasedOptions, Cache, LruCacheOptions, Options, DB};

use crate::util;

/// 50 small values kept in the table (data blocks) and 200 values of 4000 bytes in a blob
/// file, one cache of 256 KiB for both; the small values are read, then every blob, then the
/// small values again. Returns the data blocks added to the cache by the second pass.
fn data_blocks_reread_after_blob_stream(low_pri_pool_ratio: f64) -> u64 {
    let tmp = tempfile::tempdir().unwrap();
    let mut co = LruCacheOptions::default();
    co.set_capacity(256 << 10);
    co.set_num_shard_bits(0);
    // No high-priority pool: hits stay in their own pool, so only the pools below matter.
    co.set_high_pri_pool_ratio(0.0);
    co.set_low_pri_pool_ratio(low_pri_pool_ratio);
    let cache = Cache::new_lru_cache_opts(&co);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.enable_statistics();
    o.set_enable_blob_files(true);
    o.set_min_blob_size(1000);
    o.set_blob_cache(&cache);
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(&cache);
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, tmp.path()).unwrap();
    for i in 0..50u32 {
        db.put(format!("a{i:04}"), vec![b's'; 100]).unwrap();
    }
    for i in 0..200u32 {
        db.put(format!("b{i:04}"), vec![(i % 251) as u8; 4000]).unwrap();
    }
    db.flush().unwrap();
    let small = || {
        for i in 0..50u32 {
            assert_eq!(db.get(format!("a{i:04}")).unwrap().unwrap(), vec![b's'; 100]);
        }
    };
    small();
    for i in 0..200u32 {
        assert_eq!(db.get(format!("b{i:04}")).unwrap().unwrap(), vec![(i % 251) as u8; 4000]);
    }
    assert!(cache.get_usage() <= 256 << 10, "{}", cache.get_usage());
    let adds = o.get_ticker_count(Ticker::BlockCacheDataAdd);
    small();
    o.get_ticker_count(Ticker::BlockCacheDataAdd) - adds
}

/// With a low-priority pool the blob stream (bottom priority) evicts only blobs: the data
/// blocks read before are all still cached. Without one, low and bottom entries share one
/// LRU list and the blobs push the data blocks out.
#[test]
fn low_pri_pool_keeps_data_blocks_over_a_blob_stream() {
    assert_eq!(data_blocks_reread_after_blob_stream(0.5), 0, "the low pool kept every data block");
    assert!(data_blocks_reread_after_blob_stream(0.0) > 0, "one LRU list: the blobs evicted the data blocks");
}

/// `block_cache={...;low_pri_pool_ratio=..}` makes an LRU cache with that pool (the LOG's
/// table-factory block prints it, as RocksDB's `GetPrintableOptions`); ratios RocksDB's
/// `MakeSharedCache` refuses (above 1 together) make no cache of those options, so the table
/// factory's default cache stands, as RocksDB's `CreateFromString` answering OK with none.
#[test]
fn low_pri_pool_ratio_in_an_options_string() {
    let tmp = tempfile::tempdir().unwrap();
    let mut base = Options::default();
    base.create_if_missing(true);
    let o = base
        .get_options_from_string(
            "block_based_table_factory={block_cache={capacity=4M;num_shard_bits=0;high_pri_pool_ratio=0.5;low_pri_pool_ratio=0.25}}",
        )
        .unwrap();
    let db = DB::open(&o, tmp.path()).unwrap();
    assert_eq!(util::int_prop(&db, "rocksdb.block-cache-capacity"), 4 << 20);
    drop(db);
    let log = std::fs::read_to_string(tmp.path().join("LOG")).unwrap();
    assert!(log.contains("    high_pri_pool_ratio: 0.500\n    low_pri_pool_ratio: 0.250\n"), "{log}");

    let o = base
        .get_options_from_string(
            "block_based_table_factory={block_cache={capacity=4M;high_pri_pool_ratio=0.8;low_pri_pool_ratio=0.3}}",
        )
        .unwrap();
    let db = DB::open(&o, tmp.path()).unwrap();
    assert_eq!(util::int_prop(&db, "rocksdb.block-cache-capacity"), 32 << 20, "the default cache");
}
