//! DB options RocksDB 11.8.1 registers about the WAL chain, the MANIFEST and recovery that
//! rust-rocksdb has no setter for, set by name and acting as RocksDB's (`options_dbwal.rs`).
//!
//! `track_and_verify_wals`: each WAL a memtable switch starts records its predecessor (a
//! type 130 record after the compression-type one); recovery checks the chain, so a WAL
//! missing from the middle or the front of what recovery needs is RocksDB's Corruption
//! (without the option the hole goes unseen and its writes are lost quietly), and an
//! existing database with no WAL fails the open.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::path::{Path, PathBuf};

use shale::{DBRecoveryMode, ErrorKind, Options, DB};

fn opts(track: bool) -> Options {
    let mut o = Options::default().get_options_from_string(format!("track_and_verify_wals={track}")).unwrap();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_wal_recovery_mode(DBRecoveryMode::AbsoluteConsistency);
    o
}

fn wals(dir: &Path) -> Vec<PathBuf> {
    util::files_ending(dir, ".log").into_iter().map(|n| dir.join(n)).collect()
}

/// Three WALs all needed by family "b": "a" is flushed twice in between, each flush
/// switching to a new WAL. Returns the WALs, oldest first.
fn three_wals(dir: &Path, track: bool) -> Vec<PathBuf> {
    let db = DB::open_cf(&opts(track), dir, ["a", "b"]).unwrap();
    for round in 0..3u32 {
        for i in 0..50u32 {
            db.put_cf(db.cf_handle("a").unwrap(), format!("a{round}-{i:03}"), b"va").unwrap();
            db.put_cf(db.cf_handle("b").unwrap(), format!("b{round}-{i:03}"), b"vb").unwrap();
        }
        if round < 2 {
            db.flush_cf(db.cf_handle("a").unwrap()).unwrap();
        }
    }
    drop(db);
    let w = wals(dir);
    assert_eq!(w.len(), 3, "{w:?}");
    w
}

fn log_number(p: &Path) -> u64 {
    p.file_stem().unwrap().to_str().unwrap().parse().unwrap()
}

fn open_err(dir: &Path, track: bool) -> shale::Error {
    match DB::open_cf(&opts(track), dir, ["a", "b"]) {
        Ok(_) => panic!("the open must fail"),
        Err(e) => e,
    }
}

#[test]
fn track_and_verify_wals_records_each_predecessor_and_reopens_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let w = three_wals(&dir, true);
    // The first WAL of the open names no predecessor; each later one starts with a type 130
    // record naming the one before: number, size, last batch sequence.
    assert_eq!(std::fs::read(&w[0]).unwrap()[6], 1, "a batch comes first in the open's first WAL");
    for pair in w.windows(2) {
        let bytes = std::fs::read(&pair[1]).unwrap();
        assert_eq!(bytes[6], 130, "{}", pair[1].display());
        assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), 24);
        assert_eq!(u64::from_le_bytes(bytes[7..15].try_into().unwrap()), log_number(&pair[0]));
        assert_eq!(
            u64::from_le_bytes(bytes[15..23].try_into().unwrap()),
            std::fs::metadata(&pair[0]).unwrap().len()
        );
        assert!(u64::from_le_bytes(bytes[23..31].try_into().unwrap()) > 0);
    }
    let text = util::latest_options_text(&dir);
    assert!(text.contains("track_and_verify_wals=true"), "{text}");
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    assert!(log.contains("Options.track_and_verify_wals: 1"), "the LOG shows it");
    // Untouched, the chain checks out: every key is back.
    let db = DB::open_cf(&opts(true), &dir, ["a", "b"]).unwrap();
    for round in 0..3 {
        assert_eq!(
            db.get_cf(db.cf_handle("b").unwrap(), format!("b{round}-049")).unwrap(),
            Some(b"vb".to_vec())
        );
    }
}

#[test]
fn a_wal_missing_from_the_chain_is_corruption() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let w = three_wals(&dir, true);
    let keep = tmp.path().join("keep");
    std::fs::create_dir(&keep).unwrap();
    for p in &w {
        std::fs::copy(p, keep.join(p.file_name().unwrap())).unwrap();
    }
    let restore = || {
        for p in &w {
            std::fs::copy(keep.join(p.file_name().unwrap()), p).unwrap();
        }
    };
    // The middle one gone: the third names the second, recovery saw the first.
    std::fs::remove_file(&w[1]).unwrap();
    let e = open_err(&dir, true);
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    let want = format!(
        "Mismatched predecessor log number of WAL file {:06}.log Recorded {}. Observed {}",
        log_number(&w[2]),
        log_number(&w[1]),
        log_number(&w[0])
    );
    assert!(e.to_string().contains(&want), "{e}");
    // The first gone: the second names a WAL recovery needs.
    restore();
    std::fs::remove_file(&w[0]).unwrap();
    let e = open_err(&dir, true);
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains(&format!("Missing WAL of log number {}", log_number(&w[0]))), "{e}");
    // The first cut short: its size is not the one recorded.
    restore();
    let len = std::fs::metadata(&w[0]).unwrap().len();
    let bytes = std::fs::read(&w[0]).unwrap();
    let mut longer = bytes.clone();
    longer.extend_from_slice(&[0u8; 16]);
    std::fs::write(&w[0], &longer).unwrap();
    let e = open_err(&dir, true);
    assert!(
        e.to_string().contains(&format!(
            "Mismatched size of the WAL of log number {}. Recorded {len} bytes. Observed {} bytes.",
            log_number(&w[0]),
            len + 16
        )),
        "{e}"
    );
    // Every WAL gone from an existing database.
    for p in &w {
        std::fs::remove_file(p).unwrap();
    }
    let e = open_err(&dir, true);
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains("Opening an existing DB with no WAL files"), "{e}");
    // Read-only opens check too.
    let e = match DB::open_cf_for_read_only(&opts(true), &dir, ["a", "b"], false) {
        Ok(_) => panic!("the read-only open must fail"),
        Err(e) => e,
    };
    assert!(e.to_string().contains("Opening an existing DB with no WAL files"), "{e}");
    // Whole again, it opens with every key.
    restore();
    let db = DB::open_cf(&opts(true), &dir, ["a", "b"]).unwrap();
    assert_eq!(db.get_cf(db.cf_handle("b").unwrap(), b"b1-000").unwrap(), Some(b"vb".to_vec()));
}

#[test]
fn without_the_option_a_missing_middle_wal_goes_unseen() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let w = three_wals(&dir, false);
    assert_eq!(std::fs::read(&w[1]).unwrap()[6], 1, "no predecessor record without the option");
    std::fs::remove_file(&w[1]).unwrap();
    // Even the strictest recovery mode sees no damage: the middle WAL's writes are lost.
    let db = DB::open_cf(&opts(false), &dir, ["a", "b"]).unwrap();
    let b = db.cf_handle("b").unwrap();
    assert_eq!(db.get_cf(b, b"b0-000").unwrap(), Some(b"vb".to_vec()));
    assert_eq!(db.get_cf(b, b"b1-000").unwrap(), None);
    assert_eq!(db.get_cf(b, b"b2-000").unwrap(), Some(b"vb".to_vec()));
}

#[test]
fn point_in_time_recovery_stops_at_the_hole_and_newer_tables_fail_the_open() {
    // Point in time: replay stops at the WAL naming a missing predecessor; "a" holds tables
    // written after the hole, so RocksDB's consistency check fails the open (without the
    // option, the same open succeeds with the middle WAL's writes lost).
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let w = three_wals(&dir, true);
    std::fs::remove_file(&w[1]).unwrap();
    let mut o = opts(true);
    o.set_wal_recovery_mode(DBRecoveryMode::PointInTime);
    let e = match DB::open_cf(&o, &dir, ["a", "b"]) {
        Ok(_) => panic!("a's tables are newer than the hole"),
        Err(e) => e,
    };
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(
        e.to_string().contains(
            "Column family inconsistency: SST file contains data beyond the point of corruption in CF a"
        ),
        "{e}"
    );
    let mut o = opts(false);
    o.set_wal_recovery_mode(DBRecoveryMode::PointInTime);
    let db = DB::open_cf(&o, &dir, ["a", "b"]).unwrap();
    assert_eq!(db.get_cf(db.cf_handle("b").unwrap(), b"b1-000").unwrap(), None);
}
