//! Bloom filters written by RocksDB 7.8.3 are used by Shale: in a database `db_bench`
//! made with `--bloom_bits=10`, Shale's lookups of absent keys (inside every table's key
//! range) read no data block, while the same lookups in a database without filters do read
//! data blocks. The same with Ribbon filters (`--use_ribbon_filter`), written by 7.8.3 and
//! by 11.8.1 into tables compacted below level 0 (flushes get Bloom filters). Data-block reads are counted by the `rocksdb.shale.data-blocks-read`
//! property, with the block cache disabled so every block access is a read. RocksDB flushes
//! and compacts before Shale opens, and Shale's compactions are off, so every table Shale
//! reads is one RocksDB wrote.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeSet;
use std::path::Path;

use shale::{BlockBasedOptions, Options, DB};
use tools::*;

fn db_bench_key(n: u64) -> Vec<u8> {
    let mut k = n.to_be_bytes().to_vec();
    k.resize(16, b'0');
    k
}

fn data_blocks_read(db: &DB) -> u64 {
    db.property_int_value("rocksdb.shale.data-blocks-read").unwrap().expect("property")
}

/// Returns (data blocks read by absent-key lookups, by present-key lookups, lookups).
fn lookups(dir: &Path, num: u64) -> (u64, u64, usize) {
    let present: BTreeSet<Vec<u8>> = ldb_scan(dir, None).into_iter().map(|(k, _)| k).collect();
    let mut opts = Options::default();
    let mut t = BlockBasedOptions::default();
    t.disable_cache();
    opts.set_block_based_table_factory(&t);
    // No compaction: the tables must stay RocksDB's.
    opts.set_disable_auto_compactions(true);
    let tables_before = sst_files(dir);
    let db = DB::open(&opts, dir).unwrap();
    assert_eq!(sst_files(dir), tables_before, "the WAL was not empty: Shale wrote a table");
    let absent: Vec<Vec<u8>> =
        (0..num).map(db_bench_key).filter(|k| !present.contains(k)).take(500).collect();
    assert!(absent.len() >= 100, "too few absent keys in range: {}", absent.len());
    let before = data_blocks_read(&db);
    for k in &absent {
        assert_eq!(db.get(k).unwrap(), None);
    }
    let absent_reads = data_blocks_read(&db) - before;
    let before = data_blocks_read(&db);
    for k in present.iter().take(100) {
        assert!(db.get(k).unwrap().is_some());
    }
    let present_reads = data_blocks_read(&db) - before;
    (absent_reads, present_reads, absent.len())
}

fn make_db(dir: &Path, num: u64, bloom: bool) {
    let mut flags =
        vec!["--write_buffer_size=65536", "--target_file_size_base=131072", "--compression_type=none"];
    if bloom {
        flags.push("--bloom_bits=10");
    }
    // Flushed and compacted by RocksDB, so every table is RocksDB's (with its filters).
    db_bench_run(dir, "fillrandom,overwrite,flush", num as usize, &flags);
    assert!(sst_files(dir).len() >= 2);
}

/// Ribbon filters: every table compacted out of level 0 by RocksDB (flushes, "level -1",
/// get Bloom filters with `bloom_before_level` 0), several tables in all.
fn check_ribbon(dir: &Path, num: u64) {
    let flags = [
        "--write_buffer_size=65536",
        "--target_file_size_base=131072",
        "--compression_type=none",
        "--bloom_bits=10",
        "--use_ribbon_filter=1",
    ];
    db_bench_run(dir, "fillrandom,overwrite,flush,compact", num as usize, &flags);
    assert!(sst_files(dir).len() >= 2);
    let (absent, present, n) = lookups(dir, num);
    assert!(present >= 100, "present-key lookups must read data blocks (read {present})");
    assert!(
        absent * 10 <= n as u64,
        "{n} absent-key lookups read {absent} data blocks despite RocksDB's ribbon filters"
    );
}

#[test]
fn rocksdb_ribbon_filters_spare_data_block_reads() {
    let test = "rocksdb_ribbon_filters_spare_data_block_reads";
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    check_ribbon(&tmp.path().join("v7"), 8000);
    if use_rocksdb_11(test) {
        check_ribbon(&tmp.path().join("v11"), 8000);
    }
}

#[test]
fn rocksdb_bloom_filters_spare_data_block_reads() {
    let test = "rocksdb_bloom_filters_spare_data_block_reads";
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let num = 8000;
    let tmp = tempfile::tempdir().unwrap();
    let with = tmp.path().join("bloom");
    let without = tmp.path().join("plain");
    make_db(&with, num, true);
    make_db(&without, num, false);

    let (absent, present, n) = lookups(&with, num);
    assert!(present >= 100, "present-key lookups must read data blocks (read {present})");
    // 10 bits per key give about 1% false positives per table, and a lookup may consult
    // several tables.
    assert!(
        absent * 10 <= n as u64,
        "{n} absent-key lookups read {absent} data blocks despite RocksDB's bloom filters"
    );
    let (absent_plain, _, n_plain) = lookups(&without, num);
    assert!(
        absent_plain >= n_plain as u64,
        "without filters each absent-key lookup reads a block ({absent_plain} for {n_plain})"
    );
}
