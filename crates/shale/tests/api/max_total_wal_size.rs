//! `max_total_wal_size`: once the live WALs together pass it, the families whose unflushed
//! data holds the oldest WAL are flushed and that WAL is deleted (RocksDB's `SwitchWAL`);
//! with one column family, or under the limit, nothing is flushed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::path::Path;

use shale::{ColumnFamilyDescriptor, Options, DB};

fn cf_files(db: &DB, cf: &str) -> u64 {
    let h = db.cf_handle(cf).unwrap();
    db.property_int_value_cf(&h, "rocksdb.num-files-at-level0").unwrap().unwrap()
}

fn wal_numbers(dir: &Path) -> Vec<u64> {
    util::files_ending(dir, ".log").iter().map(|n| n.trim_end_matches(".log").parse().unwrap()).collect()
}

fn open(dir: &Path, max_total_wal_size: u64, families: &[&str]) -> DB {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_write_buffer_size(64 << 20);
    if max_total_wal_size > 0 {
        o.set_max_total_wal_size(max_total_wal_size);
    }
    let cfs = families.iter().map(|n| ColumnFamilyDescriptor::new(*n, o.clone()));
    DB::open_cf_descriptors(&o, dir, cfs).unwrap()
}

/// One key in family "cold" (so its data holds the first WAL), then `n` values of 1 KiB
/// into the default family.
fn write(db: &DB, n: u64) {
    let cold = db.cf_handle("cold").unwrap();
    db.put_cf(&cold, "cold-key", "cold-value").unwrap();
    db.put("first", "x").unwrap();
    for i in 0..n {
        db.put(format!("k{i:06}"), util::value(i, 1024)).unwrap();
    }
}

#[test]
fn the_oldest_wals_families_are_flushed_and_the_wal_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), 256 << 10, &["default", "cold"]);
    let first_wal = *wal_numbers(dir.path()).first().unwrap();
    write(&db, 1024);
    // Both families hold data of the first WAL: both are flushed, the cold one's single key
    // included (its memtable is far from full).
    util::wait_until(60, "family cold flushed", || cf_files(&db, "cold") == 1);
    util::wait_until(60, "the first WAL deleted", || !wal_numbers(dir.path()).contains(&first_wal));
    assert!(cf_files(&db, "default") >= 1);
    let cold = db.cf_handle("cold").unwrap();
    assert_eq!(db.get_cf(&cold, "cold-key").unwrap().unwrap(), b"cold-value");
    // The live WALs stay near the limit, not the 1 MiB written.
    // The WALs written meanwhile are over the limit too: the next write flushes again and
    // they go (the check is made by writes, as RocksDB's PreprocessWrite).
    let before = wal_numbers(dir.path());
    assert!(before.iter().all(|n| *n > first_wal));
    // Writes go on (a few bytes each) until the WALs of the first round are gone: each
    // write over the limit may start a round for the oldest live WAL.
    let mut i = 0u64;
    util::wait_until(60, "the WALs of the first round deleted", || {
        i += 1;
        db.put(format!("more{i:08}"), "x").unwrap();
        wal_numbers(dir.path()).iter().all(|n| !before.contains(n))
    });
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(
        log.contains(&format!("Flushing all column families with data in WAL number {first_wal}.")),
        "{log}"
    );
    let rounds = log.lines().filter(|l| l.contains("Flushing all column families with data in WAL")).count();
    assert!(rounds >= 2, "a second round for the later WALs: {log}");
}

#[test]
fn under_the_limit_nothing_is_flushed() {
    // The default limit: four times the memtable memory (64 MiB x 2 x 2 families x 4).
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), 0, &["default", "cold"]);
    write(&db, 1024);
    assert_eq!(cf_files(&db, "cold"), 0);
    assert_eq!(cf_files(&db, "default"), 0);
    assert_eq!(wal_numbers(dir.path()).len(), 1);
}

#[test]
fn one_family_alone_is_not_flushed_for_it() {
    // RocksDB switches WALs for the limit only with more than one column family.
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), 64 << 10, &["default"]);
    for i in 0..1024u64 {
        db.put(format!("k{i:06}"), util::value(i, 1024)).unwrap();
    }
    assert_eq!(int_files(&db), 0);
    assert_eq!(wal_numbers(dir.path()).len(), 1);
}

fn int_files(db: &DB) -> u64 {
    util::int_prop(db, "rocksdb.num-files-at-level0")
}
