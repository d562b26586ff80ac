//! `add_compact_on_deletion_collector_factory`: a flushed table with a run of deletions
//! (at least `trigger` in a sliding window of `window` entries) is marked for compaction,
//! and the compaction picker compacts it although no level is over its target; the same
//! writes without the collector leave level 0 alone. The LOG names the collector as
//! RocksDB's does.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{Options, WaitForCompactOptions, DB};

fn l0_files(db: &DB) -> u64 {
    db.property_int_value("rocksdb.num-files-at-level0").unwrap().unwrap()
}

/// 1000 puts flushed, then 300 deletions of consecutive keys (and a few puts) flushed:
/// returns (L0 files after background work, keys left).
fn scenario(collector: Option<(usize, usize, f64)>) -> (u64, usize, String) {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    if let Some((w, t, r)) = collector {
        o.add_compact_on_deletion_collector_factory(w, t, r);
    }
    let db = DB::open(&o, tmp.path()).unwrap();
    for i in 0..1000u32 {
        db.put(format!("key{i:05}"), format!("value {i}")).unwrap();
    }
    db.flush().unwrap();
    for i in 100..400u32 {
        db.delete(format!("key{i:05}")).unwrap();
    }
    for i in 0..10u32 {
        db.put(format!("new{i:05}"), b"x").unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    let left = db.iterator(shale::IteratorMode::Start).count();
    let log = std::fs::read_to_string(tmp.path().join("LOG")).unwrap();
    (l0_files(&db), left, log)
}

#[test]
fn deletion_run_marks_table_and_picker_compacts_it() {
    // Two tables in L0 (trigger 4): nothing compacts without the collector.
    let (l0, left, log) = scenario(None);
    assert_eq!(l0, 2);
    assert_eq!(left, 710);
    assert!(log.contains("Options.table_properties_collectors: \n"), "no collector line");
    // 300 deletions in a row: any window of 128 holds 128 >= 100.
    let (l0, left, log) = scenario(Some((128, 100, 0.0)));
    assert_eq!(l0, 0, "the marked table was not compacted");
    assert_eq!(left, 710);
    assert!(log.contains(
        "Options.table_properties_collectors: CompactOnDeletionCollector (Sliding window size = 128 Deletion trigger = 100 Deletion ratio = 0);"
    ));
    // A trigger above the run length: not marked.
    let (l0, _, _) = scenario(Some((1000, 301, 0.0)));
    assert_eq!(l0, 2);
    // The ratio: 300 of 310 entries are deletions.
    let (l0, _, _) = scenario(Some((0, 0, 0.9)));
    assert_eq!(l0, 0);
}
