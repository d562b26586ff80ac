//! Issue 33: options that were accepted and ignored now act as RocksDB 11.8.1's:
//! `background_purge_on_iterator_cleanup`, `delete_obsolete_files_period_micros`, universal
//! compaction's `incremental` and `reduce_file_locking`, `memtable_insert_hint_per_batch`,
//! `use_adaptive_mutex`.

use std::path::Path;

use shale::{IteratorMode, Options, ReadOptions, DB};

/// Three flushed tables of `k000..k099`, auto compactions off.
fn three_tables(dir: &Path, o: &Options) -> (DB, Vec<String>) {
    let db = DB::open(o, dir).unwrap();
    for round in 0..3 {
        for i in 0..100 {
            db.put(format!("k{i:03}"), format!("v{round}")).unwrap();
        }
        db.flush().unwrap();
    }
    let tables = crate::util::files_ending(dir, ".sst");
    assert_eq!(tables.len(), 3, "{tables:?}");
    (db, tables)
}

/// The thread stamp (second field) of the LOG's first line containing `what`.
fn log_thread_of(log: &str, what: &str) -> Option<String> {
    log.lines().find(|l| l.contains(what)).and_then(|l| l.split_whitespace().nth(1)).map(str::to_string)
}

/// Drops an iterator holding three compacted-away tables; returns whether they were gone
/// when `drop` returned, and whether the LOG's deletion event of the first was stamped by
/// the dropping thread.
fn purge_after_iterator(background: bool) -> (bool, bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let (db, before) = three_tables(dir.path(), &o);
    let mut ro = ReadOptions::default();
    ro.set_background_purge_on_iterator_cleanup(background);
    let mut it = db.iterator_opt(IteratorMode::Start, ro);
    assert!(it.next().is_some());
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    for t in &before {
        assert!(dir.path().join(t).exists(), "{t} deleted under a live iterator");
    }
    // A LOG line this thread writes, for its thread stamp.
    db.set_options(&[("disable_auto_compactions", "true")]).unwrap();
    drop(it);
    let gone_at_once = before.iter().all(|t| !dir.path().join(t).exists());
    crate::util::wait_until(60, "the old tables deleted", || before.iter().all(|t| !dir.path().join(t).exists()));
    drop(db);
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    let me = log_thread_of(&log, "SetOptions() on column family [default]").unwrap();
    let number: u64 = before[0].trim_end_matches(".sst").parse().unwrap();
    let field = format!("\"file_number\": {number}");
    let deleter = log
        .lines()
        .find(|l| {
            l.contains("\"table_file_deletion\"")
                && l.split(&field).nth(1).is_some_and(|rest| rest.starts_with([',', '}']))
        })
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or_else(|| panic!("no deletion event of table {number} in LOG:\n{log}"))
        .to_string();
    (gone_at_once, deleter == me)
}

/// `background_purge_on_iterator_cleanup` false (RocksDB's default): the tables an iterator
/// was the last to hold are deleted by the thread dropping it, before `drop` returns; true:
/// by another (a flush-pool) thread.
#[test]
fn iterator_cleanup_purges_on_the_dropping_thread_unless_background() {
    let (gone, by_me) = purge_after_iterator(false);
    assert!(gone, "the old tables still on disk when drop(iter) returned");
    assert!(by_me, "the old tables were deleted by another thread");
    let (_, by_me) = purge_after_iterator(true);
    assert!(!by_me, "background purge: deleted by the dropping thread");
}
