//! `Options::set_row_cache` (RocksDB's row cache): a point lookup that finds its key in a table
//! file caches the entry, and the next lookup of it answers from the cache (ROW_CACHE_HIT)
//! without the file's blocks; a newer table or an older snapshot reads what it must.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::statistics::Ticker;
use shale::{BlockBasedOptions, Cache, Options, DB};

#[test]
fn point_lookups_hit_the_row_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let row_cache = Cache::new_lru_cache(1 << 20);
    let block_cache = Cache::new_lru_cache(1 << 20);
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(&block_cache);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.enable_statistics();
    o.set_row_cache(&row_cache);
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, tmp.path()).unwrap();
    for i in 0..1000 {
        db.put(format!("k{i:04}"), format!("v{i}")).unwrap();
    }
    // From the memtable: no row cache.
    assert_eq!(db.get(b"k0001").unwrap().unwrap(), b"v1");
    assert_eq!(o.get_ticker_count(Ticker::RowCacheMiss), 0);
    db.flush().unwrap();
    let row_usage = row_cache.get_usage();

    assert_eq!(db.get(b"k0001").unwrap().unwrap(), b"v1");
    assert_eq!(o.get_ticker_count(Ticker::RowCacheMiss), 1);
    assert_eq!(o.get_ticker_count(Ticker::RowCacheHit), 0);
    assert!(row_cache.get_usage() > row_usage, "the row was cached");
    let data_hits =
        o.get_ticker_count(Ticker::BlockCacheDataHit) + o.get_ticker_count(Ticker::BlockCacheDataMiss);
    for _ in 0..3 {
        assert_eq!(db.get(b"k0001").unwrap().unwrap(), b"v1");
    }
    assert_eq!(o.get_ticker_count(Ticker::RowCacheHit), 3);
    let after =
        o.get_ticker_count(Ticker::BlockCacheDataHit) + o.get_ticker_count(Ticker::BlockCacheDataMiss);
    assert_eq!(after, data_hits, "a row-cache hit reads no data block");
    // Absent keys are not cached (RocksDB caches only what it found).
    assert!(db.get(b"nope").unwrap().is_none());
    assert!(db.get(b"nope").unwrap().is_none());
    assert_eq!(o.get_ticker_count(Ticker::RowCacheHit), 3);

    // A newer value in a newer table wins; an older snapshot still sees the old one.
    let snap = db.snapshot();
    db.put(b"k0001", b"new").unwrap();
    db.delete(b"k0002").unwrap();
    db.flush().unwrap();
    assert_eq!(db.get(b"k0001").unwrap().unwrap(), b"new");
    assert!(db.get(b"k0002").unwrap().is_none());
    assert_eq!(snap.get(b"k0001").unwrap().unwrap(), b"v1");
    assert_eq!(snap.get(b"k0002").unwrap().unwrap(), b"v2");
    assert_eq!(snap.get(b"k0002").unwrap().unwrap(), b"v2");
    assert_eq!(db.get(b"k0001").unwrap().unwrap(), b"new");
    // After a compaction the rows come from the new file, right again.
    drop(snap);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    for _ in 0..2 {
        assert_eq!(db.get(b"k0001").unwrap().unwrap(), b"new");
        assert!(db.get(b"k0002").unwrap().is_none());
        assert_eq!(db.get(b"k0999").unwrap().unwrap(), b"v999");
    }
}
