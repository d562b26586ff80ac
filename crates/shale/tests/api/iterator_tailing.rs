//! Scenario: a tailing iterator (`ReadOptions::set_tailing`) follows a table being written:
//! it sees keys written after it was made, across memtable switches, flushes and
//! compactions, and range deletions made after it was made; it refuses a snapshot and, as
//! RocksDB's, backward moves.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{DBCompressionType, ErrorKind, IteratorMode, Options, ReadOptions, DB};

fn key(i: usize) -> Vec<u8> {
    format!("log{i:08}").into_bytes()
}

fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(8 * 1024);
    o.set_level_zero_file_num_compaction_trigger(2);
    o.set_target_file_size_base(8 * 1024);
    o.set_compression_type(DBCompressionType::None);
    o
}

fn tailing() -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_tailing(true);
    ro
}

#[test]
fn tailing_iterator_follows_writes_across_flushes_and_compactions() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(), dir.path()).unwrap();
    db.put(key(0), b"0").unwrap();
    let mut it = db.raw_iterator_opt(tailing());
    it.seek_to_first();
    let mut next = 0usize;
    let sv0 = db.property_int_value("rocksdb.current-super-version-number").unwrap().unwrap();
    // Batches of writes between reads; the reader consumes everything written so far, then
    // re-seeks past the last key it read when it reached the end.
    for batch in 0..30usize {
        for i in 1..=40 {
            let k = batch * 40 + i;
            db.put(key(k), format!("{k}-{}", "v".repeat(100))).unwrap();
        }
        if batch % 7 == 3 {
            db.flush().unwrap();
        }
        if batch % 11 == 5 {
            db.compact_range(None::<&[u8]>, None::<&[u8]>);
        }
        if !it.valid() {
            it.seek(key(next));
        }
        while it.valid() {
            assert_eq!(it.key(), Some(key(next).as_slice()), "batch {batch}");
            next += 1;
            it.next();
        }
        it.status().unwrap();
        assert_eq!(next, batch * 40 + 41, "batch {batch}: every key written so far was read");
    }
    let sv1 = db.property_int_value("rocksdb.current-super-version-number").unwrap().unwrap();
    assert!(sv1 > sv0 + 10, "the iterator lived through many SuperVersions ({sv0} -> {sv1})");
}

#[test]
fn tailing_iterator_sees_later_writes_while_positioned() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(), dir.path()).unwrap();
    db.put(b"a", b"1").unwrap();
    let it = db.iterator_opt(IteratorMode::Start, tailing());
    db.put(b"b", b"2").unwrap();
    db.flush().unwrap(); // a new SuperVersion: the iterator moves onto it at its next step
    db.put(b"c", b"3").unwrap();
    let got: Vec<_> = it.map(|r| r.unwrap()).map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
    assert_eq!(
        got,
        vec![(b"a".to_vec(), b"1".to_vec()), (b"b".to_vec(), b"2".to_vec()), (b"c".to_vec(), b"3".to_vec())]
    );
}

#[test]
fn tailing_iterator_sees_a_later_range_deletion_at_its_next_seek() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(), dir.path()).unwrap();
    for i in 0..10 {
        db.put(key(i), b"v").unwrap();
    }
    let mut it = db.raw_iterator_opt(tailing());
    it.seek_to_first();
    assert_eq!(it.key(), Some(key(0).as_slice()));
    db.delete_range(key(0), key(5)).unwrap();
    it.seek_to_first();
    assert_eq!(it.key(), Some(key(5).as_slice()));
}

#[test]
fn tailing_iterator_refuses_a_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(), dir.path()).unwrap();
    db.put(b"a", b"1").unwrap();
    let snap = db.snapshot();
    let mut ro = tailing();
    ro.set_snapshot(&snap);
    let mut it = db.raw_iterator_opt(ro);
    it.seek_to_first();
    assert!(!it.valid());
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::InvalidArgument);
    let mut it = db.raw_iterator_opt(tailing());
    assert_eq!(it.refresh_with_snapshot(&snap).unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn tailing_iterator_only_moves_forward() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(), dir.path()).unwrap();
    db.put(b"a", b"1").unwrap();
    db.put(b"b", b"2").unwrap();
    let mut it = db.raw_iterator_opt(tailing());
    it.seek(b"b");
    assert_eq!(it.key(), Some(&b"b"[..]));
    it.prev();
    assert!(!it.valid());
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::NotSupported);
    it.seek_to_last();
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::NotSupported);
    it.seek_for_prev(b"b");
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::NotSupported);
    // A forward seek starts afresh.
    it.seek_to_first();
    assert_eq!(it.key(), Some(&b"a"[..]));
    it.status().unwrap();
}
