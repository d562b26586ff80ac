//! `min_tombstones_for_range_conversion` in a column family with user-defined timestamps,
//! as RocksDB 11.8.1's DBIter (`HasFullTimestampVisibility`): an iterator converts a run of
//! point tombstones only when it reads at the maximum timestamp without `iter_start_ts`;
//! the range tombstone it adds carries its first key's timestamp, so reads below that
//! timestamp still see the older versions, and point reads over it answer as before.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::Arc;

use crate::util;

use shale::statistics::Ticker;
use shale::{IteratorMode, Options, ReadOptions, U64TsComparator, DB};

fn ts(t: u64) -> [u8; 8] {
    t.to_le_bytes()
}

fn read_at(t: u64) -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_timestamp(ts(t));
    ro
}

fn opts(min: u32) -> Options {
    let mut o = Options::default()
        .get_options_from_string(format!("min_tombstones_for_range_conversion={min}"))
        .unwrap();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.enable_statistics();
    o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    o
}

fn inserted(o: &Options) -> u64 {
    o.get_ticker_count(Ticker::ReadPathRangeTombstonesInserted)
}

fn active_entries(db: &DB) -> u64 {
    util::int_prop(db, "rocksdb.num-entries-active-mem-table")
}

/// `a` live (ts 1), `n` keys `k0000..` put at ts 2 and deleted at ts 3, `z` live (ts 4).
fn fill(db: &DB, n: u32) {
    db.put_with_ts("a", ts(1), "A").unwrap();
    for i in 0..n {
        db.put_with_ts(format!("k{i:04}"), ts(2), "v").unwrap();
    }
    for i in 0..n {
        db.delete_with_ts(format!("k{i:04}"), ts(3)).unwrap();
    }
    db.put_with_ts("z", ts(4), "Z").unwrap();
}

fn scan(db: &DB, ro: ReadOptions) -> Vec<Vec<u8>> {
    db.iterator_opt(IteratorMode::Start, ro).map(|r| r.unwrap().0.to_vec()).collect()
}

fn live() -> Vec<Vec<u8>> {
    vec![b"a".to_vec(), b"z".to_vec()]
}

#[test]
fn only_a_read_at_the_maximum_timestamp_converts() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(10);
    let db = DB::open(&o, dir.path()).unwrap();
    fill(&db, 100);
    let before = active_entries(&db);
    // Below the maximum timestamp: nothing (newer versions may be hidden from it).
    assert_eq!(scan(&db, read_at(5)), live());
    assert_eq!(inserted(&o), 0);
    // With iter_start_ts: nothing either (every version is yielded).
    let mut ro = read_at(u64::MAX);
    ro.set_iter_start_ts(ts(0));
    assert_eq!(db.iterator_opt(IteratorMode::Start, ro).count(), 2 + 200);
    assert_eq!(inserted(&o), 0);
    assert_eq!(active_entries(&db), before);
    // At the maximum timestamp: one range tombstone over the run.
    assert_eq!(scan(&db, read_at(u64::MAX)), live());
    assert_eq!(inserted(&o), 1);
    assert_eq!(active_entries(&db), before + 1);
    assert_eq!(scan(&db, read_at(u64::MAX)), live());
    assert_eq!(inserted(&o), 1, "the covered tombstones are not counted again");

    // What every read returns is unchanged: the tombstone's timestamp is its first key's
    // (3), so a read at 2 still sees the puts; point reads answer over it.
    let all: Vec<Vec<u8>> =
        std::iter::once(b"a".to_vec()).chain((0..100).map(|i| format!("k{i:04}").into_bytes())).collect();
    assert_eq!(scan(&db, read_at(2)), all);
    assert_eq!(db.get_opt(b"k0050", &read_at(u64::MAX)).unwrap(), None);
    assert_eq!(db.get_opt(b"k0050", &read_at(2)).unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.get_opt(b"k0000", &read_at(3)).unwrap(), None);
    assert_eq!(db.get_opt(b"z", &read_at(u64::MAX)).unwrap().as_deref(), Some(&b"Z"[..]));
    // A later write into the range is seen (the tombstone sits at the read's sequence).
    db.put_with_ts("k0050", ts(9), "new").unwrap();
    assert_eq!(db.get_opt(b"k0050", &read_at(u64::MAX)).unwrap().as_deref(), Some(&b"new"[..]));
    // Flushed, the tables answer the same at the maximum timestamp. (Without
    // full_history_ts_low the flush drops what a range tombstone covers, whatever its
    // timestamp, as RocksDB's CompactionRangeDelAggregator with no timestamp bound.)
    db.flush().unwrap();
    assert_eq!(db.get_opt(b"k0050", &read_at(u64::MAX)).unwrap().as_deref(), Some(&b"new"[..]));
    assert_eq!(db.get_opt(b"k0051", &read_at(u64::MAX)).unwrap(), None);
    let mut expect = live();
    expect.insert(1, b"k0050".to_vec());
    assert_eq!(scan(&db, read_at(u64::MAX)), expect);
}

#[test]
fn a_reverse_scan_converts_below_a_live_key() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(10);
    let db = DB::open(&o, dir.path()).unwrap();
    fill(&db, 50);
    let before = active_entries(&db);
    let mut it = db.raw_iterator_opt(read_at(u64::MAX));
    it.seek_for_prev(b"z");
    assert_eq!(it.key(), Some(&b"z"[..]));
    assert_eq!(inserted(&o), 0);
    it.prev();
    assert_eq!((it.key(), it.timestamp()), (Some(&b"a"[..]), Some(&ts(1)[..])));
    assert_eq!(inserted(&o), 1);
    drop(it);
    assert_eq!(active_entries(&db), before + 1);
    // Below the maximum timestamp a reverse scan converts nothing.
    let db2_dir = tempfile::tempdir().unwrap();
    let o2 = opts(10);
    let db2 = DB::open(&o2, db2_dir.path()).unwrap();
    fill(&db2, 50);
    let mut it = db2.raw_iterator_opt(read_at(7));
    it.seek_to_last();
    it.prev();
    assert_eq!(it.key(), Some(&b"a"[..]));
    assert_eq!(inserted(&o2), 0);
    drop(it);
    assert_eq!(db.get_opt(b"k0010", &read_at(2)).unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.get_opt(b"k0010", &read_at(u64::MAX)).unwrap(), None);
}
