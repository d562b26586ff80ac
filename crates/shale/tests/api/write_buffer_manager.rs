//! One memtable budget for several databases and families (RocksDB's WriteBufferManager):
//! the memtables of every database given the same manager are charged to it, the oldest
//! memtable is flushed when the budget says so, `allow_stall` makes writers wait for memory
//! (`no_slowdown` writers get Incomplete), and `db_write_buffer_size` is a manager of the
//! database's own.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::time::Duration;

use shale::{ColumnFamilyDescriptor, ErrorKind, Options, WriteBufferManager, WriteOptions, DB};

/// Memtables far larger than the budget: only the manager can trigger a flush.
fn options(wbm: Option<&WriteBufferManager>) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_write_buffer_size(64 << 20);
    if let Some(w) = wbm {
        o.set_write_buffer_manager(w);
    }
    o
}

fn sst_count(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".sst"))
        .count()
}

fn wait_until(mut f: impl FnMut() -> bool) {
    for _ in 0..6000 {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("condition not reached in 60 s");
}

#[test]
fn two_databases_share_one_budget() {
    // Arena blocks are 1 MiB here (an eighth of the write buffer, at most 1 MiB, as
    // RocksDB's arena_block_size), and memory is charged by block.
    const BUDGET: usize = 4 << 20;
    let wbm = WriteBufferManager::new_write_buffer_manager(BUDGET, false);
    let d1 = tempfile::tempdir().unwrap();
    let d2 = tempfile::tempdir().unwrap();
    let db1 = DB::open(&options(Some(&wbm)), d1.path()).unwrap();
    let db2 = DB::open(&options(Some(&wbm)), d2.path()).unwrap();
    assert_eq!(wbm.get_buffer_size(), BUDGET);
    assert!(wbm.enabled());

    // 300 KiB into the first database: charged, under the budget, nothing flushed.
    for i in 0..300u32 {
        db1.put(format!("a{i:05}"), vec![1u8; 1000]).unwrap();
    }
    let after_one = wbm.get_usage();
    assert!(after_one >= 300 * 1000, "usage {after_one} must cover the first database's memtable");
    assert_eq!(sst_count(d1.path()), 0);

    // 12 MiB into the second: the shared budget forces flushes, so the memtables of both
    // together stay near the budget, far below the 64 MiB write buffers.
    for i in 0..12000u32 {
        db2.put(format!("b{i:05}"), vec![2u8; 1000]).unwrap();
    }
    wait_until(|| wbm.get_usage() <= BUDGET);
    assert!(sst_count(d2.path()) > 0, "the manager must have flushed the second database");
    for i in (0..12000u32).step_by(97) {
        assert_eq!(db2.get(format!("b{i:05}")).unwrap().unwrap(), vec![2u8; 1000]);
    }
    for i in (0..300u32).step_by(7) {
        assert_eq!(db1.get(format!("a{i:05}")).unwrap().unwrap(), vec![1u8; 1000]);
    }

    // Closing gives back every byte the databases charged.
    drop(db1);
    drop(db2);
    assert_eq!(wbm.get_usage(), 0, "closed databases still charged to the manager");

    // Everything written is there after reopening.
    let db2 = DB::open(&options(None), d2.path()).unwrap();
    assert_eq!(db2.get(b"b11999").unwrap().unwrap(), vec![2u8; 1000]);
}

#[test]
fn stalled_writers_get_incomplete_with_no_slowdown_and_wait_otherwise() {
    let wbm = WriteBufferManager::new_write_buffer_manager(8 << 20, true);
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(Some(&wbm)), dir.path()).unwrap();
    // 1.5 MB: two 1 MiB arena blocks charged.
    for i in 0..1500u32 {
        db.put(format!("k{i:05}"), vec![3u8; 1000]).unwrap();
    }
    assert_eq!(sst_count(dir.path()), 0);
    assert!(wbm.get_usage() >= 2 << 20, "usage {}", wbm.get_usage());
    // Shrink the budget under what the memtable holds: the next write switches the
    // memtable for a flush, and the memory stays charged until that flush completes.
    wbm.set_buffer_size(100_000);
    let mut w = WriteOptions::default();
    w.set_no_slowdown(true);
    let e = db.put_opt(b"late", b"v", &w).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Incomplete, "{e}");
    assert_eq!(db.get(b"late").unwrap(), None, "a refused write must not be applied");

    // A writer that may wait completes once the flush gives the memory back.
    db.put(b"late", b"v").unwrap();
    assert_eq!(db.get(b"late").unwrap().unwrap(), b"v");
    assert!(sst_count(dir.path()) > 0);
    // The flushed memtable's two blocks are freed; what is left is the new memtable's first
    // block: 4 KiB, or a whole 1 MiB block when its first allocation is a concurrent
    // writers' shard chunk (128 KiB).
    assert!(wbm.get_usage() <= 1 << 20, "usage {} after the flush", wbm.get_usage());
}

#[test]
fn db_write_buffer_size_bounds_memtables_of_all_families() {
    const BUDGET: usize = 2 << 20;
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(None);
    o.set_db_write_buffer_size(BUDGET);
    let names: Vec<String> = (0..10).map(|i| format!("cf{i}")).collect();
    let descs: Vec<_> = names.iter().map(|n| ColumnFamilyDescriptor::new(n, options(None))).collect();
    let db = DB::open_cf_descriptors(&o, dir.path(), descs).unwrap();
    // 10 families, 1 MiB each: 10 MiB against a 2 MiB budget.
    for i in 0..1000u32 {
        for n in &names {
            let cf = db.cf_handle(n).unwrap();
            db.put_cf(cf, format!("k{i:05}"), vec![4u8; 100]).unwrap();
        }
    }
    let total = || {
        names
            .iter()
            .map(|n| {
                db.property_int_value_cf(db.cf_handle(n).unwrap(), "rocksdb.cur-size-all-mem-tables")
                    .unwrap()
                    .unwrap()
            })
            .sum::<u64>()
    };
    wait_until(|| total() <= BUDGET as u64);
    assert!(sst_count(dir.path()) >= 3, "the oldest memtables must have been flushed");
    for n in &names {
        let cf = db.cf_handle(n).unwrap();
        assert_eq!(db.get_cf(cf, b"k00999").unwrap().unwrap(), vec![4u8; 100]);
        assert_eq!(db.get_cf(cf, b"k00000").unwrap().unwrap(), vec![4u8; 100]);
    }
}

/// A manager made with a cache charges the memtables to it (RocksDB's `cost_to_cache`): the
/// cache's usage covers the memtables in 256 KiB reservations, pinned, and falls back when
/// they are flushed and freed.
#[test]
fn a_manager_charged_to_a_cache_reserves_the_memtables_there() {
    let cache = shale::Cache::new_lru_cache(64 << 20);
    let wbm = WriteBufferManager::new_write_buffer_manager_with_cache(32 << 20, false, cache.clone());
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(Some(&wbm)), dir.path()).unwrap();
    assert!(cache.get_usage() >= wbm.get_usage(), "the empty memtables' arenas are charged too");
    for i in 0..20_000 {
        db.put(format!("k{i:06}"), vec![7u8; 100]).unwrap();
    }
    let used = wbm.get_usage();
    assert!(used > 2 << 20, "{used}");
    let usage = cache.get_usage();
    assert!(usage >= used, "cache usage {usage} must cover the memtables' {used}");
    assert!(usage < used + (256 << 10) + 64 * 64, "{usage} vs {used}: reservations of 256 KiB");
    assert!(cache.get_pinned_usage() >= used, "reservations are pinned");
    db.flush().unwrap();
    wait_until(|| cache.get_usage() < usage / 2);
    drop(db);
    assert!(cache.get_usage() < 1 << 20, "{}", cache.get_usage());
}
