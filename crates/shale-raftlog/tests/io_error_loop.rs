//! I/O-error loop: the n-th write, sync, create, rename, remove, directory sync or read of
//! a workload (writes, rotations, purges, rewrites) fails once with EIO, for every n until
//! the workload no longer reaches it; the engine reports the error, and after a reopen
//! holds exactly the acknowledged writes (or those plus the one that failed).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod util;

use std::sync::Arc;

use shale_base::fs::{FaultMode, OpKind};
use shale_raftlog::env::{FaultInjectionFs, MemFileSystem};
use shale_raftlog::Engine;
use util::{assert_acked_prefix, batch_of, open_on, small_config, snapshot, Model, Workload};

const STEPS: usize = 80;
const EIO: i32 = 5;

fn error_run(kind: OpKind, n: u64) -> bool {
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    let cfg = small_config("/raft");
    let e = open_on(&cfg, &fs);
    fs.fail_nth(kind, n, FaultMode::Once, EIO);
    let mut m = Model::default();
    let mut w = Workload::new(n ^ 0xabc, 4);
    let mut pending = None;
    let mut failed = false;
    'work: for step in 0..STEPS {
        let op = w.next(&m);
        match e.write(&mut batch_of(&op), step % 3 == 0) {
            Ok(_) => m.apply(&op),
            Err(err) => {
                assert!(matches!(err, shale_raftlog::Error::Io(_)), "{kind:?} #{n}: {err}");
                pending = Some(op);
                failed = true;
                break;
            }
        }
        if step % 3 == 0 {
            // Reads of everything: a read fault shows up as an error, never as wrong data.
            if let Err(err) =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| util::check(&e, &m, "live")))
            {
                if fs.faults_fired() == 0 {
                    std::panic::resume_unwind(err);
                }
                failed = true;
                break 'work;
            }
        }
        if step % 9 == 8 {
            match e.purge_expired_files() {
                Ok(regions) => {
                    for region in regions {
                        let op = util::Op::Compact { region, index: m.last(region).unwrap_or(0) };
                        e.write(&mut batch_of(&op), false).unwrap();
                        m.apply(&op);
                    }
                }
                Err(_) => {
                    failed = true;
                    break;
                }
            }
        }
    }
    let fired = fs.faults_fired() > 0;
    assert!(!failed || fired, "{kind:?} #{n}: an error without a fault");
    drop(e);
    fs.clear_faults();
    let ctx = format!("{kind:?} fault #{n}");
    let e = Engine::open_with_file_system(cfg.clone(), fs.clone())
        .unwrap_or_else(|err| panic!("{ctx}: reopen: {err}"));
    assert_acked_prefix(&snapshot(&e), &m, pending.as_ref(), &ctx);
    drop(e);
    let e = open_on(&cfg, &fs);
    assert_acked_prefix(&snapshot(&e), &m, pending.as_ref(), &format!("{ctx}, second reopen"));
    fired
}

#[test]
fn every_io_operation_fails_once() {
    for kind in [
        OpKind::Write,
        OpKind::Sync,
        OpKind::Create,
        OpKind::Rename,
        OpKind::Remove,
        OpKind::DirSync,
        OpKind::Read,
    ] {
        let mut n = 1;
        while error_run(kind, n) {
            n += 1;
        }
        assert!(n > 1 || matches!(kind, OpKind::Rename), "{kind:?}: the workload never reached a fault");
    }
}
