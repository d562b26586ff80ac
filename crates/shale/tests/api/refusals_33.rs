//! Refusals and waits Shale made where RocksDB 11.8.1 does not (issue 33, docs/refusals.md):
//! - `rocksdb.compaction-pending` answers whether a compaction is due with automatic
//!   compactions off too (RocksDB's `HandleCompactionPending` asks the picker's
//!   `NeedsCompaction`, which does not look at `disable_auto_compactions`);
//! - a manual compaction that meets a level refit (`CompactOptions::set_change_level`) fails
//!   with Incomplete "Manual compaction paused" instead of waiting for it (RocksDB's refit
//!   runs between `DisableManualCompaction` and `EnableManualCompaction`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use shale::{ColumnFamilyDescriptor, CompactOptions, Options, DB};

use crate::util;

#[test]
fn compaction_pending_ignores_disable_auto_compactions() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_level_zero_file_num_compaction_trigger(2);
    let db = DB::open(&o, dir.path()).unwrap();
    let pending = || util::int_prop(&db, "rocksdb.compaction-pending");
    db.put("a", "1").unwrap();
    db.flush().unwrap();
    assert_eq!(pending(), 0, "one level-0 file, trigger 2");
    db.put("b", "2").unwrap();
    db.flush().unwrap();
    // Due, though nothing will run it while automatic compactions are off.
    assert_eq!(pending(), 1);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(util::int_prop(&db, "rocksdb.num-files-at-level0"), 2, "no compaction ran");
    // Turned on, the compaction runs and nothing is due any more.
    db.set_options(&[("disable_auto_compactions", "false")]).unwrap();
    util::wait_for_background(&db);
    assert_eq!(pending(), 0);
    assert_eq!(util::int_prop(&db, "rocksdb.num-files-at-level0"), 0);
}

/// Thread B compacts family "slow" (its compaction filter holds the first step until the
/// gate opens); meanwhile thread A compacts the default family with a level change, so its
/// refit disables manual compactions and waits for B's registered step. B's step in progress
/// ends, its next step (the bottommost level's, for its compaction filter) fails with
/// Incomplete "Manual compaction paused"; A's refit then moves its file to level 1. A
/// compaction started after the refit runs again.
#[test]
fn a_manual_compaction_that_meets_a_level_refit_is_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let started = Arc::new(AtomicBool::new(false));
    let gate = Arc::new(AtomicBool::new(false));
    let mut slow = Options::default();
    slow.set_disable_auto_compactions(true);
    let (s, g) = (started.clone(), gate.clone());
    slow.set_compaction_filter("hold", move |_level: u32, _k: &[u8], _v: &[u8]| {
        s.store(true, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(60);
        while !g.load(Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        shale::CompactionDecision::Keep
    });
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_disable_auto_compactions(true);
    let db = DB::open_cf_descriptors(
        &o,
        dir.path(),
        vec![ColumnFamilyDescriptor::new("default", o.clone()), ColumnFamilyDescriptor::new("slow", slow)],
    )
    .unwrap();
    let slow_cf = db.cf_handle("slow").unwrap();
    for i in 0..20 {
        db.put_cf(slow_cf, format!("k{i:02}"), "v").unwrap();
    }
    db.flush_cf(slow_cf).unwrap();
    db.put("a", "1").unwrap();
    db.flush().unwrap();
    let level_files = |level: usize| util::int_prop(&db, &format!("rocksdb.num-files-at-level{level}"));
    assert_eq!(level_files(0), 1);

    let mut plain = CompactOptions::default();
    plain.set_exclusive_manual_compaction(false);
    let mut refit = CompactOptions::default();
    refit.set_exclusive_manual_compaction(false);
    refit.set_change_level(true);
    refit.set_target_level(1);
    std::thread::scope(|scope| {
        let b = scope.spawn(|| db.try_compact_range_cf_opt(slow_cf, None::<&[u8]>, None::<&[u8]>, &plain));
        util::wait_until(60, "B's compaction filter to run", || started.load(Ordering::SeqCst));
        let a = scope.spawn(|| {
            let cf = db.cf_handle("default").unwrap();
            db.try_compact_range_cf_opt(cf, None::<&[u8]>, None::<&[u8]>, &refit)
        });
        // A's own step ends (its file leaves level 0); then it waits in the refit for B.
        util::wait_until(60, "A's compaction step", || level_files(0) == 0);
        std::thread::sleep(Duration::from_millis(200));
        gate.store(true, Ordering::SeqCst);
        let err = b.join().unwrap().unwrap_err();
        assert_eq!(err.kind(), shale::ErrorKind::Incomplete, "{err}");
        assert_eq!(err.to_string(), "Result incomplete: Manual compaction paused");
        a.join().unwrap().unwrap();
    });
    assert_eq!(level_files(1), 1, "A's refit moved its file to level 1");
    // Manual compactions are enabled again once the refit is over.
    db.try_compact_range_cf_opt(slow_cf, None::<&[u8]>, None::<&[u8]>, &plain).unwrap();
    for i in 0..20 {
        assert_eq!(db.get_cf(slow_cf, format!("k{i:02}")).unwrap().as_deref(), Some(&b"v"[..]));
    }
}

/// RocksDB parses any compression type for `wal_compression` and its SanitizeOptions turns
/// one without a streaming compressor into none ("wal_compression is disabled since only zstd
/// is supported"; db_bench 11.8.1 `--wal_compression=snappy` writes
/// `wal_compression=kNoCompression` to its OPTIONS file): Shale accepted only kNoCompression
/// and kZSTD.
#[test]
fn wal_compression_of_another_type_becomes_none() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    let mut o = o.get_options_from_string("wal_compression=kSnappyCompression").unwrap();
    let db = DB::open(&o, dir.path()).unwrap();
    db.put("k", "v").unwrap();
    assert!(util::latest_options_text(dir.path()).contains("  wal_compression=kNoCompression\n"));
    drop(db);
    let o2 = o.get_options_from_string("wal_compression=kZSTD").unwrap();
    let db = DB::open(&o2, dir.path()).unwrap();
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"v"[..]));
    assert!(util::latest_options_text(dir.path()).contains("  wal_compression=kZSTD\n"));
    let e = o.get_options_from_string("wal_compression=kNoSuchCompression").err().expect("refused");
    assert_eq!(e.kind(), shale::ErrorKind::InvalidArgument, "{e}");
}
