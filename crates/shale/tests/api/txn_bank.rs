//! The bank: N accounts, several threads moving money between random pairs in
//! transactions, a checker reading every balance under one snapshot. The total never
//! changes, whatever the interleaving. Pessimistic transactions lock with
//! `get_for_update` in the order the pair comes (so deadlocks happen and must be detected,
//! not hang); optimistic ones retry on Busy at commit. A deterministic two-transaction
//! deadlock must be reported as Busy "Deadlock" well before the lock timeout.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use shale::{
    ErrorKind, MultiThreaded, OptimisticTransactionDB, Options, TransactionDB, TransactionDBOptions,
    TransactionOptions, WriteOptions,
};

const ACCOUNTS: u64 = 16;
const START: u64 = 1000;
const RUN: Duration = Duration::from_millis(1500);

/// Lets the threads run for `RUN`, and on until `enough` holds (a loaded machine may
/// schedule them too rarely in `RUN` for what the test checks), at most a minute: the
/// checks after the run fail if `enough` never held.
fn run_until(enough: impl Fn() -> bool) {
    let start = Instant::now();
    while start.elapsed() < RUN || (!enough() && start.elapsed() < Duration::from_secs(60)) {
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn key(i: u64) -> Vec<u8> {
    format!("acct{i:03}").into_bytes()
}

fn num(v: Option<Vec<u8>>) -> u64 {
    String::from_utf8(v.unwrap()).unwrap().parse().unwrap()
}

/// A small xorshift, so the test needs no RNG crate.
fn next(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

#[derive(Default)]
struct Counts {
    committed: AtomicU64,
    deadlocks: AtomicU64,
    timeouts: AtomicU64,
    conflicts: AtomicU64,
    checks: AtomicU64,
}

#[test]
fn pessimistic_bank_keeps_its_total_and_detects_deadlocks() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_write_buffer_size(64 << 10); // flushes happen during the run
    let db: Arc<TransactionDB<MultiThreaded>> =
        Arc::new(TransactionDB::open(&opts, &TransactionDBOptions::default(), dir.path()).unwrap());
    for i in 0..ACCOUNTS {
        db.put(key(i), START.to_string()).unwrap();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(Counts::default());
    let mut threads = Vec::new();
    for t in 0..4u64 {
        let (db, stop, counts) = (db.clone(), stop.clone(), counts.clone());
        threads.push(std::thread::spawn(move || {
            let mut rng = 0x9E37_79B9_7F4A_7C15 ^ (t + 1);
            let mut topts = TransactionOptions::default();
            topts.set_deadlock_detect(true);
            // Far above any wait a loaded machine causes (a lock holder preempted, a commit
            // stalled on a flush): a wait that times out is a deadlock detection missed.
            topts.set_lock_timeout(20_000);
            while !stop.load(Ordering::Relaxed) {
                let a = next(&mut rng) % ACCOUNTS;
                let b = (a + 1 + next(&mut rng) % (ACCOUNTS - 1)) % ACCOUNTS;
                let amount = next(&mut rng) % 50;
                let txn = db.transaction_opt(&WriteOptions::default(), &topts);
                let r = (|| {
                    let va = num(txn.get_for_update(key(a), true)?);
                    // Widen the window between the two locks, so deadlocks happen.
                    std::thread::yield_now();
                    let vb = num(txn.get_for_update(key(b), true)?);
                    let amount = amount.min(va);
                    txn.put(key(a), (va - amount).to_string())?;
                    txn.put(key(b), (vb + amount).to_string())?;
                    Ok::<(), shale::Error>(())
                })();
                match r {
                    Ok(()) => {
                        txn.commit().unwrap();
                        counts.committed.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) if e.kind() == ErrorKind::Busy => {
                        assert_eq!(e.to_string(), "Resource busy: Deadlock");
                        counts.deadlocks.fetch_add(1, Ordering::Relaxed);
                        txn.rollback().unwrap();
                    }
                    Err(e) if e.kind() == ErrorKind::TimedOut => {
                        counts.timeouts.fetch_add(1, Ordering::Relaxed);
                        txn.rollback().unwrap();
                    }
                    Err(e) => panic!("transfer failed: {e}"),
                }
            }
        }));
    }
    let checker = {
        let (db, stop, counts) = (db.clone(), stop.clone(), counts.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let snap = db.snapshot();
                let total: u64 =
                    snap.multi_get((0..ACCOUNTS).map(key)).into_iter().map(|v| num(v.unwrap())).sum();
                assert_eq!(total, ACCOUNTS * START, "the total changed under a snapshot");
                // And through a transaction's own view.
                let txn = db.transaction();
                let total: u64 = txn
                    .iterator(shale::IteratorMode::Start)
                    .map(|kv| {
                        let (_, v) = kv.unwrap();
                        std::str::from_utf8(&v).unwrap().parse::<u64>().unwrap()
                    })
                    .sum();
                assert_eq!(total, ACCOUNTS * START, "the total changed in a transaction's iterator");
                counts.checks.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    run_until(|| counts.committed.load(Ordering::Relaxed) > 100 && counts.checks.load(Ordering::Relaxed) > 0);
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    checker.join().unwrap();
    let total: u64 = (0..ACCOUNTS).map(|i| num(db.get(key(i)).unwrap())).sum();
    assert_eq!(total, ACCOUNTS * START);
    let c = &counts;
    eprintln!(
        "pessimistic: {} transfers, {} deadlocks, {} timeouts, {} checks",
        c.committed.load(Ordering::Relaxed),
        c.deadlocks.load(Ordering::Relaxed),
        c.timeouts.load(Ordering::Relaxed),
        c.checks.load(Ordering::Relaxed)
    );
    assert!(c.committed.load(Ordering::Relaxed) > 100);
    assert!(c.checks.load(Ordering::Relaxed) > 0);
    // Deadlock detection answers before any wait could time out (20 s).
    assert_eq!(c.timeouts.load(Ordering::Relaxed), 0, "a transfer waited out its lock timeout");
}

#[test]
fn a_lock_cycle_is_a_deadlock_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let db: Arc<TransactionDB<MultiThreaded>> = Arc::new(TransactionDB::open_default(dir.path()).unwrap());
    db.put(b"x", b"0").unwrap();
    db.put(b"y", b"0").unwrap();
    let barrier = Arc::new(Barrier::new(2));
    let start = Instant::now();
    let run = |first: &'static [u8], second: &'static [u8]| {
        let (db, barrier) = (db.clone(), barrier.clone());
        std::thread::spawn(move || {
            let mut o = TransactionOptions::default();
            o.set_deadlock_detect(true);
            o.set_lock_timeout(10_000);
            let txn = db.transaction_opt(&WriteOptions::default(), &o);
            txn.get_for_update(first, true).unwrap();
            barrier.wait();
            let r = txn.get_for_update(second, true).map(|_| ());
            match &r {
                Ok(()) => txn.commit().unwrap(),
                Err(_) => txn.rollback().unwrap(),
            }
            r
        })
    };
    let a = run(b"x", b"y");
    let b = run(b"y", b"x");
    let results = [a.join().unwrap(), b.join().unwrap()];
    let deadlocks = results.iter().filter(|r| r.as_ref().is_err_and(|e| e.kind() == ErrorKind::Busy)).count();
    assert_eq!(deadlocks, 1, "{results:?}");
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1);
    // Detected, not waited out: well under the 10 s lock timeout (an idle machine takes
    // milliseconds; the bound leaves a loaded one room).
    assert!(start.elapsed() < Duration::from_secs(8), "took {:?}", start.elapsed());
}

#[test]
fn optimistic_bank_keeps_its_total() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_write_buffer_size(64 << 10);
    let db: Arc<OptimisticTransactionDB<MultiThreaded>> =
        Arc::new(OptimisticTransactionDB::open(&opts, dir.path()).unwrap());
    for i in 0..ACCOUNTS {
        db.put(key(i), START.to_string()).unwrap();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(Counts::default());
    let mut threads = Vec::new();
    for t in 0..4u64 {
        let (db, stop, counts) = (db.clone(), stop.clone(), counts.clone());
        threads.push(std::thread::spawn(move || {
            let mut rng = 0x2545_F491_4F6C_DD1D ^ (t + 1);
            while !stop.load(Ordering::Relaxed) {
                let a = next(&mut rng) % ACCOUNTS;
                let b = (a + 1 + next(&mut rng) % (ACCOUNTS - 1)) % ACCOUNTS;
                let amount = next(&mut rng) % 50;
                let txn = db.transaction();
                let va = num(txn.get_for_update(key(a), true).unwrap());
                std::thread::yield_now();
                let vb = num(txn.get_for_update(key(b), true).unwrap());
                let amount = amount.min(va);
                txn.put(key(a), (va - amount).to_string()).unwrap();
                txn.put(key(b), (vb + amount).to_string()).unwrap();
                match txn.commit() {
                    Ok(()) => counts.committed.fetch_add(1, Ordering::Relaxed),
                    // Busy: a conflict. TryAgain: the memtables no longer reach back to the
                    // transaction's snapshot, so the conflict cannot be checked (RocksDB's
                    // CheckKey says the same); both mean "retry", as RocksDB documents.
                    Err(e) if matches!(e.kind(), ErrorKind::Busy | ErrorKind::TryAgain) => {
                        counts.conflicts.fetch_add(1, Ordering::Relaxed)
                    }
                    Err(e) => panic!("commit failed: {e}"),
                };
            }
        }));
    }
    let checker = {
        let (db, stop, counts) = (db.clone(), stop.clone(), counts.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let snap = db.snapshot();
                let total: u64 =
                    snap.multi_get((0..ACCOUNTS).map(key)).into_iter().map(|v| num(v.unwrap())).sum();
                assert_eq!(total, ACCOUNTS * START, "the total changed under a snapshot");
                counts.checks.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    run_until(|| {
        counts.committed.load(Ordering::Relaxed) > 100
            && counts.conflicts.load(Ordering::Relaxed) > 0
            && counts.checks.load(Ordering::Relaxed) > 0
    });
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    checker.join().unwrap();
    let total: u64 = (0..ACCOUNTS).map(|i| num(db.get(key(i)).unwrap())).sum();
    assert_eq!(total, ACCOUNTS * START);
    eprintln!(
        "optimistic: {} transfers, {} conflicts, {} checks",
        counts.committed.load(Ordering::Relaxed),
        counts.conflicts.load(Ordering::Relaxed),
        counts.checks.load(Ordering::Relaxed)
    );
    assert!(counts.committed.load(Ordering::Relaxed) > 100);
    assert!(counts.conflicts.load(Ordering::Relaxed) > 0, "4 threads on 16 accounts never conflicted");
}
