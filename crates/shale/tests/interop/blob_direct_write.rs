//! Blob direct write between RocksDB 11.8.1 and Shale (helper blobdw, issue 33; 11.8.1's
//! release tools, skipped with a printed reason when they cannot run):
//! - Shale -> RocksDB: a database Shale writes with `enable_blob_direct_write` and three
//!   partitions (closed cleanly, so flushed) is read by `ldb scan` exactly; a copy taken while
//!   Shale runs (a crash) has WAL blob indexes naming a file no flush added, which RocksDB
//!   replays and then refuses to resolve, as Shale does (`Corruption`), while the flushed
//!   values read back in both;
//! - RocksDB -> Shale: `db_bench fillrandom --enable_blob_direct_write=1
//!   --blob_direct_write_partitions=4` (which needs `--allow_concurrent_memtable_write=0`
//!   and `--enable_pipelined_write=0`) is read by Shale exactly.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{ErrorKind, Options, WriteOptions, DB};
use tools::*;

fn opts(partitions: u32) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_enable_blob_files(true);
    o.set_enable_blob_direct_write(true);
    o.set_blob_direct_write_partitions(partitions);
    o.set_min_blob_size(64);
    o.set_allow_concurrent_memtable_write(false);
    o
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() && e.file_name() != "LOCK" {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn shale_direct_write_db_read_by_rocksdb_11() {
    let test = "shale_direct_write_db_read_by_rocksdb_11";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let crashed = tmp.path().join("crashed");
    let mut want: Pairs = Vec::new();
    {
        let db = DB::open(&opts(3), &dir).unwrap();
        for i in 0..300u32 {
            let k = format!("key{i:04}").into_bytes();
            let v = if i % 4 == 0 { format!("s{i}").into_bytes() } else { format!("{i:0>500}").into_bytes() };
            db.put(&k, &v).unwrap();
            want.push((k, v));
        }
        assert_eq!(files_with_suffix(&dir, ".blob").len(), 3, "three partitions open");
        db.flush().unwrap();
        let mut wo = WriteOptions::default();
        wo.set_sync(true);
        db.put_opt("late", vec![b'x'; 700], &wo).unwrap();
        copy_dir(&dir, &crashed);
    }
    want.push((b"late".to_vec(), vec![b'x'; 700]));
    want.sort();
    // Closed cleanly: the close flushed, RocksDB reads everything.
    assert_same_pairs(&ldb_scan(&dir, None), &want, "ldb scan of Shale's direct-write db");
    let crashed2 = tmp.path().join("crashed2");
    copy_dir(&crashed, &crashed2);
    // The crash copy: RocksDB resolves the flushed values, not the WAL's blob index.
    assert_eq!(ldb_get(&crashed, None, b"key0001"), Some(format!("{:0>500}", 1).into_bytes()));
    let ldb_get_late =
        || try_tool("ldb", &[format!("--db={}", crashed.display()), "get".to_string(), "late".to_string()]);
    // Opened read-only by ldb: the blob index stays in a memtable RocksDB cannot resolve.
    let (ok, out, err) = ldb_get_late();
    assert!(!ok && format!("{out}{err}").contains("Corruption"), "ldb get late: {out} {err}");
    // Opened for writing (the recovery flush puts the index in a table): the file is in
    // no Version.
    run_tool(
        "ldb",
        &[format!("--db={}", crashed.display()), "put".to_string(), "zz".to_string(), "1".to_string()],
    );
    let (ok, out, err) = ldb_get_late();
    assert!(!ok && format!("{out}{err}").contains("Corruption: Invalid blob file number"), "{out} {err}");
    // Shale, opening another copy of the crashed files, answers the same.
    let db = DB::open(&opts(3), &crashed2).unwrap();
    assert_eq!(db.get("key0001").unwrap(), Some(format!("{:0>500}", 1).into_bytes()));
    let e = db.get("late").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert_eq!(e.to_string(), "Corruption: Invalid blob file number");
}

#[test]
fn rocksdb_11_direct_write_db_read_by_shale() {
    let test = "rocksdb_11_direct_write_db_read_by_shale";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    db_bench_run(
        &dir,
        "fillrandom",
        2000,
        &[
            "--enable_blob_files=1",
            "--enable_blob_direct_write=1",
            "--blob_direct_write_partitions=4",
            "--allow_concurrent_memtable_write=0",
            "--enable_pipelined_write=0",
            "--min_blob_size=100",
            "--value_size=400",
            "--compression_type=none",
            "--write_buffer_size=262144",
        ],
    );
    assert!(files_with_suffix(&dir, ".blob").len() >= 4, "db_bench wrote direct-write blob files");
    let want = ldb_scan(&dir, None);
    assert!(want.len() > 1000);
    let text = latest_options_text(&dir);
    assert!(text.contains("  enable_blob_direct_write=true\n"), "{text}");
    let mut o = opts(4);
    o.set_min_blob_size(100);
    let db = DB::open(&o, &dir).unwrap();
    assert_same_pairs(&shale_scan(&db, "default"), &want, "Shale reads db_bench's direct-write db");
    for (k, v) in want.iter().step_by(37) {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_slice()));
    }
}
