//! `tools::ldb_get` reads one key of a Shale database through RocksDB's `ldb get --hex` with
//! both tool versions: a value (an empty one too), and None for an absent key, which
//! RocksDB 7.8.3's ldb reports by failing with `NotFound` and 11.8.1's by succeeding with
//! `Key not found`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{BlockBasedOptions, Options, DB};
use tools::*;

fn write_db(dir: &Path) {
    let mut o = Options::default();
    o.create_if_missing(true);
    // RocksDB 7.8.3 reads format_version 5 tables, not Shale's default 7 (11.x's).
    let mut t = BlockBasedOptions::default();
    t.set_format_version(5);
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, dir).unwrap();
    db.put(b"present", b"value").unwrap();
    db.put(b"empty", b"").unwrap();
    db.flush().unwrap();
}

fn check(dir: &Path) {
    assert_eq!(ldb_get(dir, None, b"present").as_deref(), Some(&b"value"[..]));
    assert_eq!(ldb_get(dir, None, b"empty"), Some(Vec::new()));
    assert_eq!(ldb_get(dir, None, b"absent"), None);
}

#[test]
fn ldb_get_with_rocksdb_7() {
    if !tools_available("ldb_get_with_rocksdb_7", &["ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    write_db(&dir);
    check(&dir);
}

#[test]
fn ldb_get_with_rocksdb_11() {
    if !use_rocksdb_11("ldb_get_with_rocksdb_11") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    write_db(&dir);
    check(&dir);
}
