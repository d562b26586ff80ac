//! The `fchk` DB option rows with RocksDB 11.8.1: its `ldb --try_load_options` loads and
//! keeps `file_checksum_gen_factory=FileChecksumGenCrc32cFactory` from Shale's OPTIONS file;
//! its `ldb file_checksum_dump` shows, for each table and blob file of a database Shale
//! wrote, the CRC32C of the whole file under "FileChecksumCrc32c"; and the checksums
//! `db_bench --file_checksum` records are those Shale computes for the same files (Shale
//! opens that database from its OPTIONS file and keeps recording them).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeMap;
use std::path::Path;

use shale::{Options, DB};

const TEST: &str = "interop option_rows_fchk";

#[test]
fn rocksdb_11_loads_and_keeps_the_fchk_rows() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    tools::ldb_keeps_option_rows(&[("file_checksum_gen_factory", "FileChecksumGenCrc32cFactory")], true);
}

/// RocksDB 11.8.1's `ldb file_checksum_dump --hex` of `dir`: file number -> (function,
/// checksum bytes).
fn ldb_checksums(dir: &Path) -> BTreeMap<u64, (String, Vec<u8>)> {
    let out = tools::run_tool(
        "ldb",
        &[format!("--db={}", dir.display()), "file_checksum_dump".into(), "--hex".into()],
    );
    let mut m = BTreeMap::new();
    for line in out.lines().filter(|l| !l.starts_with("Print SST file checksum")) {
        let parts: Vec<&str> = line.split(", ").collect();
        assert_eq!(parts.len(), 3, "{line}");
        let hex = parts[2].trim().trim_start_matches("0x");
        m.insert(parts[0].parse().unwrap(), (parts[1].to_string(), tools::decode_hex(hex)));
    }
    m
}

/// The file of number `n` in `dir` (a table or a blob file).
fn file_of(dir: &Path, n: u64) -> Vec<u8> {
    let sst = dir.join(format!("{n:06}.sst"));
    let path = if sst.exists() { sst } else { dir.join(format!("{n:06}.blob")) };
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn crc32c_be(bytes: &[u8]) -> Vec<u8> {
    crc32c::crc32c(bytes).to_be_bytes().to_vec()
}

#[test]
fn rocksdb_11_dumps_the_checksums_shale_records() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut o = Options::default()
        .get_options_from_string("file_checksum_gen_factory=FileChecksumGenCrc32cFactory")
        .unwrap();
    o.create_if_missing(true);
    o.set_enable_blob_files(true);
    o.set_min_blob_size(200);
    o.set_disable_auto_compactions(true);
    {
        let db = DB::open(&o, &dir).unwrap();
        for round in 0..3u32 {
            for i in 0..300u32 {
                let v = if i % 4 == 0 { vec![b'x'; 500] } else { format!("value-{round}-{i}").into_bytes() };
                db.put(format!("key{i:05}"), v).unwrap();
            }
            db.flush().unwrap();
        }
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        db.put(b"after", b"compaction").unwrap();
        db.flush().unwrap();
    }
    let dumped = ldb_checksums(&dir);
    let blobs = tools::files_with_suffix(&dir, ".blob").len();
    let tables = tools::sst_files(&dir).len();
    assert!(blobs >= 1 && tables >= 2, "{tables} tables, {blobs} blob files");
    assert_eq!(dumped.len(), tables + blobs, "every live file listed: {dumped:?}");
    for (n, (func, sum)) in &dumped {
        assert_eq!(func, "FileChecksumCrc32c", "file {n}");
        assert_eq!(sum, &crc32c_be(&file_of(&dir, *n)), "file {n}");
    }
}

#[test]
fn shale_computes_the_checksums_db_bench_records() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    tools::db_bench_fill(
        &dir,
        20000,
        &["--file_checksum=true", "--write_buffer_size=65536", "--compression_type=none"],
    );
    let theirs = ldb_checksums(&dir);
    assert!(!theirs.is_empty());
    for (n, (func, sum)) in &theirs {
        assert_eq!(func, "FileChecksumCrc32c", "file {n}");
        assert_eq!(sum, &crc32c_be(&file_of(&dir, *n)), "RocksDB's checksum of file {n} is Shale's formula");
    }
    // Shale opens it from RocksDB's OPTIONS file (the factory by name) and goes on recording.
    let (mut loaded, cfs) =
        Options::load_latest(&dir, shale::Env::new().unwrap(), false, shale::Cache::new_lru_cache(8 << 20))
            .unwrap();
    loaded.create_if_missing(false);
    {
        let db = DB::open_cf_descriptors(&loaded, &dir, cfs).unwrap();
        db.put(b"shale", b"was here").unwrap();
        db.flush().unwrap();
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
    }
    let ours = ldb_checksums(&dir);
    assert!(ours.keys().any(|n| !theirs.contains_key(n)), "Shale wrote new files");
    for (n, (func, sum)) in &ours {
        assert_eq!(func, "FileChecksumCrc32c", "file {n}");
        assert_eq!(sum, &crc32c_be(&file_of(&dir, *n)), "file {n}");
    }
}
