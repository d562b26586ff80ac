//! Tables an open writes from the WALs are level-0 tables for a Ribbon filter policy, as
//! RocksDB's `WriteLevel0TableForRecovery` (level 0, reason kRecovery; only a flush counts
//! as level -1): with `set_hybrid_ribbon_filter(10, 0)` the recovery table gets a Ribbon
//! filter while a flushed table gets Bloom, and with `bloom_before_level` 1 the recovery
//! table gets Bloom. The filter kind is told by its size (a Ribbon filter is about 30%
//! smaller than Bloom's 10 bits per key), read from the table's properties.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::{Path, PathBuf};

use shale::table::Table;
use shale::{BlockBasedOptions, Options, DB};
use tools::*;

const KEYS: u64 = 6000;
const BLOOM_BYTES: u64 = KEYS * 10 / 8;

fn options(bloom_before_level: i32) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    // Nothing compacts, so the tables listed stay.
    o.set_disable_auto_compactions(true);
    let mut t = BlockBasedOptions::default();
    t.set_hybrid_ribbon_filter(10.0, bloom_before_level);
    o.set_block_based_table_factory(&t);
    o
}

fn fill(db: &DB, tag: &str) {
    for i in 0..KEYS {
        db.put(format!("key{i:08}"), format!("{tag}{i}")).unwrap();
    }
}

/// (filter policy name, filter size) from the table's properties.
fn filter_of(f: &Path) -> (String, u64) {
    let (file, size, opts) = table_file(f);
    let t = Table::open(file, size, opts).unwrap();
    let p = t.properties();
    (p.filter_policy_name.clone(), p.filter_size)
}

/// Writes KEYS keys to the WAL only, reopens (recovery writes one table) and returns it.
fn recovery_table(dir: &Path, bloom_before_level: i32) -> (DB, PathBuf) {
    {
        let db = DB::open(&options(bloom_before_level), dir).unwrap();
        fill(&db, "wal");
    }
    assert!(sst_files(dir).is_empty(), "nothing flushed before the reopen");
    let db = DB::open(&options(bloom_before_level), dir).unwrap();
    let tables = sst_files(dir);
    assert_eq!(tables.len(), 1, "recovery wrote one table: {tables:?}");
    (db, tables[0].clone())
}

#[test]
fn the_recovery_table_gets_the_filter_of_level_0() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let (db, recovered) = recovery_table(&dir, 0);
    let (policy, size) = filter_of(&recovered);
    assert_eq!(policy, "ribbonfilter");
    assert!(size < BLOOM_BYTES * 8 / 10, "level 0 is not below bloom_before_level 0: Ribbon, {size} bytes");

    // A flush counts as level -1: Bloom.
    fill(&db, "flush");
    db.flush().unwrap();
    let flushed: Vec<PathBuf> = sst_files(&dir).into_iter().filter(|f| *f != recovered).collect();
    assert_eq!(flushed.len(), 1, "{flushed:?}");
    let (_, size) = filter_of(&flushed[0]);
    assert!(size >= BLOOM_BYTES * 9 / 10, "a flushed table's filter is Bloom: {size} bytes");
}

#[test]
fn below_bloom_before_level_1_the_recovery_table_gets_bloom() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let (_db, recovered) = recovery_table(&dir, 1);
    let (policy, size) = filter_of(&recovered);
    assert_eq!(policy, "ribbonfilter");
    assert!(size >= BLOOM_BYTES * 9 / 10, "level 0 is below bloom_before_level 1: Bloom, {size} bytes");
}
