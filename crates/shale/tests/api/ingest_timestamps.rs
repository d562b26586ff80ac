//! Ingesting into a family with user-defined timestamps compares keys without their
//! timestamps and refuses any overlap, as RocksDB 11.8.1's ingestion does: a file's range
//! runs from its smallest key with the maximum timestamp to its largest with the minimum
//! (`start_ukey`, `limit_ukey`), and a memtable or level holding any version of a key in it
//! overlaps it (InvalidArgument), as do files overlapping each other (NotSupported). A
//! global sequence number cannot order versions by timestamp: reads take the version of
//! highest sequence number first, so an ingested k@3 placed above a k@5 would hide it.
//!
//! Compared as whole keys, a newer version of a file's first key (k@5 sorts before k@3) and
//! an older version of its last key (z@1 sorts after z@3) both fall outside the file's range.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;
use std::sync::Arc;

use shale::{ErrorKind, IngestExternalFileOptions, Options, ReadOptions, SstFileWriter, U64TsComparator, DB};

fn ts(t: u64) -> [u8; 8] {
    t.to_le_bytes()
}

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    o
}

fn write_file(o: &Options, path: &Path, keys: &[(&[u8], u64, &[u8])]) {
    let mut w = SstFileWriter::create(o);
    w.open(path).unwrap();
    for (k, t, v) in keys {
        w.put_with_ts(k, ts(*t), v).unwrap();
    }
    w.finish().unwrap();
}

fn get_at(db: &DB, key: &[u8], t: u64) -> Option<Vec<u8>> {
    let mut ro = ReadOptions::default();
    ro.set_timestamp(ts(t));
    db.get_opt(key, &ro).unwrap()
}

fn levels(db: &DB) -> Vec<i32> {
    let mut v: Vec<i32> = db.live_files().unwrap().into_iter().map(|f| f.level).collect();
    v.sort();
    v
}

/// Refused with `message`'s kind and words, with or without a blocking flush; nothing
/// changes.
fn check_refused(db: &DB, file: &Path, kind: ErrorKind, message: &str) {
    let before = levels(db);
    let mut no_flush = IngestExternalFileOptions::default();
    no_flush.set_allow_blocking_flush(false);
    for o in [IngestExternalFileOptions::default(), no_flush] {
        let e = db.ingest_external_file_opts(&o, vec![file]).expect_err("the ingestion overlaps");
        assert_eq!(e.kind(), kind, "{e}");
        assert!(e.to_string().contains(message), "{e}");
        assert_eq!(levels(db), before, "nothing flushed or ingested");
    }
}

const MEM: &str = "does not overlap with key range in the memtables";
const DB_RANGE: &str = "does not overlap with key range (without timestamp) in the db";

#[test]
fn a_memtable_holding_a_newer_version_of_the_first_key_overlaps() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts();
    let db = DB::open(&o, dir.path().join("db")).unwrap();
    db.put_with_ts(b"k", ts(5), b"k5").unwrap();
    let f = dir.path().join("f.sst");
    write_file(&o, &f, &[(b"k", 3, b"k3"), (b"m", 3, b"m3")]);
    check_refused(&db, &f, ErrorKind::InvalidArgument, MEM);
    assert_eq!(get_at(&db, b"k", 10).as_deref(), Some(&b"k5"[..]));
    assert_eq!(get_at(&db, b"k", 4), None);
}

#[test]
fn a_memtable_holding_an_older_version_of_the_last_key_overlaps() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts();
    let db = DB::open(&o, dir.path().join("db")).unwrap();
    db.put_with_ts(b"z", ts(1), b"z1").unwrap();
    let f = dir.path().join("f.sst");
    write_file(&o, &f, &[(b"a", 3, b"a3"), (b"z", 3, b"z3")]);
    check_refused(&db, &f, ErrorKind::InvalidArgument, MEM);
    assert_eq!(get_at(&db, b"z", 10).as_deref(), Some(&b"z1"[..]));
}

#[test]
fn a_level_holding_a_version_of_a_key_of_the_file_overlaps() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts();
    let db = DB::open(&o, dir.path().join("db")).unwrap();
    db.put_with_ts(b"k", ts(5), b"k5").unwrap();
    db.put_with_ts(b"z", ts(1), b"z1").unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(levels(&db), vec![6]);
    // Its largest key is an older version of the table's first key: placed above it with
    // a global sequence number, k@3 would hide k@5.
    let f = dir.path().join("f.sst");
    write_file(&o, &f, &[(b"a", 3, b"a3"), (b"k", 3, b"k3")]);
    check_refused(&db, &f, ErrorKind::InvalidArgument, DB_RANGE);
    assert_eq!(get_at(&db, b"k", 10).as_deref(), Some(&b"k5"[..]));
    assert_eq!(get_at(&db, b"a", 10), None);
}

#[test]
fn files_overlapping_each_other_are_not_supported() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts();
    let db = DB::open(&o, dir.path().join("db")).unwrap();
    let f1 = dir.path().join("f1.sst");
    let f2 = dir.path().join("f2.sst");
    write_file(&o, &f1, &[(b"a", 3, b"a3"), (b"k", 3, b"k3")]);
    write_file(&o, &f2, &[(b"k", 1, b"k1"), (b"m", 1, b"m1")]);
    let e = db.ingest_external_file(vec![&f1, &f2]).expect_err("the files overlap");
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(levels(&db).is_empty());
}

#[test]
fn keys_outside_the_range_without_timestamps_do_not_overlap() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts();
    let db = DB::open(&o, dir.path().join("db")).unwrap();
    db.put_with_ts(b"a", ts(1), b"a1").unwrap();
    db.put_with_ts(b"b", ts(1), b"b1").unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    db.put_with_ts(b"j", ts(9), b"j9").unwrap();
    db.put_with_ts(b"n", ts(1), b"n1").unwrap();
    let f = dir.path().join("f.sst");
    write_file(&o, &f, &[(b"k", 3, b"k3"), (b"m", 3, b"m3")]);
    let mut no_flush = IngestExternalFileOptions::default();
    no_flush.set_allow_blocking_flush(false);
    db.ingest_external_file_opts(&no_flush, vec![&f]).unwrap();
    assert_eq!(levels(&db), vec![6, 6], "no flush, the file goes beside the table on the last level");
    assert_eq!(get_at(&db, b"k", 10).as_deref(), Some(&b"k3"[..]));
    assert_eq!(get_at(&db, b"j", 10).as_deref(), Some(&b"j9"[..]));
    assert_eq!(get_at(&db, b"k", 2), None);
}

/// A level overlaps a file only where it holds a key of the file's range (RocksDB's
/// `OverlapWithLevelIterator`): a file falling in a gap between a table's keys is ingested,
/// above that table, with sequence number 0.
#[test]
fn a_file_in_a_gap_between_a_tables_keys_is_ingested() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts();
    let db = DB::open(&o, dir.path().join("db")).unwrap();
    db.put_with_ts(b"a", ts(1), b"a1").unwrap();
    db.put_with_ts(b"z", ts(1), b"z1").unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(levels(&db), vec![6]);
    let f = dir.path().join("f.sst");
    write_file(&o, &f, &[(b"k", 3, b"k3"), (b"m", 3, b"m3")]);
    let mut no_seqno = IngestExternalFileOptions::default();
    no_seqno.set_allow_global_seqno(false);
    db.ingest_external_file_opts(&no_seqno, vec![&f]).unwrap();
    assert_eq!(levels(&db), vec![5, 6], "above the table whose range holds the file's");
    assert_eq!(get_at(&db, b"k", 10).as_deref(), Some(&b"k3"[..]));
    assert_eq!(get_at(&db, b"z", 10).as_deref(), Some(&b"z1"[..]));
    assert_eq!(get_at(&db, b"m", 2), None);
}
