//! `filter_policy` set by RocksDB 11.8.1's internal ids (`rocksdb.internal.LegacyBloomFilter:<bits>`,
//! `...FastLocalBloomFilter:<bits>`, `...Standard128RibbonFilter:<bits>`) and the read-only
//! `rocksdb.BuiltinBloomFilter`: RocksDB 11.8.1's `db_bench`, given the OPTIONS file Shale
//! wrote, builds tables whose `sst_dump --show_properties` names the same filter policy
//! (and the same filter size) as Shale's table of the same keys, and `sst_dump` verifies
//! Shale's table.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{Options, DB};

const TEST: &str = "interop filter ids";

/// `sst_dump --show_properties`' value of `name` for the one table of `dir`.
fn prop(dir: &Path, name: &str) -> String {
    let ssts = tools::sst_files(dir);
    assert_eq!(ssts.len(), 1, "{}", dir.display());
    let file = format!("--file={}", ssts[0].display());
    tools::run_tool("sst_dump", &[file.clone(), "--command=verify".to_string()]);
    let props = tools::run_tool("sst_dump", &[file, "--show_properties".to_string()]);
    props
        .lines()
        .find_map(|l| l.trim().strip_prefix(name).map(|v| v.trim().to_string()))
        .unwrap_or_else(|| panic!("no {name} in:\n{props}"))
}

#[test]
fn rocksdb_builds_the_same_filter_from_shales_options_file() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    for id in [
        "rocksdb.internal.LegacyBloomFilter:10",
        "rocksdb.internal.FastLocalBloomFilter:10",
        "rocksdb.internal.Standard128RibbonFilter:10",
        "rocksdb.BuiltinBloomFilter",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let shale_dir = dir.path().join("shale");
        let mut o = Options::default()
            .get_options_from_string(format!("block_based_table_factory={{filter_policy={id}}}"))
            .unwrap();
        o.create_if_missing(true);
        let db = DB::open(&o, &shale_dir).unwrap();
        // db_bench fillseq's keys: 16 bytes, the index big-endian in the first 8.
        for i in 0..3000u64 {
            let mut k = i.to_be_bytes().to_vec();
            k.extend_from_slice(&[b'0'; 8]);
            db.put(&k, b"v").unwrap();
        }
        db.flush().unwrap();
        drop(db);
        let options_file = tools::files_with_suffix(&shale_dir, "")
            .into_iter()
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("OPTIONS-")))
            .max()
            .unwrap();
        let rocks_dir = dir.path().join("rocks");
        let flag = format!("--options_file={}", options_file.display());
        // Without a WAL RocksDB flushes the memtable on close: one table.
        tools::db_bench_run(&rocks_dir, "fillseq", 3000, &[&flag, "--disable_wal=1", "--key_size=16"]);
        let name = id.split(':').next().unwrap();
        assert_eq!(prop(&rocks_dir, "filter policy name:"), name, "{id}: RocksDB's table");
        assert_eq!(prop(&shale_dir, "filter policy name:"), name, "{id}: Shale's table");
        assert_eq!(
            prop(&shale_dir, "filter block size:"),
            prop(&rocks_dir, "filter block size:"),
            "{id}: the filters' sizes"
        );
    }
}
