//! I/O error loop: the workload of `common` runs with the N-th file operation of one kind
//! failing (EIO once, or ENOSPC from then on), for N = 1, 2, ... until a run no longer
//! reaches the N-th operation. Every failure must surface as a typed error — no panic, no
//! hang (each run is bounded by a timeout) — and after the fault is cleared a reopen must
//! hold every acknowledged operation and nothing that was never written: the state after
//! exactly the acknowledged operations, or after those plus the one that failed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use common::*;
use shale::fs::{FaultInjectionFs, FaultMode, OpKind};
use shale::{ErrorKind, WriteOptions, DB};

/// Runs in which a write after `resume` was acknowledged (reported, not required).
static RESUMED: AtomicU64 = AtomicU64::new(0);

/// Runs the workload until the first error; returns (operations acknowledged, the error,
/// the database if it opened).
fn run(fs: &Arc<FaultInjectionFs>, ops: &[Op], rolling: bool) -> (usize, Option<shale::Error>, Option<DB>) {
    let mut db = match open_all_with(fs, opts(fs, rolling)) {
        Ok(db) => db,
        Err(e) => return (0, Some(e), None),
    };
    for (i, op) in ops.iter().enumerate() {
        if let Err(e) = apply(&mut db, op) {
            return (i, Some(e), Some(db));
        }
    }
    (ops.len(), None, Some(db))
}

/// The options of a run. `rolling`: memtables of 1 KiB switched by the writes themselves
/// (a WAL roll each, without a sync) while flushes wait for four of them, so that several
/// WALs never synced are alive when a sync write or a flush syncs them (`db/wal_sync.rs`).
fn opts(fs: &Arc<FaultInjectionFs>, rolling: bool) -> shale::Options {
    let mut o = options(fs);
    if rolling {
        o.set_write_buffer_size(1 << 10);
        o.set_min_write_buffer_number_to_merge(4);
        o.set_max_write_buffer_number(8);
    }
    o
}

/// After a one-off fault: `resume`, then a synced write. It may fail (typed), but if it is
/// acknowledged it must survive the reopen. Returns whether it was acknowledged.
fn write_after_resume(db: &DB, ctx: &str) -> bool {
    let _ = db.resume();
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    match db.put_opt(b"resumed", b"yes", &wo) {
        Ok(()) => true,
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::IOError, "{ctx}: write after resume failed with {e}");
            false
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn one_run(
    ops: &[Op],
    states: &[State],
    kind: OpKind,
    n: u64,
    mode: FaultMode,
    code: i32,
    ctx: &str,
    rolling: bool,
) -> bool {
    let fs = new_fault_fs();
    fs.fail_nth(kind, n, mode, code);
    let (acked, err, db) = run(&fs, ops, rolling);
    let fired = fs.faults_fired() > 0;
    if let Some(e) = &err {
        assert!(fired, "{ctx}: error without an injected fault: {e}");
        assert_eq!(e.kind(), ErrorKind::IOError, "{ctx}: an injected IO error surfaced as {e}");
        assert!(e.os_code().is_some(), "{ctx}: the OS code was lost on the way: {e}");
    }
    let resumed = match (&db, &err, mode) {
        (Some(db), Some(_), FaultMode::Once) => write_after_resume(db, ctx),
        _ => false,
    };
    drop(db);
    fs.clear_faults();
    let db = open_all_with(&fs, opts(&fs, rolling))
        .unwrap_or_else(|e| panic!("{ctx}: reopen after clearing the fault: {e}"));
    let mut got = read_state(&db).unwrap_or_else(|e| panic!("{ctx}: read after reopen: {e}"));
    let r = got.get_mut("default").and_then(|m| m.remove(&b"resumed"[..]));
    if resumed {
        assert_eq!(r.as_deref(), Some(&b"yes"[..]), "{ctx}: write acknowledged after resume was lost");
        RESUMED.fetch_add(1, Ordering::Relaxed);
    }
    let hi = if err.is_some() { acked + 1 } else { acked };
    if let Err(msg) = match_prefix(&got, states, acked, hi) {
        panic!("{ctx}: {msg}");
    }
    fired
}

fn sweep_kind(kind: OpKind, max_runs: u64) {
    sweep_kind_with(kind, max_runs, false)
}

fn sweep_kind_with(kind: OpKind, max_runs: u64, rolling: bool) {
    let ops = Arc::new(workload(11, 70));
    let states = Arc::new(model_states(&ops));
    let clean = new_fault_fs();
    let (done, err, db) = run(&clean, &ops, rolling);
    drop(db);
    assert_eq!((done, err.map(|e| e.to_string())), (ops.len(), None));
    let total = clean.count(kind) + 20; // opening again adds a few
    let stride = total.div_ceil(max_runs).max(1);
    let mut failures = Vec::new();
    let mut runs = 0;
    for (mode, code) in [(FaultMode::Once, libc::EIO), (FaultMode::Persistent, libc::ENOSPC)] {
        let mut n = 1;
        loop {
            let ctx = format!("{kind:?} fault #{n} ({mode:?}, code {code})");
            let (ops, states, c) = (ops.clone(), states.clone(), ctx.clone());
            let r = std::panic::catch_unwind(|| {
                with_timeout(120, &ctx, move || one_run(&ops, &states, kind, n, mode, code, &c, rolling))
            });
            runs += 1;
            match r {
                Ok(true) => {}
                Ok(false) => break, // the workload no longer reaches the N-th operation
                Err(_) => failures.push(ctx),
            }
            n += stride;
            if n > total * 2 {
                break;
            }
        }
    }
    eprintln!(
        "{kind:?}: {runs} runs (stride {stride}, {} operations in a clean run); writes acknowledged \
         after resume so far: {}",
        clean.count(kind),
        RESUMED.load(Ordering::Relaxed)
    );
    assert!(failures.is_empty(), "{} runs failed: {failures:#?}", failures.len());
}

#[test]
fn write_errors() {
    sweep_kind(OpKind::Write, 60);
}

#[test]
fn sync_errors() {
    sweep_kind(OpKind::Sync, 80);
}

#[test]
fn dir_sync_errors() {
    sweep_kind(OpKind::DirSync, 80);
}

#[test]
fn rename_and_create_errors() {
    sweep_kind(OpKind::Rename, 40);
    sweep_kind(OpKind::Create, 60);
}

#[test]
fn read_and_remove_errors() {
    sweep_kind(OpKind::Read, 60);
    sweep_kind(OpKind::Remove, 40);
}

#[test]
fn sync_write_and_create_errors_with_wal_rolls() {
    sweep_kind_with(OpKind::Sync, 80, true);
    sweep_kind_with(OpKind::DirSync, 60, true);
    sweep_kind_with(OpKind::Write, 60, true);
    sweep_kind_with(OpKind::Create, 40, true);
}
