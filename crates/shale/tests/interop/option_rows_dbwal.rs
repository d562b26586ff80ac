//! The `dbwal` DB option rows with RocksDB 11.8.1: its `ldb --try_load_options` loads and
//! keeps them from Shale's OPTIONS file, and `track_and_verify_wals` works both ways:
//! RocksDB replays Shale's WAL chain (and reports the same Corruption when a WAL is taken
//! out of it), Shale replays the chain `db_bench --track_and_verify_wals` writes (and reports
//! RocksDB's Corruption when one of its WALs is taken out).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::{Path, PathBuf};

use shale::{DBRecoveryMode, ErrorKind, IteratorMode, Options, DB};

const TEST: &str = "interop option_rows_dbwal";

const SET: &[(&str, &str)] = &[("track_and_verify_wals", "true")];

#[test]
fn rocksdb_11_loads_and_keeps_the_dbwal_rows() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    tools::ldb_keeps_option_rows(SET, true);
}

fn wals(dir: &Path) -> Vec<PathBuf> {
    tools::wal_files(dir)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn log_number(p: &Path) -> u64 {
    p.file_stem().unwrap().to_str().unwrap().parse().unwrap()
}

#[test]
fn rocksdb_11_verifies_shales_wal_chain() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut o = Options::default().get_options_from_string("track_and_verify_wals=true").unwrap();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_wal_recovery_mode(DBRecoveryMode::AbsoluteConsistency);
    {
        // Three WALs, all needed by "b" ("a" flushed twice, each flush a new WAL).
        let db = DB::open_cf(&o, &dir, ["a", "b"]).unwrap();
        for round in 0..3u32 {
            for i in 0..50u32 {
                db.put_cf(db.cf_handle("a").unwrap(), format!("a{round}-{i:03}"), b"va").unwrap();
                db.put_cf(db.cf_handle("b").unwrap(), format!("b{round}-{i:03}"), b"vb").unwrap();
            }
            if round < 2 {
                db.flush_cf(db.cf_handle("a").unwrap()).unwrap();
            }
        }
    }
    let w = wals(&dir);
    assert_eq!(w.len(), 3, "{w:?}");
    // A copy without the middle WAL: RocksDB's recovery (kAbsoluteConsistency, from Shale's
    // OPTIONS file) reports the broken chain in its words.
    let holed = tmp.path().join("holed");
    copy_dir(&dir, &holed);
    std::fs::remove_file(holed.join(w[1].file_name().unwrap())).unwrap();
    let (ok, out, err) = tools::try_tool(
        "ldb",
        &[format!("--db={}", holed.display()), "--try_load_options".into(), "scan".into()],
    );
    let want = format!("Recorded {}. Observed {}", log_number(&w[1]), log_number(&w[0]));
    assert!(!ok && format!("{out}{err}").contains(&want), "{out}{err}");
    assert!(format!("{out}{err}").contains("Mismatched predecessor log number"), "{out}{err}");
    // Whole, RocksDB replays every WAL of the chain.
    let out = tools::run_tool(
        "ldb",
        &[
            format!("--db={}", dir.display()),
            "--try_load_options".into(),
            "scan".into(),
            "--column_family=b".into(),
        ],
    );
    for round in 0..3 {
        assert!(out.contains(&format!("b{round}-049 ==> vb")), "{out}");
    }
}

#[test]
fn shale_verifies_rocksdb_11s_wal_chain() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    // Small memtables that switch (each switch a new WAL naming the one before) and are not
    // flushed: eight must pile up first.
    tools::db_bench_run(
        &dir,
        "fillseq",
        3000,
        &[
            "--track_and_verify_wals=true",
            "--write_buffer_size=65536",
            "--max_write_buffer_number=16",
            "--min_write_buffer_number_to_merge=12",
            "--disable_auto_compactions=true",
            "--value_size=100",
            "--compression_type=none",
        ],
    );
    let w = wals(&dir);
    assert!(w.len() >= 3, "{w:?}");
    assert!(tools::sst_files(&dir).is_empty(), "nothing flushed");
    for p in &w[1..] {
        assert_eq!(std::fs::read(p).unwrap()[6], 130, "{} starts with a predecessor record", p.display());
    }
    let mut o = Options::default().get_options_from_string("track_and_verify_wals=true").unwrap();
    o.set_wal_recovery_mode(DBRecoveryMode::AbsoluteConsistency);
    // Without a middle WAL: Shale's recovery reports RocksDB's Corruption.
    let holed = tmp.path().join("holed");
    copy_dir(&dir, &holed);
    std::fs::remove_file(holed.join(w[1].file_name().unwrap())).unwrap();
    let e = match DB::open(&o, &holed) {
        Ok(_) => panic!("the chain is broken"),
        Err(e) => e,
    };
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(
        e.to_string().contains(&format!(
            "Mismatched predecessor log number of WAL file {:06}.log Recorded {}. Observed {}",
            log_number(&w[2]),
            log_number(&w[1]),
            log_number(&w[0])
        )),
        "{e}"
    );
    // Whole: every key of the chain is read back.
    let db = DB::open(&o, &dir).unwrap();
    assert_eq!(db.iterator(IteratorMode::Start).count(), 3000);
}
