//! BZip2 blocks, both ways: a database Shale writes with `DBCompressionType::Bz2` (the
//! pure-Rust bzip2 codec) reads back in Shale after reopen, passes `sst_dump --command=verify`
//! and scans identically in RocksDB 7.8.3's `ldb`; a table RocksDB writes with
//! kBZip2Compression (`ldb put` + `compact`) reads back in Shale.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use shale::{DBCompressionType, Options, DB};
use tools::*;

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(DBCompressionType::Bz2);
    for_rocksdb7(&mut o); // 7.8.3's tools read these tables
    o
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value {i} ").repeat(1 + i as usize % 13).into_bytes()
}

#[test]
fn bzip2_tables_round_trip_with_rocksdb() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let want: Pairs = (0..2000).map(|i| (key(i), value(i))).collect();
    {
        let db = DB::open(&opts(), &path).unwrap();
        for (k, v) in &want {
            db.put(k, v).unwrap();
        }
        db.flush().unwrap();
    }
    let db = DB::open(&opts(), &path).unwrap();
    assert_same_pairs(&shale_scan(&db, "default"), &want, "Shale after reopen");
    drop(db);
    let tables = sst_files(&path);
    assert!(!tables.is_empty());
    // The table's blocks are really bzip2 (type byte 3), as its properties say.
    if !tools_available("bzip2_tables_round_trip_with_rocksdb", &["sst_dump", "ldb"]) {
        return;
    }
    for t in &tables {
        let props = run_tool("sst_dump", &args(&[&format!("--file={}", t.display()), "--show_properties"]));
        assert!(props.contains("BZip2"), "{props}");
        run_tool("sst_dump", &args(&[&format!("--file={}", t.display()), "--command=verify"]));
    }
    assert_same_pairs(&ldb_scan(&path, None), &want, "RocksDB ldb scan");

    // RocksDB writes a bzip2 table; Shale reads it.
    let dbarg = format!("--db={}", path.display());
    run_tool("ldb", &args(&[&dbarg, "put", "zz-from-rocksdb", "rocksdb value"]));
    run_tool("ldb", &args(&[&dbarg, "compact", "--compression_type=bzip2"]));
    let db = DB::open(&opts(), &path).unwrap();
    assert_eq!(db.get(b"zz-from-rocksdb").unwrap().as_deref(), Some(&b"rocksdb value"[..]));
    let mut all = want.clone();
    all.push((b"zz-from-rocksdb".to_vec(), b"rocksdb value".to_vec()));
    assert_same_pairs(&shale_scan(&db, "default"), &all, "Shale after RocksDB's compaction");
}
