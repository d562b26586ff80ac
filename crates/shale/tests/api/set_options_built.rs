//! RocksDB mutable column-family options `set_options` changes (issue 33), each then seen
//! acting: `memtable_max_range_deletions` (memtables made afterwards are full at that many
//! range deletions, so they are flushed however small), `blob_file_starting_level` (values
//! stay in the tables of flushes and compactions below it), and the deprecated
//! `check_flush_compaction_key_order` (accepted and not written, as RocksDB 11.8.1).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;

use crate::util::{files_ending, wait_until};
use shale::{ErrorKind, Options, DB};

fn latest_options_file(dir: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("OPTIONS-") && !n.ends_with(".dbtmp"))
        .collect();
    names.sort();
    std::fs::read_to_string(dir.join(names.last().unwrap())).unwrap()
}

fn tables(db: &DB) -> usize {
    db.live_files().unwrap().len()
}

#[test]
fn memtable_max_range_deletions_flushes_small_memtables() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, dir.path()).unwrap();
    // No limit: ten range deletions stay in the memtable.
    for i in 0..10 {
        db.delete_range(format!("a{i}"), format!("b{i}")).unwrap();
    }
    db.put("x", "y").unwrap();
    assert_eq!(tables(&db), 0);

    db.set_options(&[("memtable_max_range_deletions", "3")]).unwrap();
    assert!(latest_options_file(dir.path()).contains("  memtable_max_range_deletions=3\n"));
    // The active memtable was made before the change and keeps no limit (RocksDB's
    // memtable takes the option when it is made): more range deletions stay.
    for i in 10..15 {
        db.delete_range(format!("a{i}"), format!("b{i}")).unwrap();
    }
    db.put("x", "y2").unwrap();
    assert_eq!(tables(&db), 0);
    db.flush().unwrap();
    assert_eq!(tables(&db), 1);

    // The memtable made by that flush is full at its third range deletion: the next write
    // switches it and a flush writes it.
    for i in 0..3 {
        db.delete_range(format!("c{i}"), format!("d{i}")).unwrap();
        assert_eq!(tables(&db), 1, "flushed after {} range deletions", i + 1);
    }
    db.put("z", "1").unwrap();
    wait_until(60, "the memtable with 3 range deletions to flush", || tables(&db) == 2);
    assert_eq!(db.get("z").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get("x").unwrap().as_deref(), Some(&b"y2"[..]));

    // Back to no limit, for memtables made afterwards.
    db.set_options(&[("memtable_max_range_deletions", "0")]).unwrap();
    db.flush().unwrap();
    let before = tables(&db);
    for i in 0..10 {
        db.delete_range(format!("e{i}"), format!("f{i}")).unwrap();
    }
    db.put("w", "1").unwrap();
    assert_eq!(tables(&db), before);
    let e = db.set_options(&[("memtable_max_range_deletions", "-1")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

#[test]
fn memtable_max_range_deletions_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_memtable_max_range_deletions(2);
    let db = DB::open(&o, dir.path()).unwrap();
    db.delete_range("a", "b").unwrap();
    db.delete_range("c", "d").unwrap();
    db.put("k", "v").unwrap();
    wait_until(60, "the memtable with 2 range deletions to flush", || tables(&db) == 1);
}

#[test]
fn blob_file_starting_level_keeps_values_in_tables_below_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_enable_blob_files(true);
    o.set_min_blob_size(16);
    let db = DB::open(&o, dir.path()).unwrap();
    let big = |i: u32| format!("{i}-").repeat(40);
    db.put("k0", big(0)).unwrap();
    db.flush().unwrap();
    assert_eq!(files_ending(dir.path(), ".blob").len(), 1, "level 0 >= starting level 0");

    db.set_options(&[("blob_file_starting_level", "1")]).unwrap();
    assert!(latest_options_file(dir.path()).contains("  blob_file_starting_level=1\n"));
    db.put("k1", big(1)).unwrap();
    db.flush().unwrap();
    assert_eq!(files_ending(dir.path(), ".blob").len(), 1, "a flush (level 0) below level 1 writes none");
    assert_eq!(db.get("k1").unwrap().unwrap(), big(1).as_bytes());

    // A compaction into a level at or past 1 moves k1's value out; k0's reference passes.
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let blobs = files_ending(dir.path(), ".blob");
    assert_eq!(blobs.len(), 2, "{blobs:?}");
    assert_eq!(db.get("k0").unwrap().unwrap(), big(0).as_bytes());
    assert_eq!(db.get("k1").unwrap().unwrap(), big(1).as_bytes());

    // Past the last level: nothing goes to blob files any more.
    db.set_options(&[("blob_file_starting_level", "100")]).unwrap();
    db.put("k2", big(2)).unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(files_ending(dir.path(), ".blob").len(), 2);
    assert_eq!(db.get("k2").unwrap().unwrap(), big(2).as_bytes());
    let e = db.set_options(&[("blob_file_starting_level", "x")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

#[test]
fn check_flush_compaction_key_order_is_deprecated() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    let db = DB::open(&o, dir.path()).unwrap();
    db.set_options(&[("check_flush_compaction_key_order", "false")]).unwrap();
    db.set_options(&[("check_flush_compaction_key_order", "true")]).unwrap();
    assert!(!latest_options_file(dir.path()).contains("check_flush_compaction_key_order"));
    db.put("k", "v").unwrap();
    db.flush().unwrap();
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"v"[..]));
}

/// Universal compaction's `max_read_amp` (RocksDB 11): the number of sorted runs left
/// before runs are merged to reduce them. Runs of falling sizes (no size-ratio or size-amp
/// compaction applies) are merged at the trigger by default, and kept up to the target.
#[test]
fn universal_max_read_amp_allows_more_sorted_runs() {
    let runs_left = |max_read_amp: Option<&str>| {
        let dir = tempfile::tempdir().unwrap();
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_compaction_style(shale::DBCompactionStyle::Universal);
        o.set_level_zero_file_num_compaction_trigger(2);
        let db = DB::open(&o, dir.path()).unwrap();
        if let Some(m) = max_read_amp {
            db.set_options(&[("compaction_options_universal", &format!("{{max_read_amp={m};}}"))]).unwrap();
            assert!(latest_options_file(dir.path()).contains(&format!("max_read_amp={m};")));
        }
        for (round, n) in [1000, 100, 10, 1].into_iter().enumerate() {
            for i in 0..n {
                db.put(format!("r{round}-{i:05}"), vec![b'v'; 100]).unwrap();
            }
            db.flush().unwrap();
        }
        db.wait_for_compact(&shale::WaitForCompactOptions::default()).unwrap();
        let files = db.live_files().unwrap();
        assert_eq!(db.get("r0-00000").unwrap().map(|v| v.len()), Some(100));
        files.len()
    };
    assert!(runs_left(None) < 4, "the default (-1: the trigger, 2) merges runs");
    assert_eq!(runs_left(Some("10")), 4, "up to 10 runs are allowed");
    assert!(runs_left(Some("3")) < 4, "over 3 runs are merged");

    // RocksDB's checks: below -1, or positive and under the trigger: NotSupported.
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compaction_style(shale::DBCompactionStyle::Universal);
    let db = DB::open(&o, dir.path()).unwrap();
    for bad in ["-2", "3"] {
        let e = db
            .set_options(&[("compaction_options_universal", &format!("{{max_read_amp={bad};}}"))])
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotSupported, "{bad}: {e}");
        assert!(e.to_string().contains("max_read_amp"), "{e}");
    }
    db.set_options(&[("compaction_options_universal", "{max_read_amp=0;}")]).unwrap();
}
