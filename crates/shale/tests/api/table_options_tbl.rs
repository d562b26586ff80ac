//! Block-based table options RocksDB 11.8.1 parses without a rust-rocksdb setter (helper
//! `tbl`, issue 33): `block_cache` given as text makes an LRU cache of that capacity, and
//! `prepopulate_block_cache` puts a flush's (or compaction's) data blocks into the block
//! cache as they are written, so the first reads of them hit.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::statistics::Ticker;
use shale::{BlockBasedOptions, Cache, Options, DB};

use crate::util;

#[test]
fn block_cache_text_sets_an_lru_cache_of_that_capacity() {
    let tmp = tempfile::tempdir().unwrap();
    let mut base = Options::default();
    base.create_if_missing(true);
    let o =
        base.get_options_from_string("block_based_table_factory={block_cache=3M;block_size=4096}").unwrap();
    let db = DB::open(&o, tmp.path()).unwrap();
    assert_eq!(util::int_prop(&db, "rocksdb.block-cache-capacity"), 3 << 20);
    drop(db);
    let o = base
        .get_options_from_string("block_based_table_factory={block_cache={capacity=5M;num_shard_bits=1;}}")
        .unwrap();
    let db = DB::open(&o, tmp.path()).unwrap();
    assert_eq!(util::int_prop(&db, "rocksdb.block-cache-capacity"), 5 << 20);
    drop(db);
    let bad = base.get_options_from_string("block_based_table_factory={block_cache=3Q}");
    assert_eq!(bad.err().unwrap().kind(), shale::ErrorKind::InvalidArgument);
}

/// Writes 2000 keys (many data blocks), flushes, then reads every key once; returns the
/// data-block cache hits and misses the reads counted.
fn flush_then_read(t: &BlockBasedOptions, set_later: Option<&str>) -> (u64, u64, u64) {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.enable_statistics();
    o.set_block_based_table_factory(t);
    let db = DB::open(&o, tmp.path()).unwrap();
    if let Some(v) = set_later {
        db.set_options(&[("block_based_table_factory", v)]).unwrap();
    }
    for i in 0..2000u32 {
        db.put(format!("key{i:06}"), vec![b'v'; 100]).unwrap();
    }
    db.flush().unwrap();
    let adds = o.get_ticker_count(Ticker::BlockCacheDataAdd);
    let (h0, m0) =
        (o.get_ticker_count(Ticker::BlockCacheDataHit), o.get_ticker_count(Ticker::BlockCacheDataMiss));
    for i in 0..2000u32 {
        assert_eq!(db.get(format!("key{i:06}")).unwrap().unwrap(), vec![b'v'; 100]);
    }
    let hits = o.get_ticker_count(Ticker::BlockCacheDataHit) - h0;
    let misses = o.get_ticker_count(Ticker::BlockCacheDataMiss) - m0;
    (adds, hits, misses)
}

#[test]
fn prepopulate_block_cache_flush_only_warms_the_flushed_blocks() {
    let cache = Cache::new_lru_cache(64 << 20);
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(&cache);
    // Off (RocksDB's default): the flushed blocks enter the cache only as they are read.
    let (adds, hits, misses) = flush_then_read(&t, None);
    assert_eq!(adds, 0, "no block is cached by the flush");
    assert!(misses > 10, "each data block misses once: {misses}");
    assert!(hits > 0);

    // kFlushOnly: every data block the flush wrote is in the cache; no read misses.
    t.set_prepopulate_block_cache(shale::PrepopulateBlockCache::FlushOnly);
    let (adds, hits, misses) = flush_then_read(&t, None);
    assert!(adds > 10, "the flush cached its data blocks: {adds}");
    assert_eq!(misses, 0, "every read hits a warmed block");
    assert_eq!(hits, 2000);

    // set_options turns it on for the next flush, as RocksDB's mutable table option.
    let cache = Cache::new_lru_cache(64 << 20);
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(&cache);
    let (adds, _, misses) = flush_then_read(&t, Some("{prepopulate_block_cache=kFlushOnly;}"));
    assert!(adds > 10);
    assert_eq!(misses, 0);
}

#[test]
fn prepopulate_block_cache_compaction_outputs_only_with_flush_and_compaction() {
    for (mode, warmed) in [("kFlushOnly", false), ("kFlushAndCompaction", true)] {
        let tmp = tempfile::tempdir().unwrap();
        let mut base = Options::default();
        base.create_if_missing(true);
        base.enable_statistics();
        base.set_disable_auto_compactions(true);
        let o = base
            .get_options_from_string(format!(
                "block_based_table_factory={{block_cache=64M;prepopulate_block_cache={mode};}}"
            ))
            .unwrap();
        let db = DB::open(&o, tmp.path()).unwrap();
        for round in 0..2u32 {
            for i in 0..1000u32 {
                db.put(format!("key{i:06}"), format!("value-{round}-{i:040}")).unwrap();
            }
            db.flush().unwrap();
        }
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        let m0 = o.get_ticker_count(Ticker::BlockCacheDataMiss);
        for i in 0..1000u32 {
            assert_eq!(
                db.get(format!("key{i:06}")).unwrap().unwrap(),
                format!("value-1-{i:040}").into_bytes()
            );
        }
        let misses = o.get_ticker_count(Ticker::BlockCacheDataMiss) - m0;
        if warmed {
            assert_eq!(misses, 0, "{mode}: the compaction's output blocks are cached");
        } else {
            assert!(misses > 0, "{mode}: a compaction's outputs are read from the file");
        }
    }
}

/// `detect_filter_construct_corruption` is taken from an options string, set by
/// `set_options`, written to the OPTIONS file, and flushes with it build sound filters
/// (a damaged one failing the build is shown in `shale-format`'s
/// `layout_tests::detect_filter_construct_corruption_fails_the_table`).
#[test]
fn detect_filter_construct_corruption_is_an_option_of_the_table() {
    let tmp = tempfile::tempdir().unwrap();
    let mut base = Options::default();
    base.create_if_missing(true);
    let o = base
        .get_options_from_string(
            "block_based_table_factory={filter_policy=bloomfilter:10:false;detect_filter_construct_corruption=true}",
        )
        .unwrap();
    let db = DB::open(&o, tmp.path()).unwrap();
    for i in 0..1000u32 {
        db.put(format!("k{i:05}"), b"v").unwrap();
    }
    db.flush().unwrap();
    db.set_options(&[("block_based_table_factory", "{detect_filter_construct_corruption=false;}")]).unwrap();
    db.put(b"k99999", b"v").unwrap();
    db.flush().unwrap();
    for i in 0..1000u32 {
        assert_eq!(db.get(format!("k{i:05}")).unwrap().unwrap(), b"v");
    }
    drop(db);
    let options_file =
        util::files_ending(tmp.path(), "").into_iter().filter(|f| f.starts_with("OPTIONS-")).max().unwrap();
    let text = std::fs::read_to_string(tmp.path().join(options_file)).unwrap();
    assert!(text.contains("detect_filter_construct_corruption=false"), "{text}");
    assert!(text.contains("prepopulate_block_cache=kDisable"), "{text}");
}
