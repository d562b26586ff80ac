//! `block_protection_bytes_per_key` (helper prot, issue 33) with RocksDB 11.8.1's tools:
//! `ldb` loads, strictly, the OPTIONS file Shale writes with it at 8 and keeps it; Shale
//! loads the OPTIONS file `db_bench --block_protection_bytes_per_key=2` writes, opens the
//! database with it and reads the same pairs `ldb scan` prints.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{Cache, Options, DB};

use crate::tools;

const TEST: &str = "interop option_rows_prot";

#[test]
fn rocksdb_11_loads_and_keeps_block_protection() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    tools::ldb_keeps_option_rows(&[("block_protection_bytes_per_key", "8")], true);
}

#[test]
fn shale_opens_a_db_bench_database_with_its_block_protection() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    tools::db_bench_fill(&dir, 20_000, &["--block_protection_bytes_per_key=2", "--value_size=64"]);
    let theirs = crate::util::latest_options_text(&dir);
    assert!(theirs.contains("  block_protection_bytes_per_key=2\n"), "{theirs}");
    let want = tools::ldb_scan(&dir, None);
    let (o, _) =
        Options::load_latest(&dir, shale::Env::new().unwrap(), false, Cache::new_lru_cache(8 << 20)).unwrap();
    let db = DB::open(&o, &dir).unwrap();
    assert!(crate::util::latest_options_text(&dir).contains("  block_protection_bytes_per_key=2\n"));
    let mine: Vec<_> = db.iterator(shale::IteratorMode::Start).map(|r| r.unwrap()).collect();
    assert_eq!(mine.len(), want.len());
    for ((k, v), (wk, wv)) in mine.iter().zip(&want) {
        assert_eq!((&k[..], &v[..]), (&wk[..], &wv[..]));
    }
}
