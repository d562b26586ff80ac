//! A panic inside a background job stops the database (`db/halt.rs`): the flush that
//! panicked, later reads, writes and flushes all return the halt error, and no read is ever
//! served from a state the panic may have left half made (here: a flush that would have
//! dropped the version a snapshot reads). Reopening brings back every acknowledged write.
//!
//! The panic comes from a user's comparator, which a flush calls on the flush thread to
//! group the versions of a key (armed only once the writes are in, so that writes and the
//! memtable inserts do not panic).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::cmp::Ordering;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

use shale::{ErrorKind, IteratorMode, Options, ReadOptions, DB};

static ARMED: AtomicBool = AtomicBool::new(false);

fn arming_bytewise(a: &[u8], b: &[u8]) -> Ordering {
    assert!(!ARMED.load(AtomicOrdering::SeqCst), "the user's comparator panics (armed by the test)");
    a.cmp(b)
}

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_comparator("shale.test.ArmingBytewise", Box::new(arming_bytewise));
    o
}

fn halted(e: &shale::Error) -> bool {
    e.kind() == ErrorKind::Corruption
        && e.to_string().contains("the database stopped after a panic in a flush")
}

#[test]
fn a_panic_in_a_flush_halts_the_database() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = DB::open(&opts(), dir.path()).unwrap();
        db.put(b"k", b"old").unwrap();
        db.put(b"other", b"x").unwrap();
        let snap = db.snapshot();
        db.put(b"k", b"new").unwrap();

        ARMED.store(true, AtomicOrdering::SeqCst);
        let e = db.flush().unwrap_err();
        assert!(halted(&e), "the flush returns the halt error: {e}");

        // Reads: neither the snapshot's version nor a guess, but the error.
        let e = snap.get(b"k").unwrap_err();
        assert!(halted(&e), "a snapshot read returns the halt error: {e}");
        let mut ro = ReadOptions::default();
        ro.set_snapshot(&snap);
        assert!(halted(&db.get_opt(b"k", &ro).unwrap_err()));
        assert!(halted(&db.get(b"k").unwrap_err()));
        let mut it = db.iterator(IteratorMode::Start);
        let first = it.next().expect("an iterator of a halted database yields its error");
        assert!(halted(&first.unwrap_err()));
        drop(it);
        assert!(db.multi_get([b"k"]).into_iter().all(|r| r.is_err_and(|e| halted(&e))));
        // Writes, flushes, resume and properties.
        assert!(halted(&db.put(b"k", b"later").unwrap_err()));
        assert!(halted(&db.flush().unwrap_err()));
        assert!(halted(&db.resume().unwrap_err()));
        assert!(halted(&db.property_int_value("rocksdb.num-snapshots").unwrap_err()));
        ARMED.store(false, AtomicOrdering::SeqCst);
        drop(snap);
    }
    // Every acknowledged write is in the WAL: the reopened database has the newest values.
    let db = DB::open(&opts(), dir.path()).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
    assert_eq!(db.get(b"other").unwrap().as_deref(), Some(&b"x"[..]));
    assert_eq!(db.get(b"later").unwrap(), None);
    db.flush().unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
}

static MERGE_ARMED: AtomicBool = AtomicBool::new(false);

fn merge_opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_merge_operator_associative("shale.test.ArmingConcat", |_k, base, ops| {
        assert!(
            !MERGE_ARMED.load(AtomicOrdering::SeqCst),
            "the user's merge operator panics (armed by the test)"
        );
        let mut v = base.map(|b| b.to_vec()).unwrap_or_default();
        for op in ops {
            v.extend_from_slice(op);
        }
        Some(v)
    });
    o
}

/// The same with the panic in a user's merge operator, which the flush calls to combine a
/// key's put and merge operands: the flush fails (the merge boundary turns the panic into
/// RocksDB's merge failure, a Corruption background error), writes stop, and a snapshot
/// taken before the flush still reads its version of `k`, never a miss.
#[test]
fn a_panic_in_a_merge_operator_during_a_flush_halts_the_database() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = DB::open(&merge_opts(), dir.path()).unwrap();
        db.put(b"k", b"old").unwrap();
        let snap = db.snapshot();
        db.put(b"k", b"new").unwrap();
        db.put(b"m", b"a").unwrap();
        db.merge(b"m", b"b").unwrap();

        MERGE_ARMED.store(true, AtomicOrdering::SeqCst);
        // The merge boundary catches the panic: the flush fails with RocksDB's merge
        // failure, a Corruption, which stops writes and flushes (a background error).
        let e = db.flush().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
        assert!(e.to_string().contains("Merge operator failed"), "{e}");
        assert!(db.put(b"k", b"later").is_err());
        assert!(db.flush().is_err());
        // Reads: the snapshot's version (the memtables were not dropped), never a miss.
        assert_eq!(snap.get(b"k").unwrap().as_deref(), Some(&b"old"[..]));
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
        MERGE_ARMED.store(false, AtomicOrdering::SeqCst);
        drop(snap);
    }
    let db = DB::open(&merge_opts(), dir.path()).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
    assert_eq!(db.get(b"m").unwrap().as_deref(), Some(&b"ab"[..]));
    assert_eq!(db.get(b"later").unwrap(), None);
}
