//! `max_successive_merges`: a merge that finds that many operands of its key on top of the
//! active memtable is written as the merged value (RocksDB's `MemTableInserter::MergeCF`),
//! so a read never merges more operands than the limit from the memtable; every read gives
//! the same values as without the option, snapshots included; an operand whose merge needs
//! a table file, or whose merge function fails, is stored as an operand.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::cell::Cell;

use shale::{ErrorKind, MergeOperands, Options, WriteBatch, DB};

thread_local! {
    /// The most operands one full merge on this thread was given since the last reset.
    static MOST_OPERANDS: Cell<usize> = const { Cell::new(0) };
}

/// Appends the operands, comma-separated; "bad" makes the merge fail.
fn append(_k: &[u8], existing: Option<&[u8]>, ops: &MergeOperands) -> Option<Vec<u8>> {
    MOST_OPERANDS.with(|c| c.set(c.get().max(ops.len())));
    let mut v = existing.map(<[u8]>::to_vec).unwrap_or_default();
    for o in ops {
        if o == b"bad" {
            return None;
        }
        if !v.is_empty() {
            v.push(b',');
        }
        v.extend_from_slice(o);
    }
    Some(v)
}

fn opts(limit: usize) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_merge_operator_associative("append", append);
    o.set_max_successive_merges(limit);
    o
}

/// The value of `key` and the most operands the read merged.
fn read(db: &DB, key: &[u8]) -> (Option<Vec<u8>>, usize) {
    MOST_OPERANDS.with(|c| c.set(0));
    let v = db.get(key).unwrap();
    (v, MOST_OPERANDS.with(Cell::get))
}

fn list(n: usize) -> Vec<u8> {
    (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",").into_bytes()
}

#[test]
fn merges_beyond_the_limit_are_resolved_on_write() {
    for limit in [1, 2, 3] {
        let dir = tempfile::tempdir().unwrap();
        let db = DB::open(&opts(limit), dir.path()).unwrap();
        // On a base value, on nothing, and on a deletion.
        db.put(b"base", b"0").unwrap();
        db.put(b"gone", b"x").unwrap();
        db.delete(b"gone").unwrap();
        for i in 1..10 {
            db.merge(b"base", i.to_string()).unwrap();
        }
        for i in 0..10 {
            db.merge(b"fresh", i.to_string()).unwrap();
            db.merge(b"gone", i.to_string()).unwrap();
            let (v, most) = read(&db, b"fresh");
            assert_eq!(v, Some(list(i + 1)), "limit {limit}, after {i}");
            assert!(most <= limit, "limit {limit}: a read merged {most} operands");
        }
        for key in [&b"base"[..], b"fresh", b"gone"] {
            let (v, most) = read(&db, key);
            assert_eq!(v, Some(list(10)), "limit {limit}");
            assert!(most <= limit, "limit {limit}: {most} operands");
        }
        // The same values after a flush and a reopen (the WAL holds the operands).
        drop(db);
        let db = DB::open(&opts(limit), dir.path()).unwrap();
        for key in [&b"base"[..], b"fresh", b"gone"] {
            assert_eq!(db.get(key).unwrap(), Some(list(10)));
        }
        db.flush().unwrap();
        for key in [&b"base"[..], b"fresh", b"gone"] {
            assert_eq!(db.get(key).unwrap(), Some(list(10)));
        }
    }
}

#[test]
fn without_the_option_every_operand_stays() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(0), dir.path()).unwrap();
    for i in 0..10 {
        db.merge(b"k", i.to_string()).unwrap();
    }
    assert_eq!(read(&db, b"k"), (Some(list(10)), 10));
}

#[test]
fn operands_of_one_batch_and_snapshots_see_their_own_values() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(2), dir.path()).unwrap();
    db.merge(b"k", b"0").unwrap();
    let snap = db.snapshot();
    let mut b = WriteBatch::default();
    for i in 1..6 {
        b.merge(b"k", i.to_string());
    }
    db.write(b).unwrap();
    let (v, most) = read(&db, b"k");
    assert_eq!(v, Some(list(6)));
    assert!(most <= 2, "{most} operands");
    assert_eq!(snap.get(b"k").unwrap(), Some(b"0".to_vec()));
}

#[test]
fn operands_over_a_table_file_stay_operands() {
    // The value lies in a table: RocksDB's non-strict mode reads no file on the write path,
    // and Shale reads none at all, so the operands stay; reads are still right.
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(2), dir.path()).unwrap();
    db.put(b"k", b"0").unwrap();
    db.flush().unwrap();
    for i in 1..8 {
        db.merge(b"k", i.to_string()).unwrap();
    }
    assert_eq!(read(&db, b"k"), (Some(list(8)), 7));
    // A key past every table's range has nothing below the memtable: resolved.
    for i in 0..8 {
        db.merge(b"z", i.to_string()).unwrap();
    }
    let (v, most) = read(&db, b"z");
    assert_eq!(v, Some(list(8)));
    assert!(most <= 2, "{most} operands");
}

#[test]
fn a_failing_merge_leaves_the_operand_and_the_read_fails() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(1), dir.path()).unwrap();
    db.merge(b"k", b"0").unwrap();
    db.merge(b"k", b"bad").unwrap(); // the write-time merge fails: stored as an operand
    db.merge(b"k", b"2").unwrap();
    let e = db.get(b"k").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    db.put(b"k", b"p").unwrap();
    db.merge(b"k", b"3").unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"p,3".to_vec()));
}

#[test]
fn set_options_takes_effect_with_the_next_memtable_and_unordered_write_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(0), dir.path()).unwrap();
    db.set_options(&[("max_successive_merges", "2")]).unwrap();
    for i in 0..5 {
        db.merge(b"k", i.to_string()).unwrap();
    }
    // The active memtable was made with 0.
    assert_eq!(read(&db, b"k"), (Some(list(5)), 5));
    db.flush().unwrap();
    for i in 5..10 {
        db.merge(b"z", i.to_string()).unwrap();
    }
    let (v, most) = read(&db, b"z");
    assert_eq!(v.as_deref(), Some(&b"5,6,7,8,9"[..]));
    assert!(most <= 2, "{most} operands");
    drop(db);

    let mut o = opts(2);
    o.set_unordered_write(true);
    let e = DB::open(&o, tempfile::tempdir().unwrap().path()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("max_successive_merges"), "{e}");
}

#[test]
fn strict_max_successive_merges_reads_the_table_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(2), dir.path()).unwrap();
    db.put(b"k", b"0").unwrap();
    db.flush().unwrap();
    for i in 1..4 {
        db.merge(b"k", i.to_string()).unwrap();
    }
    // Not strict (the default): the value lies in a table, so the operands stay.
    assert_eq!(read(&db, b"k"), (Some(list(4)), 3));
    // Strict (mutable, as RocksDB's): the next merge at the limit reads the table and
    // stores the merged value, so a read merges nothing.
    db.set_options(&[("strict_max_successive_merges", "true")]).unwrap();
    db.merge(b"k", b"4").unwrap();
    assert_eq!(read(&db, b"k"), (Some(list(5)), 0));
    let latest = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("OPTIONS-"))
        .max()
        .unwrap();
    let text = std::fs::read_to_string(dir.path().join(latest)).unwrap();
    assert!(text.contains("strict_max_successive_merges=true"), "set_options rewrote the OPTIONS file");
    // Off again: operands stay over the table.
    db.set_options(&[("strict_max_successive_merges", "false")]).unwrap();
    for i in 0..3 {
        db.merge(b"j", i.to_string()).unwrap();
    }
    db.flush().unwrap();
    for i in 3..6 {
        db.merge(b"j", i.to_string()).unwrap();
    }
    assert_eq!(read(&db, b"j"), (Some(list(6)), 3));
}
