//! Two-phase-commit WALs between RocksDB and Shale. RocksDB's `db_bench
//! --benchmarks=randomtransaction --transaction_db=1` names, prepares and commits (or rolls
//! back) every transaction, so its WAL holds begin-prepare / end-prepare(xid) / commit(xid) /
//! rollback(xid) records; Shale's `TransactionDB` must recover it to what RocksDB's own
//! recovery (`ldb scan` of a copy) gives. The other way, a WAL Shale wrote with prepared,
//! committed and rolled-back transactions must recover in RocksDB to what Shale reads.
//! Skipped (with a message) where RocksDB's tools are not installed; CI installs them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{IteratorMode, Options, TransactionDB, TransactionDBOptions};
use tools::*;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "LOCK" {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn shale_pairs(db: &TransactionDB) -> Pairs {
    db.iterator(IteratorMode::Start).map(|kv| kv.unwrap()).map(|(k, v)| (k.to_vec(), v.to_vec())).collect()
}

fn rocksdb_wal_recovers(test: &str) {
    let dir = tempfile::tempdir().unwrap();
    let db_dir = dir.path().join("db");
    // Large memtables: everything stays in the WAL.
    db_bench_run(
        &db_dir,
        "randomtransaction",
        3000,
        &[
            "--transaction_db=1",
            "--transaction_sets=3",
            "--write_buffer_size=67108864",
            "--compression_type=none",
        ],
    );
    let wals = wal_files(&db_dir);
    assert!(!wals.is_empty(), "{test}: db_bench left no WAL");
    let dump = run_tool(
        "ldb",
        &args(&[
            &format!("--db={}", db_dir.display()),
            "dump_wal",
            &format!("--walfile={}", wals[wals.len() - 1].display()),
        ]),
    );
    assert!(dump.contains("BEGIN_PREPARE") && dump.contains("COMMIT("), "{test}: no 2PC markers in the WAL");
    // RocksDB's own recovery, on a copy.
    let oracle_dir = dir.path().join("oracle");
    copy_dir(&db_dir, &oracle_dir);
    let want = ldb_scan(&oracle_dir, None);
    assert!(want.len() > 1000, "{test}: {} keys", want.len());
    // Shale's.
    let db: TransactionDB =
        TransactionDB::open(&Options::default(), &TransactionDBOptions::default(), &db_dir).unwrap();
    assert!(db.prepared_transactions().is_empty(), "{test}");
    assert_same_pairs(&shale_pairs(&db), &want, test);
    drop(db);
    // Reopened (the recovered data now in tables), the same.
    let db: TransactionDB =
        TransactionDB::open(&Options::default(), &TransactionDBOptions::default(), &db_dir).unwrap();
    assert_same_pairs(&shale_pairs(&db), &want, test);
}

#[test]
fn rocksdb_7_randomtransaction_wal_recovers_in_shale() {
    if !tools_available("rocksdb_7_randomtransaction_wal_recovers_in_shale", &["db_bench", "ldb"]) {
        return;
    }
    rocksdb_wal_recovers("7.8.3");
}

// RocksDB 11.8.1's release db_bench cannot make such a WAL, whatever its flags: its
// RandomTransactionInserter::TransactionDBInsert (test_util/transaction_test_util.cc, the
// same in 7.8.3) names the transaction inside `assert(txn_->SetName(name).ok())`, which a
// release build (NDEBUG) compiles out, so every Prepare fails ("Cannot prepare a transaction
// that has not been named.") and the transactions commit without a prepare section.
// Debian's 7.8.3 build keeps assertions, hence names and prepares. 11.8.1's ldb reads
// Shale's 2PC WAL below.

#[test]
fn shale_2pc_wal_recovers_in_rocksdb() {
    if !tools_available("shale_2pc_wal_recovers_in_rocksdb", &["ldb"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db_dir = dir.path().join("db");
    let want = {
        let mut o = Options::default();
        o.create_if_missing(true);
        for_rocksdb7(&mut o); // format 5: RocksDB 7.8.3's ldb reads the database
        let db: TransactionDB = TransactionDB::open(&o, &TransactionDBOptions::default(), &db_dir).unwrap();
        for i in 0..50u32 {
            let txn = db.transaction();
            txn.put(format!("key{i:03}"), format!("v{i}")).unwrap();
            txn.delete(format!("key{:03}", i / 2)).unwrap();
            txn.set_name(format!("xid{i}").as_bytes()).unwrap();
            txn.prepare().unwrap();
            if i % 5 == 4 {
                txn.rollback().unwrap();
            } else {
                txn.commit().unwrap();
            }
            db.put(format!("plain{i:03}"), b"p").unwrap();
        }
        shale_pairs(&db)
        // Closed without a flush: everything is in the WAL.
    };
    assert!(!wal_files(&db_dir).is_empty());
    let oracle_dir = dir.path().join("oracle");
    copy_dir(&db_dir, &oracle_dir);
    assert_same_pairs(&ldb_scan(&oracle_dir, None), &want, "RocksDB 7.8.3 reading Shale's 2PC WAL");
    if use_rocksdb_11("shale_2pc_wal_recovers_in_rocksdb (11.8.1)") {
        let oracle_dir = dir.path().join("oracle11");
        copy_dir(&db_dir, &oracle_dir);
        assert_same_pairs(&ldb_scan(&oracle_dir, None), &want, "RocksDB 11.8.1 reading Shale's 2PC WAL");
    }
}
