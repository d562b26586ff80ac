//! No space while appending to the WAL is a hard error (RocksDB's ErrorHandler; its own
//! WALWriteError test expects automatic recovery): the failed write and the ones after it
//! get the no-space error, reads go on, and automatic recovery — a new WAL, the memtables
//! flushed, the old WAL (which may end in a torn record) retired — brings writes back.
//! Every acknowledged write survives a crash and reopen; the failed one is absent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::sync::Arc;

use shale::fs::{FaultInjectionFs, FaultMode, MemFileSystem, OpKind};
use shale::{Options, WriteOptions, DB};
use util::{int_prop, wait_until};

#[test]
fn wal_no_space_recovers_automatically() {
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_file_system(fs.clone());
    o.set_bgerror_resume_retry_interval(100_000);
    let db = DB::open(&o, "/db").unwrap();
    let mut sync = WriteOptions::default();
    sync.set_sync(true);
    for i in 0..100 {
        db.put_opt(format!("a{i:03}"), "1", &sync).unwrap();
    }
    fs.fail_matching(OpKind::Write, ".log", FaultMode::Persistent, libc::ENOSPC);
    let e = db.put_opt("lost", "x", &sync).unwrap_err();
    assert!(e.is_no_space(), "{e}");
    // Recovery may succeed meanwhile (it writes no WAL record), but every write fails.
    for i in 2..6 {
        assert!(db.put_opt(format!("lost{i}"), "x", &sync).unwrap_err().is_no_space());
    }
    assert_eq!(int_prop(&db, "rocksdb.background-errors"), 0, "a WAL error is not a failed background job");
    assert_eq!(db.get("a050").unwrap().as_deref(), Some(&b"1"[..]));
    fs.clear_faults();
    wait_until(60, "automatic recovery", || db.put_opt("b", "2", &sync).is_ok());
    for i in 0..100 {
        db.put_opt(format!("c{i:03}"), "3", &sync).unwrap();
    }
    drop(db);
    fs.crash(true);
    let db = DB::open(&o, "/db").unwrap();
    for i in 0..100 {
        assert_eq!(db.get(format!("a{i:03}")).unwrap().as_deref(), Some(&b"1"[..]), "a{i:03}");
        assert_eq!(db.get(format!("c{i:03}")).unwrap().as_deref(), Some(&b"3"[..]), "c{i:03}");
    }
    assert_eq!(db.get("b").unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(db.get("lost").unwrap(), None, "the failed write must not appear");
    for i in 2..6 {
        assert_eq!(db.get(format!("lost{i}")).unwrap(), None);
    }
}
