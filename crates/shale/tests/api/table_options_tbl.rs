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

/// Gets of every 3rd key of `keys` (and of a missing key after each) on a database opened
/// with `table`: the key comparisons they made (perf context).
fn gets_comparisons(dir: &std::path::Path, table: &str, keys: &[Vec<u8>]) -> u64 {
    use shale::perf::{set_perf_stats, PerfContext, PerfMetric, PerfStatsLevel};
    let o =
        Options::default().get_options_from_string(format!("block_based_table_factory={{{table}}}")).unwrap();
    let db = DB::open(&o, dir).unwrap();
    set_perf_stats(PerfStatsLevel::EnableCount);
    let mut ctx = PerfContext::default();
    ctx.reset();
    for k in keys.iter().step_by(3) {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(&k[..]));
        let mut missing = k.clone();
        missing.push(0);
        assert_eq!(db.get(&missing).unwrap(), None);
    }
    let n = ctx.metric(PerfMetric::UserKeyComparisonCount);
    set_perf_stats(PerfStatsLevel::Disable);
    // Every key in order through the index too.
    let got: Vec<Vec<u8>> = db.iterator(shale::IteratorMode::Start).map(|r| r.unwrap().0.to_vec()).collect();
    assert_eq!(got, keys);
    let mut it = db.raw_iterator();
    it.seek(&keys[keys.len() / 2]);
    assert_eq!(it.key(), Some(&keys[keys.len() / 2][..]));
    n
}

#[test]
fn index_block_search_type_interpolation_finds_every_key_with_fewer_comparisons() {
    let tmp = tempfile::tempdir().unwrap();
    // Evenly spread keys in small blocks: a flat index of about 1500 entries, flagged uniform.
    let keys: Vec<Vec<u8>> =
        (0..12_000u64).map(|i| [b"user/".as_slice(), &(i * 977).to_be_bytes()].concat()).collect();
    {
        let mut o = Options::default()
            .get_options_from_string("block_based_table_factory={block_size=128;uniform_cv_threshold=0.5}")
            .unwrap();
        o.create_if_missing(true);
        let db = DB::open(&o, tmp.path()).unwrap();
        for k in &keys {
            db.put(k, k).unwrap();
        }
        db.flush().unwrap();
    }
    let binary = gets_comparisons(tmp.path(), "index_block_search_type=kBinary", &keys);
    let auto = gets_comparisons(tmp.path(), "index_block_search_type=kAuto", &keys);
    let interp = gets_comparisons(tmp.path(), "index_block_search_type=kInterpolation", &keys);
    // The data blocks' searches are the same in all three; the index's take about 11 probes
    // a lookup by binary search and a few by interpolation.
    assert!(auto < binary && interp < binary, "binary {binary}, auto {auto}, interpolation {interp}");
    assert_eq!(auto, interp);
    let options_file =
        util::files_ending(tmp.path(), "").into_iter().filter(|f| f.starts_with("OPTIONS-")).max().unwrap();
    let text = std::fs::read_to_string(tmp.path().join(options_file)).unwrap();
    assert!(text.contains("index_block_search_type=kInterpolation"), "{text}");
    let bad = Options::default()
        .get_options_from_string("block_based_table_factory={index_block_search_type=kFast}");
    assert_eq!(bad.err().map(|e| e.kind()), Some(shale::ErrorKind::InvalidArgument));
}

#[test]
fn index_block_search_type_interpolation_requires_the_bytewise_comparator() {
    let tmp = tempfile::tempdir().unwrap();
    let open = |search: &str| {
        let mut o = Options::default()
            .get_options_from_string(format!(
                "block_based_table_factory={{index_block_search_type={search}}}"
            ))
            .unwrap();
        o.create_if_missing(true);
        o.set_comparator("shale.test.Reverse", Box::new(|a: &[u8], b: &[u8]| b.cmp(a)));
        DB::open(&o, tmp.path()).map(drop)
    };
    let e = open("kInterpolation").unwrap_err();
    assert_eq!(e.kind(), shale::ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("Interpolation search requires BytewiseComparator"), "{e}");
    open("kAuto").unwrap();
}
