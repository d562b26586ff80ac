//! The tickers of features built after the first statistics: index and filter blocks in the
//! block cache (`cache_index_and_filter_blocks`), inserts a strict cache refuses, the row
//! cache, and FIFO compaction by size and by TTL. Each test fails if its tickers stop
//! counting, and checks they are listed in `statistics::COUNTED_TICKERS`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::statistics::{why_not_counted, Ticker, COUNTED_TICKERS};
use shale::{
    BlockBasedOptions, Cache, DBCompactionStyle, DBCompressionType, FifoCompactOptions, LruCacheOptions,
    Options, WaitForCompactOptions, DB,
};

fn listed(tickers: &[Ticker]) {
    for t in tickers {
        assert!(COUNTED_TICKERS.contains(t), "{} is counted but not listed", t.name());
        assert!(why_not_counted(*t).is_none(), "{}", t.name());
    }
}

fn fill(db: &DB, prefix: &str, n: usize) {
    for i in 0..n {
        db.put(format!("{prefix}{i:05}"), vec![b'v'; 100]).unwrap();
    }
    db.flush().unwrap();
}

#[test]
fn index_and_filter_blocks_in_the_cache_count_their_hits_misses_and_adds() {
    use Ticker::*;
    let tmp = tempfile::tempdir().unwrap();
    let mut cache = Cache::new_lru_cache(8 << 20);
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(&cache);
    t.set_bloom_filter(10.0, false);
    t.set_cache_index_and_filter_blocks(true);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_block_based_table_factory(&t);
    o.enable_statistics();
    let db = DB::open(&o, tmp.path()).unwrap();
    fill(&db, "k", 500);
    // Shale opens a table at its first read: that puts its index and filter in the cache.
    assert!(db.get(b"k00000").unwrap().is_some());
    assert_eq!(o.get_ticker_count(BlockCacheIndexAdd), 1);
    assert_eq!(o.get_ticker_count(BlockCacheFilterAdd), 1);
    assert!(o.get_ticker_count(BlockCacheIndexBytesInsert) > 0);
    assert!(o.get_ticker_count(BlockCacheFilterBytesInsert) > 0);
    // Reads find them there: one index and one filter hit per read of the table.
    let (index_hits, filter_hits) =
        (o.get_ticker_count(BlockCacheIndexHit), o.get_ticker_count(BlockCacheFilterHit));
    for i in 0..10 {
        assert!(db.get(format!("k{i:05}")).unwrap().is_some());
    }
    assert_eq!(o.get_ticker_count(BlockCacheIndexHit), index_hits + 10);
    assert_eq!(o.get_ticker_count(BlockCacheFilterHit), filter_hits + 10);
    assert_eq!(o.get_ticker_count(BlockCacheIndexMiss), 0);
    assert_eq!(o.get_ticker_count(BlockCacheFilterMiss), 0);
    // Emptied, the cache misses them once, then holds them again.
    cache.set_capacity(0);
    cache.set_capacity(8 << 20);
    for _ in 0..2 {
        assert!(db.get(b"k00001").unwrap().is_some());
    }
    assert_eq!(o.get_ticker_count(BlockCacheIndexMiss), 1);
    assert_eq!(o.get_ticker_count(BlockCacheFilterMiss), 1);
    assert_eq!(o.get_ticker_count(BlockCacheIndexAdd), 2);
    assert_eq!(o.get_ticker_count(BlockCacheFilterAdd), 2);
    assert_eq!(o.get_ticker_count(BlockCacheIndexHit), index_hits + 11);
    listed(&[
        BlockCacheIndexMiss,
        BlockCacheIndexHit,
        BlockCacheIndexAdd,
        BlockCacheIndexBytesInsert,
        BlockCacheFilterMiss,
        BlockCacheFilterHit,
        BlockCacheFilterAdd,
        BlockCacheFilterBytesInsert,
    ]);
}

#[test]
fn a_strict_cache_that_refuses_an_insert_counts_a_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let mut lru = LruCacheOptions::default();
    lru.set_capacity(64);
    lru.set_strict_capacity_limit(true);
    let cache = Cache::new_lru_cache_opts(&lru);
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(&cache);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_block_based_table_factory(&t);
    o.enable_statistics();
    let db = DB::open(&o, tmp.path()).unwrap();
    fill(&db, "k", 200);
    // A data block of about 4 KiB never fits in 64 bytes: the read fails, as RocksDB's.
    assert!(db.get(b"k00001").is_err());
    assert_eq!(o.get_ticker_count(Ticker::BlockCacheAddFailures), 1);
    listed(&[Ticker::BlockCacheAddFailures]);
}

#[test]
fn the_row_cache_counts_a_miss_then_a_hit() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_row_cache(&Cache::new_lru_cache(1 << 20));
    o.enable_statistics();
    let db = DB::open(&o, tmp.path()).unwrap();
    fill(&db, "k", 100);
    for _ in 0..3 {
        assert!(db.get(b"k00007").unwrap().is_some());
    }
    assert_eq!(o.get_ticker_count(Ticker::RowCacheMiss), 1);
    assert_eq!(o.get_ticker_count(Ticker::RowCacheHit), 2);
    listed(&[Ticker::RowCacheHit, Ticker::RowCacheMiss]);
}

fn fifo(max_bytes: u64, ttl: u64) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(DBCompressionType::None);
    o.set_compaction_style(DBCompactionStyle::Fifo);
    let mut f = FifoCompactOptions::default();
    f.set_max_table_files_size(max_bytes);
    o.set_fifo_compaction_options(&f);
    o.set_ttl(ttl);
    o.enable_statistics();
    o
}

#[test]
fn fifo_counts_its_deletions_by_size_and_by_ttl() {
    let tmp = tempfile::tempdir().unwrap();
    // By size: a bound of about two tables, five tables written.
    let o = fifo(2 * 500 * 110, 0);
    let db = DB::open(&o, tmp.path()).unwrap();
    for t in 0..5 {
        fill(&db, &format!("t{t}-"), 500);
        db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    }
    assert!(o.get_ticker_count(Ticker::FifoMaxSizeCompactions) >= 2);
    assert_eq!(o.get_ticker_count(Ticker::FifoTtlCompactions), 0);
    drop(db);

    // By TTL: a table older than five seconds goes when the next flush looks. (Ages are whole
    // seconds, expired once now - time > ttl: 6.1 s makes the old table expired whatever the
    // rounding, and the new one stays young unless more than 5 s pass before a later pick,
    // which would count a second TTL compaction: a margin for a loaded machine, where 2 s
    // was not enough.)
    let tmp = tempfile::tempdir().unwrap();
    let o = fifo(1 << 30, 5);
    let db = DB::open(&o, tmp.path()).unwrap();
    fill(&db, "old-", 100);
    std::thread::sleep(std::time::Duration::from_millis(6100));
    fill(&db, "new-", 100);
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    assert_eq!(o.get_ticker_count(Ticker::FifoTtlCompactions), 1);
    assert_eq!(o.get_ticker_count(Ticker::FifoMaxSizeCompactions), 0);
    assert_eq!(db.get(b"old-00001").unwrap(), None);
    listed(&[Ticker::FifoMaxSizeCompactions, Ticker::FifoTtlCompactions]);
}
