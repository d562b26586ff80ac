//! After a one-off no-space error on the WAL (a hard error, as RocksDB rates it), writes
//! stop with an error (reads go on), and `DB::resume()` brings them back: a new WAL,
//! memtables flushed, nothing acknowledged lost. Any other IO error on the WAL is fatal, as
//! in RocksDB: `resume()` refuses, and a reopen recovers every acknowledged write.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::Arc;

use shale::fs::{FaultInjectionFs, FaultMode, MemFileSystem, OpKind};
use shale::{ErrorKind, Options, WriteOptions, DB};

#[test]
fn resume_after_wal_write_error() {
    let mem = Arc::new(MemFileSystem::new());
    let fault = Arc::new(FaultInjectionFs::new(mem));
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_file_system(fault.clone());
    o.set_max_bgerror_resume_count(0); // only resume() brings writes back
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    let db = DB::open(&o, "/db").unwrap();
    for i in 0..50 {
        db.put_opt(format!("a{i}"), b"1", &wo).unwrap();
    }
    fault.fail_nth(OpKind::Write, 1, FaultMode::Once, libc::ENOSPC);
    let e = db.put_opt(b"lost", b"x", &wo).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IOError, "{e}");
    assert!(e.is_no_space(), "{e}");
    // Writes stay stopped; reads work.
    assert_eq!(db.put_opt(b"b", b"x", &wo).unwrap_err().kind(), ErrorKind::IOError);
    assert_eq!(db.get(b"a7").unwrap(), Some(b"1".to_vec()));
    db.resume().unwrap();
    for i in 0..50 {
        db.put_opt(format!("c{i}"), b"2", &wo).unwrap();
    }
    drop(db);
    fault.crash(true);
    let db = DB::open(&o, "/db").unwrap();
    for i in 0..50 {
        assert_eq!(db.get(format!("a{i}")).unwrap(), Some(b"1".to_vec()), "a{i}");
        assert_eq!(db.get(format!("c{i}")).unwrap(), Some(b"2".to_vec()), "c{i}");
    }
}

#[test]
fn resume_fails_while_the_fault_persists() {
    let fault = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_file_system(fault.clone());
    let db = DB::open(&o, "/db").unwrap();
    db.put(b"k", b"v").unwrap();
    fault.fail_nth(OpKind::Write, 1, FaultMode::Persistent, libc::ENOSPC);
    let e = db.put(b"k2", b"v").unwrap_err();
    assert!(e.is_no_space(), "{e}");
    assert!(db.resume().is_err(), "resume must fail while the disk is still full");
    assert!(db.put(b"k3", b"v").is_err());
    fault.clear_faults();
    db.resume().unwrap();
    db.put(b"k4", b"v").unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
    assert_eq!(db.get(b"k4").unwrap(), Some(b"v".to_vec()));
}

#[test]
fn wal_io_error_is_fatal_and_a_reopen_recovers() {
    let fault = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_file_system(fault.clone());
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    let db = DB::open(&o, "/db").unwrap();
    for i in 0..20 {
        db.put_opt(format!("a{i}"), b"1", &wo).unwrap();
    }
    fault.fail_nth(OpKind::Write, 1, FaultMode::Once, libc::EIO);
    let e = db.put_opt(b"lost", b"x", &wo).unwrap_err();
    assert_eq!(e.os_code(), Some(libc::EIO), "{e}");
    assert_eq!(db.property_int_value("rocksdb.shale.background-error-severity").unwrap(), Some(3));
    // The fault is gone, but a fatal error stays until the database is reopened.
    let r = db.resume().unwrap_err();
    assert_eq!(r.os_code(), Some(libc::EIO), "{r}");
    assert!(db.put_opt(b"b", b"x", &wo).is_err());
    assert_eq!(db.get(b"a7").unwrap(), Some(b"1".to_vec()));
    drop(db);
    let db = DB::open(&o, "/db").unwrap();
    for i in 0..20 {
        assert_eq!(db.get(format!("a{i}")).unwrap(), Some(b"1".to_vec()), "a{i}");
    }
    db.put_opt(b"b", b"x", &wo).unwrap();
}
