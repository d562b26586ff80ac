//! `set_track_and_verify_wals_in_manifest(true)`: a WAL closed while one family still needs
//! it is recorded in the MANIFEST with its synced size (RocksDB 11.8.1's `ldb manifest_dump`
//! prints the record), and dropped with a WalDeletion once every family has flushed past
//! it. Reopening with the tracked WAL cut short, or gone, is RocksDB's Corruption with its
//! message; untouched, the database reopens with every key.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{ErrorKind, Options, DB};
use tools::*;

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_track_and_verify_wals_in_manifest(true);
    for_rocksdb7(&mut o); // format 5: RocksDB 7.8.3's ldb reads it where 11.8.1 does not run
    o
}

/// Writes to both families, flushes only "a": the WAL holding b's keys is closed (synced)
/// and tracked. Returns that WAL's number and size.
fn setup(dir: &Path) -> (u64, u64) {
    let db = DB::open_cf(&opts(), dir, ["a", "b"]).unwrap();
    for i in 0..200u32 {
        db.put_cf(db.cf_handle("a").unwrap(), format!("a{i:04}"), b"value-a").unwrap();
        db.put_cf(db.cf_handle("b").unwrap(), format!("b{i:04}"), b"value-b").unwrap();
    }
    let wal = wal_files(dir);
    assert_eq!(wal.len(), 1);
    db.flush_cf(db.cf_handle("a").unwrap()).unwrap();
    drop(db);
    let p = &wal[0];
    let n: u64 = p.file_stem().unwrap().to_str().unwrap().parse().unwrap();
    (n, std::fs::metadata(p).unwrap().len())
}

#[test]
fn tracked_wal_cut_short_or_missing_is_corruption() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let (n, size) = setup(&dir);
    let wal = dir.join(format!("{n:06}.log"));
    assert!(wal.exists());
    let m = std::fs::read(current_manifest(&dir)).unwrap();
    assert!(m.len() > 20);
    if use_rocksdb_11("tracked_wal_cut_short_or_missing_is_corruption") {
        let out =
            run_tool("ldb", &[format!("--db={}", dir.display()), "manifest_dump".into(), "--verbose".into()]);
        let want = format!("log_number: {n}");
        let line = out.lines().find(|l| l.contains("WalAddition") && l.contains(&want));
        let line = line.unwrap_or_else(|| panic!("no WalAddition of WAL {n} in:\n{out}"));
        assert!(line.contains(&size.to_string()), "synced size {size} not in {line:?}");
    }
    // Cut short: Corruption naming the sizes.
    let copy = tmp.path().join("keep.log");
    std::fs::copy(&wal, &copy).unwrap();
    std::fs::OpenOptions::new().write(true).open(&wal).unwrap().set_len(size - 10).unwrap();
    let e = DB::open_cf(&opts(), &dir, ["a", "b"]).expect_err("open must fail");
    assert_eq!(e.kind(), ErrorKind::Corruption);
    assert!(
        e.to_string().contains(&format!(
            "Size mismatch: WAL (log number: {n}) in MANIFEST is {size} bytes , but actually is {} bytes on disk.",
            size - 10
        )),
        "{e}"
    );
    // Gone: Corruption naming it.
    std::fs::remove_file(&wal).unwrap();
    let e = DB::open_cf(&opts(), &dir, ["a", "b"]).expect_err("open must fail");
    assert_eq!(e.kind(), ErrorKind::Corruption);
    assert!(e.to_string().contains(&format!("Missing WAL with log number: {n}.")), "{e}");
    // Back whole: it opens with every key.
    std::fs::copy(&copy, &wal).unwrap();
    let db = DB::open_cf(&opts(), &dir, ["a", "b"]).unwrap();
    assert_eq!(db.get_cf(db.cf_handle("b").unwrap(), b"b0199").unwrap().as_deref(), Some(&b"value-b"[..]));
    assert_eq!(db.get_cf(db.cf_handle("a").unwrap(), b"a0000").unwrap().as_deref(), Some(&b"value-a"[..]));
}

#[test]
fn wal_deletion_follows_the_last_flush() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = DB::open_cf(&opts(), &dir, ["a", "b"]).unwrap();
    for i in 0..100u32 {
        db.put_cf(db.cf_handle("a").unwrap(), format!("a{i:04}"), b"x").unwrap();
        db.put_cf(db.cf_handle("b").unwrap(), format!("b{i:04}"), b"y").unwrap();
    }
    let first = wal_files(&dir)[0].clone();
    db.flush_cf(db.cf_handle("a").unwrap()).unwrap();
    assert!(first.exists(), "b still needs the first WAL");
    db.flush_cf(db.cf_handle("b").unwrap()).unwrap();
    drop(db);
    assert!(!first.exists(), "the first WAL is obsolete once b flushed");
    // The MANIFEST no longer tracks it: the open does not look for it.
    let db = DB::open_cf(&opts(), &dir, ["a", "b"]).unwrap();
    assert_eq!(db.get_cf(db.cf_handle("b").unwrap(), b"b0007").unwrap().as_deref(), Some(&b"y"[..]));
    drop(db);
    if use_rocksdb_11("wal_deletion_follows_the_last_flush") {
        // Shale's reopen wrote a new MANIFEST tracking nothing; 11.8.1 opens the database.
        assert_eq!(ldb_get(&dir, Some("b"), b"b0007").as_deref(), Some(&b"y"[..]));
    }
}
