//! Memtables: write_buffer_size and max_write_buffer_number switch memtables and flush them
//! to level 0 in the background; flush() / flush_cf(); data survives reopen with and
//! without a flush.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::families;
use families::open_cf_all;

use crate::util;

use shale::{FlushOptions, Options, DB};

use util::{files_ending, int_prop, value, wait_until};

fn small_opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(64 << 10);
    o.set_max_write_buffer_number(3);
    o.set_disable_auto_compactions(true); // level-0 files stay where flushes put them
    o.set_compression_type(shale::DBCompressionType::None);
    o
}

#[test]
fn full_memtables_switch_and_flush_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let o = small_opts();
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(int_prop(&db, "rocksdb.num-files-at-level0"), 0);
    let empty = int_prop(&db, "rocksdb.cur-size-all-mem-tables");
    let mut max_imm = 0;
    for i in 0..1500u64 {
        db.put(format!("key{i:06}"), value(i, 1000)).unwrap();
        let imm = int_prop(&db, "rocksdb.num-immutable-mem-table");
        max_imm = max_imm.max(imm);
        // Writers stall rather than let unflushed memtables exceed the limit.
        assert!(imm <= 2, "{imm} immutable memtables with max_write_buffer_number = 3");
        let all = int_prop(&db, "rocksdb.cur-size-all-mem-tables");
        assert!(all <= 3 * (64 << 10) + (64 << 10), "memtables hold {all} bytes");
    }
    // About 1.5 MB through 64 KiB memtables: many background flushes.
    wait_until(30, "flushes", || int_prop(&db, "rocksdb.num-immutable-mem-table") == 0);
    let l0 = int_prop(&db, "rocksdb.num-files-at-level0");
    assert!(l0 >= 15, "only {l0} level-0 files after ~1.5 MB of writes");
    assert_eq!(files_ending(dir.path(), ".sst").len() as u64, l0);
    assert!(int_prop(&db, "rocksdb.cur-size-all-mem-tables") > empty, "the active memtable holds data");
    assert!(int_prop(&db, "rocksdb.num-entries-active-mem-table") < 1500);
    for i in (0..1500u64).step_by(37) {
        assert_eq!(db.get(format!("key{i:06}")).unwrap(), Some(value(i, 1000)));
    }
    // Flushed WALs are removed: no more WALs than memtables.
    assert!(files_ending(dir.path(), ".log").len() <= 3, "{:?}", files_ending(dir.path(), ".log"));
    let _ = max_imm;
}

#[test]
fn manual_flush_and_flush_cf() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = small_opts();
    o.set_write_buffer_size(64 << 20); // no automatic flushes
    o.create_missing_column_families(true);
    let db = open_cf_all(&o, dir.path(), ["other"]).unwrap();
    let other = db.cf_handle("other").unwrap();
    db.put(b"a", b"1").unwrap();
    db.put_cf(other, b"b", b"2").unwrap();
    assert!(int_prop(&db, "rocksdb.cur-size-all-mem-tables") > 0);
    assert_eq!(int_prop(&db, "rocksdb.num-entries-active-mem-table"), 1);

    // flush() flushes the default column family only, and waits.
    db.flush().unwrap();
    assert_eq!(int_prop(&db, "rocksdb.num-files-at-level0"), 1);
    assert_eq!(int_prop(&db, "rocksdb.num-entries-active-mem-table"), 0);
    assert_eq!(int_prop(&db, "rocksdb.num-immutable-mem-table"), 0);
    let cf_prop = |name: &str| db.property_int_value_cf(other, name).unwrap().unwrap();
    assert_eq!(cf_prop("rocksdb.num-files-at-level0"), 0, "flush() must not flush other families");
    assert_eq!(cf_prop("rocksdb.num-entries-active-mem-table"), 1);

    // flush_cf flushes that family only.
    db.put(b"a2", b"1").unwrap();
    db.flush_cf(other).unwrap();
    assert_eq!(cf_prop("rocksdb.num-files-at-level0"), 1);
    assert_eq!(cf_prop("rocksdb.num-entries-active-mem-table"), 0);
    assert_eq!(int_prop(&db, "rocksdb.num-files-at-level0"), 1);
    assert_eq!(int_prop(&db, "rocksdb.num-entries-active-mem-table"), 1);

    // Flushing an empty memtable writes no file.
    db.flush_cf(other).unwrap();
    assert_eq!(cf_prop("rocksdb.num-files-at-level0"), 1);

    // flush_opt without waiting still ends up on disk.
    let mut fo = FlushOptions::default();
    fo.set_wait(false);
    db.flush_opt(&fo).unwrap();
    wait_until(30, "flush without wait", || int_prop(&db, "rocksdb.num-files-at-level0") == 2);
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get(b"a2").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get_cf(other, b"b").unwrap(), Some(b"2".to_vec()));
}

#[test]
fn data_survives_reopen_with_and_without_flush() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = small_opts();
    o.set_write_buffer_size(1 << 20);
    {
        let db = DB::open(&o, dir.path()).unwrap();
        for i in 0..500u64 {
            db.put(format!("flushed{i:04}"), value(i, 200)).unwrap();
        }
        db.flush().unwrap();
        for i in 0..500u64 {
            db.put(format!("walonly{i:04}"), value(i + 1000, 200)).unwrap();
        }
        db.delete(b"flushed0007").unwrap();
        assert_eq!(int_prop(&db, "rocksdb.num-files-at-level0"), 1);
    }
    let db = DB::open(&o, dir.path()).unwrap();
    for i in 0..500u64 {
        let want = if i == 7 { None } else { Some(value(i, 200)) };
        assert_eq!(db.get(format!("flushed{i:04}")).unwrap(), want);
        assert_eq!(db.get(format!("walonly{i:04}")).unwrap(), Some(value(i + 1000, 200)));
    }
    assert_eq!(db.iterator(shale::IteratorMode::Start).count(), 999);
    // Reopening twice more (recovering what the last open recovered) changes nothing.
    drop(db);
    drop(DB::open(&o, dir.path()).unwrap());
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(db.iterator(shale::IteratorMode::Start).count(), 999);
    assert_eq!(db.get(b"walonly0499").unwrap(), Some(value(1499, 200)));
}
