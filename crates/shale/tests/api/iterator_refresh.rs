//! Scenario: what an iterator holds and lets go. `refresh` releases the old SuperVersion
//! (its compacted-away tables are deleted), `refresh_with_snapshot` moves the view to a
//! new snapshot, an auto-refreshing iterator keeps its snapshot's view even when the caller
//! releases the snapshot first, auto-refresh without a snapshot is refused, and
//! `max_skippable_internal_keys` stops a step that passes over too many entries.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;
use std::time::{Duration, Instant};

use shale::{DBCompressionType, ErrorKind, IteratorMode, Options, ReadOptions, DB};

fn key(i: usize) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_compression_type(DBCompressionType::None);
    o
}

fn tables(path: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(path)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".sst"))
        .collect();
    v.sort();
    v
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Two level-0 tables, then compacted into one while `it` holds the two.
fn two_tables_compacted_under(db: &DB) {
    for round in 0..2 {
        for i in 0..100 {
            db.put(key(i), format!("r{round}")).unwrap();
        }
        db.flush().unwrap();
    }
}

#[test]
fn refresh_releases_the_old_super_version() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(), dir.path()).unwrap();
    two_tables_compacted_under(&db);
    let before = tables(dir.path());
    assert_eq!(before.len(), 2);
    let mut it = db.raw_iterator();
    it.seek_to_first();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    std::thread::sleep(Duration::from_millis(50));
    // The iterator still reads the two tables.
    assert!(before.iter().all(|t| dir.path().join(t).exists()), "tables held by the iterator stay");
    assert_eq!(it.value(), Some(&b"r1"[..]));
    it.refresh().unwrap();
    assert!(!it.valid());
    wait_for("the compacted-away tables to go", || before.iter().all(|t| !dir.path().join(t).exists()));
    it.seek(key(50));
    assert_eq!(it.value(), Some(&b"r1"[..]));
}

#[test]
fn refresh_with_snapshot_reads_the_new_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(), dir.path()).unwrap();
    db.put(b"a", b"1").unwrap();
    let s1 = db.snapshot();
    db.put(b"a", b"2").unwrap();
    db.put(b"b", b"2").unwrap();
    let s2 = db.snapshot();
    db.put(b"a", b"3").unwrap();
    let mut ro = ReadOptions::default();
    ro.set_snapshot(&s1);
    let mut it = db.iterator_opt(IteratorMode::Start, ro);
    assert_eq!(it.next().unwrap().unwrap().1.as_ref(), b"1");
    assert!(it.next().is_none());
    it.refresh_with_snapshot(&s2, IteratorMode::Start).unwrap();
    let got: Vec<_> = it.map(|r| r.unwrap()).map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
    assert_eq!(got, vec![(b"a".to_vec(), b"2".to_vec()), (b"b".to_vec(), b"2".to_vec())]);
}

#[test]
fn auto_refresh_keeps_the_snapshot_view_after_the_snapshot_is_released() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(), dir.path()).unwrap();
    for i in 0..100 {
        db.put(key(i), b"old").unwrap();
    }
    // Old and new versions in two tables, so the compaction below merges them (a lone
    // table would move down unchanged, keeping every version whatever the snapshots).
    db.flush().unwrap();
    let snap = db.snapshot();
    let mut ro = ReadOptions::default();
    ro.set_snapshot(&snap);
    ro.set_auto_refresh_iterator_with_snapshot(true);
    let mut it = db.raw_iterator_opt(ro);
    it.seek_to_first();
    drop(snap);
    for i in 0..100 {
        db.put(key(i), b"new").unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let mut n = 0;
    while it.valid() {
        assert_eq!(it.key(), Some(key(n).as_slice()));
        assert_eq!(it.value(), Some(&b"old"[..]), "key {n}");
        n += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(n, 100);
    // The flush and compaction replaced the SuperVersion: the iterator moved at least once.
    let moves = db.property_int_value("rocksdb.shale.iterator-auto-refreshes").unwrap();
    assert!(moves.is_some_and(|m| m >= 1), "{moves:?}");
    drop(it);
    // With the iterator gone, nothing holds the old versions: a compaction drops them.
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(db.property_int_value("rocksdb.num-snapshots").unwrap(), Some(0));
}

#[test]
fn auto_refresh_without_a_snapshot_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(), dir.path()).unwrap();
    db.put(b"a", b"1").unwrap();
    let mut ro = ReadOptions::default();
    ro.set_auto_refresh_iterator_with_snapshot(true);
    let mut it = db.raw_iterator_opt(ro);
    it.seek_to_first();
    assert!(!it.valid());
    let e = it.status().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("auto_refresh_iterator_with_snapshot"), "{e}");
}

#[test]
fn max_skippable_internal_keys_stops_a_long_skip() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(), dir.path()).unwrap();
    db.put(key(0), b"v").unwrap();
    for i in 1..=20 {
        db.put(key(i), b"v").unwrap();
        db.delete(key(i)).unwrap();
    }
    db.put(key(21), b"v").unwrap();
    for (limit, forward_ok) in [(0u64, true), (100, true), (5, false)] {
        let mut ro = ReadOptions::default();
        ro.set_max_skippable_internal_keys(limit);
        let mut it = db.raw_iterator_opt(ro);
        it.seek_to_first();
        assert_eq!(it.key(), Some(key(0).as_slice()));
        it.next();
        if forward_ok {
            assert_eq!(it.key(), Some(key(21).as_slice()), "limit {limit}");
            it.prev();
            assert_eq!(it.key(), Some(key(0).as_slice()), "limit {limit}");
        } else {
            assert!(!it.valid());
            assert_eq!(it.status().unwrap_err().kind(), ErrorKind::Incomplete);
            // A seek starts afresh; backward from the end passes the same deleted keys.
            it.seek_to_last();
            assert_eq!(it.key(), Some(key(21).as_slice()));
            it.prev();
            assert!(!it.valid());
            assert_eq!(it.status().unwrap_err().kind(), ErrorKind::Incomplete);
        }
    }
}
