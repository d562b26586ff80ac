//! `persist_user_defined_timestamps = false` (a `.u64ts` family): RocksDB 11.8.1's tools
//! read what Shale wrote. `sst_dump --show_properties` says the table's timestamps are not
//! persisted, `sst_dump --command=scan` (which opens the table as RocksDB's reader does,
//! padding the minimum timestamp) lists its keys, and `ldb manifest_dump` reads the
//! MANIFEST, whose file records and comparator edit carry the flag.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::sync::Arc;

use shale::{Options, SstFileWriter, U64TsComparator, DB};

const TEST: &str = "interop option_rows_ts";

#[test]
fn rocksdb_tools_read_a_table_without_timestamps() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = Options::default().get_options_from_string("persist_user_defined_timestamps=false").unwrap();
    o.create_if_missing(true);
    o.set_allow_concurrent_memtable_write(false);
    o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    let db = DB::open(&o, path).unwrap();
    for t in 1..=3u64 {
        db.put_with_ts(b"key1", t.to_le_bytes(), format!("v{t}")).unwrap();
    }
    db.put_with_ts(b"key2", 2u64.to_le_bytes(), b"w2").unwrap();
    db.flush().unwrap();
    drop(db);

    let sst = tools::sst_files(path).into_iter().next().expect("a table");
    let file = format!("--file={}", sst.display());
    let props = tools::run_tool("sst_dump", &[file.clone(), "--show_properties".to_string()]);
    let prop = |name: &str| {
        props
            .lines()
            .find_map(|l| l.trim().strip_prefix(name).map(|v| v.trim().to_string()))
            .unwrap_or_else(|| panic!("no {name} in:\n{props}"))
    };
    assert_eq!(prop("user defined timestamps persisted:"), "false");
    assert_eq!(prop("comparator name:"), "leveldb.BytewiseComparator.u64ts");
    // The flush gave every version the same (minimum) timestamp, so the older versions of
    // key1, hidden from every reader, were dropped (RocksDB's CompactionIterator).
    assert_eq!(prop("# entries:"), "2");
    // Raw key sizes without the timestamps: 4-byte keys plus 8-byte trailers.
    assert_eq!(prop("raw key size:"), "24");

    tools::run_tool("sst_dump", &[file.clone(), "--command=verify".to_string()]);
    let scan = tools::run_tool("sst_dump", &[file, "--command=scan".to_string(), "--output_hex".to_string()]);
    // Each key as RocksDB's reader gives it: the user key, the minimum (zero) timestamp.
    let keys: Vec<&str> = scan.lines().filter(|l| l.contains("=>")).collect();
    assert_eq!(
        keys,
        ["'6B657931|timestamp:0' seq:3, type:1 => 7633", "'6B657932|timestamp:0' seq:4, type:1 => 7732"],
        "{scan}"
    );

    let manifest =
        tools::run_tool("ldb", &tools::args(&["manifest_dump", &format!("--db={}", path.display())]));
    assert!(manifest.contains("comparator: leveldb.BytewiseComparator.u64ts"), "{manifest}");
    // The file's boundaries as RocksDB reads them back from the MANIFEST: recorded without
    // the timestamp, padded by RocksDB with one minimum (8 zero bytes) timestamp.
    let zeros = "\0".repeat(8);
    let want = format!("['key1{zeros}' seq:3, type:1 .. 'key2{zeros}' seq:4, type:1]");
    assert!(manifest.contains(&want), "{}", manifest.replace('\0', "\\0"));
}

/// An `SstFileWriter` file written with `persist_user_defined_timestamps=false`: RocksDB
/// 11.8.1's `sst_dump` reads it as a table without timestamps (padded with the minimum one),
/// and after ingestion `ldb manifest_dump` reads the MANIFEST's
/// padded boundaries (ingested below every key: global sequence 0).
#[test]
fn rocksdb_tools_read_an_sst_file_writer_file_without_timestamps() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default().get_options_from_string("persist_user_defined_timestamps=false").unwrap();
    o.create_if_missing(true);
    o.set_allow_concurrent_memtable_write(false);
    o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    let file_path = dir.path().join("external.sst");
    let mut w = SstFileWriter::create(&o);
    w.open(&file_path).unwrap();
    w.put_with_ts(b"key1", 0u64.to_le_bytes(), b"v1").unwrap();
    w.put_with_ts(b"key2", 0u64.to_le_bytes(), b"v2").unwrap();
    w.finish().unwrap();

    let file = format!("--file={}", file_path.display());
    let props = tools::run_tool("sst_dump", &[file.clone(), "--show_properties".to_string()]);
    let prop = |name: &str| {
        props
            .lines()
            .find_map(|l| l.trim().strip_prefix(name).map(|v| v.trim().to_string()))
            .unwrap_or_else(|| panic!("no {name} in:\n{props}"))
    };
    assert_eq!(prop("user defined timestamps persisted:"), "false");
    assert_eq!(prop("comparator name:"), "leveldb.BytewiseComparator.u64ts");
    assert_eq!(prop("raw key size:"), "24");
    let scan = tools::run_tool("sst_dump", &[file, "--command=scan".to_string(), "--output_hex".to_string()]);
    let keys: Vec<&str> = scan.lines().filter(|l| l.contains("=>")).collect();
    assert_eq!(
        keys,
        ["'6B657931|timestamp:0' seq:0, type:1 => 7631", "'6B657932|timestamp:0' seq:0, type:1 => 7632"],
        "{scan}"
    );

    let path = dir.path().join("db");
    let db = DB::open(&o, &path).unwrap();
    db.ingest_external_file(vec![&file_path]).unwrap();
    drop(db);
    let manifest =
        tools::run_tool("ldb", &tools::args(&["manifest_dump", &format!("--db={}", path.display())]));
    let zeros = "\0".repeat(8);
    let want = format!("['key1{zeros}' seq:0, type:1 .. 'key2{zeros}' seq:0, type:1]");
    assert!(manifest.contains(&want), "{}", manifest.replace('\0', "\\0"));
}
