//! `MemoryUsageBuilder` / `get_memory_usage_stats` (RocksDB's `MemoryUtil`): memtables of every
//! family, unflushed memtables, open table readers (`rocksdb.estimate-table-readers-mem`), and
//! each distinct cache's usage once.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::families;
use families::open_cf_all;

use shale::perf::{get_memory_usage_stats, MemoryUsageBuilder};
use shale::{BlockBasedOptions, Cache, Options};

#[test]
fn report_follows_memtables_readers_and_caches() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = Cache::new_lru_cache(4 << 20);
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(&cache);
    t.set_bloom_filter(10.0, false);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_block_based_table_factory(&t);
    let db = open_cf_all(&o, tmp.path(), ["other"]).unwrap();
    let empty = get_memory_usage_stats(Some(&[&db]), Some(&[&cache])).unwrap();
    // RocksDB's InternalStats puts its cache-entry-stats collector in the cache at open: an
    // entry of charge 0 whose bookkeeping (64 bytes) counts, held while the database is open.
    assert_eq!(empty.cache_total, 64);
    assert_eq!(empty.mem_table_readers_total, 0);

    let other = db.cf_handle("other").unwrap();
    for i in 0..1000 {
        db.put(format!("k{i:05}"), vec![b'v'; 100]).unwrap();
        db.put_cf(&other, format!("k{i:05}"), vec![b'w'; 100]).unwrap();
    }
    let before_flush = get_memory_usage_stats(Some(&[&db]), None).unwrap();
    assert!(before_flush.mem_table_total > 2 * 100_000, "both families' memtables: {before_flush:?}");
    assert_eq!(before_flush.mem_table_unflushed, before_flush.mem_table_total);
    let default_only = db.property_int_value("rocksdb.size-all-mem-tables").unwrap().unwrap();
    assert!(before_flush.mem_table_total > default_only);

    db.flush().unwrap();
    for i in (0..1000).step_by(10) {
        assert!(db.get(format!("k{i:05}")).unwrap().is_some());
    }
    let mut b = MemoryUsageBuilder::new().unwrap();
    b.add_db(&db);
    b.add_cache(&cache);
    b.add_cache(&cache);
    let mu = b.build().unwrap();
    assert!(mu.approximate_mem_table_total() < before_flush.mem_table_total, "default family flushed");
    assert!(mu.approximate_mem_table_readers_total() > 0, "the open table's index and filter");
    assert_eq!(
        mu.approximate_mem_table_readers_total(),
        db.property_int_value("rocksdb.estimate-table-readers-mem").unwrap().unwrap()
    );
    assert!(mu.approximate_cache_total() > 0);
    assert_eq!(mu.approximate_cache_total(), cache.get_usage() as u64, "the cache counted once");
}
