//! Lazy WAL sync (RocksDB's): a memtable switch closes the WAL without syncing it; a later
//! sync write, `flush_wal(true)` or a flush with more than one family syncs every older WAL
//! still alive first, and the directory once per new WAL. Syncs are counted on the
//! fault-injecting file system; a simulated power loss then shows what they kept.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::common;

use std::sync::Arc;

use common::*;
use shale::fs::{FaultInjectionFs, FileSystem, OpKind};
use shale::{WriteOptions, DB};

/// Memtables of 64 KiB, none flushed before ten are full: each 70 KiB write fills one and
/// the next write switches it (a WAL roll) while every WAL stays alive.
fn rolling_options(fs: &Arc<FaultInjectionFs>) -> shale::Options {
    let mut o = options(fs);
    o.set_write_buffer_size(64 << 10);
    o.set_min_write_buffer_number_to_merge(10);
    o.set_max_write_buffer_number(16);
    o
}

fn wal_count(fs: &Arc<FaultInjectionFs>) -> usize {
    fs.children(std::path::Path::new(DB_PATH)).unwrap().iter().filter(|n| n.ends_with(".log")).count()
}

fn big(i: u32) -> Vec<u8> {
    vec![b'a' + (i % 26) as u8; 70 << 10]
}

fn synced() -> WriteOptions {
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    wo
}

/// (file syncs, directory syncs) that `f` made.
fn syncs_of(fs: &Arc<FaultInjectionFs>, f: impl FnOnce()) -> (u64, u64) {
    let (s, d) = (fs.count(OpKind::Sync), fs.count(OpKind::DirSync));
    f();
    (fs.count(OpKind::Sync) - s, fs.count(OpKind::DirSync) - d)
}

#[test]
fn rolls_do_not_sync_and_a_sync_write_syncs_every_older_wal() {
    let fs = new_fault_fs();
    let db = open_all_with(&fs, rolling_options(&fs)).unwrap();
    assert_eq!(wal_count(&fs), 1);
    // Five writes, four rolls (each big write fills a memtable, the next write switches
    // it): no file or directory sync at all.
    let rolls = syncs_of(&fs, || {
        for i in 0..4 {
            db.put(format!("k{i}"), big(i)).unwrap();
        }
        db.put(b"small", b"v").unwrap();
    });
    assert_eq!(rolls, (0, 0), "a WAL roll synced something");
    assert_eq!(wal_count(&fs), 5);
    // The sync write syncs the four closed WALs, then its own, then the directory once.
    assert_eq!(syncs_of(&fs, || db.put_opt(b"s1", b"v", &synced()).unwrap()), (5, 1));
    // Nothing older is left unsynced, the directory is synced: one file sync.
    assert_eq!(syncs_of(&fs, || db.put_opt(b"s2", b"v", &synced()).unwrap()), (1, 0));
    // A roll, then flush_wal(true): the closed WAL, the current one, the directory.
    db.put(b"k4", big(4)).unwrap();
    db.put(b"k5", b"small").unwrap();
    assert_eq!(wal_count(&fs), 6);
    assert_eq!(syncs_of(&fs, || db.flush_wal(true).unwrap()), (2, 1));
    drop(db);
    // Power loss: everything synced above survives.
    fs.crash(true);
    let db = open_all_with(&fs, rolling_options(&fs)).unwrap();
    for i in 0..5 {
        assert_eq!(db.get(format!("k{i}")).unwrap(), Some(big(i)), "k{i}");
    }
    assert_eq!(db.get(b"k5").unwrap().as_deref(), Some(&b"small"[..]));
    assert_eq!(db.get(b"s2").unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn unsynced_rolls_lose_only_a_suffix_at_power_loss() {
    let fs = new_fault_fs();
    let db = open_all_with(&fs, rolling_options(&fs)).unwrap();
    db.put_opt(b"first", b"1", &synced()).unwrap();
    for i in 0..4 {
        db.put(format!("k{i}"), big(i)).unwrap();
    }
    drop(db);
    fs.crash(true);
    let db = open_all_with(&fs, rolling_options(&fs)).unwrap();
    // The synced write stays; the unsynced ones (in WALs never synced, whose names never
    // reached a synced directory) are gone together.
    assert_eq!(db.get(b"first").unwrap().as_deref(), Some(&b"1"[..]));
    for i in 0..4 {
        assert_eq!(db.get(format!("k{i}")).unwrap(), None, "k{i}");
    }
}

#[test]
fn a_flush_with_two_families_syncs_the_closed_wals_first() {
    let fs = new_fault_fs();
    let mut db = open_all_with(&fs, rolling_options(&fs)).unwrap();
    db.create_cf("b", &rolling_options(&fs)).unwrap();
    let b = || db.cf_handle("b").unwrap();
    for i in 0..3 {
        db.put_cf(b(), format!("b{i}"), big(i)).unwrap();
        db.put(format!("k{i}"), b"v").unwrap();
    }
    assert!(wal_count(&fs) >= 3, "{} WALs", wal_count(&fs));
    // Flushing the default family only: family b's writes (in WALs that were never synced)
    // are made durable by the flush, as RocksDB's SyncClosedWals does.
    db.flush().unwrap();
    drop(db);
    fs.crash(true);
    let db: DB = open_all_with(&fs, rolling_options(&fs)).unwrap();
    let b = db.cf_handle("b").unwrap();
    for i in 0..3 {
        assert_eq!(db.get_cf(b, format!("b{i}")).unwrap(), Some(big(i)), "b{i}");
        assert_eq!(db.get(format!("k{i}")).unwrap().as_deref(), Some(&b"v"[..]), "k{i}");
    }
}
