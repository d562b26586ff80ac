//! The table temperatures `default_write_temperature` and `last_level_temperature` record
//! in the MANIFEST (field 9 of a new-file entry, RocksDB's `Temperature` byte) are what
//! RocksDB 11.8.1 reads: its `ldb manifest_dump --verbose` prints each table's temperature,
//! and its `ldb scan` reads the database (with the OPTIONS file naming both options).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use shale::{Options, DB};

#[test]
fn rocksdb_reads_the_temperatures_shale_records() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let o =
        o.get_options_from_string("default_write_temperature=kWarm;last_level_temperature=kCold").unwrap();
    let db = DB::open(&o, dir).unwrap();
    for round in 0..2 {
        for i in 0..300u32 {
            db.put(format!("k{i:05}"), format!("v{i}-{round}")).unwrap();
        }
        db.flush().unwrap();
    }
    // The two tables merge into one in the last level (kCold); the next flush is kWarm.
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    db.set_options(&[("default_write_temperature", "kHot")]).unwrap();
    for i in 0..50u32 {
        db.put(format!("h{i:05}"), format!("h{i}")).unwrap();
    }
    db.flush().unwrap();
    let pairs = tools::shale_scan(&db, "default");
    let mut want: Vec<(i32, u8)> =
        db.live_files().unwrap().iter().map(|f| (f.level, if f.level == 6 { 0x0C } else { 0x04 })).collect();
    want.sort();
    assert_eq!(want, vec![(0, 0x04), (6, 0x0C)]);
    drop(db);
    if !tools::use_rocksdb_11("write_temperatures") {
        return;
    }
    let out = tools::run_tool(
        "ldb",
        &tools::args(&["manifest_dump", "--verbose", &format!("--db={}", dir.display())]),
    );
    // RocksDB's VersionEdit::DebugString: " temperature: <byte>" on each added file that has one.
    assert!(out.contains("temperature: 12"), "kCold in:\n{out}");
    assert!(out.contains("temperature: 4"), "kHot in:\n{out}");
    assert!(out.contains("temperature: 8"), "the first flushes' kWarm in:\n{out}");
    tools::assert_same_pairs(&tools::ldb_scan(dir, None), &pairs, "write_temperatures");
}
