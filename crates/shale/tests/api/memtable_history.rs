//! `max_write_buffer_size_to_maintain`: flushed memtables kept as history for transaction
//! conflict checks, as RocksDB 11.8.1's `MemTableList` history. An optimistic transaction
//! whose key was flushed and compacted into the bottommost level (its sequence number
//! zeroed) commits, or conflicts correctly, when the history reaches back to its read, and
//! gets RocksDB's TryAgain when it does not; `OptimisticTransactionDB::open` turns the
//! history on when the option is 0; the history is trimmed to its size and counted in
//! `rocksdb.size-all-mem-tables` but not in `rocksdb.cur-size-all-mem-tables`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{ErrorKind, OptimisticTransactionDB, Options, DB};

fn otdb(dir: &std::path::Path, maintain: Option<i64>) -> OptimisticTransactionDB {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    if let Some(m) = maintain {
        opts.set_max_write_buffer_size_to_maintain(m);
    }
    OptimisticTransactionDB::open(&opts, dir).unwrap()
}

/// A transaction reads `k` (tracking it), then `concurrent` runs, then three flushes of other
/// keys and a full compaction move everything into the bottommost level with sequence
/// numbers zeroed; returns the transaction's commit result.
fn span_flushes(db: &OptimisticTransactionDB, concurrent: bool) -> shale::Result<()> {
    db.put("k", "1").unwrap();
    let t = db.transaction();
    assert_eq!(t.get_for_update("k", true).unwrap().unwrap(), b"1");
    if concurrent {
        db.put("k", "other").unwrap();
    }
    for i in 0..3 {
        db.put(format!("x{i}"), "v").unwrap();
        db.flush().unwrap();
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    t.put("k", "2").unwrap();
    t.commit()
}

#[test]
fn optimistic_default_history_lets_a_transaction_span_flushes() {
    let dir = tempfile::tempdir().unwrap();
    let db = otdb(dir.path(), None);
    span_flushes(&db, false).unwrap();
    assert_eq!(db.get("k").unwrap().unwrap(), b"2");
}

#[test]
fn history_finds_a_conflict_behind_flushes() {
    let dir = tempfile::tempdir().unwrap();
    let db = otdb(dir.path(), None);
    let e = span_flushes(&db, true).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Busy, "{e}");
    assert_eq!(db.get("k").unwrap().unwrap(), b"other");
}

#[test]
fn without_history_the_check_gives_try_again() {
    let dir = tempfile::tempdir().unwrap();
    // One byte keeps no flushed memtable (the active one alone reaches it).
    let db = otdb(dir.path(), Some(1));
    let e = span_flushes(&db, false).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TryAgain, "{e}");
    assert!(e.to_string().contains("max_write_buffer_size_to_maintain"), "{e}");
    assert_eq!(db.get("k").unwrap().unwrap(), b"1");
}

fn mem_sizes(db: &DB) -> (u64, u64) {
    let all = db.property_int_value("rocksdb.size-all-mem-tables").unwrap().unwrap();
    let cur = db.property_int_value("rocksdb.cur-size-all-mem-tables").unwrap().unwrap();
    (all, cur)
}

#[test]
fn history_is_trimmed_to_its_size_and_counted() {
    const MEMTABLE: u64 = 200 << 10;
    let limit = 5 * MEMTABLE / 2;
    let value = vec![b'v'; 1000];
    for maintain in [0, limit as i64] {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_max_write_buffer_size_to_maintain(maintain);
        let db = DB::open(&opts, dir.path()).unwrap();
        let mut most = 0;
        for round in 0..10 {
            for i in 0..200 {
                db.put(format!("r{round}-{i:04}"), &value).unwrap();
            }
            db.flush().unwrap();
            let (all, cur) = mem_sizes(&db);
            assert!(all >= cur, "{all} {cur}");
            most = most.max(all - cur);
        }
        let (all, cur) = mem_sizes(&db);
        if maintain == 0 {
            assert_eq!(all, cur, "no history without the option");
        } else {
            // Kept: what fits below the limit, with at most the one memtable that crosses it.
            assert!(all - cur >= MEMTABLE, "history kept: {}", all - cur);
            assert!(most < limit + 2 * MEMTABLE, "history trimmed: {most} of limit {limit}");
        }
    }
}

#[test]
fn options_file_records_the_sanitized_size() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_write_buffer_size(1 << 20);
    opts.set_max_write_buffer_number(3);
    opts.set_max_write_buffer_size_to_maintain(-1);
    drop(DB::open(&opts, dir.path()).unwrap());
    let text: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("OPTIONS-"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(text.iter().any(|t| t.contains("max_write_buffer_size_to_maintain=3145728")), "{text:?}");
}
