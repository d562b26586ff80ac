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
