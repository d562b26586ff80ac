//! `persist_user_defined_timestamps=false` with remote compaction and secondary instances:
//! a compaction run by a worker (`open_and_compact`, RocksDB's OpenAndCompact) writes tables
//! without timestamps, as the family's options say, and the primary installs them as such
//! (read with the minimum timestamp, also after a reopen); a secondary instance reads the
//! primary's tables without timestamps and refuses reads below `full_history_ts_low`, as
//! RocksDB's `FailIfReadCollapsedHistory`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::option_rows_ts::{read_at, ts};
use crate::util;
use shale::{ErrorKind, Options, U64TsComparator, DB};

fn opts() -> Options {
    let mut o = Options::default().get_options_from_string("persist_user_defined_timestamps=false").unwrap();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_allow_concurrent_memtable_write(false);
    o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    o
}

fn check(db: &DB) {
    for i in 0..40u32 {
        let k = format!("k{i:03}");
        let want = if i % 2 == 0 { format!("new{i}") } else { format!("old{i}") };
        assert_eq!(db.get_opt(&k, &read_at(u64::MAX)).unwrap().as_deref(), Some(want.as_bytes()), "{k}");
    }
    let mut it = db.raw_iterator_opt(read_at(u64::MAX));
    it.seek_to_first();
    assert_eq!((it.key(), it.timestamp()), (Some(&b"k000"[..]), Some(&ts(0)[..])));
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(n, 40);
}

#[test]
fn a_remote_compactions_outputs_are_read_without_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("db");
    let o = opts();
    let db = DB::open(&o, &db_path).unwrap();
    let worker = Arc::new(util::LocalCompactionWorker::new(&db_path, &dir.path().join("out")));
    db.set_compaction_service(Some(worker.clone()));
    for i in 0..40u32 {
        db.put_with_ts(format!("k{i:03}"), ts(5), format!("old{i}")).unwrap();
    }
    db.flush().unwrap();
    for i in (0..40u32).step_by(2) {
        db.put_with_ts(format!("k{i:03}"), ts(7), format!("new{i}")).unwrap();
    }
    db.flush().unwrap();
    db.try_compact_range_cf(&db.cf_handle("default").unwrap(), None::<&[u8]>, None::<&[u8]>).unwrap();
    assert!(worker.calls.load(Ordering::SeqCst) >= 1, "the worker ran the compaction");
    assert_eq!(shale_files(&db), 1);
    check(&db);
    drop(db);
    let db = DB::open(&o, &db_path).unwrap();
    check(&db);
}

fn shale_files(db: &DB) -> usize {
    db.live_files().unwrap().len()
}

#[test]
fn a_secondary_reads_tables_without_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let primary_path = dir.path().join("primary");
    let o = opts();
    let primary = DB::open(&o, &primary_path).unwrap();
    primary.put_with_ts(b"a", ts(3), b"a3").unwrap();
    primary.flush().unwrap();
    let mut so = opts();
    so.set_max_open_files(-1);
    let secondary = DB::open_as_secondary(&so, &primary_path, &dir.path().join("s")).unwrap();
    assert_eq!(secondary.get_opt(b"a", &read_at(9)).unwrap().as_deref(), Some(&b"a3"[..]));
    let mut it = secondary.raw_iterator_opt(read_at(9));
    it.seek_to_first();
    assert_eq!((it.key(), it.timestamp()), (Some(&b"a"[..]), Some(&ts(0)[..])));
    drop(it);
    // The flush raised full_history_ts_low above 3: reads below it are refused.
    let e = secondary.get_opt(b"a", &read_at(2)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    // Following the primary: a WAL's keys with their timestamps, then another flush.
    primary.put_with_ts(b"b", ts(6), b"b6").unwrap();
    secondary.try_catch_up_with_primary().unwrap();
    assert_eq!(secondary.get_opt(b"b", &read_at(6)).unwrap().as_deref(), Some(&b"b6"[..]));
    assert_eq!(secondary.get_opt(b"b", &read_at(5)).unwrap(), None);
    primary.flush().unwrap();
    secondary.try_catch_up_with_primary().unwrap();
    assert_eq!(secondary.get_opt(b"b", &read_at(9)).unwrap().as_deref(), Some(&b"b6"[..]));
    let e = secondary.get_opt(b"b", &read_at(5)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}
