//! Comparators: the reverse bytewise comparator and a user comparator order iteration
//! across memtable, flush, compaction and reopen; reopening with another comparator fails
//! with RocksDB's message.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::cmp::Ordering;
use std::sync::Arc;

use shale::{ErrorKind, IteratorMode, Options, ReverseBytewiseComparator, DB};

fn reverse_opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(16 << 10);
    o.set_level_zero_file_num_compaction_trigger(2);
    o.set_level_compaction_dynamic_level_bytes(false); // level 0 compacts into level 1
    o.set_comparator_object(Arc::new(ReverseBytewiseComparator));
    o
}

/// Orders decimal numbers by value ("9" < "10"), breaking ties bytewise.
fn numeric(a: &[u8], b: &[u8]) -> Ordering {
    let n = |x: &[u8]| std::str::from_utf8(x).ok().and_then(|s| s.parse::<u64>().ok()).unwrap_or(u64::MAX);
    n(a).cmp(&n(b)).then_with(|| a.cmp(b))
}

fn numeric_opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(16 << 10);
    o.set_level_zero_file_num_compaction_trigger(2);
    o.set_level_compaction_dynamic_level_bytes(false); // level 0 compacts into level 1
    o.set_comparator("shale.test.Numeric", Box::new(numeric));
    o
}

fn all_keys(db: &DB, mode: IteratorMode) -> Vec<Vec<u8>> {
    db.iterator(mode).map(|r| r.unwrap().0.into_vec()).collect()
}

fn check_order(db: &DB, mut want: Vec<Vec<u8>>, cmp: impl Fn(&[u8], &[u8]) -> Ordering) {
    want.sort_by(|a, b| cmp(a, b));
    want.dedup();
    assert_eq!(all_keys(db, IteratorMode::Start), want);
    let mut rev = want.clone();
    rev.reverse();
    assert_eq!(all_keys(db, IteratorMode::End), rev);
}

#[test]
fn reverse_bytewise_orders_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<Vec<u8>> = (0..2000u32).map(|i| format!("key{:05}", (i * 7) % 2000).into_bytes()).collect();
    let rev = |a: &[u8], b: &[u8]| b.cmp(a);
    {
        let db = DB::open(&reverse_opts(), dir.path()).unwrap();
        for (i, k) in keys.iter().enumerate() {
            db.put(k, util::value(i as u64, 50)).unwrap();
        }
        util::wait_for_background(&db);
        assert!(util::int_prop(&db, "rocksdb.num-files-at-level1") > 0, "no compaction happened");
        check_order(&db, keys.clone(), rev);
        // Point reads and seeks follow the comparator: "after" means "smaller bytes".
        assert_eq!(all_keys(&db, IteratorMode::Start)[0], b"key01999");
        let from: Vec<Vec<u8>> = db
            .iterator(IteratorMode::From(b"key00002x", shale::Direction::Forward))
            .take(3)
            .map(|r| r.unwrap().0.into_vec())
            .collect();
        assert_eq!(from, vec![b"key00002".to_vec(), b"key00001".to_vec(), b"key00000".to_vec()]);
        let mut ro = shale::ReadOptions::default();
        ro.set_iterate_upper_bound(b"key00996".to_vec()); // exclusive, in comparator order
        let bounded: Vec<Vec<u8>> =
            db.iterator_opt(IteratorMode::Start, ro).map(|r| r.unwrap().0.into_vec()).collect();
        assert_eq!(bounded.len(), 2000 - 996 - 1);
        assert_eq!(bounded.last().unwrap(), b"key00997");
        db.delete_range(b"key01999", b"key01989").unwrap(); // [start, end) in comparator order
        assert_eq!(all_keys(&db, IteratorMode::Start)[0], b"key01989");
        db.compact_range::<&[u8], &[u8]>(None, None);
        assert_eq!(all_keys(&db, IteratorMode::Start)[0], b"key01989");
        assert_eq!(db.get(b"key00007").unwrap(), Some(util::value(1, 50)));
    }
    let db = DB::open(&reverse_opts(), dir.path()).unwrap();
    let remaining: Vec<Vec<u8>> =
        keys.into_iter().filter(|k| k.as_slice() < b"key01990".as_slice()).collect();
    check_order(&db, remaining, rev);
    assert_eq!(db.get(b"key00007").unwrap(), Some(util::value(1, 50)));
}

#[test]
fn user_comparator_orders_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<Vec<u8>> = (0..1500u64).map(|i| ((i * 7919) % 1500).to_string().into_bytes()).collect();
    {
        let db = DB::open(&numeric_opts(), dir.path()).unwrap();
        for k in &keys {
            db.put(k, vec![b'x'; 40]).unwrap();
        }
        util::wait_for_background(&db);
        assert!(util::int_prop(&db, "rocksdb.num-files-at-level1") > 0, "no compaction happened");
        check_order(&db, keys.clone(), numeric);
        let first: Vec<Vec<u8>> = all_keys(&db, IteratorMode::Start).into_iter().take(12).collect();
        let want: Vec<Vec<u8>> = (0..12u32).map(|i| i.to_string().into_bytes()).collect();
        assert_eq!(first, want, "numeric order puts 9 before 10");
        let from: Vec<Vec<u8>> = db
            .iterator(IteratorMode::From(b"99", shale::Direction::Forward))
            .take(2)
            .map(|r| r.unwrap().0.into_vec())
            .collect();
        assert_eq!(from, vec![b"99".to_vec(), b"100".to_vec()]);
        db.delete_range(&b"10"[..], &b"100"[..]).unwrap(); // 10..=99 in numeric order
        db.flush().unwrap();
        db.compact_range::<&[u8], &[u8]>(None, None);
        assert_eq!(db.get(b"50").unwrap(), None);
        assert_eq!(db.get(b"9").unwrap(), Some(vec![b'x'; 40]));
        assert_eq!(db.get(b"100").unwrap(), Some(vec![b'x'; 40]));
    }
    let db = DB::open(&numeric_opts(), dir.path()).unwrap();
    let remaining: Vec<Vec<u8>> = keys
        .into_iter()
        .filter(|k| !(10..100).contains(&std::str::from_utf8(k).unwrap().parse::<u64>().unwrap()))
        .collect();
    assert_eq!(remaining.len(), 1500 - 90);
    check_order(&db, remaining, numeric);
}

#[test]
fn reopening_with_another_comparator_fails() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = DB::open(&numeric_opts(), dir.path()).unwrap();
        db.put(b"1", b"one").unwrap();
    }
    let mut bytewise = Options::default();
    bytewise.create_if_missing(true);
    let e = DB::open(&bytewise, dir.path()).expect_err("open with another comparator must fail");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        e.into_string(),
        "Invalid argument: leveldb.BytewiseComparator: does not match existing comparator shale.test.Numeric"
    );
    let e = DB::open(&reverse_opts(), dir.path()).expect_err("open with another comparator must fail");
    assert_eq!(
        e.into_string(),
        "Invalid argument: rocksdb.ReverseBytewiseComparator: does not match existing comparator \
         shale.test.Numeric"
    );
    // The database is untouched and opens with its own comparator.
    let db = DB::open(&numeric_opts(), dir.path()).unwrap();
    assert_eq!(db.get(b"1").unwrap().as_deref(), Some(&b"one"[..]));
    drop(db);

    // And the other way round: a bytewise database refuses a user comparator.
    let dir2 = tempfile::tempdir().unwrap();
    drop(DB::open(&bytewise, dir2.path()).unwrap());
    let e = DB::open(&numeric_opts(), dir2.path()).err().unwrap();
    assert_eq!(
        e.into_string(),
        "Invalid argument: shale.test.Numeric: does not match existing comparator leveldb.BytewiseComparator"
    );
}
