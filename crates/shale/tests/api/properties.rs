//! Properties: property_value / property_int_value with RocksDB's names.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use shale::{Options, DB};

use util::int_prop;

#[test]
fn level_key_and_memtable_properties() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, dir.path()).unwrap();
    for l in 0..7 {
        assert_eq!(int_prop(&db, &format!("rocksdb.num-files-at-level{l}")), 0);
    }
    // Past the last level: unknown.
    assert_eq!(db.property_int_value("rocksdb.num-files-at-level7").unwrap(), None);
    assert_eq!(int_prop(&db, "rocksdb.estimate-num-keys"), 0);
    let empty = int_prop(&db, "rocksdb.cur-size-all-mem-tables");

    for i in 0..300u32 {
        db.put(format!("k{i:04}"), [b'v'; 100]).unwrap();
    }
    assert_eq!(int_prop(&db, "rocksdb.estimate-num-keys"), 300);
    let full = int_prop(&db, "rocksdb.cur-size-all-mem-tables");
    assert!(full >= empty + 300 * 100, "memtable size {empty} -> {full}");
    assert_eq!(int_prop(&db, "rocksdb.num-entries-active-mem-table"), 300);

    db.flush().unwrap();
    assert_eq!(int_prop(&db, "rocksdb.num-files-at-level0"), 1);
    assert_eq!(int_prop(&db, "rocksdb.estimate-num-keys"), 300);
    assert!(int_prop(&db, "rocksdb.cur-size-all-mem-tables") < full);
    let sst = int_prop(&db, "rocksdb.total-sst-files-size");
    let on_disk: u64 = util::files_ending(dir.path(), ".sst")
        .iter()
        .map(|n| std::fs::metadata(dir.path().join(n)).unwrap().len())
        .sum();
    assert_eq!(sst, on_disk);

    db.compact_range::<&[u8], &[u8]>(None, None);
    assert_eq!(int_prop(&db, "rocksdb.num-files-at-level0"), 0);
    // With dynamic level sizes, level 0 goes to the base level: the last one here.
    assert_eq!(int_prop(&db, "rocksdb.num-files-at-level6"), 1);

    // The string form of an integer property is its decimal text.
    assert_eq!(db.property_value("rocksdb.num-files-at-level6").unwrap().as_deref(), Some("1"));
    assert_eq!(db.property_value("rocksdb.estimate-num-keys").unwrap().as_deref(), Some("300"));
}

#[test]
fn stats_and_unknown_properties() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put(b"a", b"b").unwrap();
    db.flush().unwrap();
    let stats = db.property_value("rocksdb.stats").unwrap().expect("rocksdb.stats");
    assert!(!stats.is_empty());
    assert!(stats.contains("** Compaction Stats [default] **"), "{stats}");
    assert!(stats.contains("** DB Stats **"), "{stats}");
    assert!(stats.contains("Cumulative writes: 1 writes"), "{stats}");
    assert!(stats.contains("L0"), "the level-0 file is listed: {stats}");
    // rocksdb.stats has no integer form.
    assert_eq!(db.property_int_value("rocksdb.stats").unwrap(), None);

    for unknown in ["rocksdb.no-such-property", "no-prefix", "", "rocksdb.", "rocksdb.num-files-at-levelx"] {
        assert_eq!(db.property_value(unknown).unwrap(), None, "{unknown}");
        assert_eq!(db.property_int_value(unknown).unwrap(), None, "{unknown}");
    }
    // Per column family.
    let cf = db.cf_handle("default").unwrap();
    assert_eq!(db.property_int_value_cf(cf, "rocksdb.num-files-at-level0").unwrap(), Some(1));
    assert_eq!(db.property_value_cf(cf, "rocksdb.bogus").unwrap(), None);
}
