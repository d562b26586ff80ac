//! Two-phase commit across reopens and crashes: a prepared transaction survives any number
//! of reopens (and the flushes and WAL switches before them) until it is committed or
//! rolled back; its writes are invisible until then; a plain open refuses a WAL holding
//! one; and under power loss at every sync point of a workload mixing prepared, committed,
//! rolled-back and plain transactions, no acknowledged decision is lost and no transaction
//! is ever half applied.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::common;

use std::sync::Arc;

use common::{new_fault_fs, options, DB_PATH};
use shale::fs::{FaultInjectionFs, OpKind};
use shale::{ErrorKind, Options, TransactionDB, TransactionDBOptions, WriteOptions, DB};

fn open(path: &std::path::Path) -> TransactionDB {
    let mut o = Options::default();
    o.create_if_missing(true);
    TransactionDB::open(&o, &TransactionDBOptions::default(), path).unwrap()
}

#[test]
fn a_prepared_transaction_survives_reopens_and_flushes_until_decided() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open(dir.path());
        let txn = db.transaction();
        txn.put(b"a", b"1").unwrap();
        txn.put(b"b", b"2").unwrap();
        txn.set_name(b"t1").unwrap();
        txn.prepare().unwrap();
        let t2 = db.transaction();
        t2.put(b"c", b"3").unwrap();
        t2.set_name(b"t2").unwrap();
        t2.prepare().unwrap();
        // Later writes, flushes and WAL switches must not lose the prepare sections.
        for i in 0..100 {
            db.put(format!("k{i}"), b"v").unwrap();
            if i % 30 == 0 {
                db.flush().unwrap();
            }
        }
        assert_eq!(db.get(b"a").unwrap(), None);
    }
    for _ in 0..2 {
        let db = open(dir.path());
        let txns = db.prepared_transactions();
        let mut names: Vec<Vec<u8>> = txns.iter().map(|t| t.get_name().unwrap()).collect();
        names.sort();
        assert_eq!(names, vec![b"t1".to_vec(), b"t2".to_vec()]);
        assert_eq!(db.get(b"a").unwrap(), None);
        // The recovered transactions hold their locks.
        let mut wo = WriteOptions::default();
        wo.set_sync(false);
        let e = db.put(b"a", b"x").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TimedOut);
        db.flush().unwrap();
        // Dropped undecided: recovered again at the next open.
    }
    {
        let db = open(dir.path());
        for txn in db.prepared_transactions() {
            if txn.get_name().unwrap() == b"t1" {
                assert_eq!(txn.get(b"b").unwrap().unwrap(), b"2");
                txn.commit().unwrap();
            } else {
                txn.rollback().unwrap();
            }
        }
        assert_eq!(db.get(b"a").unwrap().unwrap(), b"1");
        assert_eq!(db.get(b"c").unwrap(), None);
    }
    {
        let db = open(dir.path());
        assert!(db.prepared_transactions().is_empty());
        assert_eq!(db.get(b"a").unwrap().unwrap(), b"1");
        assert_eq!(db.get(b"b").unwrap().unwrap(), b"2");
        assert_eq!(db.get(b"c").unwrap(), None);
        // A plain database may open it now that nothing is prepared... only once the WAL
        // holding the old sections is gone: a flush ends it.
        db.flush().unwrap();
    }
}

#[test]
fn a_commit_flushed_then_reopened_keeps_its_data() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open(dir.path());
        let txn = db.transaction();
        txn.put(b"a", b"1").unwrap();
        txn.set_name(b"t").unwrap();
        txn.prepare().unwrap();
        txn.commit().unwrap();
        // The commit's WAL record is only the marker: the prepare section must stay until
        // the memtable holding the data is flushed.
        db.put(b"z", b"z").unwrap();
    }
    {
        let db = open(dir.path());
        assert!(db.prepared_transactions().is_empty());
        assert_eq!(db.get(b"a").unwrap().unwrap(), b"1");
        db.flush().unwrap();
    }
    let db = open(dir.path());
    assert_eq!(db.get(b"a").unwrap().unwrap(), b"1");
}

#[test]
fn a_plain_open_refuses_a_wal_with_a_prepared_transaction() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open(dir.path());
        let txn = db.transaction();
        txn.put(b"a", b"1").unwrap();
        txn.set_name(b"t").unwrap();
        txn.prepare().unwrap();
    }
    let e = DB::open_default(dir.path()).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::NotSupported);
    assert!(e.to_string().contains("WAL contains prepared transactions"), "{e}");
}

/// What a crash-point run acknowledged.
#[derive(Default, Debug)]
struct Acked {
    /// t1 (a, b) prepared / committed; t2 (c) prepared / rolled back; t3 (d, e) committed.
    t1_prepared: bool,
    t1_committed: bool,
    t2_prepared: bool,
    t2_rolled_back: bool,
    /// The rollback of t2 was attempted (it may have reached the WAL unacknowledged).
    t2_rollback_tried: bool,
    t3_committed: bool,
}

fn workload(fs: &Arc<FaultInjectionFs>, acked: &mut Acked) -> shale::Result<()> {
    let db: TransactionDB = TransactionDB::open(&options(fs), &TransactionDBOptions::default(), DB_PATH)?;
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    let mut topts = shale::TransactionOptions::default();
    topts.set_lock_timeout(0);
    let t1 = db.transaction_opt(&wo, &topts);
    t1.put(b"a", b"1")?;
    t1.put(b"b", b"1")?;
    t1.set_name(b"t1")?;
    t1.prepare()?;
    acked.t1_prepared = true;
    let t2 = db.transaction_opt(&wo, &topts);
    t2.put(b"c", b"2")?;
    t2.set_name(b"t2")?;
    t2.prepare()?;
    acked.t2_prepared = true;
    db.flush()?;
    t1.commit()?;
    acked.t1_committed = true;
    acked.t2_rollback_tried = true;
    t2.rollback()?;
    acked.t2_rolled_back = true;
    let t3 = db.transaction_opt(&wo, &topts);
    t3.put(b"d", b"3")?;
    t3.put(b"e", b"3")?;
    t3.commit()?;
    acked.t3_committed = true;
    db.flush()?;
    Ok(())
}

#[test]
fn power_loss_at_every_sync_point_keeps_decisions_and_atomicity() {
    let kinds = [OpKind::Sync, OpKind::DirSync, OpKind::Rename];
    // Count the crash points of a clean run.
    let fs = new_fault_fs();
    workload(&fs, &mut Acked::default()).unwrap();
    let total = fs.count_of(&kinds);
    assert!(total > 5);
    for drop_unsynced in [true, false] {
        for k in 1..=total {
            let fs = new_fault_fs();
            fs.crash_at(&kinds, k);
            let mut acked = Acked::default();
            let r = workload(&fs, &mut acked);
            assert!(r.is_err() || k > fs.count_of(&kinds), "k={k}: the run did not stop");
            fs.crash(drop_unsynced);
            fs.clear_faults();
            let db: TransactionDB =
                TransactionDB::open(&options(&fs), &TransactionDBOptions::default(), DB_PATH)
                    .unwrap_or_else(|e| panic!("k={k}: reopen failed: {e}"));
            let get = |key: &[u8]| db.get(key).unwrap();
            let prepared: Vec<_> = db.prepared_transactions();
            let names: Vec<Vec<u8>> = prepared.iter().map(|t| t.get_name().unwrap()).collect();
            let ctx = format!("k={k} drop_unsynced={drop_unsynced} acked={acked:?} prepared={names:?}");
            // t1: all or nothing; committed if acknowledged; prepared or committed once
            // its prepare was acknowledged.
            assert_eq!(get(b"a"), get(b"b"), "{ctx}: t1 half applied");
            let t1_visible = get(b"a").is_some();
            let t1_prepared = names.contains(&b"t1".to_vec());
            assert!(!(t1_visible && t1_prepared), "{ctx}: t1 both committed and prepared");
            if acked.t1_committed {
                assert!(t1_visible, "{ctx}: acknowledged commit of t1 lost");
            }
            if acked.t1_prepared {
                assert!(t1_visible || t1_prepared, "{ctx}: acknowledged prepare of t1 lost");
            }
            if t1_prepared {
                let t = prepared.iter().find(|t| t.get_name().unwrap() == b"t1").unwrap();
                assert_eq!(t.get(b"a").unwrap().unwrap(), b"1", "{ctx}");
                assert_eq!(t.get(b"b").unwrap().unwrap(), b"1", "{ctx}");
            }
            // t2 is never visible (only ever rolled back).
            assert_eq!(get(b"c"), None, "{ctx}: t2 applied");
            let t2_prepared = names.contains(&b"t2".to_vec());
            if acked.t2_rolled_back {
                assert!(!t2_prepared, "{ctx}: acknowledged rollback of t2 undone");
            } else if acked.t2_prepared && !acked.t2_rollback_tried {
                assert!(t2_prepared, "{ctx}: acknowledged prepare of t2 lost");
            }
            // t3: all or nothing, kept once acknowledged.
            assert_eq!(get(b"d"), get(b"e"), "{ctx}: t3 half applied");
            if acked.t3_committed {
                assert!(get(b"d").is_some(), "{ctx}: acknowledged commit of t3 lost");
            }
            // Deciding a recovered transaction works, and sticks.
            for t in prepared {
                t.rollback().unwrap();
            }
            drop(db);
            let db: TransactionDB =
                TransactionDB::open(&options(&fs), &TransactionDBOptions::default(), DB_PATH).unwrap();
            assert!(db.prepared_transactions().is_empty(), "{ctx}: a rollback after recovery was lost");
        }
    }
}

#[test]
fn a_checkpoint_keeps_prepared_transactions() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(&dir.path().join("db"));
    let txn = db.transaction();
    txn.put(b"a", b"1").unwrap();
    txn.set_name(b"t").unwrap();
    txn.prepare().unwrap();
    // The prepare section's WAL is older than every family's log number after this flush.
    db.put(b"z", b"z").unwrap();
    db.flush().unwrap();
    let cp = dir.path().join("cp");
    shale::checkpoint::TransactionDBCheckpoint::new(&db).unwrap().create_checkpoint(&cp).unwrap();
    let copy = open(&cp);
    let names: Vec<Vec<u8>> = copy.prepared_transactions().iter().map(|t| t.get_name().unwrap()).collect();
    assert_eq!(names, vec![b"t".to_vec()]);
    assert_eq!(copy.get(b"z").unwrap().unwrap(), b"z");
}
