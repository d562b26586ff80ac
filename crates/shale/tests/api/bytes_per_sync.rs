//! `bytes_per_sync`: table, blob and MANIFEST files ask the file system for write-back every
//! that many bytes as they grow (RocksDB's `WritableFileWriter` range syncs), counted here by
//! the fault-injecting file system; with 0 (the default) there is none.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::sync::Arc;

use shale::fs::{FaultInjectionFs, FaultMode, MemFileSystem, OpKind};
use shale::{DBCompressionType, Options, DB};

/// A database on `fs` writing `mib` MiB of poorly compressing values, then a flush.
fn fill_and_flush(fs: &Arc<FaultInjectionFs>, bytes_per_sync: u64, blobs: bool) -> shale::Result<()> {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_file_system(fs.clone());
    o.set_compression_type(DBCompressionType::None);
    o.set_write_buffer_size(64 << 20);
    if bytes_per_sync > 0 {
        o.set_bytes_per_sync(bytes_per_sync);
    }
    if blobs {
        o.set_enable_blob_files(true);
        o.set_min_blob_size(0);
    }
    let db = DB::open(&o, "/db")?;
    for i in 0..4096u64 {
        db.put(format!("key{i:06}"), util::value(i, 1024))?;
    }
    db.flush()
}

#[test]
fn tables_are_written_back_every_bytes_per_sync() {
    // Default: no range sync at all (the WAL's own wal_bytes_per_sync is 0 too).
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    fill_and_flush(&fs, 0, false).unwrap();
    assert_eq!(fs.count(OpKind::RangeSync), 0, "bytes_per_sync 0 asks for no write-back");

    // 256 KiB: the ~4.2 MB table's first ~3.2 MB (all but the last MiB) in 256 KiB steps.
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    fill_and_flush(&fs, 256 << 10, false).unwrap();
    let n = fs.count(OpKind::RangeSync);
    assert!((10..=14).contains(&n), "expected about 12 range syncs of the table, got {n}");

    // They are the table's: a failing range sync of a .sst fails the flush.
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    fs.fail_matching(OpKind::RangeSync, ".sst", FaultMode::Persistent, libc::EIO);
    let e = fill_and_flush(&fs, 256 << 10, false).unwrap_err();
    assert!(fs.faults_fired() > 0, "no range sync of a table: {e}");
}

#[test]
fn blob_files_are_written_back_too() {
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    fs.fail_matching(OpKind::RangeSync, ".blob", FaultMode::Persistent, libc::EIO);
    let e = fill_and_flush(&fs, 256 << 10, true).unwrap_err();
    assert!(fs.faults_fired() > 0, "no range sync of a blob file: {e}");
}

#[test]
fn on_the_posix_file_system_data_stays_whole() {
    // sync_file_range on real files: the flushed table reads back whole after a reopen.
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_bytes_per_sync(64 << 10);
    o.set_compression_type(DBCompressionType::None);
    {
        let db = DB::open(&o, dir.path()).unwrap();
        for i in 0..3000u64 {
            db.put(format!("key{i:06}"), util::value(i, 1024)).unwrap();
        }
        db.flush().unwrap();
    }
    let db = DB::open(&o, dir.path()).unwrap();
    for i in (0..3000u64).step_by(97) {
        assert_eq!(db.get(format!("key{i:06}")).unwrap().unwrap(), util::value(i, 1024));
    }
}
