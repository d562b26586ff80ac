//! The perf context counts where RocksDB's does (`perf::set_perf_stats`, `PerfContext`,
//! `PerfMetric`): per thread, only from `EnableCount`, times only from
//! `EnableTimeExceptForMutex`, and `report` is RocksDB's `PerfContext::ToString` text.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::perf::{set_perf_stats, PerfContext, PerfMetric, PerfStatsLevel};
use shale::{BlockBasedOptions, Cache, IteratorMode, Options, DB};

fn open(dir: &std::path::Path) -> DB {
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(&Cache::new_lru_cache(1 << 20));
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_block_based_table_factory(&t);
    DB::open(&o, dir).unwrap()
}

#[test]
fn iterator_skips_are_counted_as_rocksdb_counts_them() {
    let tmp = tempfile::tempdir().unwrap();
    let db = open(tmp.path());
    for i in 0..10 {
        db.put(format!("k{i}"), b"v").unwrap();
    }
    for i in 0..5 {
        db.delete(format!("k{i}")).unwrap();
    }
    set_perf_stats(PerfStatsLevel::EnableCount);
    let mut ctx = PerfContext::default();
    ctx.reset();
    let n = db.iterator(IteratorMode::Start).count();
    assert_eq!(n, 5);
    // Five deletions passed over, the five Puts under them, and one step off each of the
    // five live keys (RocksDB's DBIter::Next counts the entry it leaves).
    assert_eq!(ctx.metric(PerfMetric::InternalDeleteSkippedCount), 5);
    assert_eq!(ctx.metric(PerfMetric::InternalKeySkippedCount), 10);
    assert!(ctx.metric(PerfMetric::UserKeyComparisonCount) > 0);
    assert_eq!(ctx.metric(PerfMetric::IterReadBytes), 5 * 3);
    let report = ctx.report(true);
    assert!(report.contains("internal_delete_skipped_count = 5"), "{report}");
    assert!(report.contains("iter_next_count = 5, iter_seek_count = 1"), "zeros excluded: {report}");
    assert!(report.contains("iter_seek_count = 1"), "{report}");
    assert!(!report.ends_with(", ") && !report.contains(" = 0"), "{report}");
    // All 120 of RocksDB 11.8.1's fields, in its order, when zeros are kept.
    let full = ctx.report(false);
    let names: Vec<&str> = full.split(", ").map(|kv| kv.split(" = ").next().unwrap()).collect();
    assert_eq!(names.len(), 120, "{full}");
    assert_eq!(names[0], "user_key_comparison_count");
    assert_eq!(names[1], "block_cache_hit_count");
    assert_eq!(names[119], "multiscan_io_coalesced_nonadjacent");
    ctx.reset();
    assert_eq!(ctx.metric(PerfMetric::InternalKeySkippedCount), 0);
    assert_eq!(ctx.report(true), "");
    set_perf_stats(PerfStatsLevel::Disable);
}

#[test]
fn point_reads_count_memtables_blocks_and_the_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let db = open(tmp.path());
    for i in 0..100 {
        db.put(format!("key{i:03}"), vec![b'x'; 100]).unwrap();
    }
    db.flush().unwrap();
    // Opens the table (its index and filter blocks are read then) and caches its first block.
    db.get(b"key000").unwrap().unwrap();
    set_perf_stats(PerfStatsLevel::EnableCount);
    let mut ctx = PerfContext::default();
    ctx.reset();
    assert_eq!(db.get(b"key099").unwrap().unwrap().len(), 100);
    // The active memtable (empty after the flush) was looked at, then a data block read.
    assert_eq!(ctx.metric(PerfMetric::GetFromMemtableCount), 1);
    assert_eq!(ctx.metric(PerfMetric::BlockReadCount), 1);
    assert!(ctx.metric(PerfMetric::BlockReadByte) > 100);
    assert_eq!(ctx.metric(PerfMetric::BlockCacheHitCount), 0);
    assert_eq!(ctx.metric(PerfMetric::GetReadBytes), 100);
    // No times at EnableCount.
    assert_eq!(ctx.metric(PerfMetric::BlockReadTime), 0);
    assert_eq!(ctx.metric(PerfMetric::GetFromOutputFilesTime), 0);
    // The same block again comes from the cache.
    db.get(b"key098").unwrap().unwrap();
    assert_eq!(ctx.metric(PerfMetric::BlockReadCount), 1);
    assert_eq!(ctx.metric(PerfMetric::BlockCacheHitCount), 1);
    assert_eq!(ctx.metric(PerfMetric::GetReadBytes), 200);

    // Times from EnableTimeExceptForMutex; the DB mutex only at EnableTime.
    set_perf_stats(PerfStatsLevel::EnableTimeExceptForMutex);
    ctx.reset();
    db.get(b"key052").unwrap().unwrap();
    db.put(b"new", b"v").unwrap();
    assert!(ctx.metric(PerfMetric::GetFromOutputFilesTime) > 0);
    assert!(ctx.metric(PerfMetric::WriteMemtableTime) > 0);
    assert!(ctx.metric(PerfMetric::WriteWalTime) > 0);
    assert_eq!(ctx.metric(PerfMetric::DbMutexLockNanos), 0);
    set_perf_stats(PerfStatsLevel::EnableTime);
    db.property_int_value("rocksdb.num-immutable-mem-table").unwrap();
    assert!(ctx.metric(PerfMetric::DbMutexLockNanos) > 0);

    // Disabled: nothing moves.
    set_perf_stats(PerfStatsLevel::Disable);
    ctx.reset();
    db.get(b"key053").unwrap().unwrap();
    assert_eq!(ctx.report(true), "");
}

#[test]
fn counters_belong_to_the_thread() {
    let tmp = tempfile::tempdir().unwrap();
    let db = std::sync::Arc::new(open(tmp.path()));
    db.put(b"a", b"1").unwrap();
    set_perf_stats(PerfStatsLevel::EnableCount);
    let mut ctx = PerfContext::default();
    ctx.reset();
    let db2 = db.clone();
    let other = std::thread::spawn(move || {
        set_perf_stats(PerfStatsLevel::EnableCount);
        db2.get(b"a").unwrap().unwrap();
        PerfContext::default().metric(PerfMetric::GetFromMemtableCount)
    })
    .join()
    .unwrap();
    assert_eq!(other, 1);
    assert_eq!(ctx.metric(PerfMetric::GetFromMemtableCount), 0);
    set_perf_stats(PerfStatsLevel::Disable);
}
