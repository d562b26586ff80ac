//! `read_triggered_compaction_threshold` (mutable CF option, default 0.0: off), set by name
//! and acting as RocksDB 11.8.1's: point reads are sampled, the reads a table served without
//! giving the final value (not found, a deletion, merge operands) are counted per table, and
//! a table above the last non-empty level whose count per byte exceeds the threshold is
//! compacted into the next level (reason ReadTriggered), found by the periodic trigger on a
//! quiet database. Reads are sampled whatever the option is, as RocksDB's.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use shale::{ErrorKind, Options, DB};

fn opts(rows: &str) -> Options {
    let mut o = Options::default()
        .get_options_from_string(format!(
            "max_compaction_trigger_wakeup_seconds=1;stats_dump_period_sec=0;stats_persist_period_sec=0;{rows}"
        ))
        .unwrap();
    o.create_if_missing(true);
    o
}

fn levels(db: &DB) -> Vec<i32> {
    let mut l: Vec<i32> = db.live_files().unwrap().into_iter().map(|f| f.level).collect();
    l.sort();
    l
}

/// One table on the last level holding `k0000`..`k0999`, then one level-0 table over the
/// same range holding other keys (`k0000x`..): a read of a `k` key meets the level-0 table
/// first and finds nothing there.
fn two_tables(db: &DB) {
    for i in 0..1000u32 {
        db.put(format!("k{i:04}"), format!("value-{i}")).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    for i in (0..1000u32).step_by(100) {
        db.put(format!("k{i:04}x"), b"other").unwrap();
    }
    db.flush().unwrap();
    assert_eq!(levels(db), vec![0, 6]);
}

/// Reads that find nothing in the level-0 table (each goes on to the last level).
fn read_through_level0(db: &DB) {
    for r in 0..60_000u32 {
        let i = r % 1000;
        assert_eq!(db.get(format!("k{i:04}")).unwrap().unwrap(), format!("value-{i}").into_bytes());
    }
}

#[test]
fn a_table_reads_go_through_is_compacted_with_the_option_on() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts("read_triggered_compaction_threshold=0.01"), dir.path()).unwrap();
    two_tables(&db);
    read_through_level0(&db);
    util::wait_until(30, "the read-triggered compaction of the level-0 table", || levels(&db) == vec![6]);
    for i in (0..1000u32).step_by(100) {
        assert_eq!(db.get(format!("k{i:04}x")).unwrap().unwrap(), b"other");
    }
    drop(db);
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(log.contains("\"compaction_reason\": \"ReadTriggered\""), "RocksDB's EVENT_LOG reason");
    assert!(util::latest_options_text(dir.path()).contains("read_triggered_compaction_threshold=0.010000"));
}

#[test]
fn under_universal_compaction_the_table_goes_to_the_first_non_empty_level_below() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(
        &opts("compaction_style=kCompactionStyleUniversal;read_triggered_compaction_threshold=0.01"),
        dir.path(),
    )
    .unwrap();
    two_tables(&db);
    read_through_level0(&db);
    util::wait_until(30, "the read-triggered compaction of the level-0 table", || levels(&db) == vec![6]);
    drop(db);
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(log.contains("\"compaction_reason\": \"ReadTriggered\""), "RocksDB's EVENT_LOG reason");
}

#[test]
fn without_the_option_the_table_stays_and_set_options_turns_it_on() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(""), dir.path()).unwrap();
    two_tables(&db);
    read_through_level0(&db);
    // The periodic trigger runs every second: three of its rounds leave the table alone.
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(levels(&db), vec![0, 6]);
    assert!(util::latest_options_text(dir.path()).contains("read_triggered_compaction_threshold=0.000000"));

    // Mutable: on at once. As RocksDB's, reads were sampled while it was off, so the reads
    // made before are enough: no read after `set_options`.
    db.set_options(&[("read_triggered_compaction_threshold", "0.01")]).unwrap();
    util::wait_until(30, "the read-triggered compaction after set_options", || levels(&db) == vec![6]);
    assert!(util::latest_options_text(dir.path()).contains("read_triggered_compaction_threshold=0.010000"));
}

#[test]
fn only_a_finite_threshold_of_zero_or_more_is_taken() {
    for bad in ["-0.5", "nan", "inf"] {
        let dir = tempfile::tempdir().unwrap();
        let e =
            DB::open(&opts(&format!("read_triggered_compaction_threshold={bad}")), dir.path()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{bad}: {e}");
        assert!(e.to_string().contains("read_triggered_compaction_threshold must be >= 0.0 and finite"));
    }
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(""), dir.path()).unwrap();
    let e = db.set_options(&[("read_triggered_compaction_threshold", "-1")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // Refused: the option keeps its value.
    assert!(util::latest_options_text(dir.path()).contains("read_triggered_compaction_threshold=0.000000"));
}
