//! `preclude_last_level_data_seconds` (issue 33): RocksDB 11.8.1's tiered storage. Keys
//! written just now stay out of the last level after a full compaction, in Shale as in
//! RocksDB: the same database compacted by Shale and by 11.8.1's `ldb compact` puts them on
//! the same level (5, above the last); `ldb scan` reads what Shale's compaction wrote; the
//! option's row goes through RocksDB's OPTIONS file both ways.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{Options, DB};

fn options() -> Options {
    let mut o = Options::default()
        .get_options_from_string("preclude_last_level_data_seconds=86400;stats_dump_period_sec=0")
        .unwrap();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o
}

/// A database holding `k000`..`k199` in level-0 tables (two flushes).
fn fill(dir: &Path) -> DB {
    let db = DB::open(&options(), dir).unwrap();
    for half in 0..2u32 {
        for i in (half * 100)..(half * 100 + 100) {
            db.put(format!("k{i:03}"), format!("value-{i}")).unwrap();
        }
        db.flush().unwrap();
    }
    db
}

fn levels(db: &DB) -> Vec<i32> {
    let mut l: Vec<i32> = db.live_files().unwrap().into_iter().map(|f| f.level).collect();
    l.sort();
    l.dedup();
    l
}

#[test]
fn shale_and_rocksdb_11_keep_recent_keys_above_the_last_level() {
    let test = "shale_and_rocksdb_11_keep_recent_keys_above_the_last_level";
    let tmp = tempfile::tempdir().unwrap();
    let ours = tmp.path().join("shale");
    let db = fill(&ours);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(levels(&db), vec![5]);
    let pairs = tools::shale_scan_default(&db);
    assert_eq!(pairs.len(), 200);
    drop(db);
    if !tools::use_rocksdb_11(test) {
        return;
    }
    tools::ldb_keeps_option_rows(&[("preclude_last_level_data_seconds", "86400")], true);
    // RocksDB reads what Shale's compaction wrote.
    tools::assert_same_pairs(&tools::ldb_scan(&ours, None), &pairs, "ldb scan of Shale's compaction");

    // The same database compacted by RocksDB 11.8.1 (its options from Shale's OPTIONS file).
    let theirs = tmp.path().join("rocksdb");
    drop(fill(&theirs));
    let out = tools::run_tool(
        "ldb",
        &tools::args(&[&format!("--db={}", theirs.display()), "--try_load_options", "compact"]),
    );
    assert!(!out.contains("Failed"), "{out}");
    let db = DB::open(&options(), &theirs).unwrap();
    assert_eq!(levels(&db), vec![5], "RocksDB's compaction");
    tools::assert_same_pairs(&tools::shale_scan_default(&db), &pairs, "Shale reading RocksDB's compaction");
}
