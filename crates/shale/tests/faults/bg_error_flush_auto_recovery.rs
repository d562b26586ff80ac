//! No space during a flush is a hard background error (RocksDB's ErrorHandler): the flush
//! and every later write fail with a no-space IO error, while gets and iterators keep
//! returning every acknowledged write. Once space is back, automatic recovery (one attempt
//! per `bgerror_resume_retry_interval`) brings writes back without `resume()`; nothing
//! acknowledged is lost, live or after a reopen.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::sync::Arc;

use shale::fs::{FaultInjectionFs, FaultMode, MemFileSystem, OpKind};
use shale::{Options, WriteOptions, DB};
use util::{check_model, int_prop, wait_until, Model};

#[test]
fn flush_no_space_stops_writes_until_automatic_recovery() {
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_file_system(fs.clone());
    o.set_bgerror_resume_retry_interval(100_000);
    let db = DB::open(&o, "/db").unwrap();
    let mut model = Model::new();
    let mut sync = WriteOptions::default();
    sync.set_sync(true);
    let plain = WriteOptions::default();
    for i in 0..300 {
        let (k, v) = (format!("k{i:04}"), format!("v{i}"));
        db.put_opt(&k, &v, if i % 3 == 0 { &sync } else { &plain }).unwrap();
        model.insert(k.into_bytes(), v.into_bytes());
        if i == 100 {
            db.flush().unwrap(); // some data in a table, some in the memtable
        }
    }
    fs.fail_matching(OpKind::Write, ".sst", FaultMode::Persistent, libc::ENOSPC);
    let e = db.flush().unwrap_err();
    assert!(e.is_no_space(), "flush: {e}");
    assert_eq!(int_prop(&db, "rocksdb.shale.background-error-severity"), 2, "hard error");
    assert_eq!(int_prop(&db, "rocksdb.background-errors"), 1);
    let e = db.put("new", "x").unwrap_err();
    assert!(e.is_no_space(), "a write during the hard error: {e}");
    check_model(&db, &model, "during the hard error");
    // Automatic attempts (one per 100 ms; later on a loaded machine) fail while the disk
    // stays full: the failed flush and at least two attempts.
    wait_until(60, "two automatic recovery attempts", || fs.faults_fired() >= 3);
    assert!(db.put_opt("new", "x", &sync).unwrap_err().is_no_space());
    check_model(&db, &model, "while recovery keeps failing");
    // Space is back: writes resume on their own.
    fs.clear_faults();
    wait_until(60, "automatic recovery", || int_prop(&db, "rocksdb.shale.background-error-severity") == 0);
    assert_eq!(int_prop(&db, "rocksdb.num-immutable-mem-table"), 0, "recovery flushed the memtables");
    for i in 0..50 {
        let (k, v) = (format!("r{i:03}"), format!("after-{i}"));
        db.put_opt(&k, &v, &sync).unwrap();
        model.insert(k.into_bytes(), v.into_bytes());
    }
    check_model(&db, &model, "after recovery");
    drop(db);
    fs.crash(true); // only what was synced (or flushed) survives; all of the model was
    let db = DB::open(&o, "/db").unwrap();
    check_model(&db, &model, "after a crash and reopen");
}
