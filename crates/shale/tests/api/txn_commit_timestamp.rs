//! A WAL holding what RocksDB 11.8.1 writes for a WRITE_COMMITTED transaction of a family
//! with timestamps committed with a commit timestamp (`Transaction::SetCommitTimestamp`):
//! the prepare section, then `CommitXIDAndTimestamp` (tag 0x15: commit timestamp, then
//! xid; `WriteBatchInternal::MarkCommitWithTimestamp`). Recovery inserts the prepared
//! values with the commit timestamp in their keys (`MemTableInserter::MarkCommitWithTimestamp`).

use std::sync::Arc;

use shale::{Options, ReadOptions, TransactionDB, TransactionDBOptions, U64TsComparator};

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    o
}

/// A batch record: sequence, count, then `body`.
fn batch(seq: u64, count: u32, body: &[u8]) -> Vec<u8> {
    [&seq.to_le_bytes()[..], &count.to_le_bytes(), body].concat()
}

#[test]
fn a_commit_with_a_timestamp_recovers_the_prepared_values_at_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    drop::<TransactionDB>(TransactionDB::open(&opts(), &TransactionDBOptions::default(), path).unwrap());
    // The newest WAL (empty: nothing was written) gets RocksDB's records.
    let mut wals: Vec<_> = std::fs::read_dir(path)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    wals.sort();
    let wal = wals.last().unwrap().clone();
    let number: u64 = wal.file_stem().unwrap().to_str().unwrap().parse().unwrap();
    // Prepare: 0x9 | Put("k1" + 8-byte placeholder timestamp, "v1") | Put("k2" + ts, "v2")
    // | 0xA "xid"; commit: 0x15 | len 8 | 7u64 LE | len 3 | "xid".
    let mut body = vec![0x9];
    for (k, v) in [(b"k1", b"v1"), (b"k2", b"v2")] {
        body.extend_from_slice(&[0x1, 10]);
        body.extend_from_slice(k);
        body.extend_from_slice(&[0; 8]);
        body.push(2);
        body.extend_from_slice(v);
    }
    body.extend_from_slice(&[0xA, 3, b'x', b'i', b'd']);
    let prepare = batch(1, 2, &body);
    let mut commit_body = vec![0x15, 8];
    commit_body.extend_from_slice(&7u64.to_le_bytes());
    commit_body.extend_from_slice(&[3, b'x', b'i', b'd']);
    let commit = batch(1, 0, &commit_body);
    {
        let file = shale::fs::default_fs().new_writable_file(&wal).unwrap();
        let mut w = shale::wal::LogWriter::new(file, number);
        w.maybe_add_timestamp_sizes(&[(0, 8)]).unwrap();
        w.add_record(&prepare).unwrap();
        w.add_record(&commit).unwrap();
        w.sync().unwrap();
    }
    let db: TransactionDB = TransactionDB::open(&opts(), &TransactionDBOptions::default(), path).unwrap();
    let at = |t: u64| {
        let mut ro = ReadOptions::default();
        ro.set_timestamp(t.to_le_bytes());
        ro
    };
    assert_eq!(db.get_opt(b"k1", &at(7)).unwrap().as_deref(), Some(&b"v1"[..]));
    assert_eq!(db.get_opt(b"k2", &at(9)).unwrap().as_deref(), Some(&b"v2"[..]));
    assert_eq!(db.get_opt(b"k1", &at(6)).unwrap(), None, "written at the commit timestamp 7");
    assert!(db.prepared_transactions().is_empty(), "committed in recovery");
}
