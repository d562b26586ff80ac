//! `min_write_buffer_number_to_merge`: background flushes wait until that many immutable
//! memtables exist and write them as one level-0 table; a manual flush flushes whatever
//! there is; nothing is lost across a reopen.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{IteratorMode, Options, WaitForCompactOptions, DB};

fn l0_files(db: &DB) -> usize {
    db.live_files().unwrap().iter().filter(|f| f.level == 0).count()
}

#[test]
fn full_memtables_are_merged_into_one_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_write_buffer_size(64 << 10);
    opts.set_max_write_buffer_number(6);
    opts.set_min_write_buffer_number_to_merge(3);
    opts.set_disable_auto_compactions(true);
    let db = DB::open(&opts, &path).unwrap();
    let value = vec![3u8; 1000];
    let mut n = 0;
    // Fill memtables until three are immutable (the flush is due) or the flush has already
    // happened, and not one write more: writing on while a slow flush runs (a loaded machine)
    // would fill three more memtables and make a second table.
    let immutable = || db.property_int_value("rocksdb.num-immutable-mem-table").unwrap().unwrap();
    while l0_files(&db) == 0 && immutable() < 3 {
        db.put(format!("k{n:06}"), &value).unwrap();
        n += 1;
        assert!(n < 100_000, "no flush happened");
    }
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    // About three memtables' worth (3 x 64 KiB), in one table: not one table per memtable.
    let files = db.live_files().unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].num_entries >= 150, "{files:?}");
    assert!(files[0].num_entries as usize <= n, "{files:?}");

    // A manual flush writes whatever is left, fewer than three memtables.
    db.put(b"last", b"x").unwrap();
    db.flush().unwrap();
    assert_eq!(l0_files(&db), 2);
    drop(db);
    let db = DB::open(&opts, &path).unwrap();
    assert_eq!(db.iterator(IteratorMode::Start).count(), n + 1);
}
