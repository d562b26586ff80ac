//! `enable_pipelined_write` (RocksDB's `PipelinedWriteImpl`, `db/write.rs`): a write group
//! writes the WAL, then leaves the write queue for the memtable writers' queue, so the next
//! group's WAL write runs while it inserts into the memtables.
//!
//! - Many threads write over two families with small write buffers (memtables switch and
//!   flush meanwhile): the database equals a model while open, after a reopen, and, after a
//!   power loss on the fault-injecting file system, every acknowledged sync write is there
//!   and each thread's writes survive as a prefix of what it wrote.
//! - The pipeline exists: with one group's memtable insert held (its merge function blocks,
//!   `max_successive_merges` resolves merges while inserting), the next group's WAL record
//!   reaches the file, and that write is acknowledged only after the held group completes.
//! - RocksDB's refusals: with `unordered_write` or `atomic_flush`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::*;
use crate::util;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale::{ErrorKind, MergeOperands, Options, WriteBatch, WriteOptions, DB};

const THREADS: u64 = 8;
const FAMILIES: [&str; 2] = ["default", "b"];

fn pipelined(fs: &Arc<shale::fs::FaultInjectionFs>) -> Options {
    let mut o = options(fs);
    o.set_enable_pipelined_write(true);
    o.set_disable_auto_compactions(false);
    o.set_write_buffer_size(64 << 10);
    o.set_max_write_buffer_number(4);
    o
}

fn open(fs: &Arc<shale::fs::FaultInjectionFs>) -> DB {
    let o = pipelined(fs);
    let cfs = FAMILIES.iter().map(|f| shale::ColumnFamilyDescriptor::new(*f, o.clone()));
    DB::open_cf_descriptors(&o, DB_PATH, cfs).unwrap()
}

type Model = BTreeMap<(usize, Vec<u8>), Vec<u8>>;

fn db_state(db: &DB) -> Model {
    let mut out = Model::new();
    for (i, f) in FAMILIES.iter().enumerate() {
        let cf = db.cf_handle(f).unwrap();
        for kv in db.iterator_cf(cf, shale::IteratorMode::Start) {
            let (k, v) = kv.unwrap();
            out.insert((i, k.to_vec()), v.to_vec());
        }
    }
    out
}

/// Thread `t`'s random writes (puts, deletes, two-family batches) on its own keys, some
/// synced; returns its model.
fn writer(db: &DB, t: u64, writes: u64) -> Model {
    let mut rng = SmallRng::seed_from_u64(t);
    let mut model = Model::new();
    let cfs: Vec<_> = FAMILIES.iter().map(|f| db.cf_handle(f).unwrap()).collect();
    for i in 0..writes {
        let mut wo = WriteOptions::default();
        wo.set_sync(rng.gen_bool(0.05));
        let key = |rng: &mut SmallRng| format!("t{t}-k{:03}", rng.gen_range(0..200)).into_bytes();
        let value = format!("v{i}-{}", "x".repeat(rng.gen_range(0..300))).into_bytes();
        let mut b = WriteBatch::default();
        match rng.gen_range(0..10) {
            0..=5 => {
                let (f, k) = (rng.gen_range(0..2), key(&mut rng));
                b.put_cf(cfs[f], &k, &value);
                model.insert((f, k), value);
            }
            6..=7 => {
                let (f, k) = (rng.gen_range(0..2), key(&mut rng));
                b.delete_cf(cfs[f], &k);
                model.remove(&(f, k));
            }
            _ => {
                for (f, cf) in cfs.iter().enumerate() {
                    let k = key(&mut rng);
                    b.put_cf(*cf, &k, &value);
                    model.insert((f, k), value.clone());
                }
            }
        }
        db.write_opt(b, &wo).unwrap();
    }
    model
}

#[test]
fn many_writers_match_the_model_after_reopen_and_sync_writes_survive_power_loss() {
    let fs = new_fault_fs();
    let db = Arc::new(open(&fs));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || writer(&db, t, 600))
        })
        .collect();
    let mut model = Model::new();
    for h in threads {
        model.extend(h.join().unwrap());
    }
    assert_eq!(db_state(&db), model, "the database differs from the model");
    let seq = db.latest_sequence_number();
    assert!(seq >= THREADS * 600, "sequence {seq} below the records written");
    drop(db);
    let db = open(&fs);
    assert_eq!(db_state(&db), model, "after reopen the database differs from the model");

    // Each thread writes unique keys in order, every seventh synced; a power loss keeps a
    // prefix of each thread's writes that holds at least its last acknowledged sync write.
    let db = Arc::new(db);
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut last_synced = None;
                for i in 0..300u64 {
                    let mut wo = WriteOptions::default();
                    wo.set_sync(i % 7 == 3);
                    db.put_opt(format!("u{t}-{i:04}"), format!("w{i}"), &wo).unwrap();
                    if i % 7 == 3 {
                        last_synced = Some(i);
                    }
                }
                last_synced.unwrap()
            })
        })
        .collect();
    let synced: Vec<u64> = threads.into_iter().map(|h| h.join().unwrap()).collect();
    drop(db);
    fs.crash(true);
    let db = open(&fs);
    for (t, last) in synced.iter().enumerate() {
        let present: Vec<bool> =
            (0..300u64).map(|i| db.get(format!("u{t}-{i:04}")).unwrap().is_some()).collect();
        let kept = present.iter().take_while(|p| **p).count();
        assert!(present[kept..].iter().all(|p| !p), "thread {t}: the writes kept are not a prefix");
        assert!(kept as u64 > *last, "thread {t}: sync write {last} lost ({kept} kept)");
        for i in 0..kept as u64 {
            assert_eq!(db.get(format!("u{t}-{i:04}")).unwrap(), Some(format!("w{i}").into_bytes()));
        }
    }
}

/// Held inside the merge function until the test lets it go.
static HOLD: AtomicBool = AtomicBool::new(false);
static HELD: AtomicBool = AtomicBool::new(false);
static RELEASE: AtomicBool = AtomicBool::new(false);

fn holding_append(_k: &[u8], existing: Option<&[u8]>, ops: &MergeOperands) -> Option<Vec<u8>> {
    if HOLD.swap(false, Ordering::SeqCst) {
        HELD.store(true, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(120);
        while !RELEASE.load(Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::yield_now();
        }
    }
    let mut v = existing.map(<[u8]>::to_vec).unwrap_or_default();
    for o in ops {
        if !v.is_empty() {
            v.push(b',');
        }
        v.extend_from_slice(o);
    }
    Some(v)
}

fn wal_bytes(dir: &std::path::Path) -> u64 {
    util::files_ending(dir, ".log").iter().map(|n| std::fs::metadata(dir.join(n)).unwrap().len()).sum()
}

#[test]
fn the_next_groups_wal_write_overlaps_a_groups_memtable_insert() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_enable_pipelined_write(true);
    o.set_merge_operator_associative("holding_append", holding_append);
    // A merge with one operand of its key on top of the memtable is merged while inserted.
    o.set_max_successive_merges(1);
    let db = Arc::new(DB::open(&o, dir.path()).unwrap());
    db.merge(b"m", b"a").unwrap();
    let seq0 = db.latest_sequence_number();
    let overlaps0 = db.pipelined_write_overlaps();
    HOLD.store(true, Ordering::SeqCst);
    // Group 1: its memtable insert calls the merge function, which holds it.
    let a = {
        let db = db.clone();
        std::thread::spawn(move || db.merge(b"m", b"b").unwrap())
    };
    util::wait_until(60, "the merge held in its memtable insert", || HELD.load(Ordering::SeqCst));
    let before = wal_bytes(dir.path());
    // Group 2: its WAL write happens while group 1 is still inserting.
    let b_done = Arc::new(AtomicU64::new(0));
    let b = {
        let (db, b_done) = (db.clone(), b_done.clone());
        std::thread::spawn(move || {
            db.put(b"p", b"v").unwrap();
            b_done.store(1, Ordering::SeqCst);
        })
    };
    util::wait_until(60, "the second group's WAL record in the file", || wal_bytes(dir.path()) > before);
    assert_eq!(db.pipelined_write_overlaps(), overlaps0 + 1, "the overlap was not counted");
    // Neither group is published or acknowledged while group 1 inserts.
    assert_eq!(db.latest_sequence_number(), seq0);
    assert_eq!(b_done.load(Ordering::SeqCst), 0, "the second write returned before the first finished");
    assert_eq!(db.get(b"p").unwrap(), None);
    RELEASE.store(true, Ordering::SeqCst);
    a.join().unwrap();
    b.join().unwrap();
    assert_eq!(db.latest_sequence_number(), seq0 + 2);
    assert_eq!(db.get(b"m").unwrap().as_deref(), Some(&b"a,b"[..]));
    assert_eq!(db.get(b"p").unwrap().as_deref(), Some(&b"v"[..]));
    drop(db);
    // The WAL holds both, in order: the reopened database has the same.
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(db.get(b"m").unwrap().as_deref(), Some(&b"a,b"[..]));
    assert_eq!(db.get(b"p").unwrap().as_deref(), Some(&b"v"[..]));
}

/// Groups without merges insert at once, earlier groups possibly still inserting, and are
/// published in WAL order: a writer reads its write as soon as it returns, and a reader's
/// snapshot never holds half of a batch (two keys written together), nor a thread's later
/// write without its earlier one.
#[test]
fn concurrent_groups_publish_whole_batches_in_wal_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_enable_pipelined_write(true);
    o.set_write_buffer_size(256 << 10);
    let db = Arc::new(DB::open(&o, dir.path()).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    const WRITES: u64 = 1500;
    let writers: Vec<_> = (0..THREADS)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..WRITES {
                    let mut b = WriteBatch::default();
                    b.put(format!("a{t}-{i:05}"), format!("{i}"));
                    b.put(format!("b{t}-{i:05}"), format!("{i}"));
                    db.write(b).unwrap();
                    // Read-your-own-writes: published before the write returned.
                    assert_eq!(db.get(format!("b{t}-{i:05}")).unwrap(), Some(format!("{i}").into_bytes()));
                }
            })
        })
        .collect();
    let reader = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut checks = 0u64;
            while !stop.load(Ordering::SeqCst) || checks == 0 {
                let snap = db.snapshot();
                let mut a = vec![0u64; THREADS as usize];
                let mut b = vec![0u64; THREADS as usize];
                for kv in snap.iterator(shale::IteratorMode::Start) {
                    let (k, _) = kv.unwrap();
                    let k = String::from_utf8(k.to_vec()).unwrap();
                    let (side, rest) = k.split_at(1);
                    let (t, i) = rest.split_once('-').unwrap();
                    let (t, i): (usize, u64) = (t.parse().unwrap(), i.parse().unwrap());
                    let seen = if side == "a" { &mut a } else { &mut b };
                    // Each thread's writes are visible as a prefix, in order.
                    assert_eq!(seen[t], i, "thread {t}: key {k} visible without an earlier write");
                    seen[t] = i + 1;
                }
                assert_eq!(a, b, "half of a batch visible");
                checks += 1;
            }
            checks
        })
    };
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::SeqCst);
    assert!(reader.join().unwrap() > 0);
    assert_eq!(db.latest_sequence_number(), THREADS * WRITES * 2);
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    for t in 0..THREADS {
        assert_eq!(
            db.get(format!("b{t}-{:05}", WRITES - 1)).unwrap(),
            Some(format!("{}", WRITES - 1).into_bytes())
        );
    }
}

#[test]
fn pipelined_write_is_refused_with_unordered_write_and_atomic_flush() {
    let dir = tempfile::tempdir().unwrap();
    for (what, msg) in [
        ("unordered", "unordered_write is incompatible with enable_pipelined_write"),
        ("atomic", "atomic_flush is incompatible with enable_pipelined_write"),
    ] {
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_enable_pipelined_write(true);
        if what == "unordered" {
            o.set_unordered_write(true);
        } else {
            o.set_atomic_flush(true);
        }
        let e = DB::open(&o, dir.path()).err().unwrap();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{what}");
        assert!(e.to_string().contains(msg), "{what}: {e}");
    }
}
