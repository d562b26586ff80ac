//! The engine-wide stop (`src/halt.rs`): after a failed fsync of the log, every later write,
//! sync and purge returns that first error, even though the file system would now succeed,
//! in both queues; reads keep serving what was acknowledged; a reopen after a crash that
//! drops everything unsynced recovers every write acknowledged before the failure.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::Arc;

use shale_base::fs::{FaultMode, OpKind};
use shale_raftlog::env::{FaultInjectionFs, MemFileSystem};
use shale_raftlog::{Config, Engine, LogBatch, ReadableSize};

const EIO: i32 = 5;

type Fs = FaultInjectionFs;

fn open(fs: &Arc<Fs>) -> Engine<Fs> {
    let cfg = Config { dir: "/raft".into(), ..Config::default() };
    Engine::open_with_file_system(cfg, fs.clone()).unwrap()
}

fn entry(region: u64, i: u64) -> Vec<u8> {
    format!("region {region} entry {i} {:>64}", "").into_bytes()
}

fn write(e: &Engine<Fs>, region: u64, i: u64, sync: bool) -> shale_raftlog::Result<usize> {
    let mut b = LogBatch::default();
    b.add_raw_entries(region, i, &[entry(region, i)]).unwrap();
    e.write(&mut b, sync)
}

/// Every write path of `e` returns exactly `first` (text and OS code).
fn assert_stopped(e: &Engine<Fs>, first: &str) {
    let same = |r: shale_raftlog::Result<usize>, what: &str| {
        let err = r.err().unwrap_or_else(|| panic!("{what} succeeded on a stopped engine"));
        assert_eq!(err.to_string(), first, "{what}");
        assert_eq!(err.os_code(), Some(EIO), "{what}");
    };
    same(write(e, 1, 11, true), "a synced write");
    same(write(e, 1, 11, false), "an unsynced write");
    same(write(e, 9, 1, false), "a write to another region");
    same(e.write(&mut LogBatch::default(), true), "an empty synced write");
    same(e.sync().map(|_| 0), "sync");
    same(e.purge_expired_files().map(|_| 0), "purge");
}

#[test]
fn a_failed_fsync_stops_every_later_write_and_a_reopen_recovers_the_acknowledged_ones() {
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    let e = open(&fs);
    for i in 1..=10 {
        for region in [1, 2] {
            write(&e, region, i, true).unwrap();
        }
    }
    // The next fsync fails once; the file system would let every later one succeed.
    fs.fail_nth(OpKind::Sync, 1, FaultMode::Once, EIO);
    let first = write(&e, 1, 11, true).expect_err("the write whose fsync fails");
    assert_eq!(fs.faults_fired(), 1);
    assert_eq!(first.os_code(), Some(EIO));
    let first = first.to_string();
    assert!(first.starts_with("IO Error: "), "{first}");
    assert_stopped(&e, &first);
    // Reads go on, and never show the write whose fsync failed.
    assert_eq!(e.last_index(1), Some(10));
    assert_eq!(e.get_raw_entry(2, 10).unwrap(), Some(entry(2, 10)));

    drop(e);
    fs.crash(true);
    fs.clear_faults();
    let e = open(&fs);
    for region in [1, 2] {
        for i in 1..=10 {
            assert_eq!(
                e.get_raw_entry(region, i).unwrap(),
                Some(entry(region, i)),
                "region {region} entry {i}"
            );
        }
    }
    // Reopened, it takes writes again.
    let next = e.last_index(1).unwrap() + 1;
    write(&e, 1, next, true).unwrap();
    assert_eq!(e.get_raw_entry(1, next).unwrap(), Some(entry(1, next)));
}

#[test]
fn a_failed_fsync_of_the_rewrite_queue_stops_the_append_queue_too() {
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    // Small files and threshold: a purge rewrites the lagging regions into the rewrite queue.
    let cfg = Config {
        dir: "/raft".into(),
        target_file_size: ReadableSize(1024),
        purge_threshold: ReadableSize(4096),
        ..Config::default()
    };
    let e = Engine::open_with_file_system(cfg.clone(), fs.clone()).unwrap();
    for i in 1..=4 {
        for region in 1..=30 {
            write(&e, region, i, true).unwrap();
        }
    }
    fs.fail_matching(OpKind::Sync, ".rewrite", FaultMode::Once, EIO);
    let first = e.purge_expired_files().expect_err("the purge whose rewrite fsync fails");
    assert_eq!(fs.faults_fired(), 1);
    let first = first.to_string();
    assert!(first.contains(".rewrite"), "{first}");
    assert_stopped(&e, &first);
    assert_eq!(e.get_raw_entry(30, 4).unwrap(), Some(entry(30, 4)));

    drop(e);
    fs.crash(true);
    fs.clear_faults();
    let e = Engine::open_with_file_system(cfg, fs.clone()).unwrap();
    for region in 1..=30 {
        for i in 1..=4 {
            assert_eq!(
                e.get_raw_entry(region, i).unwrap(),
                Some(entry(region, i)),
                "region {region} entry {i}"
            );
        }
    }
}

#[test]
fn a_failed_append_or_file_creation_stops_the_engine_too() {
    for kind in [OpKind::Write, OpKind::Create] {
        let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
        // Small files: the fault meets a rotation (Create) within a few writes.
        let cfg = Config {
            dir: "/raft".into(),
            target_file_size: ReadableSize(1024),
            purge_threshold: ReadableSize(4096),
            ..Config::default()
        };
        let e = Engine::open_with_file_system(cfg.clone(), fs.clone()).unwrap();
        write(&e, 1, 1, true).unwrap();
        fs.fail_matching(kind, ".raftlog", FaultMode::Once, EIO);
        let mut acked = 1;
        let first = loop {
            match write(&e, 1, acked + 1, acked % 2 == 0) {
                Ok(_) => acked += 1,
                Err(err) => break err.to_string(),
            }
            assert!(acked < 1000, "{kind:?}: the fault never fired");
        };
        assert_eq!(fs.faults_fired(), 1, "{kind:?}");
        assert_stopped(&e, &first);
        // The unsynced ones reach the disk with the next synced one; the last may not.
        let synced = if acked % 2 == 1 { acked } else { acked - 1 };
        drop(e);
        fs.crash(true);
        fs.clear_faults();
        let e = Engine::open_with_file_system(cfg, fs.clone()).unwrap();
        for i in 1..=synced {
            assert_eq!(e.get_raw_entry(1, i).unwrap(), Some(entry(1, i)), "{kind:?}: entry {i}");
        }
    }
}
