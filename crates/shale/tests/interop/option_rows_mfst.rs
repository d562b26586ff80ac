//! The `mfst` DB option rows with RocksDB 11.8.1: its `ldb --try_load_options` loads and keeps
//! them from Shale's OPTIONS file. `reuse_manifest_on_open`: a MANIFEST Shale's opens appended
//! to is one RocksDB's `ldb manifest_dump` reads and its own open (the row loaded from the
//! OPTIONS file) appends to in turn, CURRENT naming the same file throughout; Shale then
//! reuses the MANIFEST RocksDB appended to. `verify_manifest_content_on_close`: the MANIFEST
//! Shale writes at close in place of a damaged one is one RocksDB opens.
//! `optimize_manifest_for_recovery`: the WAL markers Shale records at close are RocksDB's
//! (`ldb manifest_dump` shows the oldest WAL to keep one past the last WAL), and after
//! RocksDB's own close (the row loaded from the OPTIONS file) Shale's open finds nothing to
//! record, as RocksDB's does: CURRENT and the MANIFEST stay as RocksDB left them.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use shale::{Options, DB};

const TEST: &str = "interop option_rows_mfst";

const SET: &[(&str, &str)] = &[
    ("verify_manifest_content_on_close", "true"),
    ("reuse_manifest_on_open", "true"),
    ("async_wal_precreate", "true"),
    ("background_close_inactive_wals", "true"),
    ("optimize_manifest_for_recovery", "true"),
];

fn opts(rows: &str) -> Options {
    let mut o = Options::default().get_options_from_string(rows).unwrap();
    o.create_if_missing(true);
    o
}

fn current_manifest(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("CURRENT")).unwrap().trim_end().to_string()
}

#[test]
fn rocksdb_11_loads_and_keeps_the_mfst_rows() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    tools::ldb_keeps_option_rows(SET, true);
}

#[test]
fn rocksdb_11_reads_and_reuses_a_manifest_shale_reused() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let o = opts("reuse_manifest_on_open=true");
    for round in 0..3u32 {
        let db = DB::open(&o, &dir).unwrap();
        for i in 0..10u32 {
            db.put(format!("k{round}-{i}"), format!("v{round}")).unwrap();
        }
        db.flush().unwrap();
        drop(db);
    }
    let manifest = current_manifest(&dir);
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("MANIFEST-"))
        .collect();
    assert_eq!(files, vec![manifest.clone()], "every open reused one MANIFEST");
    // RocksDB's manifest_dump reads every record Shale appended.
    let dump = tools::run_tool(
        "ldb",
        &["manifest_dump".to_string(), format!("--path={}", dir.join(&manifest).display())],
    );
    assert!(dump.contains("last_sequence 30 "), "{dump}");
    // RocksDB's open, with the row from Shale's OPTIONS file, appends to the same MANIFEST.
    let size = std::fs::metadata(dir.join(&manifest)).unwrap().len();
    tools::run_tool(
        "ldb",
        &[
            format!("--db={}", dir.display()),
            "--try_load_options".to_string(),
            "put".into(),
            "kr".into(),
            "vr".into(),
        ],
    );
    assert_eq!(current_manifest(&dir), manifest, "RocksDB reused Shale's MANIFEST");
    assert!(std::fs::metadata(dir.join(&manifest)).unwrap().len() > size);
    let pairs = tools::ldb_scan(&dir, None);
    assert_eq!(pairs.len(), 31, "{pairs:?}");
    // And Shale reuses the MANIFEST RocksDB appended to.
    let db = DB::open(&o, &dir).unwrap();
    assert_eq!(current_manifest(&dir), manifest);
    assert_eq!(db.get(b"kr").unwrap(), Some(b"vr".to_vec()));
    for round in 0..3u32 {
        assert_eq!(db.get(format!("k{round}-9")).unwrap(), Some(format!("v{round}").into_bytes()));
    }
}

#[test]
fn rocksdb_11_opens_the_manifest_written_at_close_for_a_damaged_one() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = DB::open(&opts("verify_manifest_content_on_close=true"), &dir).unwrap();
    for i in 0..10u32 {
        db.put(format!("k{i}"), b"v").unwrap();
    }
    db.flush().unwrap();
    let before = current_manifest(&dir);
    let mut f = std::fs::OpenOptions::new().read(true).write(true).open(dir.join(&before)).unwrap();
    let mut b = [0u8; 1];
    f.seek(SeekFrom::Start(9)).unwrap();
    std::io::Read::read_exact(&mut f, &mut b).unwrap();
    f.seek(SeekFrom::Start(9)).unwrap();
    f.write_all(&[b[0] ^ 0x40]).unwrap();
    drop(f);
    drop(db);
    assert_ne!(current_manifest(&dir), before);
    let pairs = tools::ldb_scan(&dir, None);
    assert_eq!(pairs.len(), 10, "{pairs:?}");
}

#[test]
fn optimize_manifest_for_recovery_markers_agree_with_rocksdb_11() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let o = opts("optimize_manifest_for_recovery=true");
    let db = DB::open(&o, &dir).unwrap();
    for i in 0..10u32 {
        db.put(format!("k{i}"), b"v").unwrap();
    }
    db.flush().unwrap();
    drop(db);
    let wals = tools::wal_files(&dir);
    assert_eq!(wals.len(), 1, "{wals:?}");
    let wal: u64 = wals[0].file_stem().unwrap().to_str().unwrap().parse().unwrap();
    let manifest = current_manifest(&dir);
    let dump = tools::run_tool(
        "ldb",
        &["manifest_dump".to_string(), format!("--path={}", dir.join(&manifest).display())],
    );
    assert!(dump.contains(&format!("min_log_number_to_keep {}", wal + 1)), "{dump}");
    // RocksDB writes, flushes (its compaction flushes first) and closes with its markers.
    let db_arg = format!("--db={}", dir.display());
    let load = "--try_load_options".to_string();
    tools::run_tool("ldb", &[db_arg.clone(), load.clone(), "put".into(), "kr".into(), "vr".into()]);
    tools::run_tool("ldb", &[db_arg.clone(), load.clone(), "compact".into()]);
    let theirs = current_manifest(&dir);
    let size = std::fs::metadata(dir.join(&theirs)).unwrap().len();
    // Shale's open finds nothing to record: no MANIFEST written.
    let db = DB::open(&o, &dir).unwrap();
    assert_eq!(current_manifest(&dir), theirs);
    assert_eq!(std::fs::metadata(dir.join(&theirs)).unwrap().len(), size);
    assert_eq!(db.get(b"kr").unwrap(), Some(b"vr".to_vec()));
    drop(db);
    assert_eq!(tools::ldb_scan(&dir, None).len(), 11);
}
