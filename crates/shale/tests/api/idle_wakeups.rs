//! An idle database's background threads (flush, compaction, bottom, WAL precreation, stats
//! dump and persist) sleep until told or until one of RocksDB's periodic tasks is due: no
//! thread wakes on a poll. A period of a periodic task set by `set_options` wakes its thread
//! at that period, and close still wakes every thread at once.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::time::{Duration, Instant};

use shale::{Options, DB};

#[test]
fn an_idle_database_does_not_wake() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.enable_statistics();
    o.set_max_background_jobs(4);
    let db = DB::open(&o, dir.path()).unwrap();
    for i in 0..100 {
        db.put(format!("k{i:03}"), "v").unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    // Let the jobs and their wakeups settle.
    std::thread::sleep(Duration::from_millis(300));
    let before = db.background_wakeups();
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(db.background_wakeups(), before, "idle threads woke");

    // A stats dump every second wakes its thread about once a second, and the compaction
    // thread that runs the periodic compaction trigger (whose period follows the stats
    // periods, `trigger_period`) as often: no more.
    db.set_db_options(&[("stats_dump_period_sec", "1")]).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let before = db.background_wakeups();
    std::thread::sleep(Duration::from_millis(2100));
    let woke = db.background_wakeups() - before;
    assert!((2..=6).contains(&woke), "{woke} wakeups for a 1 s dump period over 2 s");

    // Work still wakes the threads: a flush, a compaction, and the close.
    db.put("x", "y").unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let t = Instant::now();
    drop(db);
    assert!(t.elapsed() < Duration::from_secs(1), "close waited {:?}", t.elapsed());
}
