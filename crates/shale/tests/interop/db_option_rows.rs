//! An OPTIONS file written by RocksDB 11.8.1 with `avoid_flush_during_recovery`,
//! `avoid_flush_during_shutdown` and `write_identity_file` set to non-defaults loads in
//! Shale at those values, and they act: Shale's open of RocksDB's database leaves the WAL's
//! data in the memtable, writes no IDENTITY file, and writes the values to its own OPTIONS
//! file; RocksDB reads the database back. The file RocksDB was given also held options
//! 11.8.1 marks deprecated, which it accepts and leaves out of the file it writes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{Cache, Env, IteratorMode, Options, DB};

const TEST: &str = "interop db_option_rows";

/// RocksDB 11.8.1's default OPTIONS file with `changes` (`name=value` replacing the default
/// line) and `extra_db`/`extra_cf` lines added to the DB and default family sections.
fn options_file(changes: &[(&str, &str)], extra_db: &[&str], extra_cf: &[&str]) -> String {
    let defaults = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shale-format/src/options_file/rocksdb_11_defaults.ini");
    let text = std::fs::read_to_string(defaults).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        let name = trimmed.split('=').next().unwrap_or("");
        match changes.iter().find(|(n, _)| *n == name) {
            Some((n, v)) => out.push_str(&format!("  {n}={v}\n")),
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
        if trimmed == "[DBOptions]" {
            extra_db.iter().for_each(|l| out.push_str(&format!("  {l}\n")));
        }
        if trimmed == "[CFOptions \"default\"]" {
            extra_cf.iter().for_each(|l| out.push_str(&format!("  {l}\n")));
        }
    }
    for (n, _) in changes {
        assert!(out.contains(&format!("  {n}=")), "{n} is not in RocksDB 11.8.1's defaults");
    }
    out
}

#[test]
fn rocksdb_options_file_values_load_and_act() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let given = dir.path().join("given.ini");
    let changes = [
        ("avoid_flush_during_recovery", "true"),
        ("avoid_flush_during_shutdown", "true"),
        ("write_identity_file", "false"),
    ];
    let text = options_file(
        &changes,
        &["allow_os_buffer=false", "base_background_compactions=3", "preserve_deletes=true"],
        &["filter_deletes=true", "soft_rate_limit=1.5", "max_mem_compaction_level=2"],
    );
    std::fs::write(&given, text).unwrap();
    let options_flag = format!("--options_file={}", given.display());
    tools::db_bench_run(&path, "fillseq", 100, &[&options_flag]);

    // RocksDB wrote the values (and not the deprecated options) to its OPTIONS file, and
    // neither flushed (the data is in its WAL) nor wrote an IDENTITY file.
    let written = tools::latest_options_text(&path);
    for (n, v) in changes {
        assert!(written.contains(&format!("{n}={v}")), "RocksDB's OPTIONS file lacks {n}={v}");
    }
    for n in ["allow_os_buffer", "base_background_compactions", "filter_deletes", "soft_rate_limit"] {
        assert!(!written.contains(&format!("{n}=")), "RocksDB wrote deprecated {n}");
    }
    assert!(tools::sst_files(&path).is_empty());
    assert!(!path.join("IDENTITY").exists());
    let want = tools::ldb_scan(&path, None);
    assert_eq!(want.len(), 100);

    let (opts, descs) =
        Options::load_latest(&path, Env::new().unwrap(), false, Cache::new_lru_cache(1 << 20)).unwrap();
    let wals = tools::wal_files(&path).len();
    {
        let db = DB::open_cf_descriptors(&opts, &path, descs).unwrap();
        // avoid_flush_during_recovery: the WAL's data stays in the memtable, its WAL alive.
        assert!(tools::sst_files(&path).is_empty(), "Shale's recovery flushed");
        assert_eq!(tools::wal_files(&path).len(), wals + 1);
        let got: Vec<(Vec<u8>, Vec<u8>)> = db
            .iterator(IteratorMode::Start)
            .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
            .collect();
        assert_eq!(got, want);
        // write_identity_file=false: none written.
        assert!(!path.join("IDENTITY").exists());
        let mine = tools::latest_options_text(&path);
        for (n, v) in changes {
            assert!(mine.contains(&format!("{n}={v}")), "Shale's OPTIONS file lacks {n}={v}");
        }
    }
    // RocksDB reads what Shale left: the data is still only in the WALs.
    assert!(tools::sst_files(&path).is_empty());
    assert_eq!(tools::ldb_scan(&path, None), want);
}
