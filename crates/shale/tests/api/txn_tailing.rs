//! A tailing iterator over a transaction (issue 33, helper cache): RocksDB 11.8.1's
//! `Transaction::GetIterator` with `tailing` is `WriteBatchWithIndex::NewIteratorWithBase`
//! over the database's tailing iterator. The transaction's writes hide the database's
//! entries of the same keys; the database part reads the latest data, so writes and flushes
//! made after the iterator was created are seen at the next seek; backward moves
//! and `refresh` are refused with NotSupported, as RocksDB's `ForwardIterator` and
//! `BaseDeltaIterator`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{ErrorKind, OptimisticTransactionDB, Options, ReadOptions, TransactionDB, TransactionDBOptions};

fn tailing() -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_tailing(true);
    ro
}

/// Every (key, value) from `seek(from)` to the end.
fn scan<D: shale::DBAccess>(
    it: &mut shale::DBRawIteratorWithThreadMode<'_, D>,
    from: &str,
) -> Vec<(String, String)> {
    it.seek(from);
    let mut out = Vec::new();
    while it.valid() {
        out.push((
            String::from_utf8(it.key().unwrap().to_vec()).unwrap(),
            String::from_utf8(it.value().unwrap().to_vec()).unwrap(),
        ));
        it.next();
    }
    it.status().unwrap();
    out
}

fn p(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn tailing_iterator_over_a_transaction_sees_later_database_writes() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    // Optimistic: no locks, so another writer may write the transaction's keys meanwhile.
    let db: OptimisticTransactionDB = OptimisticTransactionDB::open(&o, dir.path()).unwrap();
    db.put("a", "db-a").unwrap();
    db.put("c", "db-c").unwrap();
    db.flush().unwrap();
    db.put("e", "db-e").unwrap();
    let txn = db.transaction();
    txn.put("b", "t-b").unwrap();
    txn.delete("c").unwrap();
    txn.put("e", "t-e").unwrap();
    let mut it = txn.raw_iterator_opt(tailing());
    assert_eq!(scan(&mut it, ""), p(&[("a", "db-a"), ("b", "t-b"), ("e", "t-e")]));

    // Writes of another writer after the iterator was made: seen at the next seek, except
    // where the transaction's own write hides them.
    db.put("d", "db-d").unwrap();
    db.put("b", "db-b2").unwrap();
    db.put("c", "db-c2").unwrap();
    db.put("g", "db-g").unwrap();
    let want = p(&[("a", "db-a"), ("b", "t-b"), ("d", "db-d"), ("e", "t-e"), ("g", "db-g")]);
    assert_eq!(scan(&mut it, ""), want);
    assert_eq!(scan(&mut it, "c"), want[2..].to_vec());

    // Flushes and a compaction move the database part onto newer SuperVersions.
    db.flush().unwrap();
    db.put("h", "db-h").unwrap();
    let mut want = want;
    want.push(("h".into(), "db-h".into()));
    assert_eq!(scan(&mut it, ""), want);
    db.delete("a").unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(scan(&mut it, ""), want[1..].to_vec());

    // Forward only, and no refresh, as RocksDB's.
    it.seek("b");
    assert!(it.valid());
    it.prev();
    assert!(!it.valid());
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::NotSupported);
    let e = it.refresh().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported);
    assert!(e.to_string().contains("Refresh() is not supported"), "{e}");
    drop(it);

    // The keys the other writer wrote meanwhile conflict at commit.
    assert_eq!(txn.commit().unwrap_err().kind(), ErrorKind::Busy);
}

/// A pessimistic transaction builds the same iterator (its locked keys cannot be written
/// by others meanwhile); a tailing read takes no snapshot (InvalidArgument, as a tailing
/// iterator over the database).
#[test]
fn pessimistic_transactions_build_it_and_a_snapshot_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    let db: TransactionDB = TransactionDB::open(&o, &TransactionDBOptions::default(), dir.path()).unwrap();
    db.put("a", "db-a").unwrap();
    db.put("c", "db-c").unwrap();
    let txn = db.transaction();
    txn.put("b", "t-b").unwrap();
    txn.delete("c").unwrap();
    let mut it = txn.raw_iterator_opt(tailing());
    assert_eq!(scan(&mut it, ""), p(&[("a", "db-a"), ("b", "t-b")]));
    db.put("d", "db-d").unwrap();
    db.flush().unwrap();
    assert_eq!(scan(&mut it, ""), p(&[("a", "db-a"), ("b", "t-b"), ("d", "db-d")]));
    drop(it);
    txn.commit().unwrap();
    assert_eq!(db.get("b").unwrap().as_deref(), Some(&b"t-b"[..]));
    assert_eq!(db.get("c").unwrap(), None);

    let txn = db.transaction();
    let snap = db.snapshot();
    let mut ro = tailing();
    ro.set_snapshot(&snap);
    let mut it = txn.raw_iterator_opt(ro);
    it.seek_to_first();
    assert!(!it.valid());
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::InvalidArgument);
}
