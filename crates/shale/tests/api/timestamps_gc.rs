//! Garbage collection below `full_history_ts_low` (docs/timestamps.md): a compaction with
//! the low mark raised keeps every version at or above it and, per key, only the newest
//! version below it (per snapshot stripe), and drops a deletion below it at the bottommost
//! level; versions are listed with `iter_start_ts`, deletions as kTypeDeletionWithTimestamp.
//! A snapshot's get skips a version written after it with an older timestamp.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::Arc;

use shale::{CompactOptions, Options, ReadOptions, U64TsComparator, DB};

fn ts(t: u64) -> [u8; 8] {
    t.to_le_bytes()
}

fn read_at(t: u64) -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_timestamp(ts(t));
    ro
}

/// Every stored version visible at `t`: (key, timestamp, value or None for a deletion).
fn versions(db: &DB, t: u64) -> Vec<(String, u64, Option<String>)> {
    let mut ro = read_at(t);
    ro.set_iter_start_ts(ts(0));
    let mut it = db.raw_iterator_opt(ro);
    it.seek_to_first();
    let mut out = Vec::new();
    while it.valid() {
        let ik = it.key().unwrap();
        let (uk, trailer) = ik.split_at(ik.len() - 8);
        let (k, vt) = uk.split_at(uk.len() - 8);
        let value = match trailer[0] {
            0x1 => Some(String::from_utf8(it.value().unwrap().to_vec()).unwrap()),
            0x14 => None,
            t => panic!("value type {t:#x}"),
        };
        out.push((String::from_utf8(k.to_vec()).unwrap(), u64::from_le_bytes(vt.try_into().unwrap()), value));
        it.next();
    }
    it.status().unwrap();
    out
}

fn v(k: &str, t: u64, val: Option<&str>) -> (String, u64, Option<String>) {
    (k.to_string(), t, val.map(str::to_string))
}

#[test]
fn compaction_drops_versions_hidden_below_full_history_ts_low() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    let db = DB::open(&o, dir.path()).unwrap();
    for t in [1, 2, 3] {
        db.put_with_ts(b"a", ts(t), format!("a{t}")).unwrap();
    }
    db.put_with_ts(b"b", ts(1), b"b1").unwrap();
    db.put_with_ts(b"c", ts(1), b"c1").unwrap();
    // Two overlapping level-0 files, so the compaction rewrites them (no trivial move).
    db.flush().unwrap();
    for t in [5, 7] {
        db.put_with_ts(b"a", ts(t), format!("a{t}")).unwrap();
    }
    db.delete_with_ts(b"b", ts(2)).unwrap();
    db.delete_with_ts(b"c", ts(4)).unwrap();
    db.put_with_ts(b"d", ts(6), b"d6").unwrap();
    // e: two versions below the mark, a snapshot between them.
    db.put_with_ts(b"e", ts(1), b"e1").unwrap();
    let snap = db.snapshot();
    db.put_with_ts(b"e", ts(2), b"e2").unwrap();
    // The snapshot does not see e2 (an older timestamp than the read's, a newer sequence).
    assert_eq!(snap.get_opt(b"e", read_at(4)).unwrap().as_deref(), Some(&b"e1"[..]), "memtable");
    db.flush().unwrap();
    assert_eq!(snap.get_opt(b"e", read_at(4)).unwrap().as_deref(), Some(&b"e1"[..]), "table");

    let all = vec![
        v("a", 7, Some("a7")),
        v("a", 5, Some("a5")),
        v("a", 3, Some("a3")),
        v("a", 2, Some("a2")),
        v("a", 1, Some("a1")),
        v("b", 2, None),
        v("b", 1, Some("b1")),
        v("c", 4, None),
        v("c", 1, Some("c1")),
        v("d", 6, Some("d6")),
        v("e", 2, Some("e2")),
        v("e", 1, Some("e1")),
    ];
    assert_eq!(versions(&db, 8), all, "before garbage collection");

    let mut co = CompactOptions::default();
    co.set_full_history_ts_low(ts(4));
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &co);
    // The compaction is bottommost: the version kept below the mark that every snapshot
    // sees is written with sequence 0 and the minimum timestamp, 0 (RocksDB's
    // CompactionIterator::PrepareOutput).
    let kept = vec![
        // At or above the mark: all kept; below it: the newest only.
        v("a", 7, Some("a7")),
        v("a", 5, Some("a5")),
        v("a", 0, Some("a3")),
        // The newest below the mark is a deletion every snapshot sees: all gone.
        v("c", 4, None),
        v("c", 0, Some("c1")),
        v("d", 6, Some("d6")),
        // Two snapshot stripes: both kept while the snapshot lives; the snapshot does not
        // see e2, which keeps its timestamp.
        v("e", 2, Some("e2")),
        v("e", 0, Some("e1")),
    ];
    assert_eq!(versions(&db, 8), kept, "after compaction with full_history_ts_low 4");
    // Reads at or above the mark see what they saw.
    for (k, t, want) in [
        ("a", 4, Some("a3")),
        ("a", 6, Some("a5")),
        ("b", 4, None),
        ("c", 4, None),
        ("c", 8, None),
        ("d", 6, Some("d6")),
        ("e", 4, Some("e2")),
    ] {
        let got = db.get_opt(k, &read_at(t)).unwrap();
        assert_eq!(got.as_deref(), want.map(str::as_bytes), "{k} at {t}");
    }
    assert_eq!(snap.get_opt(b"e", read_at(4)).unwrap().as_deref(), Some(&b"e1"[..]));
    assert!(db.get_opt(b"a", &read_at(3)).is_err(), "a read below the mark is refused");

    drop(snap);
    // A level-0 file over the whole range, so the compaction rewrites the bottommost file.
    db.put_with_ts(b"a", ts(8), b"a8").unwrap();
    db.put_with_ts(b"f", ts(8), b"f8").unwrap();
    db.flush().unwrap();
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &co);
    let mut last = kept.clone();
    // e2, now seen by every snapshot, shadows e1 and goes to timestamp 0 in its place.
    last.retain(|x| *x != v("e", 0, Some("e1")) && *x != v("e", 2, Some("e2")));
    last.insert(last.len(), v("e", 0, Some("e2")));
    last.insert(0, v("a", 8, Some("a8")));
    last.push(v("f", 8, Some("f8")));
    assert_eq!(versions(&db, 8), last, "after the snapshot is released");
}
