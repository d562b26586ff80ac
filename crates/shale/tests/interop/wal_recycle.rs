//! `recycle_log_file_num` with RocksDB 11.8.1's tools: a WAL Shale reused (renamed from an
//! obsolete WAL, its stale records left past the new ones, in the image a crash leaves while
//! it is open: at close it is cut to its new records, as RocksDB's) is printed by `ldb dump_wal`
//! with the new records only, and `ldb scan` opens the database (replaying that WAL) to
//! exactly the data Shale holds.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use shale::{Options, WriteOptions, DB};
use tools::*;

#[test]
fn a_reused_wal_read_by_rocksdb_11() {
    let test = "a WAL Shale reused, read by RocksDB 11.8.1";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let image = tmp.path().join("image");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_recycle_log_file_num(1);
    let mut model = std::collections::BTreeMap::new();
    let mut sync = WriteOptions::default();
    sync.set_sync(true);
    {
        let db = DB::open(&opts, &dir).unwrap();
        for i in 0..500u32 {
            let (k, v) = (format!("key{i:04}").into_bytes(), format!("old {i}").repeat(8).into_bytes());
            db.put(&k, &v).unwrap();
            model.insert(k, v);
        }
        db.flush().unwrap();
        db.put(b"middle", b"m").unwrap();
        model.insert(b"middle".to_vec(), b"m".to_vec());
        db.flush().unwrap();
        for i in 0..10u32 {
            let (k, v) = (format!("key{:04}", i * 3).into_bytes(), format!("new {i}").into_bytes());
            db.put_opt(&k, &v, &sync).unwrap();
            model.insert(k, v);
        }
        // The image a crash would leave (the writes were synced): the reused WAL still holds
        // its stale tail past the new records. At close it is cut to the new records, as
        // RocksDB's PosixWritableFile::Close truncates a preallocated file.
        std::fs::create_dir(&image).unwrap();
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            if e.file_name() != "LOCK" {
                std::fs::copy(e.path(), image.join(e.file_name())).unwrap();
            }
        }
    }
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    assert!(log.contains("from recycle list"), "{test}: no WAL was reused");
    let mut closed = wal_files(&dir);
    closed.sort();
    let closed_len = std::fs::metadata(closed.last().unwrap()).unwrap().len();
    assert!(closed_len < 20_000, "{test}: cut to its new records at close ({closed_len} bytes)");
    let dir = image;
    // The newest WAL is the reused one; the one before waits on the recycle list.
    let mut wals = wal_files(&dir);
    wals.sort();
    assert_eq!(wals.len(), 2, "{test}: {wals:?}");
    wals.remove(0);
    let wal = std::fs::read(&wals[0]).unwrap();
    assert!(wal.len() > 20_000, "{test}: the reused file keeps its stale tail ({} bytes)", wal.len());
    let out = run_tool("ldb", &args(&["dump_wal", &format!("--walfile={}", wals[0].display()), "--header"]));
    let puts = out.lines().filter(|l| l.contains("PUT(0)")).count();
    assert_eq!(puts, 10, "{test}: ldb dump_wal printed {puts} puts:\n{}", &out[..out.len().min(3000)]);
    let want: Pairs = model.clone().into_iter().collect();
    assert_same_pairs(&ldb_scan(&dir, None), &want, &format!("{test}: ldb scan"));
    let db = DB::open(&opts, &dir).unwrap();
    assert_same_pairs(&shale_scan_default(&db), &want, &format!("{test}: Shale after RocksDB"));
}
