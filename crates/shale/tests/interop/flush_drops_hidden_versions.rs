//! A flush drops the versions no live snapshot can see, as RocksDB's flush does: of one key's
//! entries in one snapshot stripe only the newest reaches the level-0 table (an entry a newer
//! range tombstone of its stripe covers goes too); deletions, single deletions and range
//! tombstones stay; merge operands and their base become one Put (merge_at_flush.rs). Checked through the table's entry
//! count and through what every snapshot and the latest view read, before and after a
//! reopen.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use shale::{Options, ReadOptions, DB};

fn opts() -> Options {
    tools::concat_merge_options()
}

/// (entries, deletions) of the only table, which is at level 0.
fn l0_table(db: &DB) -> (u64, u64) {
    let files = db.live_files().unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0].level, 0);
    (files[0].num_entries, files[0].num_deletions)
}

fn get(db: &DB, k: &[u8]) -> Option<Vec<u8>> {
    db.get(k).unwrap()
}

#[test]
fn overwrites_without_snapshots_leave_one_version_per_key() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts();
    let db = DB::open(&o, dir.path()).unwrap();
    for round in 0..3 {
        for i in 0..100 {
            db.put(format!("k{i:03}"), format!("v{round}")).unwrap();
        }
    }
    for i in 0..10 {
        db.delete(format!("k{i:03}")).unwrap();
    }
    db.flush().unwrap();
    // 300 puts and 10 deletions in: one entry per key out, the deletions kept (not bottommost).
    assert_eq!(l0_table(&db), (100, 10));
    for i in 0..100 {
        let want = (i >= 10).then(|| b"v2".to_vec());
        assert_eq!(get(&db, format!("k{i:03}").as_bytes()), want, "k{i:03}");
    }
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(get(&db, b"k005"), None);
    assert_eq!(get(&db, b"k050").as_deref(), Some(&b"v2"[..]));
}

#[test]
fn each_snapshot_keeps_the_version_it_sees() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(), dir.path()).unwrap();
    db.put(b"a", b"1").unwrap();
    db.put(b"d", b"1").unwrap();
    let s1 = db.snapshot();
    db.put(b"a", b"2").unwrap(); // hidden by "3" in the same stripe
    db.put(b"a", b"3").unwrap();
    db.delete(b"d").unwrap();
    let s2 = db.snapshot();
    db.put(b"a", b"4").unwrap(); // hidden by "5"
    db.put(b"a", b"5").unwrap();
    db.put(b"d", b"2").unwrap();
    db.put(b"b", b"1").unwrap(); // hidden by "2"
    db.put(b"b", b"2").unwrap();
    // A wide-column entity is a version as a Put is: hidden by a newer one, or hiding one.
    let default = db.cf_handle("default").unwrap();
    let columns: &[(&[u8], &[u8])] = &[(b"", b"e1"), (b"c", b"x")];
    db.put_entity_cf(default, b"e", columns, &shale::WriteOptions::default()).unwrap(); // hidden
    db.put(b"e", b"v").unwrap();
    db.put(b"f", b"v").unwrap(); // hidden
    db.put_entity_cf(default, b"f", columns, &shale::WriteOptions::default()).unwrap();
    db.flush().unwrap();
    // a: 1, 3, 5; b: 2; d: 1, the deletion, 2; e: v; f: the entity.
    assert_eq!(l0_table(&db), (9, 1));
    assert_eq!(get(&db, b"e").as_deref(), Some(&b"v"[..]));
    assert_eq!(get(&db, b"f").as_deref(), Some(&b"e1"[..]));
    assert_eq!(s1.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(s2.get(b"a").unwrap().as_deref(), Some(&b"3"[..]));
    assert_eq!(get(&db, b"a").as_deref(), Some(&b"5"[..]));
    assert_eq!(s1.get(b"b").unwrap(), None);
    assert_eq!(s2.get(b"b").unwrap(), None);
    assert_eq!(get(&db, b"b").as_deref(), Some(&b"2"[..]));
    assert_eq!(s1.get(b"d").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(s2.get(b"d").unwrap(), None);
    assert_eq!(get(&db, b"d").as_deref(), Some(&b"2"[..]));
    let mut ro = ReadOptions::default();
    ro.set_snapshot(&s1);
    let seen: Vec<_> =
        db.iterator_opt(shale::IteratorMode::Start, ro).map(|r| r.unwrap().0.to_vec()).collect();
    assert_eq!(seen, vec![b"a".to_vec(), b"d".to_vec()]);
    drop(s1);
    drop(s2);
}

#[test]
fn merges_single_deletes_and_range_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts();
    let db = DB::open(&o, dir.path()).unwrap();
    // Operands merge with the Put below them into one Put; an older Put under that one goes.
    db.put(b"m", b"x").unwrap(); // dropped
    db.put(b"m", b"base").unwrap();
    db.merge(b"m", b"1").unwrap();
    db.merge(b"m", b"2").unwrap();
    // A Put over operands hides them.
    db.merge(b"n", b"1").unwrap(); // dropped
    db.put(b"n", b"p").unwrap();
    // A single deletion stays; the Put it covers in its stripe goes.
    db.put(b"s", b"1").unwrap(); // dropped
    db.single_delete(b"s").unwrap();
    // Covered by the newer range tombstone of the same stripe: dropped.
    db.put(b"r1", b"old").unwrap();
    db.put(b"r2", b"old").unwrap();
    let snap = db.snapshot();
    db.put(b"r3", b"old").unwrap(); // dropped
    db.put(b"r4", b"old").unwrap(); // dropped
    db.delete_range(b"r1", b"r5").unwrap();
    db.put(b"r4", b"new").unwrap();
    db.put(b"r9", b"kept").unwrap();
    db.flush().unwrap();
    // m: base12; n: p; s: the single deletion; r1, r2 (the snapshot sees them), r4 new,
    // r9; the range tombstone.
    let (entries, deletions) = l0_table(&db);
    assert_eq!((entries, deletions), (8, 2));
    for _ in 0..2 {
        assert_eq!(get(&db, b"m").as_deref(), Some(&b"base12"[..]));
        assert_eq!(get(&db, b"n").as_deref(), Some(&b"p"[..]));
        assert_eq!(get(&db, b"s"), None);
        for k in [&b"r1"[..], b"r2", b"r3"] {
            assert_eq!(get(&db, k), None);
        }
        assert_eq!(get(&db, b"r4").as_deref(), Some(&b"new"[..]));
        assert_eq!(get(&db, b"r9").as_deref(), Some(&b"kept"[..]));
        assert_eq!(snap.get(b"r1").unwrap().as_deref(), Some(&b"old"[..]));
        assert_eq!(snap.get(b"r2").unwrap().as_deref(), Some(&b"old"[..]));
        assert_eq!(snap.get(b"r3").unwrap(), None);
        assert_eq!(snap.get(b"m").unwrap().as_deref(), Some(&b"base12"[..]));
        assert_eq!(snap.get(b"s").unwrap(), None);
        // Compaction below must not bring anything back.
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
    }
    drop(snap);
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(get(&db, b"m").as_deref(), Some(&b"base12"[..]));
    assert_eq!(get(&db, b"s"), None);
    assert_eq!(get(&db, b"r2"), None);
    assert_eq!(get(&db, b"r4").as_deref(), Some(&b"new"[..]));
}
