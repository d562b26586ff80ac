//! `persist_user_defined_timestamps=false` across a comparator change with data still in
//! the WAL, as RocksDB 11.8.1's recovery (`HandleWriteBatchTimestampSizeDifference`,
//! util/udt_util.cc): a family that gained `.u64ts` (with the flag false) reads the WAL's
//! keys with the minimum timestamp appended, one that lost it (its flag having been false)
//! reads them with the timestamp cut off; a read-only open does the same, a secondary
//! instance refuses any difference with RocksDB's text.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use super::option_rows_ts::{opts, read_at, ts};
use shale::{ErrorKind, DB};

fn wal_count(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".log"))
        .filter(|e| e.as_ref().unwrap().metadata().unwrap().len() > 0)
        .count()
}

#[test]
fn enabling_timestamps_pads_the_wals_keys() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(true, false), dir.path()).unwrap();
    db.put(b"a", b"1").unwrap();
    db.put(b"b", b"2").unwrap();
    db.put(b"c", b"3").unwrap();
    db.put(b"e", b"5").unwrap();
    // A range deletion: both its ends get the minimum timestamp.
    db.delete_range(b"b", b"d").unwrap();
    db.delete(b"e").unwrap();
    drop(db);
    assert!(wal_count(dir.path()) >= 1, "the writes are only in the WAL");

    // A read-only open reconciles as the read-write one does (RocksDB's DBImplReadOnly
    // runs the same RecoverLogFiles).
    let ro = DB::open_for_read_only(&opts(false, true), dir.path(), false).unwrap();
    let mut it = ro.raw_iterator_opt(read_at(u64::MAX));
    it.seek_to_first();
    assert_eq!((it.key(), it.timestamp()), (Some(&b"a"[..]), Some(&ts(0)[..])));
    it.next();
    assert!(!it.valid());
    it.status().unwrap();
    drop(it);
    drop(ro);

    let db = DB::open(&opts(false, true), dir.path()).unwrap();
    // (Point reads over range deletions with timestamps are not built in Shale yet: the
    // iterator shows the range deletion's effect.)
    let mut it = db.raw_iterator_opt(read_at(9));
    it.seek_to_first();
    assert_eq!((it.key(), it.timestamp()), (Some(&b"a"[..]), Some(&ts(0)[..])));
    it.next();
    assert!(!it.valid());
    it.status().unwrap();
    drop(it);
    // New writes carry their timestamps, and a reopen reads everything again.
    db.put_with_ts(b"f", ts(3), b"6").unwrap();
    drop(db);
    let db = DB::open(&opts(false, true), dir.path()).unwrap();
    let mut it = db.raw_iterator_opt(read_at(9));
    it.seek_to_first();
    assert_eq!((it.key(), it.value()), (Some(&b"a"[..]), Some(&b"1"[..])));
    it.next();
    // The open's flush wrote it without its timestamp: the minimum now.
    assert_eq!((it.key(), it.value(), it.timestamp()), (Some(&b"f"[..]), Some(&b"6"[..]), Some(&ts(0)[..])));
    it.next();
    assert!(!it.valid());
    it.status().unwrap();
}

#[test]
fn disabling_timestamps_strips_the_wals_keys() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(false, true), dir.path()).unwrap();
    db.put_with_ts(b"a", ts(5), b"x").unwrap();
    db.put_with_ts(b"b", ts(6), b"y").unwrap();
    db.delete_with_ts(b"b", ts(7)).unwrap();
    drop(db);
    assert!(wal_count(dir.path()) >= 1, "the writes are only in the WAL");
    let db = DB::open(&opts(false, false), dir.path()).unwrap();
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"x"[..]));
    assert_eq!(db.get(b"b").unwrap(), None);
    let mut it = db.raw_iterator();
    it.seek_to_first();
    assert_eq!(it.key(), Some(&b"a"[..]));
    it.next();
    assert!(!it.valid());
    drop(it);
    db.flush().unwrap();
    drop(db);
    let db = DB::open(&opts(false, false), dir.path()).unwrap();
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"x"[..]));
}

#[test]
fn a_secondary_refuses_a_wal_with_other_timestamp_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let primary_path = dir.path().join("primary");
    let primary = DB::open(&opts(true, false), &primary_path).unwrap();
    primary.put(b"a", b"1").unwrap();
    let mut sopts = opts(false, true);
    sopts.set_max_open_files(-1);
    let e = DB::open_as_secondary(&sopts, &primary_path, &dir.path().join("s")).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert_eq!(e.to_string(), "Invalid argument: WriteBatch contains timestamp size inconsistency.");
    // With the same comparator it follows the primary.
    let mut sopts = opts(true, false);
    sopts.set_max_open_files(-1);
    let s = DB::open_as_secondary(&sopts, &primary_path, &dir.path().join("s2")).unwrap();
    assert_eq!(s.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
}
