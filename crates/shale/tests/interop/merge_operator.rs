//! Merge operators, scenario by scenario: resolution across memtable, level 0 and deeper
//! levels, under snapshots and range deletions, in both iterator directions; compaction's
//! partial and full merges (checked through what a snapshot and the latest view read, and
//! through the entries left); failing and panicking merge functions give errors, never a
//! panic; the operator's name is recorded in the OPTIONS file and table properties.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::tools;

use shale::{ErrorKind, IteratorMode, MergeOperands, Options, ReadOptions, DB};
use tools::concat;

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o
}

fn scan(db: &DB, mode: IteratorMode<'_>) -> Vec<(Vec<u8>, Vec<u8>)> {
    db.iterator(mode).map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap()).collect()
}

#[test]
fn operands_resolve_across_memtables_files_and_levels() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.set_merge_operator_associative("concat", concat);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put(b"a", b"1").unwrap();
    db.merge(b"a", b"2").unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>); // to level 1
    db.merge(b"a", b"3").unwrap();
    db.flush().unwrap(); // level 0
    db.merge(b"a", b"4").unwrap(); // memtable
    db.merge(b"b", b"x").unwrap(); // no base at all
    db.merge(b"c", b"y").unwrap();
    db.put(b"c", b"base").unwrap(); // a Put hides the older operand
    db.merge(b"c", b"z").unwrap();
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1234"[..]));
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"x"[..]));
    assert_eq!(db.get(b"c").unwrap().as_deref(), Some(&b"basez"[..]));
    let want = vec![
        (b"a".to_vec(), b"1234".to_vec()),
        (b"b".to_vec(), b"x".to_vec()),
        (b"c".to_vec(), b"basez".to_vec()),
    ];
    assert_eq!(scan(&db, IteratorMode::Start), want);
    let mut rev = scan(&db, IteratorMode::End);
    rev.reverse();
    assert_eq!(rev, want);
    let got: Vec<_> = db.multi_get([b"a", b"b", b"c"]).into_iter().map(|r| r.unwrap()).collect();
    assert_eq!(got, vec![Some(b"1234".to_vec()), Some(b"x".to_vec()), Some(b"basez".to_vec())]);
    assert_eq!(db.get_pinned(b"a").unwrap().as_deref(), Some(&b"1234"[..]));
    // Direction switches on a merged key.
    let mut it = db.raw_iterator();
    it.seek(b"b");
    assert_eq!(it.value(), Some(&b"x"[..]));
    it.prev();
    assert_eq!((it.key(), it.value()), (Some(&b"a"[..]), Some(&b"1234"[..])));
    it.next();
    assert_eq!(it.key(), Some(&b"b"[..]));
    it.next();
    assert_eq!(it.value(), Some(&b"basez"[..]));
    it.next();
    assert!(!it.valid());
    it.status().unwrap();
}

#[test]
fn deletions_and_range_deletions_cut_the_operand_stack() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.set_merge_operator_associative("concat", concat);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put(b"k", b"old").unwrap();
    db.merge(b"k", b"1").unwrap();
    db.flush().unwrap();
    db.delete_range(b"a", b"z").unwrap();
    db.merge(b"k", b"2").unwrap();
    db.merge(b"j", b"x").unwrap();
    db.delete(b"j").unwrap();
    db.merge(b"j", b"y").unwrap();
    for round in 0..3 {
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"2"[..]), "round {round}");
        assert_eq!(db.get(b"j").unwrap().as_deref(), Some(&b"y"[..]), "round {round}");
        let mut rev = scan(&db, IteratorMode::End);
        rev.reverse();
        assert_eq!(rev, scan(&db, IteratorMode::Start), "round {round}");
        assert_eq!(
            scan(&db, IteratorMode::Start),
            vec![(b"j".to_vec(), b"y".to_vec()), (b"k".to_vec(), b"2".to_vec())]
        );
        if round == 0 {
            db.flush().unwrap();
        } else {
            db.compact_range(None::<&[u8]>, None::<&[u8]>);
        }
    }
}

#[test]
fn compaction_respects_snapshots_and_uses_partial_merge() {
    let dir = tempfile::tempdir().unwrap();
    let partials = Arc::new(AtomicUsize::new(0));
    let p2 = partials.clone();
    let mut o = opts();
    o.set_merge_operator("concat-counted", concat, move |k: &[u8], e: Option<&[u8]>, ops: &MergeOperands| {
        p2.fetch_add(1, Ordering::Relaxed);
        concat(k, e, ops)
    });
    let db = DB::open(&o, dir.path()).unwrap();
    db.merge(b"k", b"a").unwrap();
    db.merge(b"k", b"b").unwrap();
    db.flush().unwrap();
    let snap = db.snapshot();
    db.merge(b"k", b"c").unwrap();
    db.merge(b"k", b"d").unwrap();
    db.flush().unwrap();
    // Two level-0 files into level 6 (with dynamic level sizes, the base level of a database
    // with nothing below level 0), the bottommost level: the operands the snapshot sees
    // are fully merged (nothing older exists), the newer ones only partially (the snapshot
    // stripe boundary lies between them and the base).
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert!(partials.load(Ordering::Relaxed) > 0, "the partial merge was used");
    assert_eq!(db.property_int_value("rocksdb.num-files-at-level6").unwrap(), Some(1));
    assert_eq!(snap.get(b"k").unwrap().as_deref(), Some(&b"ab"[..]));
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"abcd"[..]));
    let mut ro = ReadOptions::default();
    ro.set_snapshot(&snap);
    let at_snap: Vec<_> = db.iterator_opt(IteratorMode::End, ro).map(|r| r.unwrap().1.to_vec()).collect();
    assert_eq!(at_snap, vec![b"ab".to_vec()]);
    drop(snap);
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"abcd"[..]));
    let mut it = db.raw_iterator();
    it.seek_for_prev(b"z");
    assert_eq!(it.value(), Some(&b"abcd"[..]));
}

#[test]
fn failing_merge_function_gives_corruption_without_the_key() {
    let dir = tempfile::tempdir().unwrap();
    // RocksDB's kMergeOperatorFailed Corruption never names the key, even with
    // allow_data_in_errors (`tests/api/option_rows_dbmisc.rs` checks both ways).
    let mut o = opts().get_options_from_string("allow_data_in_errors=true").unwrap();
    o.set_merge_operator_associative("fails", |_: &[u8], _: Option<&[u8]>, _: &MergeOperands| None);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put(b"key", b"v").unwrap();
    db.flush().unwrap();
    db.merge(b"key", b"op").unwrap();
    db.put(b"other", b"fine").unwrap();
    let e = db.get(b"key").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains("Merge operator failed") && !e.to_string().contains("6B6579"), "{e}");
    assert_eq!(db.get(b"other").unwrap().as_deref(), Some(&b"fine"[..]));
    let mut it = db.iterator(IteratorMode::Start);
    assert_eq!(it.next().unwrap().unwrap_err().kind(), ErrorKind::Corruption);
    let mut it = db.raw_iterator();
    it.seek_to_last();
    it.prev();
    assert!(!it.valid());
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::Corruption);
    drop(it);
    db.flush().unwrap();
    // A compaction that must fully merge (bottommost) fails, and the data stays readable.
    let e = db.try_compact_range_cf(db.cf_handle("default").unwrap(), None::<&[u8]>, None::<&[u8]>);
    assert_eq!(e.unwrap_err().kind(), ErrorKind::Corruption);
    assert_eq!(db.get(b"other").unwrap().as_deref(), Some(&b"fine"[..]));
}

#[test]
fn panicking_merge_function_gives_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.set_merge_operator_associative(
        "panics",
        |_: &[u8], _: Option<&[u8]>, _: &MergeOperands| -> Option<Vec<u8>> {
            panic!("merge function panics")
        },
    );
    let db = DB::open(&o, dir.path()).unwrap();
    db.merge(b"k", b"x").unwrap();
    assert_eq!(db.get(b"k").unwrap_err().kind(), ErrorKind::Corruption);
    let mut it = db.iterator(IteratorMode::End);
    assert!(it.next().unwrap().is_err());
}

#[test]
fn builtin_operator_names_reach_options_file_and_table_properties() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.set_merge_operator_object(shale::merge_operators::uint64add());
    let db = DB::open(&o, dir.path()).unwrap();
    for _ in 0..5 {
        db.merge(b"n", 3u64.to_le_bytes()).unwrap();
    }
    db.flush().unwrap();
    assert_eq!(db.get(b"n").unwrap(), Some(15u64.to_le_bytes().to_vec()));
    let files = db.live_files().unwrap();
    assert_eq!(files.len(), 1);
    let table = std::fs::read(dir.path().join(files[0].name.trim_start_matches('/'))).unwrap();
    let needle = b"UInt64AddOperator";
    assert!(table.windows(needle.len()).any(|w| w == needle), "rocksdb.merge.operator in the table");
    drop(db);
    let options_file = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("OPTIONS-"))
        .max()
        .unwrap();
    let text = std::fs::read_to_string(options_file).unwrap();
    assert!(text.contains("merge_operator=UInt64AddOperator"), "{text}");
    assert!(text.contains("compaction_filter=nullptr"), "{text}");
    // Reading operands without a merge operator is RocksDB's InvalidArgument.
    let db = DB::open(&opts(), dir.path()).unwrap();
    assert_eq!(db.get(b"n").unwrap_err().kind(), ErrorKind::InvalidArgument);
}
