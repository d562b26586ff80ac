//! Writers of one write group inserting into the memtables at once
//! (`allow_concurrent_memtable_write`, `db/write.rs`), and the same load with the switch off:
//! several threads write two-key batches over three families with small write buffers (so
//! memtables fill, switch and flush meanwhile) while a reader takes snapshots. Every batch
//! is atomic at every snapshot (both keys or neither: the sequence is published only after
//! every member of a group finished inserting), a thread's writes appear in the order it
//! made them (a snapshot taken after one write never sees the next), and at the end every
//! acknowledged write is readable.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::tools;

use shale::statistics::Ticker;
use shale::{ColumnFamilyDescriptor, Options, WriteBatch, WriteOptions, DB};

const THREADS: usize = 8;
const WRITES: u64 = 1000;
const FAMILIES: [&str; 3] = ["default", "a", "b"];

fn run(concurrent: bool, disable_wal: bool) {
    run_with(concurrent, disable_wal, |_| {})
}

/// As `run`, with `tune` applied to the options (the write queue's waiting).
fn run_with(concurrent: bool, disable_wal: bool, tune: fn(&mut Options)) {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_allow_concurrent_memtable_write(concurrent);
    tune(&mut o);
    o.set_write_buffer_size(64 << 10);
    o.enable_statistics();
    let cfs = FAMILIES.iter().map(|f| ColumnFamilyDescriptor::new(*f, o.clone()));
    let db = Arc::new(DB::open_cf_descriptors(&o, dir.path(), cfs).unwrap());
    let stop = Arc::new(AtomicBool::new(false));

    // The reader: at each snapshot, both keys of a thread's last batch, and never older
    // than what the previous snapshot saw.
    let reader = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut seen = [0u64; THREADS];
            let mut rounds = 0u64;
            while !stop.load(Ordering::Acquire) {
                let snap = db.snapshot();
                for (t, last) in seen.iter_mut().enumerate() {
                    let cf = db.cf_handle(FAMILIES[t % 3]).unwrap();
                    let other = db.cf_handle(FAMILIES[(t + 1) % 3]).unwrap();
                    let c = snap.get_cf(cf, format!("c{t}")).unwrap();
                    let d = snap.get_cf(other, format!("d{t}")).unwrap();
                    assert_eq!(c, d, "a batch is visible whole or not at all (thread {t})");
                    let n = c.map_or(0, |v| String::from_utf8(v).unwrap().parse::<u64>().unwrap());
                    assert!(n >= *last, "a later snapshot sees an older write of thread {t}");
                    *last = n;
                }
                rounds += 1;
            }
            rounds
        })
    };

    let writers: Vec<_> = (0..THREADS)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let cf = db.cf_handle(FAMILIES[t % 3]).unwrap();
                let other = db.cf_handle(FAMILIES[(t + 1) % 3]).unwrap();
                let mut wo = WriteOptions::default();
                wo.disable_wal(disable_wal);
                for i in 1..=WRITES {
                    let mut b = WriteBatch::default();
                    let v = i.to_string();
                    b.put_cf(cf, format!("c{t}"), &v);
                    b.put_cf(other, format!("d{t}"), &v);
                    b.put_cf(cf, format!("k{t}-{i:06}"), vec![b'x'; 100]);
                    db.write_opt(b, &wo).unwrap();
                    // Read-your-writes, and a snapshot after this write never sees the next.
                    let snap = db.snapshot();
                    assert_eq!(db.get_cf(cf, format!("c{t}")).unwrap().unwrap(), v.as_bytes());
                    if i % 50 == 0 {
                        let mut b = WriteBatch::default();
                        b.put_cf(cf, format!("c{t}"), (i + 1).to_string());
                        b.put_cf(other, format!("d{t}"), (i + 1).to_string());
                        db.write_opt(b, &wo).unwrap();
                        assert_eq!(snap.get_cf(cf, format!("c{t}")).unwrap().unwrap(), v.as_bytes());
                        assert_eq!(
                            db.get_cf(cf, format!("c{t}")).unwrap().unwrap(),
                            (i + 1).to_string().as_bytes()
                        );
                    }
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::Release);
    assert!(reader.join().unwrap() > 0, "the reader did no work");

    for t in 0..THREADS {
        let cf = db.cf_handle(FAMILIES[t % 3]).unwrap();
        for i in 1..=WRITES {
            assert_eq!(
                db.get_cf(cf, format!("k{t}-{i:06}")).unwrap().as_deref(),
                Some(&[b'x'; 100][..]),
                "acknowledged write {i} of thread {t}"
            );
        }
        let last = db.get_cf(cf, format!("c{t}")).unwrap().unwrap();
        assert_eq!(last, (WRITES + 1).to_string().as_bytes(), "the last write of thread {t} wins");
    }
    // Small write buffers: memtables were switched and flushed while the groups ran.
    let flushed: u64 = FAMILIES
        .iter()
        .map(|f| {
            let cf = db.cf_handle(f).unwrap();
            // Every level: with dynamic level sizes (the default) a compaction of the flushed
            // files writes into the last level, so on a slow machine level 0 may be empty again.
            (0..7)
                .map(|l| {
                    let p = format!("rocksdb.num-files-at-level{l}");
                    db.property_int_value_cf(cf, &p).unwrap().unwrap_or(0)
                })
                .sum::<u64>()
        })
        .sum();
    assert!(flushed > 0, "no memtable was flushed");
    // Writers did share groups (so with the switch on, members inserted in parallel).
    let by_other = o.get_ticker_count(Ticker::WriteDoneByOther);
    println!("writes done by another writer's group: {by_other}");
    assert!(by_other > 0, "no write group had two writers");
}

#[test]
fn concurrent_memtable_writes_with_wal() {
    run(true, false);
}

#[test]
fn concurrent_memtable_writes_without_wal() {
    run(true, true);
}

#[test]
fn serial_memtable_writes_with_wal() {
    run(false, false);
}

#[test]
fn serial_memtable_writes_without_wal() {
    run(false, true);
}

/// Writers that block at once after the spin (no yield loop), and writers that yield for
/// long: the same guarantees either way.
#[test]
fn concurrent_memtable_writes_without_adaptive_yield() {
    run_with(true, false, |o| o.set_enable_write_thread_adaptive_yield(false));
}

#[test]
fn concurrent_memtable_writes_with_long_yields() {
    run_with(true, true, |o| {
        o.set_write_thread_max_yield_usec(10_000);
        o.set_write_thread_slow_yield_usec(1_000);
    });
}

/// The write queue's waiting options are written to the OPTIONS file with RocksDB's names
/// and read back from it.
#[test]
fn write_thread_yield_options_round_trip_through_the_options_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_enable_write_thread_adaptive_yield(false);
    o.set_write_thread_max_yield_usec(250);
    o.set_write_thread_slow_yield_usec(7);
    drop(DB::open(&o, dir.path()).unwrap());
    let text = tools::latest_options_text(dir.path());
    for line in [
        "enable_write_thread_adaptive_yield=false",
        "write_thread_max_yield_usec=250",
        "write_thread_slow_yield_usec=7",
    ] {
        assert!(text.lines().any(|l| l.trim() == line), "{line} in the OPTIONS file");
    }
    let (loaded, _) = Options::load_latest(
        dir.path(),
        shale::Env::new().unwrap(),
        false,
        shale::Cache::new_lru_cache(1 << 20),
    )
    .unwrap();
    drop(DB::open(&loaded, dir.path()).unwrap());
    let text = tools::latest_options_text(dir.path());
    assert!(text.lines().any(|l| l.trim() == "write_thread_max_yield_usec=250"), "kept after a load");
    assert!(
        text.lines().any(|l| l.trim() == "enable_write_thread_adaptive_yield=false"),
        "kept after a load"
    );
}
