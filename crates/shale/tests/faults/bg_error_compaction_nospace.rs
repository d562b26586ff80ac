//! No space during compaction is a soft background error (RocksDB's ErrorHandler): writes
//! keep succeeding while every compaction attempt fails; once space is back, the
//! compaction thread's own retry completes the compaction, the error clears, and the data
//! (read live and after a reopen) is exactly what was acknowledged.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::sync::Arc;
use std::time::{Duration, Instant};

use shale::fs::{FaultInjectionFs, FaultMode, MemFileSystem, OpKind};
use shale::{DBCompressionType, Options, DB};
use util::{check_model, int_prop, wait_until, Model};

fn options(fs: &Arc<FaultInjectionFs>, auto_compactions: bool) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_file_system(fs.clone());
    o.set_compression_type(DBCompressionType::None);
    o.set_level_zero_file_num_compaction_trigger(4);
    o.set_disable_auto_compactions(!auto_compactions);
    o
}

#[test]
fn compaction_no_space_is_soft_and_heals_itself() {
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    let mut model = Model::new();
    // Four level-0 tables, made while automatic compaction is off.
    {
        let db = DB::open(&options(&fs, false), "/db").unwrap();
        for t in 0..4 {
            for i in 0..200 {
                let (k, v) = (format!("k{:04}", i * 4 + t), format!("v{t}-{i}"));
                db.put(&k, &v).unwrap();
                model.insert(k.into_bytes(), v.into_bytes());
            }
            db.flush().unwrap();
        }
        assert_eq!(int_prop(&db, "rocksdb.num-files-at-level0"), 4);
    }
    // Every table write fails from now on; the reopened database wants to compact at once.
    fs.fail_matching(OpKind::Write, ".sst", FaultMode::Persistent, libc::ENOSPC);
    let db = DB::open(&options(&fs, true), "/db").unwrap();
    wait_until(60, "a failed compaction", || int_prop(&db, "rocksdb.background-errors") >= 1);
    assert_eq!(int_prop(&db, "rocksdb.shale.background-error-severity"), 1, "soft error");
    // Writes go on (the WAL is not a table) while compactions keep failing: at least 100,
    // and on until the compaction thread has retried (its pause is a second; a loaded
    // machine may take longer, so the writes wait for the retry, not for a fixed time).
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut n = 0;
    while n < 100 || fs.faults_fired() < 2 || int_prop(&db, "rocksdb.background-errors") < 2 {
        assert!(
            Instant::now() < deadline,
            "compaction was not retried in 60 s: {} failed writes, {} background errors",
            fs.faults_fired(),
            int_prop(&db, "rocksdb.background-errors")
        );
        let (k, v) = (format!("w{n:05}"), format!("during-{n}"));
        db.put(&k, &v).unwrap_or_else(|e| panic!("write {n} during the soft error: {e}"));
        model.insert(k.into_bytes(), v.into_bytes());
        n += 1;
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(int_prop(&db, "rocksdb.num-files-at-level0"), 4, "nothing was compacted");
    assert_eq!(int_prop(&db, "rocksdb.is-write-stopped"), 0);
    check_model(&db, &model, "during the soft error");
    // Space is back: the compaction thread's next retry succeeds on its own.
    fs.clear_faults();
    wait_until(60, "the compaction to complete", || int_prop(&db, "rocksdb.num-files-at-level0") == 0);
    wait_until(60, "the soft error to clear", || {
        int_prop(&db, "rocksdb.shale.background-error-severity") == 0
    });
    // Level 0 went to the base level (the last level, with dynamic level bytes).
    let below: u64 = (1..7).map(|l| int_prop(&db, &format!("rocksdb.num-files-at-level{l}"))).sum();
    assert!(below >= 1);
    db.put("after", "1").unwrap();
    model.insert(b"after".to_vec(), b"1".to_vec());
    check_model(&db, &model, "after the compaction");
    drop(db);
    let db = DB::open(&options(&fs, true), "/db").unwrap();
    check_model(&db, &model, "after reopening");
}
