//! Write stalls as RocksDB's triggers say: level-0 files at `level0_slowdown_writes_trigger`
//! delay writes (held to `delayed_write_rate`), at `level0_stop_writes_trigger` stop them
//! until compaction brings level 0 down; `no_slowdown` writers get Incomplete instead of
//! waiting; the stall properties report each state.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use shale::{ErrorKind, Options, WriteOptions, DB};

fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    // Level 0 never reaches the compaction trigger by itself: the test decides when.
    o.set_level_zero_file_num_compaction_trigger(100);
    o.set_level_zero_slowdown_writes_trigger(2);
    o.set_level_zero_stop_writes_trigger(4);
    o.set_delayed_write_rate(64 << 10);
    o
}

fn l0_files(db: &DB) -> u64 {
    db.property_int_value("rocksdb.num-files-at-level0").unwrap().unwrap()
}

fn flush_one(db: &DB, i: u32) {
    db.put(format!("key{i:04}"), vec![b'v'; 100]).unwrap();
    db.flush().unwrap();
}

fn no_slowdown() -> WriteOptions {
    let mut w = WriteOptions::default();
    w.set_no_slowdown(true);
    w
}

#[test]
fn writes_delay_then_stop_then_resume_after_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(DB::open(&options(), dir.path()).unwrap());
    flush_one(&db, 0);
    assert_eq!(l0_files(&db), 1);
    assert_eq!(db.property_int_value("rocksdb.actual-delayed-write-rate").unwrap(), Some(0));
    db.put_opt(b"free", b"1", &no_slowdown()).expect("no stall below the slowdown trigger");

    // Two level-0 files: writes are delayed.
    flush_one(&db, 1);
    assert_eq!(l0_files(&db), 2);
    assert_eq!(db.property_int_value("rocksdb.actual-delayed-write-rate").unwrap(), Some(64 << 10));
    assert_eq!(db.property_int_value("rocksdb.is-write-stopped").unwrap(), Some(0));
    let e = db.put_opt(b"slow", b"1", &no_slowdown()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Incomplete, "{e}");
    // A delayed writer goes through, at about the delayed rate: 256 KiB at 64 KiB/s takes
    // seconds, not the milliseconds it takes unstalled.
    let start = Instant::now();
    for i in 0..64 {
        db.put(format!("delayed{i:03}"), vec![b'd'; 4096]).unwrap();
    }
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(1500), "delayed writes went too fast: {took:?}");

    // Four level-0 files: writes stop.
    flush_one(&db, 2);
    flush_one(&db, 3);
    assert!(l0_files(&db) >= 4);
    assert_eq!(db.property_int_value("rocksdb.is-write-stopped").unwrap(), Some(1));
    let e = db.put_opt(b"stopped", b"1", &no_slowdown()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Incomplete, "{e}");
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, done) = (db.clone(), done.clone());
        std::thread::spawn(move || {
            db.put(b"waited", b"1").unwrap();
            done.store(true, Ordering::Release);
        })
    };
    std::thread::sleep(Duration::from_millis(500));
    assert!(!done.load(Ordering::Acquire), "a write went through while writes were stopped");

    // Compaction brings level 0 down and the stopped writer completes.
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    writer.join().unwrap();
    assert!(done.load(Ordering::Acquire));
    assert_eq!(l0_files(&db), 0);
    assert_eq!(db.property_int_value("rocksdb.is-write-stopped").unwrap(), Some(0));
    db.put_opt(b"after", b"1", &no_slowdown()).expect("stall over");
    assert_eq!(db.get(b"waited").unwrap().as_deref(), Some(&b"1"[..]));
    let stats = db.property_value("rocksdb.stats").unwrap().unwrap();
    assert!(stats.contains("Cumulative stall"), "{stats}");
    // RocksDB's cfstats line counts the level-0 stops (each recalculation that found one).
    assert!(stats.contains(", l0-file-count-limit-stops: "), "{stats}");
    assert!(!stats.contains(", l0-file-count-limit-stops: 0,"), "stalls not counted: {stats}");
}

#[test]
fn too_many_memtables_stop_writes_until_flushed() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(64 << 10);
    o.set_max_write_buffer_number(2);
    let db = DB::open(&o, dir.path()).unwrap();
    // Many memtables' worth of writes: every one succeeds (stops end when flushes finish),
    // and the number of immutable memtables never exceeds the limit.
    let mut worst = 0;
    for i in 0..4000u32 {
        db.put(format!("key{i:05}"), vec![b'x'; 200]).unwrap();
        worst = worst.max(db.property_int_value("rocksdb.num-immutable-mem-table").unwrap().unwrap());
    }
    assert!(worst <= 2, "{worst} immutable memtables with max_write_buffer_number 2");
    for i in (0..4000u32).step_by(397) {
        assert_eq!(db.get(format!("key{i:05}")).unwrap().map(|v| v.len()), Some(200));
    }
}
