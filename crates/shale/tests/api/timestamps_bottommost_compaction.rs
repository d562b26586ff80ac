//! User-defined timestamps at the bottommost level (docs/timestamps.md): a compaction takes
//! every file of its output level that holds a version of its keys, comparing keys without
//! their timestamps (RocksDB's `GetOverlappingInputs`), and writes the version below
//! `full_history_ts_low` that every snapshot sees with sequence 0 and timestamp 0 (RocksDB's
//! `CompactionIterator::PrepareOutput`).
//!
//! The shape: the last level holds a table starting at k@1; a level-0 table holds only
//! another version of k. As whole keys, k@3 (and k@12) sort before k@1, so a picker that
//! compares them so leaves the last level's table out: the zeroed k@0 then lands over it
//! ("L6 has overlapping ranges"), and a deletion below the mark is dropped while the
//! version it hides stays.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;
use std::sync::Arc;

use shale::key::{parse_internal_key, InternalKeyComparator};
use shale::table::reader::{Table, TableReaderOptions};
use shale::{CompactOptions, Options, ReadOptions, U64TsComparator, DB};

fn ts(t: u64) -> [u8; 8] {
    t.to_le_bytes()
}

fn read_at(t: u64) -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_timestamp(ts(t));
    ro
}

/// (level, key, timestamp, sequence, type byte) of every entry of every live table.
fn entries(db: &DB, dir: &Path) -> Vec<(i32, String, u64, u64, u8)> {
    let mut files = db.live_files().unwrap();
    files.sort_by(|a, b| (a.level, &a.start_key).cmp(&(b.level, &b.start_key)));
    let mut out = Vec::new();
    for lf in files {
        let f = dir.join(lf.name.trim_start_matches('/'));
        let size = std::fs::metadata(&f).unwrap().len();
        let file = shale::fs::default_fs().new_random_access_file(&f).unwrap();
        let opts = TableReaderOptions::standalone(
            InternalKeyComparator::new(Arc::new(U64TsComparator::bytewise())),
            f.display().to_string(),
        );
        let table = Arc::new(Table::open(file, size, opts).unwrap());
        let mut it = table.iter(false);
        it.seek_to_first();
        while it.valid() {
            let p = parse_internal_key(it.key()).unwrap();
            let (k, t) = p.user_key.split_at(p.user_key.len() - 8);
            let t = u64::from_le_bytes(t.try_into().unwrap());
            out.push((lf.level, String::from_utf8(k.to_vec()).unwrap(), t, p.sequence, p.value_type as u8));
            it.next();
        }
        it.status().unwrap();
    }
    out
}

/// A manual compaction of `[begin, end]` (keys without timestamps, as RocksDB's
/// CompactRange takes them) with `full_history_ts_low` raised to `low`: by the compaction's
/// own option over the whole range; with a range, which RocksDB 11.8.1 refuses with that
/// option ("Cannot specify compaction range with full_history_ts_low"), by
/// `increase_full_history_ts_low` first.
fn compact_with_low(db: &DB, low: u64, begin: Option<&[u8]>, end: Option<&[u8]>) {
    let mut co = CompactOptions::default();
    let cf = db.cf_handle("default").unwrap();
    if begin.is_some() || end.is_some() {
        db.increase_full_history_ts_low(&cf, ts(low)).unwrap();
    } else {
        co.set_full_history_ts_low(ts(low));
    }
    db.try_compact_range_cf_opt(&cf, begin, end, &co).unwrap();
}

#[test]
fn bottommost_compaction_takes_every_version_and_zeroes_below_the_mark() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    let db = DB::open(&o, dir.path()).unwrap();

    // The last level: one table [k@1, z@1] (sequences 1 and 2).
    db.put_with_ts(b"k", ts(1), b"k1").unwrap();
    db.put_with_ts(b"z", ts(1), b"z1").unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(entries(&db, dir.path()), vec![(6, "k".into(), 1, 1, 1), (6, "z".into(), 1, 2, 1)]);

    // Level 0: k@3 only. The compaction to the last level takes the table holding k@1.
    db.put_with_ts(b"k", ts(3), b"k3").unwrap();
    db.flush().unwrap();
    compact_with_low(&db, 10, None, None);
    // Below the mark only the newest version of k stays; it and z's, seen by every
    // snapshot, are written with sequence 0 and timestamp 0.
    assert_eq!(entries(&db, dir.path()), vec![(6, "k".into(), 0, 0, 1), (6, "z".into(), 0, 0, 1)]);
    assert_eq!(db.get_opt(b"k", &read_at(10)).unwrap().as_deref(), Some(&b"k3"[..]));
    assert_eq!(db.get_opt(b"z", &read_at(10)).unwrap().as_deref(), Some(&b"z1"[..]));

    // At or above the mark nothing is zeroed; a version a snapshot does not see keeps its
    // sequence and timestamp too.
    db.put_with_ts(b"m", ts(11), b"m11").unwrap();
    db.put_with_ts(b"n", ts(5), b"n5").unwrap();
    let snap = db.snapshot();
    db.put_with_ts(b"n", ts(6), b"n6").unwrap();
    db.flush().unwrap();
    compact_with_low(&db, 10, None, None);
    assert_eq!(
        entries(&db, dir.path()),
        vec![
            (6, "k".into(), 0, 0, 1),
            (6, "m".into(), 11, 4, 1),
            (6, "n".into(), 6, 6, 1),
            (6, "n".into(), 0, 0, 1),
            (6, "z".into(), 0, 0, 1),
        ]
    );
    drop(snap);

    // A deletion of k below the mark, alone in level 0: dropped with the version it hides.
    // The range is k alone: every version of k is in it.
    db.delete_with_ts(b"k", ts(12)).unwrap();
    db.flush().unwrap();
    compact_with_low(&db, 20, Some(b"k"), Some(b"k"));
    assert_eq!(db.get_opt(b"k", &read_at(20)).unwrap(), None);
    assert_eq!(
        entries(&db, dir.path()),
        vec![(6, "m".into(), 0, 0, 1), (6, "n".into(), 0, 0, 1), (6, "z".into(), 0, 0, 1)]
    );
}
