//! With `max_bgerror_resume_count = 0` there is no automatic recovery: after no space
//! during a flush (a hard error), writes stay stopped even once space is back, until
//! `DB::resume()`, which fails while the disk is still full and succeeds after. Nothing
//! acknowledged is lost, live or after a crash and reopen.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::sync::Arc;
use std::time::Duration;

use shale::fs::{FaultInjectionFs, FaultMode, MemFileSystem, OpKind};
use shale::{Options, WriteOptions, DB};
use util::{check_model, int_prop, Model};

#[test]
fn without_automatic_recovery_resume_brings_writes_back() {
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_file_system(fs.clone());
    o.set_max_bgerror_resume_count(0);
    o.set_bgerror_resume_retry_interval(50_000);
    let db = DB::open(&o, "/db").unwrap();
    let mut model = Model::new();
    let mut sync = WriteOptions::default();
    sync.set_sync(true);
    for i in 0..200 {
        let (k, v) = (format!("k{i:04}"), format!("v{i}"));
        db.put_opt(&k, &v, &sync).unwrap();
        model.insert(k.into_bytes(), v.into_bytes());
    }
    fs.fail_matching(OpKind::Write, ".sst", FaultMode::Persistent, libc::ENOSPC);
    assert!(db.flush().unwrap_err().is_no_space());
    assert!(db.put("new", "x").unwrap_err().is_no_space());
    let r = db.resume().unwrap_err();
    assert!(r.is_no_space(), "resume while the disk is full: {r}");
    check_model(&db, &model, "during the hard error");
    let fired = fs.faults_fired();
    fs.clear_faults();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(fs.faults_fired(), fired, "no automatic attempt");
    assert!(db.put("new", "x").unwrap_err().is_no_space(), "writes stay stopped without resume()");
    assert_eq!(int_prop(&db, "rocksdb.shale.background-error-severity"), 2);
    db.resume().unwrap();
    assert_eq!(int_prop(&db, "rocksdb.shale.background-error-severity"), 0);
    for i in 0..50 {
        let (k, v) = (format!("r{i:03}"), format!("after-{i}"));
        db.put_opt(&k, &v, &sync).unwrap();
        model.insert(k.into_bytes(), v.into_bytes());
    }
    db.resume().unwrap(); // with no error, resume only flushes
    check_model(&db, &model, "after resume");
    drop(db);
    fs.crash(true);
    let db = DB::open(&o, "/db").unwrap();
    check_model(&db, &model, "after a crash and reopen");
}
