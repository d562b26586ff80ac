//! Reads: get, multi_get, multi_get_cf, snapshots, the Rust iterator (IteratorMode,
//! Direction), the raw iterator (seek, seek_for_prev, seek_to_first/last, next, prev) and
//! iterate bounds, over data spread across the memtable, level 0 and level 1.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::families;
use families::open_cf_all;

use crate::util;

use shale::{Direction, IteratorMode, Options, ReadOptions, DB};

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_disable_auto_compactions(true);
    o
}

/// Keys k00..k98 (even numbers only) spread over L1, L0 and the memtable; odd numbers are
/// deleted, k50 is overwritten.
fn layered_db(path: &std::path::Path) -> DB {
    let db = open_cf_all(&opts(), path, ["side"]).unwrap();
    for i in (0..100).step_by(2) {
        db.put(format!("k{i:02}"), format!("v{i}")).unwrap();
    }
    for i in (1..100).step_by(2) {
        db.put(format!("k{i:02}"), b"doomed").unwrap();
    }
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None); // to L6 (the base level: dynamic level sizes)
    for i in (1..50).step_by(2) {
        db.delete(format!("k{i:02}")).unwrap();
    }
    db.put(b"k50", b"v50-new").unwrap();
    db.flush().unwrap(); // L0
    for i in (51..100).step_by(2) {
        db.delete(format!("k{i:02}")).unwrap(); // memtable
    }
    assert!(util::int_prop(&db, "rocksdb.num-files-at-level6") > 0);
    assert_eq!(util::int_prop(&db, "rocksdb.num-files-at-level0"), 1);
    db
}

fn expected(i: u32) -> Option<Vec<u8>> {
    match i {
        50 => Some(b"v50-new".to_vec()),
        i if i % 2 == 0 && i < 100 => Some(format!("v{i}").into_bytes()),
        _ => None,
    }
}

fn keys(it: impl Iterator<Item = shale::Result<(Box<[u8]>, Box<[u8]>)>>) -> Vec<String> {
    it.map(|r| String::from_utf8(r.unwrap().0.into_vec()).unwrap()).collect()
}

fn k(i: u32) -> String {
    format!("k{i:02}")
}

#[test]
fn get_and_multi_get() {
    let dir = tempfile::tempdir().unwrap();
    let db = layered_db(dir.path());
    for i in 0..100 {
        assert_eq!(db.get(k(i)).unwrap(), expected(i), "{}", k(i));
    }
    assert_eq!(db.get(b"").unwrap(), None);
    assert_eq!(db.get(b"zzz").unwrap(), None);
    let got = db.multi_get([k(0), k(1), k(50), "nope".to_string(), k(98), k(99)]);
    let got: Vec<Option<Vec<u8>>> = got.into_iter().map(|r| r.unwrap()).collect();
    assert_eq!(got, vec![expected(0), None, expected(50), None, expected(98), None]);

    let side = db.cf_handle("side").unwrap();
    db.put_cf(side, b"k00", b"side0").unwrap();
    let default = db.cf_handle("default").unwrap();
    let got: Vec<Option<Vec<u8>>> = db
        .multi_get_cf([(side, b"k00".as_slice()), (default, b"k00"), (side, b"k02"), (default, b"k02")])
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(got, vec![Some(b"side0".to_vec()), expected(0), None, expected(2)]);
}

#[test]
fn snapshots_see_a_fixed_point_in_time() {
    let dir = tempfile::tempdir().unwrap();
    let db = layered_db(dir.path());
    let snap = db.snapshot();
    db.put(b"k00", b"changed").unwrap();
    db.delete(b"k02").unwrap();
    db.put(b"k01", b"revived").unwrap();
    db.put(b"new", b"1").unwrap();
    db.flush().unwrap();

    assert_eq!(snap.get(b"k00").unwrap(), expected(0));
    assert_eq!(snap.get(b"k02").unwrap(), expected(2));
    assert_eq!(snap.get(b"k01").unwrap(), None);
    assert_eq!(snap.get(b"new").unwrap(), None);
    assert_eq!(db.get(b"k00").unwrap().as_deref(), Some(&b"changed"[..]));
    assert_eq!(db.get(b"k02").unwrap(), None);

    let mut ro = ReadOptions::default();
    ro.set_snapshot(&snap);
    assert_eq!(db.get_opt(b"k00", &ro).unwrap(), expected(0));
    assert_eq!(db.get_opt(b"new", &ro).unwrap(), None);
    let mut ro = ReadOptions::default();
    ro.set_snapshot(&snap);
    let at_snap = keys(db.iterator_opt(IteratorMode::Start, ro));
    let want: Vec<String> = (0..100).filter(|i| expected(*i).is_some()).map(k).collect();
    assert_eq!(at_snap, want);
    assert_eq!(keys(snap.iterator(IteratorMode::Start)), want);
    let got: Vec<_> = snap.multi_get([b"k00", b"k01"]).into_iter().map(|r| r.unwrap()).collect();
    assert_eq!(got, vec![expected(0), None]);
    // The live view differs.
    let live = keys(db.iterator(IteratorMode::Start));
    assert_eq!(live.len(), want.len() + 1); // k01 and new added, k02 removed
    assert!(live.contains(&"new".to_string()) && live.contains(&k(1)) && !live.contains(&k(2)));
    assert_eq!(util::int_prop(&db, "rocksdb.num-snapshots"), 1);
    drop(snap);
    assert_eq!(util::int_prop(&db, "rocksdb.num-snapshots"), 0);
}

#[test]
fn iterator_modes_and_directions() {
    let dir = tempfile::tempdir().unwrap();
    let db = layered_db(dir.path());
    let all: Vec<String> = (0..100).filter(|i| expected(*i).is_some()).map(k).collect();
    assert_eq!(all.len(), 50);

    assert_eq!(keys(db.iterator(IteratorMode::Start)), all);
    let mut rev = all.clone();
    rev.reverse();
    assert_eq!(keys(db.iterator(IteratorMode::End)), rev);
    // From an existing key, forward and backward, both include it.
    assert_eq!(keys(db.iterator(IteratorMode::From(b"k50", Direction::Forward))), all[25..].to_vec());
    let back: Vec<String> = all[..=25].iter().rev().cloned().collect();
    assert_eq!(keys(db.iterator(IteratorMode::From(b"k50", Direction::Reverse))), back);
    // From a deleted key: forward starts after it, backward before it.
    assert_eq!(keys(db.iterator(IteratorMode::From(b"k51", Direction::Forward)))[0], "k52");
    assert_eq!(keys(db.iterator(IteratorMode::From(b"k51", Direction::Reverse)))[0], "k50");
    assert!(keys(db.iterator(IteratorMode::From(b"z", Direction::Forward))).is_empty());
    assert!(keys(db.iterator(IteratorMode::From(b"a", Direction::Reverse))).is_empty());
    // Values come with their keys.
    let (key, val) = db.iterator(IteratorMode::From(b"k50", Direction::Forward)).next().unwrap().unwrap();
    assert_eq!((&*key, &*val), (&b"k50"[..], &b"v50-new"[..]));
    // set_mode repositions.
    let mut it = db.iterator(IteratorMode::Start);
    assert_eq!(it.next().unwrap().unwrap().0.as_ref(), b"k00");
    it.set_mode(IteratorMode::End);
    assert_eq!(it.next().unwrap().unwrap().0.as_ref(), b"k98");
    assert_eq!(it.next().unwrap().unwrap().0.as_ref(), b"k96");
    // An iterator does not see writes made after it was created.
    let it = db.iterator(IteratorMode::Start);
    db.put(b"k01", b"later").unwrap();
    assert_eq!(keys(it), all);
}

#[test]
fn raw_iterator_positioning() {
    let dir = tempfile::tempdir().unwrap();
    let db = layered_db(dir.path());
    let mut it = db.raw_iterator();
    assert!(!it.valid());
    it.seek_to_first();
    assert_eq!(it.key(), Some(&b"k00"[..]));
    assert_eq!(it.value(), Some(&b"v0"[..]));
    it.next();
    assert_eq!(it.key(), Some(&b"k02"[..]));
    it.prev();
    assert_eq!(it.key(), Some(&b"k00"[..]));
    it.prev();
    assert!(!it.valid());
    assert_eq!(it.key(), None);
    it.status().unwrap();

    it.seek_to_last();
    assert_eq!(it.item(), Some((&b"k98"[..], &b"v98"[..])));
    it.next();
    assert!(!it.valid());

    it.seek(b"k49");
    assert_eq!(it.key(), Some(&b"k50"[..]));
    assert_eq!(it.value(), Some(&b"v50-new"[..]));
    it.prev();
    assert_eq!(it.key(), Some(&b"k48"[..]));
    it.next();
    it.next();
    assert_eq!(it.key(), Some(&b"k52"[..]));
    it.seek_for_prev(b"k49");
    assert_eq!(it.key(), Some(&b"k48"[..]));
    it.next();
    assert_eq!(it.key(), Some(&b"k50"[..]));
    it.seek_for_prev(b"k50");
    assert_eq!(it.key(), Some(&b"k50"[..]));
    it.seek(b"k99");
    assert!(!it.valid());
    it.seek_for_prev(b"a");
    assert!(!it.valid());
    it.seek(b"");
    assert_eq!(it.key(), Some(&b"k00"[..]));

    // A full walk backwards matches the forward walk.
    let mut fwd = Vec::new();
    it.seek_to_first();
    while it.valid() {
        fwd.push(it.key().unwrap().to_vec());
        it.next();
    }
    let mut bwd = Vec::new();
    it.seek_to_last();
    while it.valid() {
        bwd.push(it.key().unwrap().to_vec());
        it.prev();
    }
    bwd.reverse();
    assert_eq!(fwd, bwd);
    assert_eq!(fwd.len(), 50);
}

#[test]
fn iterate_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let db = layered_db(dir.path());
    let bounded = |lo: Option<&str>, hi: Option<&str>| {
        let mut ro = ReadOptions::default();
        if let Some(lo) = lo {
            ro.set_iterate_lower_bound(lo.as_bytes().to_vec());
        }
        if let Some(hi) = hi {
            ro.set_iterate_upper_bound(hi.as_bytes().to_vec());
        }
        ro
    };
    let fwd = keys(db.iterator_opt(IteratorMode::Start, bounded(Some("k10"), Some("k20"))));
    assert_eq!(fwd, vec!["k10", "k12", "k14", "k16", "k18"]);
    let rev = keys(db.iterator_opt(IteratorMode::End, bounded(Some("k10"), Some("k20"))));
    assert_eq!(rev, vec!["k18", "k16", "k14", "k12", "k10"]);
    // The upper bound is exclusive, the lower inclusive, also for deleted-key bounds.
    let fwd = keys(db.iterator_opt(IteratorMode::Start, bounded(Some("k11"), Some("k19"))));
    assert_eq!(fwd, vec!["k12", "k14", "k16", "k18"]);
    // Seeking outside the bounds.
    let mut it = db.raw_iterator_opt(bounded(Some("k10"), Some("k20")));
    it.seek(b"k30");
    assert!(!it.valid());
    it.seek(b"k00");
    assert_eq!(it.key(), Some(&b"k10"[..]));
    it.seek_for_prev(b"k99");
    assert_eq!(it.key(), Some(&b"k18"[..]));
    it.seek_to_last();
    assert_eq!(it.key(), Some(&b"k18"[..]));
    it.next();
    assert!(!it.valid());
    // Only an upper bound; only a lower bound.
    assert_eq!(keys(db.iterator_opt(IteratorMode::Start, bounded(None, Some("k04")))), vec!["k00", "k02"]);
    assert_eq!(keys(db.iterator_opt(IteratorMode::End, bounded(Some("k95"), None))), vec!["k98", "k96"]);
    // An empty range.
    assert!(keys(db.iterator_opt(IteratorMode::Start, bounded(Some("k20"), Some("k20")))).is_empty());
    // Bounds in a column family iterator.
    let side = db.cf_handle("side").unwrap();
    for i in 0..10 {
        db.put_cf(side, k(i), b"s").unwrap();
    }
    let it = db.iterator_cf_opt(side, bounded(Some("k03"), Some("k06")), IteratorMode::Start);
    assert_eq!(keys(it), vec!["k03", "k04", "k05"]);
    assert_eq!(keys(db.iterator_cf(side, IteratorMode::End)).len(), 10);
}
