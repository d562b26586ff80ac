//! `two_write_queues` (RocksDB's `nonmem_write_thread_`, `WriteImplWALOnly`): writes that
//! go to the WAL only — a two-phase commit's prepare, rollback and empty commit — take a
//! second queue instead of the write queue. What it changes: with a write's memtable insert
//! held (inside the user's comparator), a transaction still prepares (its WAL record
//! written and tracked), where with one queue the prepare waits for the write queue. And,
//! as RocksDB's WriteImpl, every write fails NotSupported with `enable_pipelined_write` too.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::cmp::Ordering as CmpOrdering;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::util;
use shale::{ErrorKind, Options, TransactionDB, TransactionDBOptions};

static HOLD: AtomicBool = AtomicBool::new(false);
static HELD: AtomicBool = AtomicBool::new(false);
static RELEASE: AtomicBool = AtomicBool::new(false);

/// Bytewise; once armed, the first comparison involving the key "held" waits for the test.
fn holding_bytewise(a: &[u8], b: &[u8]) -> CmpOrdering {
    if (a == b"held" || b == b"held") && HOLD.swap(false, Ordering::SeqCst) {
        HELD.store(true, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(120);
        while !RELEASE.load(Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::yield_now();
        }
    }
    a.cmp(b)
}

fn opts(extra: &str) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_comparator("shale.test.HoldingBytewise2q", Box::new(holding_bytewise));
    o.get_options_from_string(extra).unwrap()
}

#[test]
fn a_prepare_is_written_while_a_memtable_insert_is_held() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts("two_write_queues=true");
    let db: Arc<TransactionDB> =
        Arc::new(TransactionDB::open(&o, &TransactionDBOptions::default(), dir.path()).unwrap());
    db.put(b"a", b"1").unwrap();
    HOLD.store(true, Ordering::SeqCst);
    let held = {
        let db = db.clone();
        std::thread::spawn(move || db.put(b"held", b"h").unwrap())
    };
    util::wait_until(60, "the insert held in the comparator", || HELD.load(Ordering::SeqCst));
    // The prepare goes through the second queue while the write queue's leader inserts.
    let txn = db.transaction();
    txn.put(b"x", b"y").unwrap();
    txn.set_name(b"t1").unwrap();
    txn.prepare().unwrap();
    assert!(!held.is_finished(), "the held write returned before its insert");
    RELEASE.store(true, Ordering::SeqCst);
    held.join().unwrap();
    txn.commit().unwrap();
    assert_eq!(db.get(b"x").unwrap().as_deref(), Some(&b"y"[..]));
    assert_eq!(db.get(b"held").unwrap().as_deref(), Some(&b"h"[..]));
    drop(db);
    // The WAL replays: the committed transaction and the write are there.
    let db: TransactionDB = TransactionDB::open(&o, &TransactionDBOptions::default(), dir.path()).unwrap();
    assert_eq!(db.get(b"x").unwrap().as_deref(), Some(&b"y"[..]));
    assert_eq!(db.get(b"held").unwrap().as_deref(), Some(&b"h"[..]));
}

#[test]
fn two_write_queues_with_pipelined_writes_refuses_every_write() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    let o = o.get_options_from_string("two_write_queues=true;enable_pipelined_write=true").unwrap();
    let db = shale::DB::open(&o, dir.path()).unwrap();
    let e = db.put(b"k", b"v").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported);
    assert!(e.to_string().contains("pipelined_writes is not compatible with concurrent prepares"), "{e}");
}
