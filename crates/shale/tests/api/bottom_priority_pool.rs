//! The BOTTOM thread pool (`Env::set_bottom_priority_background_threads`) acts as RocksDB
//! 11.8.1's (issue 33): an automatic compaction that rewrites tables into the family's last
//! level is handed from the LOW pool to a BOTTOM thread (`DBImpl::BackgroundCompaction`'s
//! forward to `Env::Priority::BOTTOM`); other compactions, and all of them without BOTTOM
//! threads, run on the LOW pool. A compaction filter records the threads it runs on.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::{Arc, Mutex};

use shale::{CompactionDecision, Env, Options, WaitForCompactOptions, DB};

/// Writes overlapping level-0 files until a compaction has run, and returns the names of the
/// threads the compaction filter ran on.
fn compaction_threads(num_levels: i32, bottom_threads: i32) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_num_levels(num_levels);
    o.set_level_compaction_dynamic_level_bytes(false);
    o.set_level_zero_file_num_compaction_trigger(2);
    let mut env = Env::new().unwrap();
    env.set_bottom_priority_background_threads(bottom_threads);
    o.set_env(&env);
    let s = seen.clone();
    o.set_compaction_filter("thread_names", move |_level: u32, _k: &[u8], _v: &[u8]| {
        let name = std::thread::current().name().unwrap_or("").to_string();
        let mut s = s.lock().unwrap();
        if !s.contains(&name) {
            s.push(name);
        }
        CompactionDecision::Keep
    });
    let db = DB::open(&o, dir.path()).unwrap();
    for round in 0..2 {
        for i in 0..100 {
            db.put(format!("key{i:04}"), format!("value{round}")).unwrap();
        }
        db.flush().unwrap();
    }
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    assert_eq!(db.get("key0042").unwrap().as_deref(), Some(&b"value1"[..]));
    let files: Vec<i32> = db.live_files().unwrap().iter().map(|f| f.level).collect();
    assert_eq!(files, vec![1], "one table in level 1 after the compaction: {files:?}");
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.is_empty(), "the compaction filter ran");
    seen
}

#[test]
fn last_level_compactions_run_on_bottom_threads() {
    // Level 1 is the last level: the compaction goes to the BOTTOM pool.
    let threads = compaction_threads(2, 1);
    assert!(threads.iter().all(|t| t.starts_with("shale:bottom")), "{threads:?}");
    // Level 1 is not the last level: it stays on the LOW pool.
    let threads = compaction_threads(4, 1);
    assert!(threads.iter().all(|t| t.starts_with("shale:compact")), "{threads:?}");
    // No BOTTOM threads: the LOW pool runs it.
    let threads = compaction_threads(2, 0);
    assert!(threads.iter().all(|t| t.starts_with("shale:compact")), "{threads:?}");
}

/// `compaction_options_universal.reduce_file_locking` as RocksDB 11.8.1's: family "x" keeps
/// the one BOTTOM thread busy (its compaction into the last level is held in a compaction
/// filter), so family "y"'s compaction into the last level waits in the BOTTOM queue. With
/// the option (the default) the waiting compaction holds only its oldest level-0 file
/// (RocksDB's intended compaction), and the next flush lets a LOW thread merge the two
/// newer files into level 0; without it, it holds both of its files and nothing can be
/// picked. Returns y's level-0 file count a while after its third flush.
fn y_level0_while_bottom_is_busy(reduce_file_locking: bool) -> u64 {
    use shale::{ColumnFamilyDescriptor, DBCompactionStyle};
    use std::sync::Condvar;
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    // (entered, open), held for at most 30 s so that a failing test does not hang.
    let gate: Arc<(Mutex<(bool, bool)>, Condvar)> = Arc::default();
    let universal = || {
        let mut o = Options::default();
        o.set_compaction_style(DBCompactionStyle::Universal);
        o.set_level_zero_file_num_compaction_trigger(2);
        o
    };
    let mut x = universal();
    let g = gate.clone();
    x.set_compaction_filter("hold_bottom", move |_level: u32, _k: &[u8], _v: &[u8]| {
        if std::thread::current().name().is_some_and(|n| n.starts_with("shale:bottom")) {
            let mut s = g.0.lock().unwrap();
            s.0 = true;
            let deadline = Instant::now() + Duration::from_secs(30);
            while !s.1 && Instant::now() < deadline {
                s = g.1.wait_timeout(s, Duration::from_millis(50)).unwrap().0;
            }
        }
        CompactionDecision::Keep
    });
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    let mut env = Env::new().unwrap();
    env.set_bottom_priority_background_threads(1);
    o.set_env(&env);
    let db = DB::open_cf_descriptors(
        &o,
        dir.path(),
        vec![ColumnFamilyDescriptor::new("x", x), ColumnFamilyDescriptor::new("y", universal())],
    )
    .unwrap();
    let (cx, cy) = (db.cf_handle("x").unwrap(), db.cf_handle("y").unwrap());
    if !reduce_file_locking {
        db.set_options_cf(cy, &[("compaction_options_universal", "{reduce_file_locking=false;}")]).unwrap();
    }
    let table = |cf, prefix: &str, round: usize| {
        for i in 0..100 {
            db.put_cf(cf, format!("{prefix}{round}-{i:03}"), "v").unwrap();
        }
        db.flush_cf(cf).unwrap();
    };
    table(cx, "x", 0);
    table(cx, "x", 1);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !gate.0.lock().unwrap().0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(gate.0.lock().unwrap().0, "x's compaction runs on the BOTTOM thread");
    let l0 = || db.property_int_value_cf(cy, "rocksdb.num-files-at-level0").unwrap().unwrap();
    // y's first compaction (both files into the last level) is handed over and waits.
    table(cy, "y", 0);
    table(cy, "y", 1);
    let running = || db.property_int_value("rocksdb.num-running-compactions").unwrap().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while running() != 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(running(), 2, "y's compaction was picked and handed over");
    table(cy, "y", 2);
    let deadline = Instant::now() + Duration::from_secs(3);
    while l0() != 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let seen = l0();
    gate.0.lock().unwrap().1 = true;
    gate.1.notify_all();
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    for round in 0..3 {
        assert_eq!(db.get_cf(cy, format!("y{round}-042")).unwrap().as_deref(), Some(&b"v"[..]));
    }
    assert_eq!(db.get_cf(cx, "x1-042").unwrap().as_deref(), Some(&b"v"[..]));
    seen
}

#[test]
fn reduce_file_locking_frees_a_waiting_bottom_compactions_newer_files() {
    assert_eq!(y_level0_while_bottom_is_busy(true), 2, "the two newer files merged into one");
    assert_eq!(y_level0_while_bottom_is_busy(false), 3, "everything held: nothing picked");
}
