//! Group commit with a failing sync: concurrent synced writers, the n-th sync fails. Every
//! writer returns (none waits forever for a leader that stopped), every write after the
//! failure fails, and after a crash and reopen every acknowledged write is there.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::Arc;

use shale_base::fs::{FaultMode, OpKind};
use shale_raftlog::env::{FaultInjectionFs, MemFileSystem};
use shale_raftlog::{Config, Engine, LogBatch};

const THREADS: u64 = 6;
const WRITES: u64 = 60;
const EIO: i32 = 5;

fn run(n: u64) {
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    let cfg = Config { dir: "/raft".into(), ..Config::default() };
    let e = Arc::new(Engine::open_with_file_system(cfg.clone(), fs.clone()).unwrap());
    fs.fail_nth(OpKind::Sync, n, FaultMode::Once, EIO);
    let hs: Vec<_> = (0..THREADS)
        .map(|t| {
            let e = e.clone();
            std::thread::spawn(move || {
                // The writes acknowledged, in order; after the first error every write fails.
                let mut acked = 0u64;
                let mut failed = false;
                for i in 0..WRITES {
                    let mut b = LogBatch::default();
                    b.add_raw_entries(t + 1, i + 1, &[format!("t{t} e{i}").into_bytes()]).unwrap();
                    match e.write(&mut b, true) {
                        Ok(_) => {
                            assert!(!failed, "sync #{n}: thread {t} write {i} acknowledged after an error");
                            acked = i + 1;
                        }
                        Err(_) => failed = true,
                    }
                }
                acked
            })
        })
        .collect();
    let acked: Vec<u64> = hs.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(fs.faults_fired() > 0, "sync #{n} was not reached");
    drop(e);
    fs.crash(true);
    fs.clear_faults();
    let e = Engine::open_with_file_system(cfg, fs.clone()).unwrap();
    for (t, &acked) in acked.iter().enumerate() {
        let region = t as u64 + 1;
        // Every acknowledged write is there (and possibly the ones that failed after it).
        let last = e.last_index(region).unwrap_or(0);
        assert!(last >= acked, "sync #{n}: region {region} has {last} entries, {acked} acknowledged");
        for i in 1..=acked {
            assert_eq!(e.get_raw_entry(region, i).unwrap(), Some(format!("t{t} e{}", i - 1).into_bytes()));
        }
    }
}

#[test]
fn a_failed_group_sync_wakes_every_writer_and_loses_no_acknowledged_write() {
    for n in [1, 3, 10, 25] {
        run(n);
    }
}
