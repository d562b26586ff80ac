//! RocksDB 7.8.3 table settings Shale reads, and those it refuses, on tables `db_bench`
//! writes: every format_version 7.8.3 can write (0..=5), every checksum type (none, CRC32c,
//! xxHash, xxHash64, XXH3), LZ4HC, BZip2, zstd and LZ4 with a dictionary, and a Ribbon filter
//! and a partitioned index all read back exactly as `ldb scan` prints. Merge operands are
//! refused with NotSupported: never a panic and
//! never a wrong value. Blob files (BlobDB) read as ldb reads them (more in interop_blob.rs).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{ErrorKind, Options, DB};
use tools::*;

const SMALL_FILES: &[&str] = &["--write_buffer_size=65536", "--target_file_size_base=131072"];

fn opts() -> Options {
    let mut o = Options::default();
    // Keep RocksDB's tables as they are while Shale reads them.
    o.set_disable_auto_compactions(true);
    o
}

/// db_bench fill + flush with `flags`, then Shale must see exactly what ldb sees.
fn reads_like_ldb(test: &str, flags: &[&str]) {
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut all = SMALL_FILES.to_vec();
    all.extend_from_slice(flags);
    db_bench_run(&dir, "fillrandom,overwrite,flush", 5000, &all);
    assert!(!sst_files(&dir).is_empty(), "{test}: no tables");
    let want = ldb_scan(&dir, None);
    let db = DB::open(&opts(), &dir).unwrap_or_else(|e| panic!("{test}: open: {e}"));
    assert_same_pairs(&shale_scan(&db, "default"), &want, test);
    let mut rev = want.clone();
    rev.reverse();
    assert_same_pairs(&shale_scan_reverse(&db, "default"), &rev, &format!("{test} reverse"));
    for (k, v) in want.iter().step_by(3) {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_slice()), "{test}: get");
    }
    assert_eq!(db.get(b"\x00\x00\x00\x00\x00\x00\x00\x0a-absent").unwrap(), None);
}

#[test]
fn every_format_version_7_8_3_writes() {
    for fv in 0..=5 {
        reads_like_ldb(
            &format!("format_version={fv}"),
            &[&format!("--format_version={fv}"), "--bloom_bits=10"],
        );
    }
}

#[test]
fn every_checksum_type() {
    for ct in 0..=4 {
        reads_like_ldb(&format!("checksum_type={ct}"), &[&format!("--checksum_type={ct}")]);
    }
}

#[test]
fn lz4hc_and_zstd_dictionary() {
    reads_like_ldb("lz4hc", &["--compression_type=lz4hc"]);
    reads_like_ldb(
        "zstd with dictionary",
        &["--compression_type=zstd", "--compression_max_dict_bytes=16384"],
    );
}

#[test]
fn ribbon_filter_reads_like_ldb() {
    reads_like_ldb("ribbon filter", &["--use_ribbon_filter=true", "--bloom_bits=10"]);
}

/// Opens the database and reads everything; the first error, if any.
fn first_error(dir: &Path) -> Option<shale::Error> {
    let db = match DB::open(&opts(), dir) {
        Ok(db) => db,
        Err(e) => return Some(e),
    };
    for r in db.iterator(shale::IteratorMode::Start) {
        if let Err(e) = r {
            return Some(e);
        }
    }
    for (k, _) in ldb_scan(dir, None).iter().take(50) {
        if let Err(e) = db.get(k) {
            return Some(e);
        }
    }
    None
}

fn refused_with(test: &str, benchmarks: &str, flags: &[&str], mention: &str, kind: ErrorKind) {
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    db_bench_run(&dir, benchmarks, 3000, flags);
    let e = first_error(&dir).unwrap_or_else(|| panic!("{test}: Shale read the database without an error"));
    eprintln!("{test}: {e}");
    assert_eq!(e.kind(), kind, "{test}: {e}");
    assert!(e.to_string().contains(mention), "{test}: error should mention {mention:?}: {e}");
}

#[test]
fn partitioned_index_reads() {
    // More in interop_partitioned_index.rs.
    reads_like_ldb("partitioned index", &["--partition_index=true", "--metadata_block_size=256"]);
}

#[test]
fn bzip2_blocks_read() {
    reads_like_ldb("bzip2", &["--compression_type=bzip2"]);
}

#[test]
fn blob_files_read() {
    reads_like_ldb(
        "blob files",
        &["--enable_blob_files=true", "--min_blob_size=0", "--write_buffer_size=65536"],
    );
}

/// Merge operands read without a merge operator: RocksDB's InvalidArgument
/// "merge_operator is not properly initialized." (with the operator they read: interop_merge.rs).
#[test]
fn merge_operands_without_an_operator_are_refused() {
    refused_with(
        "merge operands",
        "mergerandom,flush",
        &["--merge_operator=uint64add", "--value_size=8"],
        "merge_operator is not properly initialized",
        ErrorKind::InvalidArgument,
    );
}

/// A format_version 5 table whose footer claims version 6 (RocksDB 8.6+'s footer, with an
/// extended magic where version 5 has its handles) is refused as Corruption, not misread;
/// one claiming version 8 (unknown) is NotSupported.
#[test]
fn relabelled_format_version_is_refused() {
    let test = "relabelled_format_version_is_refused";
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    db_bench_run(&dir, "fillrandom,flush", 2000, &[]);
    let sst = sst_files(&dir)[0].clone();
    let mut b = std::fs::read(&sst).unwrap();
    let at = b.len() - 12; // footer: ... | format_version u32 | magic u64
    assert_eq!(&b[at..at + 4], &5u32.to_le_bytes());
    let original = b.clone();
    b[at..at + 4].copy_from_slice(&6u32.to_le_bytes());
    std::fs::write(&sst, &b).unwrap();
    let e = first_error(&dir).expect("a relabelled format_version 6 must be refused");
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains("extended magic"), "{e}");
    let mut b = original;
    b[at..at + 4].copy_from_slice(&8u32.to_le_bytes());
    std::fs::write(&sst, &b).unwrap();
    let e = first_error(&dir).expect("format_version 8 must be refused");
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("format_version 8"), "{e}");
}
