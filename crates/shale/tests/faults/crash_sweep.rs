//! Crash-point sweep: a deterministic workload runs on a fault-injecting in-memory file
//! system that "loses power" at its K-th sync, directory sync or rename, for every K (and
//! both with and without losing unsynced file data). After each crash the database must
//! open, and its whole state (every family, every key) must equal the model's state after
//! some prefix of the operations: no acknowledged durable operation lost (sync writes,
//! flushes, compactions, family creation and drop), nothing that was never written, and
//! batches all or nothing. One sweep runs with blob files (BlobDB): blob files written at
//! flush and compaction, relocated by garbage collection and deleted.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::common;

use std::sync::Arc;

use common::*;
use shale::fs::{FaultInjectionFs, OpKind};
use shale::{ErrorKind, WriteOptions};

const KINDS: [OpKind; 3] = [OpKind::Sync, OpKind::DirSync, OpKind::Rename];

/// Runs `ops` until the first error. Returns (operations acknowledged as durable: the
/// recovered state must be at least this prefix, operations attempted: at most this one).
fn run_until_failure(fs: &Arc<FaultInjectionFs>, ops: &[Op], cfg: Config) -> (usize, usize) {
    let mut db = match open_all_with(fs, cfg.options(fs)) {
        Ok(db) => db,
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::IOError, "open failed with a non-IO error: {e}");
            return (0, 0);
        }
    };
    let mut durable = 0;
    for (i, op) in ops.iter().enumerate() {
        match apply_with(&mut db, op, &cfg.cf_options()) {
            Ok(()) if op.durable() => durable = i + 1,
            Ok(()) => {}
            Err(e) => {
                assert!(fs.is_stopped(), "op {i} {op:?} failed before the crash point: {e}");
                return (durable, i + 1);
            }
        }
    }
    (durable, ops.len())
}

#[derive(Clone, Copy)]
struct Config {
    /// A small MANIFEST size limit, so that new MANIFESTs are started during the workload.
    small_manifest: bool,
    /// Also crash during the recovery itself, at each of its first few crash points.
    recovery_crashes: u64,
    /// Column families the workload starts by creating (default included).
    families: usize,
    /// Background jobs, with automatic flushes (small memtables) and compactions on: the
    /// crash points then fall in background work too, at moments that vary from run to run.
    background_jobs: Option<i32>,
    /// Integrated BlobDB: values of 16 bytes and up go to small blob files at flush and
    /// compaction, and compactions relocate every blob (garbage collection, age cutoff 1.0).
    blobs: bool,
    /// Memtables of 1 KiB switched by the writes themselves (a WAL roll each, without a
    /// sync) while flushes wait for four of them: several WALs alive and never synced when
    /// a sync write comes, which must sync them all first (`db/wal_sync.rs`).
    wal_rolls: bool,
}

const PLAIN: Config = Config {
    small_manifest: false,
    recovery_crashes: 0,
    families: 1,
    background_jobs: None,
    blobs: false,
    wal_rolls: false,
};

impl Config {
    fn options(self, fs: &Arc<FaultInjectionFs>) -> shale::Options {
        let mut o = options(fs);
        if self.small_manifest {
            o.set_max_manifest_file_size(1024);
        }
        if let Some(jobs) = self.background_jobs {
            self.busy(&mut o);
            o.set_max_background_jobs(jobs);
        }
        if self.wal_rolls {
            self.rolling(&mut o);
        }
        if self.blobs {
            o.set_enable_blob_files(true);
            o.set_min_blob_size(16);
            o.set_blob_file_size(512);
            o.set_enable_blob_gc(true);
            o.set_blob_gc_age_cutoff(1.0);
        }
        o
    }

    fn cf_options(self) -> shale::Options {
        let mut o = shale::Options::default();
        o.set_disable_auto_compactions(true);
        o.set_write_buffer_size(4 << 20);
        o.set_compression_type(shale::DBCompressionType::None);
        if self.background_jobs.is_some() {
            self.busy(&mut o);
        }
        if self.wal_rolls {
            self.rolling(&mut o);
        }
        o
    }

    fn rolling(self, o: &mut shale::Options) {
        o.set_write_buffer_size(1 << 10);
        o.set_min_write_buffer_number_to_merge(4);
        o.set_max_write_buffer_number(8);
    }

    fn busy(self, o: &mut shale::Options) {
        o.set_disable_auto_compactions(false);
        o.set_write_buffer_size(2 << 10);
        o.set_level_zero_file_num_compaction_trigger(2);
        o.set_max_bytes_for_level_base(8 << 10);
        o.set_target_file_size_base(4 << 10);
    }
}

/// Reopens after a crash and checks the state; then checks the database still takes writes.
fn verify_after_crash(
    fs: &Arc<FaultInjectionFs>,
    states: &[State],
    lo: usize,
    hi: usize,
    ctx: &str,
    cfg: Config,
) {
    let db = open_all_with(fs, cfg.options(fs)).unwrap_or_else(|e| panic!("{ctx}: reopen failed: {e}"));
    let got = read_state(&db).unwrap_or_else(|e| panic!("{ctx}: read failed: {e}"));
    if let Err(msg) = match_prefix(&got, states, lo, hi) {
        panic!("{ctx}: {msg}");
    }
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    db.put_opt(b"after-crash", b"1", &wo).unwrap_or_else(|e| panic!("{ctx}: write after recovery: {e}"));
    drop(db);
    // A second reopen (reading the MANIFEST the first one wrote) sees the same state.
    let db =
        open_all_with(fs, cfg.options(fs)).unwrap_or_else(|e| panic!("{ctx}: second reopen failed: {e}"));
    assert_eq!(db.get(b"after-crash").unwrap().as_deref(), Some(&b"1"[..]), "{ctx}");
    let mut again = read_state(&db).unwrap_or_else(|e| panic!("{ctx}: read failed: {e}"));
    again.get_mut("default").map(|m| m.remove(&b"after-crash"[..]));
    assert!(again == got, "{ctx}: state changed across a clean reopen");
}

fn sweep(seed: u64, len: usize, max_points: u64, cfg: Config) {
    let ops = workload_with_families(seed, len, cfg.families);
    let states = model_states(&ops);

    // A clean run: how many crash points there are, and a sanity check of the model.
    let fs = new_fault_fs();
    let (durable, attempted) = run_until_failure(&fs, &ops, cfg);
    assert_eq!((durable <= attempted, attempted), (true, ops.len()));
    let points = fs.count_of(&KINDS);
    {
        let db = open_all_with(&fs, cfg.options(&fs)).unwrap();
        assert_eq!(read_state(&db).unwrap(), states[ops.len()], "clean run differs from the model");
    }
    let stride = points.div_ceil(max_points).max(1);
    eprintln!("seed {seed}: {} ops, {points} crash points, stride {stride}", ops.len());

    let ops = Arc::new(ops);
    let states = Arc::new(states);
    let mut failures = Vec::new();
    let mut k = 1;
    while k <= points {
        for drop_unsynced in [true, false] {
            let ctx = format!("seed {seed}, crash at point {k}/{points}, drop_unsynced {drop_unsynced}");
            let (ops, states, c) = (ops.clone(), states.clone(), ctx.clone());
            let r = std::panic::catch_unwind(|| {
                with_timeout(60, &ctx, move || {
                    let fs = new_fault_fs();
                    fs.crash_at(&KINDS, k);
                    let (lo, hi) = run_until_failure(&fs, &ops, cfg);
                    fs.crash(drop_unsynced);
                    fs.clear_faults();
                    // Crashes during recovery: recovery must be repeatable.
                    for j in 1..=cfg.recovery_crashes {
                        fs.crash_at(&KINDS, j);
                        let opened = open_all_with(&fs, cfg.options(&fs));
                        let reached = fs.is_stopped();
                        drop(opened);
                        fs.crash(drop_unsynced);
                        fs.clear_faults();
                        if !reached {
                            break;
                        }
                    }
                    verify_after_crash(&fs, &states, lo, hi, &c, cfg);
                })
            });
            if r.is_err() {
                failures.push(ctx);
            }
        }
        k += stride;
    }
    assert!(failures.is_empty(), "{} crash runs failed: {failures:#?}", failures.len());
}

#[test]
fn crash_at_every_sync_point() {
    sweep(7, 90, 400, PLAIN);
}

#[test]
fn crash_sweep_with_manifest_rolls_and_crashes_during_recovery() {
    sweep(20260101, 60, 200, Config { small_manifest: true, recovery_crashes: 6, ..PLAIN });
}

#[test]
fn crash_sweep_with_blob_files() {
    sweep(4242, 90, 300, Config { blobs: true, recovery_crashes: 2, ..PLAIN });
}

#[test]
fn crash_sweep_with_20_families_and_4_background_jobs() {
    sweep(99, 120, 120, Config { families: 20, background_jobs: Some(4), ..PLAIN });
}

#[test]
fn crash_sweep_with_wal_rolls_before_sync_writes() {
    sweep(31337, 90, 300, Config { wal_rolls: true, recovery_crashes: 2, ..PLAIN });
}
