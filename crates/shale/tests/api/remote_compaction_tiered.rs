//! Remote compaction with per-key placement (`preclude_last_level_data_seconds`): RocksDB
//! 11.8.1 sends such a compaction to the compaction service like any other
//! (`CompactionJob::ProcessKeyValueCompactionWithCompactionService`); its worker writes both
//! the last level's and the proximal level's outputs, marking the latter
//! `is_proximal_level_output`, and the primary installs those on the proximal level. Here
//! the worker is `open_and_compact` on the primary's directory (a secondary instance, as
//! ldb's `remote_compaction_worker`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::util;
use shale::{Options, DB};

fn levels(db: &DB) -> Vec<i32> {
    let mut l: Vec<i32> = db.live_files().unwrap().into_iter().map(|f| f.level).collect();
    l.sort();
    l.dedup();
    l
}

fn run(preclude: u32) -> (Vec<i32>, usize) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut o = Options::default()
        .get_options_from_string(format!(
            "stats_dump_period_sec=0;stats_persist_period_sec=0;preclude_last_level_data_seconds={preclude}"
        ))
        .unwrap();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, &dir).unwrap();
    let worker = Arc::new(util::LocalCompactionWorker::new(&dir, &tmp.path().join("out")));
    db.set_compaction_service(Some(worker.clone()));
    for round in 0..2 {
        for i in 0..100 {
            db.put(format!("k{i:03}"), format!("v{round}-{i}")).unwrap();
        }
        db.flush().unwrap();
    }
    db.try_compact_range_cf(&db.cf_handle("default").unwrap(), None::<&[u8]>, None::<&[u8]>).unwrap();
    for i in 0..100 {
        assert_eq!(db.get(format!("k{i:03}")).unwrap().unwrap(), format!("v1-{i}").into_bytes());
    }
    let got = levels(&db);
    drop(db);
    // The data stays where the worker put it after a reopen.
    let db = DB::open(&o, &dir).unwrap();
    assert_eq!(levels(&db), got);
    assert_eq!(db.get("k042").unwrap().unwrap(), b"v1-42".to_vec());
    (got, worker.calls.load(Ordering::SeqCst))
}

#[test]
fn a_compaction_with_a_proximal_level_runs_on_the_service_and_keeps_recent_keys_above_the_last_level() {
    // Every key was written just now, within the day: the worker writes them all to the
    // proximal level (5), none to the last (6), as the compaction run here would.
    assert_eq!(run(86_400), (vec![5], 1));
    // Without tiering the same service writes the last level.
    assert_eq!(run(0), (vec![6], 1));
}
