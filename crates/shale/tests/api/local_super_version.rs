//! The SuperVersion each reader thread keeps cached (RocksDB's thread-local SuperVersion):
//! a read never sees an older view than the one installed before it began (every finished
//! write is visible, however many memtable switches, flushes and compactions ran since the
//! thread's last read), an idle thread's cached view does not keep compacted tables on
//! disk, and a thread's cache of a closed database is not served for the next one.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use shale::{Options, DB};

use crate::util;

fn key(i: u64) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

/// One writer writes then reads back each key; two readers read keys the writer has
/// finished; one thread flushes, compacts and changes the write buffer size all along.
/// Every read finds its key with its value.
#[test]
fn every_read_sees_every_finished_write_across_switches_flushes_and_compactions() {
    const N: u64 = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(64 << 10);
    o.set_level_zero_file_num_compaction_trigger(2);
    let db = Arc::new(DB::open(&o, dir.path()).unwrap());
    let written = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let sv_before = util::int_prop(&db, "rocksdb.current-super-version-number");

    let mut threads = Vec::new();
    for r in 0..2u64 {
        let (db, written, stop) = (db.clone(), written.clone(), stop.clone());
        threads.push(std::thread::spawn(move || {
            let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ r;
            let mut reads = 0u64;
            while !stop.load(Ordering::Acquire) {
                let n = written.load(Ordering::Acquire);
                if n == 0 {
                    std::thread::yield_now();
                    continue;
                }
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Half the reads on the newest key written, half anywhere before it.
                let j = if x.is_multiple_of(2) { n - 1 } else { x % n };
                let got = db.get(key(j)).unwrap();
                assert_eq!(got.as_deref(), Some(&util::value(j, 100)[..]), "reader {r}: key {j} of {n}");
                reads += 1;
            }
            reads
        }));
    }
    let rounds = Arc::new(AtomicU64::new(0));
    let churn = {
        let (db, stop, done) = (db.clone(), stop.clone(), rounds.clone());
        std::thread::spawn(move || {
            let mut rounds = 0u64;
            while !stop.load(Ordering::Acquire) {
                db.flush().unwrap();
                if rounds % 4 == 3 {
                    db.compact_range(None::<&[u8]>, None::<&[u8]>);
                }
                let size = if rounds.is_multiple_of(2) { "131072" } else { "65536" };
                db.set_options(&[("write_buffer_size", size)]).unwrap();
                rounds += 1;
                done.store(rounds, Ordering::Release);
            }
            rounds
        })
    };
    for i in 0..N {
        let v = util::value(i, 100);
        db.put(key(i), &v).unwrap();
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(&v[..]), "writer: key {i}");
        written.store(i + 1, Ordering::Release);
    }
    // The readers read on while the last flushes and compactions run.
    let mid = rounds.load(Ordering::Acquire);
    util::wait_until(120, "four more flush rounds after the last write", || {
        rounds.load(Ordering::Acquire) >= mid + 4
    });
    stop.store(true, Ordering::Release);
    let rounds = churn.join().unwrap();
    let reads: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert!(rounds >= 2, "flush rounds: {rounds}");
    assert!(reads > 0);
    let sv_after = util::int_prop(&db, "rocksdb.current-super-version-number");
    assert!(sv_after > sv_before + 10, "SuperVersions installed: {sv_before} -> {sv_after}");
    for i in (0..N).step_by(97) {
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(&util::value(i, 100)[..]), "key {i}");
    }
}

/// A thread that read once and then waits keeps no view of its own alive: the tables a
/// compaction replaced are deleted while it is still waiting.
#[test]
fn an_idle_reader_thread_keeps_no_compacted_table() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let db = Arc::new(DB::open(&o, dir.path()).unwrap());
    for round in 0..3 {
        for i in 0..100 {
            db.put(key(i), format!("v{round}")).unwrap();
        }
        db.flush().unwrap();
    }
    let before = util::files_ending(dir.path(), ".sst");
    assert_eq!(before.len(), 3, "{before:?}");
    let (read_tx, read_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let idle = {
        let db = db.clone();
        std::thread::spawn(move || {
            assert_eq!(db.get(key(7)).unwrap().as_deref(), Some(&b"v2"[..]));
            read_tx.send(()).unwrap();
            done_rx.recv().unwrap();
            // After the compaction, its cached view is gone: it reads the new one.
            assert_eq!(db.get(key(8)).unwrap().as_deref(), Some(&b"v2"[..]));
        })
    };
    read_rx.recv().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    util::wait_until(60, "the compacted tables to be deleted while the reader idles", || {
        before.iter().all(|t| !dir.path().join(t).exists())
    });
    assert_eq!(util::files_ending(dir.path(), ".sst").len(), 1);
    assert_eq!(util::int_prop(&db, "rocksdb.num-live-versions"), 1);
    done_tx.send(()).unwrap();
    idle.join().unwrap();
}

/// One thread reads a database, closes it, and reads another one opened after it (whose
/// family may take the cache slot the first one's left): it reads the second one's data.
#[test]
fn a_thread_reads_each_database_it_opens_not_the_one_before() {
    let mut o = Options::default();
    o.create_if_missing(true);
    for round in 0..20u32 {
        let dir = tempfile::tempdir().unwrap();
        let db = DB::open(&o, dir.path()).unwrap();
        db.put(b"k", round.to_le_bytes()).unwrap();
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&round.to_le_bytes()[..]), "round {round}");
        let mut cf_opts = Options::default();
        cf_opts.create_if_missing(true);
        let mut db = db;
        db.create_cf("other", &cf_opts).unwrap();
        {
            let cf = db.cf_handle("other").unwrap();
            db.put_cf(cf, b"k", b"other").unwrap();
            assert_eq!(db.get_cf(cf, b"k").unwrap().as_deref(), Some(&b"other"[..]));
        }
        db.drop_cf("other").unwrap();
        db.create_cf("third", &cf_opts).unwrap();
        let cf = db.cf_handle("third").unwrap();
        assert_eq!(db.get_cf(cf, b"k").unwrap(), None, "round {round}: a new family is empty");
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&round.to_le_bytes()[..]), "round {round}");
    }
}
