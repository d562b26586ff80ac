//! Transaction rules beyond rust-rocksdb's own tests: read-your-own-writes in gets and
//! iterators (deletes, both directions, bounds, other families, a snapshot below the
//! writes), savepoints releasing the locks taken after them, snapshot validation of
//! pessimistic writes, expiration and lock stealing, `max_num_locks`, `max_write_batch_size`,
//! optimistic read-write conflicts, merges in a transaction (resolved by the family's
//! merge operator), `get_writebatch`/`rebuild_from_writebatch`, and `TransactionDB::write`
//! locking its keys.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{
    Direction, ErrorKind, IteratorMode, OptimisticTransactionDB, OptimisticTransactionOptions, Options,
    ReadOptions, TransactionDB, TransactionDBOptions, TransactionOptions, WriteBatchWithTransaction,
    WriteOptions,
};

fn tdb(dir: &std::path::Path, o: &TransactionDBOptions) -> TransactionDB {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    TransactionDB::open_cf(&opts, o, dir, ["cf1"]).unwrap()
}

fn pairs<I: Iterator<Item = shale::Result<(Box<[u8]>, Box<[u8]>)>>>(it: I) -> Vec<(String, String)> {
    it.map(|kv| {
        let (k, v) = kv.unwrap();
        (String::from_utf8(k.to_vec()).unwrap(), String::from_utf8(v.to_vec()).unwrap())
    })
    .collect()
}

fn p(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn own_writes_are_merged_over_the_database_in_iterators() {
    let dir = tempfile::tempdir().unwrap();
    let db = tdb(dir.path(), &TransactionDBOptions::default());
    for k in ["a", "c", "e", "g"] {
        db.put(k, format!("db-{k}")).unwrap();
    }
    db.flush().unwrap();
    db.put("i", "db-i").unwrap();
    let txn = db.transaction();
    txn.put("b", "t-b").unwrap();
    txn.delete("c").unwrap();
    txn.put("e", "t-e").unwrap();
    txn.delete("zz").unwrap(); // a delete of nothing
    txn.put("c2", "x").unwrap();
    txn.delete("c2").unwrap(); // written then deleted in the transaction
    let cf1 = db.cf_handle("cf1").unwrap();
    txn.put_cf(cf1, "a", "cf1-a").unwrap();
    let want = p(&[("a", "db-a"), ("b", "t-b"), ("e", "t-e"), ("g", "db-g"), ("i", "db-i")]);
    assert_eq!(pairs(txn.iterator(IteratorMode::Start)), want);
    let mut rev = want.clone();
    rev.reverse();
    assert_eq!(pairs(txn.iterator(IteratorMode::End)), rev);
    assert_eq!(pairs(txn.iterator(IteratorMode::From(b"c", Direction::Forward))), want[2..].to_vec());
    assert_eq!(
        pairs(txn.iterator(IteratorMode::From(b"d", Direction::Reverse))),
        p(&[("b", "t-b"), ("a", "db-a")])
    );
    let mut ro = ReadOptions::default();
    ro.set_iterate_upper_bound(b"f".to_vec());
    assert_eq!(pairs(txn.iterator_opt(IteratorMode::Start, ro)), want[..3].to_vec());
    assert_eq!(pairs(txn.iterator_cf(cf1, IteratorMode::Start)), p(&[("a", "cf1-a")]));
    // The raw iterator turns direction in the middle.
    let mut raw = txn.raw_iterator();
    raw.seek(b"e");
    raw.prev();
    assert_eq!(raw.key(), Some(&b"b"[..]));
    raw.next();
    assert_eq!(raw.key(), Some(&b"e"[..]));
    drop(raw);
    // Point reads agree; the database does not see the writes.
    assert_eq!(txn.get("c").unwrap(), None);
    assert_eq!(txn.get("b").unwrap().unwrap(), b"t-b");
    assert_eq!(db.get("b").unwrap(), None);
    assert_eq!(
        txn.multi_get(["a", "b", "c"]).into_iter().map(|r| r.unwrap()).collect::<Vec<_>>(),
        vec![Some(b"db-a".to_vec()), Some(b"t-b".to_vec()), None]
    );
    // A snapshot taken before later database writes: the iterator reads below them.
    let mut o = TransactionOptions::default();
    o.set_snapshot(true);
    let t2 = db.transaction_opt(&WriteOptions::default(), &o);
    db.put("h", "db-h").unwrap();
    t2.put("j", "t2-j").unwrap();
    let snap = t2.snapshot();
    let got = pairs(snap.iterator(IteratorMode::Start));
    assert!(!got.iter().any(|(k, _)| k == "h"), "{got:?}");
    assert!(got.iter().any(|(k, _)| k == "j"), "{got:?}");
    drop(snap);
    drop(t2);
    txn.commit().unwrap();
    assert_eq!(db.get("c").unwrap(), None);
    assert_eq!(db.get("e").unwrap().unwrap(), b"t-e");
}

#[test]
fn savepoints_release_the_locks_taken_after_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = tdb(dir.path(), &TransactionDBOptions::default());
    let t1 = db.transaction();
    t1.put("a", "1").unwrap();
    t1.set_savepoint();
    t1.put("b", "1").unwrap();
    t1.put("a", "2").unwrap();
    let mut o = TransactionOptions::default();
    o.set_lock_timeout(0);
    let t2 = db.transaction_opt(&WriteOptions::default(), &o);
    assert_eq!(t2.put("b", "x").unwrap_err().kind(), ErrorKind::TimedOut);
    t1.rollback_to_savepoint().unwrap();
    assert_eq!(t1.get("a").unwrap().unwrap(), b"1");
    // b was locked after the savepoint: released; a before it: still held.
    t2.put("b", "x").unwrap();
    assert_eq!(t2.put("a", "x").unwrap_err().kind(), ErrorKind::TimedOut);
    assert_eq!(t1.rollback_to_savepoint().unwrap_err().kind(), ErrorKind::NotFound);
    t1.commit().unwrap();
    t2.commit().unwrap();
    assert_eq!(db.get("a").unwrap().unwrap(), b"1");
    assert_eq!(db.get("b").unwrap().unwrap(), b"x");
}

#[test]
fn a_snapshot_transaction_cannot_write_what_changed_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = tdb(dir.path(), &TransactionDBOptions::default());
    db.put("k", "0").unwrap();
    let mut o = TransactionOptions::default();
    o.set_snapshot(true);
    let t = db.transaction_opt(&WriteOptions::default(), &o);
    db.put("k", "1").unwrap();
    db.flush().unwrap(); // the newer write is in a table now
    let e = t.put("k", "2").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Busy);
    // Another key is fine, and so is the key once its lock was refused (nothing kept).
    t.put("other", "v").unwrap();
    t.commit().unwrap();
    assert_eq!(db.get("k").unwrap().unwrap(), b"1");
    db.put("k", "3").unwrap(); // not locked by the failed transaction
}

#[test]
fn expired_transactions_lose_their_locks_and_cannot_commit() {
    let dir = tempfile::tempdir().unwrap();
    let db = tdb(dir.path(), &TransactionDBOptions::default());
    let mut o = TransactionOptions::default();
    o.set_expiration(20);
    let t1 = db.transaction_opt(&WriteOptions::default(), &o);
    t1.put("k", "t1").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(40));
    // Another writer steals the expired lock.
    db.put("k", "db").unwrap();
    assert_eq!(t1.commit().unwrap_err().kind(), ErrorKind::Expired);
    assert_eq!(db.get("k").unwrap().unwrap(), b"db");
}

#[test]
fn lock_and_batch_limits() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = TransactionDBOptions::default();
    o.set_max_num_locks(2);
    let db = tdb(dir.path(), &o);
    let t = db.transaction();
    t.put("a", "1").unwrap();
    t.put("b", "1").unwrap();
    let e = t.put("c", "1").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Busy);
    assert_eq!(e.to_string(), "Resource busy: Failed to acquire lock due to max_num_locks limit");
    t.put("a", "2").unwrap(); // a key already locked needs no new lock
    t.rollback().unwrap();
    t.put("c", "1").unwrap();
    drop(t);
    let mut to = TransactionOptions::default();
    to.set_max_write_batch_size(10);
    let t = db.transaction_opt(&WriteOptions::default(), &to);
    t.put("k", "12345").unwrap();
    let e = t.put("k2", "12345").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Aborted);
}

#[test]
fn writes_of_the_database_lock_their_keys() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = TransactionDBOptions::default();
    o.set_default_lock_timeout(10);
    let db = tdb(dir.path(), &o);
    let t = db.transaction();
    t.get_for_update("k", true).unwrap();
    let mut b = WriteBatchWithTransaction::<true>::default();
    b.put("x", "1");
    b.put("k", "1");
    assert_eq!(db.write(b).unwrap_err().kind(), ErrorKind::TimedOut);
    assert_eq!(db.get("x").unwrap(), None, "half a batch written");
    assert_eq!(db.delete("k").unwrap_err().kind(), ErrorKind::TimedOut);
    drop(t);
    let mut b = WriteBatchWithTransaction::<true>::default();
    b.put("x", "1");
    b.put("k", "1");
    db.write(b).unwrap();
    assert_eq!(db.get("k").unwrap().unwrap(), b"1");
}

#[test]
fn write_batches_move_between_transactions() {
    let dir = tempfile::tempdir().unwrap();
    let db = tdb(dir.path(), &TransactionDBOptions::default());
    let t = db.transaction();
    t.put("a", "1").unwrap();
    t.delete("b").unwrap();
    let wb = t.get_writebatch();
    assert_eq!(wb.len(), 2);
    drop(t);
    let t2 = db.transaction();
    t2.rebuild_from_writebatch(&wb).unwrap();
    assert_eq!(t2.get("a").unwrap().unwrap(), b"1");
    let mut o = TransactionOptions::default();
    o.set_lock_timeout(0);
    let t3 = db.transaction_opt(&WriteOptions::default(), &o);
    assert_eq!(t3.put("b", "x").unwrap_err().kind(), ErrorKind::TimedOut, "rebuild took the locks");
    drop(t3);
    t2.commit().unwrap();
    assert_eq!(db.get("a").unwrap().unwrap(), b"1");
}

#[test]
fn merges_in_a_transaction_resolve_over_the_database() {
    // Without a merge operator, reading an operand is InvalidArgument naming it, as RocksDB.
    let dir = tempfile::tempdir().unwrap();
    let db = tdb(dir.path(), &TransactionDBOptions::default());
    let t = db.transaction();
    t.merge("m", "1").unwrap();
    let e = t.get("m").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("merge_operator"), "{e}");
    t.put("m", "base").unwrap();
    assert_eq!(t.get("m").unwrap().unwrap(), b"base");
    drop(t);
    drop(db);

    // With one, the transaction's operands stack on the committed value, in gets and
    // iterators, before and after commit.
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_merge_operator_object(shale::merge_operators::stringappend(","));
    let db: TransactionDB = TransactionDB::open(&opts, &TransactionDBOptions::default(), dir.path()).unwrap();
    db.put("m", "a").unwrap();
    let t = db.transaction();
    t.merge("m", "b").unwrap();
    t.merge("m", "c").unwrap();
    assert_eq!(t.get("m").unwrap().unwrap(), b"a,b,c");
    assert_eq!(pairs(t.iterator(IteratorMode::Start)), vec![("m".to_string(), "a,b,c".to_string())]);
    assert_eq!(db.get("m").unwrap().unwrap(), b"a", "uncommitted operands are not visible");
    t.commit().unwrap();
    assert_eq!(db.get("m").unwrap().unwrap(), b"a,b,c");
}

#[test]
fn optimistic_read_write_conflicts_and_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let db: OptimisticTransactionDB = OptimisticTransactionDB::open_default(dir.path()).unwrap();
    db.put("k", "0").unwrap();
    // A key only read by the transaction, written by someone else meanwhile: Busy.
    let t = db.transaction();
    t.get_for_update("k", false).unwrap();
    t.put("other", "1").unwrap();
    db.put("k", "1").unwrap();
    db.flush().unwrap(); // the check reads tables as well as memtables
    assert_eq!(t.commit().unwrap_err().kind(), ErrorKind::Busy);
    assert_eq!(db.get("other").unwrap(), None);
    // A plain get does not track: no conflict.
    let t = db.transaction();
    t.get("k").unwrap();
    t.put("other", "1").unwrap();
    db.put("k", "2").unwrap();
    t.commit().unwrap();
    // With a snapshot, a write after the snapshot but before the first access conflicts.
    let mut o = OptimisticTransactionOptions::default();
    o.set_snapshot(true);
    let t = db.transaction_opt(&WriteOptions::default(), &o);
    db.put("k", "3").unwrap();
    t.put("k", "t").unwrap();
    assert_eq!(t.commit().unwrap_err().kind(), ErrorKind::Busy);
    // Without one, the same order commits.
    let t = db.transaction();
    db.put("k", "4").unwrap();
    t.put("k", "t").unwrap();
    t.commit().unwrap();
    assert_eq!(db.get("k").unwrap().unwrap(), b"t");
}

/// RocksDB 11.8.1's answers where its transactions refuse: an optimistic transaction is
/// neither named nor prepared (InvalidArgument, its messages), and a range deletion in a
/// batch a TransactionDB locks (`write`) or a transaction rebuilds from meets the batch
/// handler's default `DeleteRangeCF` (InvalidArgument "DeleteRangeCF not implemented").
#[test]
fn refusals_are_rocksdbs() {
    let dir = tempfile::tempdir().unwrap();
    let odb: OptimisticTransactionDB = OptimisticTransactionDB::open_default(dir.path()).unwrap();
    let t = odb.transaction();
    let e = t.set_name(b"x").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("Optimistic transactions cannot be named."), "{e}");
    let e = t.prepare().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("Two phase commit not supported for optimistic transactions."), "{e}");
    drop(t);
    drop(odb);

    let dir = tempfile::tempdir().unwrap();
    let db = tdb(dir.path(), &TransactionDBOptions::default());
    let mut b = WriteBatchWithTransaction::<true>::default();
    b.put("a", "1");
    b.delete_range("b", "c");
    let e = db.write(b.clone()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("DeleteRangeCF not implemented"), "{e}");
    assert_eq!(db.get("a").unwrap(), None, "nothing of the batch written");
    let t = db.transaction();
    let e = t.rebuild_from_writebatch(&b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("DeleteRangeCF not implemented"), "{e}");
}
