//! rocksdb.number.merge.failures counts a merge operator's failure wherever a full merge
//! runs, as RocksDB 11.8.1's MergeHelper::TimedFullMerge does: a point read, an iterator,
//! a flush merging onto a value in the memtable, and a compaction. Each scenario has a
//! database of its own (a failed flush or compaction stops background work).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::statistics::{why_not_counted, Ticker, COUNTED_TICKERS};
use shale::{ErrorKind, MergeOperands, Options, DB};

/// Concatenates operands; fails (returns None) when one of them is "bad".
fn failing_concat(_key: &[u8], existing: Option<&[u8]>, ops: &MergeOperands) -> Option<Vec<u8>> {
    let mut v = existing.map(<[u8]>::to_vec).unwrap_or_default();
    for op in ops {
        if op == b"bad" {
            return None;
        }
        v.extend_from_slice(op);
    }
    Some(v)
}

fn open(dir: &std::path::Path) -> (Options, DB) {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_merge_operator_associative("failing_concat", failing_concat);
    o.enable_statistics();
    let db = DB::open(&o, dir).unwrap();
    (o, db)
}

fn failures(o: &Options) -> u64 {
    o.get_ticker_count(Ticker::NumberMergeFailures)
}

#[test]
fn the_ticker_is_listed_as_counted() {
    assert!(COUNTED_TICKERS.contains(&Ticker::NumberMergeFailures));
    assert!(why_not_counted(Ticker::NumberMergeFailures).is_none());
    assert_eq!(Ticker::NumberMergeFailures.name(), "rocksdb.number.merge.failures");
}

#[test]
fn a_failed_merge_in_a_read_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let (o, db) = open(dir.path());
    db.put(b"k", b"v").unwrap();
    db.merge(b"k", b"bad").unwrap();
    db.merge(b"ok", b"a").unwrap();
    assert_eq!(db.get(b"ok").unwrap().as_deref(), Some(&b"a"[..]));
    assert_eq!(failures(&o), 0, "a merge that succeeds is not a failure");
    let e = db.get(b"k").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    assert_eq!(failures(&o), 1);
    let _ = db.get(b"k").unwrap_err();
    assert_eq!(failures(&o), 2);
}

#[test]
fn a_failed_merge_in_an_iterator_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let (o, db) = open(dir.path());
    db.merge(b"a", b"x").unwrap();
    db.merge(b"k", b"bad").unwrap();
    let mut it = db.raw_iterator();
    it.seek(b"a");
    assert!(it.valid());
    assert_eq!(failures(&o), 0);
    it.seek(b"k");
    assert!(!it.valid());
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::Corruption);
    assert_eq!(failures(&o), 1);
}

#[test]
fn a_failed_merge_in_a_flush_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let (o, db) = open(dir.path());
    // The flush merges the operand onto the value below it in the same memtable.
    db.put(b"k", b"v").unwrap();
    db.merge(b"k", b"bad").unwrap();
    assert_eq!(failures(&o), 0);
    assert!(db.flush().is_err());
    assert_eq!(failures(&o), 1);
}

#[test]
fn a_failed_merge_in_a_compaction_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let (o, db) = open(dir.path());
    // The value and the operand in different tables: only the compaction merges them.
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    db.merge(b"k", b"bad").unwrap();
    db.flush().unwrap();
    assert_eq!(failures(&o), 0);
    let mut co = shale::CompactOptions::default();
    co.set_exclusive_manual_compaction(true);
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &co);
    assert_eq!(failures(&o), 1);
    // The compaction failed: both tables are still there.
    assert_eq!(db.get(b"k").unwrap_err().kind(), ErrorKind::Corruption);
}
