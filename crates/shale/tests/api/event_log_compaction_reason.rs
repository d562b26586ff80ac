//! EVENT_LOG_v1 `compaction_started.compaction_reason` of an automatic leveled compaction:
//! RocksDB 11.8.1 names why it was picked ("LevelL0FilesNum" for level 0's file count);
//! Shale wrote "Unknown".
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{Options, WaitForCompactOptions, DB};

#[test]
fn level0_file_count_compaction_names_its_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_level_zero_file_num_compaction_trigger(2);
    let db = DB::open(&opts, &dir).unwrap();
    for i in 0..2u32 {
        db.put(format!("key{i}"), b"value").unwrap();
        db.flush().unwrap();
    }
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    drop(db);
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    let started: Vec<&str> = log.lines().filter(|l| l.contains("\"compaction_started\"")).collect();
    assert_eq!(started.len(), 1, "one automatic compaction: {started:?}");
    assert!(
        started[0].contains("\"compaction_reason\": \"LevelL0FilesNum\""),
        "RocksDB's reason: {}",
        started[0]
    );
}
