//! RocksDB -> Shale: databases made by RocksDB 7.8.3's `db_bench` (every compression it
//! ships, with and without bloom filters, several column families, data still in the WAL)
//! open in Shale, which must read back exactly what `ldb scan --hex` prints, forward, in
//! reverse and by `get`; Shale then writes more in place, closes, and `ldb scan` must show
//! Shale's writes as well (and Shale must see the same after reopening).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeMap;
use std::path::Path;

use shale::{Options, WriteBatch, DB};
use tools::*;

/// Flags that make db_bench write many small SSTs on several levels (its default 64 MiB
/// write buffer would keep a small fill in the WAL).
const SMALL_FILES: &[&str] =
    &["--write_buffer_size=65536", "--target_file_size_base=131072", "--max_bytes_for_level_base=524288"];

type Model = BTreeMap<String, BTreeMap<Vec<u8>, Vec<u8>>>;

/// What ldb sees, per column family.
fn ldb_model(dir: &Path, cfs: &[String]) -> Model {
    cfs.iter().map(|cf| (cf.clone(), ldb_scan(dir, Some(cf)).into_iter().collect())).collect()
}

/// Checks Shale's view of every column family against `model`: forward and reverse scans
/// and a `get` of every key, plus gets of keys that are absent.
fn check_shale_view(db: &DB, model: &Model, ctx: &str) {
    for (cf, pairs) in model {
        let want: Pairs = pairs.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        assert_same_pairs(&shale_scan(db, cf), &want, &format!("{ctx}: forward scan of {cf}"));
        let mut rev_want = want.clone();
        rev_want.reverse();
        assert_same_pairs(&shale_scan_reverse(db, cf), &rev_want, &format!("{ctx}: reverse scan of {cf}"));
        let h = db.cf_handle(cf).expect("cf handle");
        for (k, v) in pairs {
            let got = db.get_cf(h, k).unwrap_or_else(|e| panic!("{ctx}: get in {cf}: {e}"));
            assert_eq!(got.as_deref(), Some(v.as_slice()), "{ctx}: get {} in {cf}", encode_hex(k));
        }
        for i in 0..50u64 {
            // db_bench keys are 8-byte big-endian numbers padded with '0'; these are not.
            let missing = format!("missing-{i:04}").into_bytes();
            assert_eq!(db.get_cf(h, &missing).unwrap(), None, "{ctx}: absent key in {cf}");
        }
    }
}

/// Shale writes to every column family (puts, deletes of existing keys, a batch, a flush and
/// then more writes left in the WAL) and applies the same to `model`.
fn shale_writes(db: &DB, model: &mut Model) {
    for (n, (cf, pairs)) in model.iter_mut().enumerate() {
        let h = db.cf_handle(cf).expect("cf handle");
        let existing: Vec<Vec<u8>> = pairs.keys().step_by(7).take(40).cloned().collect();
        for k in &existing {
            db.delete_cf(h, k).unwrap();
            pairs.remove(k);
        }
        for i in 0..200u32 {
            let k = format!("shale-{n}-{i:05}").into_bytes();
            let v = format!("value {i} of family {cf}").repeat(1 + (i as usize % 4)).into_bytes();
            db.put_cf(h, &k, &v).unwrap();
            pairs.insert(k, v);
        }
        // Overwrite some RocksDB keys.
        let overwrite: Vec<Vec<u8>> = pairs.keys().skip(3).step_by(11).take(30).cloned().collect();
        let mut b = WriteBatch::default();
        for k in overwrite {
            let v = b"overwritten by shale".to_vec();
            b.put_cf(h, &k, &v);
            pairs.insert(k, v);
        }
        db.write(b).unwrap();
    }
    db.flush().unwrap();
    // Writes that stay in Shale's WAL when it closes.
    for (n, (cf, pairs)) in model.iter_mut().enumerate() {
        let h = db.cf_handle(cf).expect("cf handle");
        for i in 0..50u32 {
            let k = format!("shale-wal-{n}-{i:03}").into_bytes();
            let v = format!("in the WAL {i}").into_bytes();
            db.put_cf(h, &k, &v).unwrap();
            pairs.insert(k, v);
        }
        if let Some(k) = pairs.keys().nth(5).cloned() {
            db.delete_cf(h, &k).unwrap();
            pairs.remove(&k);
        }
    }
}

/// The whole scenario for one database that RocksDB created in `dir`.
fn rocksdb_db_round_trip(dir: &Path, expect_cfs: usize, ctx: &str) {
    let cfs = list_cf(dir);
    assert_eq!(cfs.len(), expect_cfs, "{ctx}: column families {cfs:?}");
    let mut model = ldb_model(dir, &cfs);
    assert!(model.values().map(|m| m.len()).sum::<usize>() > 0, "{ctx}: ldb saw no data");

    let mut opts = Options::default();
    for_rocksdb7(&mut opts); // 7.8.3's ldb reads what Shale writes
    {
        let db = open_all(dir, &opts);
        check_shale_view(&db, &model, &format!("{ctx}: first open"));
        shale_writes(&db, &mut model);
        check_shale_view(&db, &model, &format!("{ctx}: after Shale's writes"));
    }
    // RocksDB reads what Shale left (tables, MANIFEST and WAL).
    let after = ldb_model(dir, &cfs);
    for (cf, want) in &model {
        let got: Pairs = after[cf].iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let want: Pairs = want.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        assert_same_pairs(&got, &want, &format!("{ctx}: ldb scan of {cf} after Shale wrote"));
    }
    let db = open_all(dir, &opts);
    check_shale_view(&db, &model, &format!("{ctx}: Shale reopen"));
}

fn compression_case(compression: &str, bloom: bool) {
    let test = format!("rocksdb_to_shale {compression} bloom={bloom}");
    if !tools_available(&test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut flags = SMALL_FILES.to_vec();
    let ct = format!("--compression_type={compression}");
    flags.push(&ct);
    if bloom {
        flags.push("--bloom_bits=10");
    }
    db_bench_fill(&dir, 10_000, &flags);
    assert!(sst_files(&dir).len() >= 2, "{test}: db_bench wrote too few tables");
    rocksdb_db_round_trip(&dir, 1, &test);
}

#[test]
fn compression_none() {
    compression_case("none", false);
    compression_case("none", true);
}

#[test]
fn compression_snappy() {
    compression_case("snappy", false);
    compression_case("snappy", true);
}

#[test]
fn compression_lz4() {
    compression_case("lz4", false);
    compression_case("lz4", true);
}

#[test]
fn compression_zstd() {
    compression_case("zstd", false);
    compression_case("zstd", true);
}

#[test]
fn compression_zlib() {
    compression_case("zlib", false);
    compression_case("zlib", true);
}

/// Three column families, each with tables on several levels and live WALs.
#[test]
fn three_column_families() {
    let test = "rocksdb_to_shale three_column_families";
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut flags = SMALL_FILES.to_vec();
    flags.extend(["--num_column_families=3", "--bloom_bits=10", "--compression_type=snappy"]);
    db_bench_fill(&dir, 12_000, &flags);
    rocksdb_db_round_trip(&dir, 3, test);
}

/// db_bench's default 64 MiB write buffer keeps a small fill entirely in the WAL: Shale
/// must recover every write from RocksDB's log records alone.
#[test]
fn everything_in_the_wal() {
    let test = "rocksdb_to_shale everything_in_the_wal";
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    db_bench_fill(&dir, 8_000, &["--num_column_families=2"]);
    assert!(sst_files(&dir).is_empty(), "{test}: expected no tables yet");
    assert!(!wal_files(&dir).is_empty());
    rocksdb_db_round_trip(&dir, 2, test);
}

/// Tables plus a WAL with unflushed writes: `ldb put` (which flushes the recovered WAL,
/// then writes its own records to a new WAL), including a put that overwrites a table key
/// and an empty value.
#[test]
fn tables_and_unflushed_wal() {
    let test = "rocksdb_to_shale tables_and_unflushed_wal";
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut flags = SMALL_FILES.to_vec();
    flags.push("--num_column_families=2");
    db_bench_fill(&dir, 6_000, &flags);
    let d = dir.display().to_string();
    let first_key = ldb_scan(&dir, None)[0].0.clone();
    run_tool("ldb", &args(&[&format!("--db={d}"), "put", "ldb-key", "ldb-value"]));
    run_tool("ldb", &args(&[&format!("--db={d}"), "put", "--hex", &encode_hex(&first_key), "0x"]));
    run_tool(
        "ldb",
        &args(&[
            &format!("--db={d}"),
            "put",
            "--column_family=column_family_name_000001",
            "cf-key",
            "cf-value",
        ]),
    );
    run_tool("ldb", &args(&[&format!("--db={d}"), "delete", "ldb-key"]));
    run_tool("ldb", &args(&[&format!("--db={d}"), "put", "ldb-key2", "v2"]));
    let wal = wal_files(&dir);
    assert!(!wal.is_empty() && std::fs::metadata(wal.last().unwrap()).unwrap().len() > 0);
    assert_eq!(ldb_get(&dir, None, &first_key), Some(Vec::new()));
    rocksdb_db_round_trip(&dir, 2, test);
}
