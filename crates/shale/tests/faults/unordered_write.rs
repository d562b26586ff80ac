//! `unordered_write` (RocksDB's `WriteImplWALOnly` + `UnorderedWriteMemtable`, `db/write.rs`):
//! a write group publishes its sequences right after its WAL write and each writer inserts
//! its own batch into the memtable, outside the group's order; a writer returns once its own
//! insert is done. What the option changes, shown with one writer's insert held inside the
//! user's comparator:
//! - a later writer's write completes and is readable while the earlier one still inserts
//!   (read-your-own-writes holds);
//! - the last sequence covers the held write before it is readable, so a snapshot taken
//!   meanwhile sees it appear later (the immutability RocksDB documents as given up);
//! - a manual flush (a memtable switch) waits for the held insert, so the flushed table has it;
//!   reopening brings back every write.
//!
//! Plus the same many-threads model check as the pipelined test, and RocksDB's refusal
//! without `allow_concurrent_memtable_write`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::cmp::Ordering as CmpOrdering;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::util;
use shale::{ErrorKind, Options, DB};

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

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_unordered_write(true);
    o.set_comparator("shale.test.HoldingBytewise", Box::new(holding_bytewise));
    o
}

#[test]
fn a_later_write_completes_while_an_earlier_insert_is_held() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(DB::open(&opts(), dir.path()).unwrap());
    // Something in the memtable for the held insert to compare with.
    db.put(b"a", b"1").unwrap();
    let seq0 = db.latest_sequence_number();
    HOLD.store(true, Ordering::SeqCst);
    let held = {
        let db = db.clone();
        std::thread::spawn(move || db.put(b"held", b"h").unwrap())
    };
    util::wait_until(60, "the insert held in the comparator", || HELD.load(Ordering::SeqCst));
    // The held write's sequence is published, its key not yet in the memtable.
    assert_eq!(db.latest_sequence_number(), seq0 + 1);
    let snap = db.snapshot();
    assert_eq!(snap.get(b"held").unwrap(), None);
    // A later write goes through the WAL and its own insert and returns meanwhile.
    db.put(b"later", b"l").unwrap();
    assert_eq!(db.get(b"later").unwrap().as_deref(), Some(&b"l"[..]));
    assert_eq!(db.latest_sequence_number(), seq0 + 2);
    assert!(!held.is_finished(), "the held write returned before its insert");
    // A flush (a memtable switch) waits for the held insert.
    let flush = {
        let db = db.clone();
        std::thread::spawn(move || db.flush().unwrap())
    };
    RELEASE.store(true, Ordering::SeqCst);
    held.join().unwrap();
    flush.join().unwrap();
    // The snapshot taken before the held insert finished now sees it: its sequence was
    // below the snapshot's (RocksDB: unordered_write gives up snapshot immutability).
    assert_eq!(snap.get(b"held").unwrap().as_deref(), Some(&b"h"[..]));
    drop(snap);
    assert_eq!(db.get(b"held").unwrap().as_deref(), Some(&b"h"[..]));
    drop(db);
    let db = DB::open(&opts(), dir.path()).unwrap();
    for (k, v) in [(&b"a"[..], &b"1"[..]), (b"held", b"h"), (b"later", b"l")] {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v));
    }
}

#[test]
fn many_unordered_writers_match_the_model_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_unordered_write(true);
    o.set_write_buffer_size(64 << 10);
    let db = Arc::new(DB::open(&o, dir.path()).unwrap());
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut model = BTreeMap::new();
                for i in 0..800u64 {
                    let k = format!("t{t}-{:03}", (i * 7919 + t) % 150).into_bytes();
                    if i % 5 == 4 {
                        db.delete(&k).unwrap();
                        model.remove(&k);
                    } else {
                        let v = format!("v{i}-{}", "y".repeat((i % 200) as usize)).into_bytes();
                        db.put(&k, &v).unwrap();
                        // Read-your-own-writes holds under unordered_write.
                        assert_eq!(db.get(&k).unwrap().as_deref(), Some(&v[..]));
                        model.insert(k, v);
                    }
                }
                model
            })
        })
        .collect();
    let mut model = BTreeMap::new();
    for h in threads {
        model.extend(h.join().unwrap());
    }
    let state = |db: &DB| -> BTreeMap<Vec<u8>, Vec<u8>> {
        db.iterator(shale::IteratorMode::Start)
            .map(|kv| kv.unwrap())
            .map(|(k, v)| (k.to_vec(), v.to_vec()))
            .collect()
    };
    assert_eq!(state(&db), model);
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(state(&db), model, "after reopen");
}

#[test]
fn unordered_write_needs_concurrent_memtable_writes() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_unordered_write(true);
    o.set_allow_concurrent_memtable_write(false);
    let e = DB::open(&o, dir.path()).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(
        e.to_string().contains("unordered_write is incompatible with !allow_concurrent_memtable_write"),
        "{e}"
    );
}
