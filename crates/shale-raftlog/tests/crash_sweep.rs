//! Crash sweep: power loss at every sync, directory sync, rename and remove of a workload
//! of synced writes, rotations, purges and rewrites; after recovery the state is exactly
//! the acknowledged writes (or those plus the write in flight).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod util;

use std::sync::Arc;

use shale_base::fs::OpKind;
use shale_raftlog::env::{FaultInjectionFs, MemFileSystem};
use util::{assert_acked_prefix, batch_of, open_on, small_config, snapshot, Model, Workload};

const STEPS: usize = 90;
const KINDS: [OpKind; 4] = [OpKind::Sync, OpKind::DirSync, OpKind::Rename, OpKind::Remove];

/// Runs the workload with a crash at the `n`-th operation of KINDS; false when the
/// workload finished first.
fn crash_run(seed: u64, n: u64) -> bool {
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    let cfg = small_config("/raft");
    let e = open_on(&cfg, &fs);
    fs.crash_at(&KINDS, n);
    let mut m = Model::default();
    let mut w = Workload::new(seed, 4);
    let mut pending = None;
    for step in 0..STEPS {
        let op = w.next(&m);
        if e.write(&mut batch_of(&op), true).is_err() {
            pending = Some(op);
            break;
        }
        m.apply(&op);
        if step % 9 == 8 {
            if let Ok(regions) = e.purge_expired_files() {
                for region in regions {
                    let op = util::Op::Compact { region, index: m.last(region).unwrap_or(0) };
                    if e.write(&mut batch_of(&op), true).is_err() {
                        pending = Some(op);
                        break;
                    }
                    m.apply(&op);
                }
            }
        }
        if fs.is_stopped() {
            break;
        }
    }
    if !fs.is_stopped() {
        return false;
    }
    drop(e);
    fs.crash(true);
    let ctx = format!("seed {seed} crash at op {n}");
    let e = Engine::open_with_file_system(cfg.clone(), fs.clone())
        .unwrap_or_else(|err| panic!("{ctx}: reopen: {err}"));
    let got = snapshot(&e);
    assert_acked_prefix(&got, &m, pending.as_ref(), &ctx);
    // The recovered engine takes writes and survives another restart.
    let mut m2 = got;
    for _ in 0..5 {
        let op = w.next(&m2);
        e.write(&mut batch_of(&op), true).unwrap();
        m2.apply(&op);
    }
    drop(e);
    let e = open_on(&cfg, &fs);
    assert_eq!(snapshot(&e), m2, "{ctx}: second reopen");
    true
}

use shale_raftlog::Engine;

#[test]
fn crash_at_every_sync_rename_and_remove() {
    for seed in [1u64, 2, 3] {
        let mut n = 1;
        while crash_run(seed, n) {
            n += 1;
        }
        assert!(n > 50, "seed {seed}: only {n} crash points");
    }
}
