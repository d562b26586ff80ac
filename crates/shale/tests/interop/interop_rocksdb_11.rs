//! RocksDB 11.8.1 (what rust-rocksdb 0.25 bundles) and Shale, both ways, with 11.8.1's own
//! release tools from `../shared/tools/rocksdb-11.8.1/bin/` (see tools/mod.rs; skipped with
//! a printed reason when they are absent or cannot run on this processor):
//! - RocksDB -> Shale: databases `db_bench` 11.8.1 writes with its defaults (table
//!   format_version 7, XXH3 checksums, Snappy) and with every compression (BZip2 refused),
//!   Bloom filters on and off, three column families, data left in the WAL, every
//!   `--format_version` 2..=7, every `--checksum_type`, dynamic level bytes on and off, open
//!   in Shale with exactly what `ldb scan` prints (Shale's reverse scan is ldb's forward scan
//!   reversed); Shale writes, flushes and compacts, and `ldb scan` then shows Shale's writes;
//! - Shale -> RocksDB: databases Shale writes with table format_version 5, 6 and 7 (four
//!   column families, one per compression, Bloom filters, range deletions, data left in the
//!   WAL) are read by 11.8.1's `ldb` (also with `--try_load_options`, which loads Shale's
//!   OPTIONS file), every table passes `sst_dump --command=verify`; RocksDB then writes and
//!   compacts, and Shale reopens and sees everything.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeMap;
use std::path::Path;

use shale::{BlockBasedOptions, ColumnFamilyDescriptor, DBCompressionType, Options, WriteBatch, DB};
use tools::*;

/// Flags that make db_bench write many small SSTs on several levels.
const SMALL_FILES: &[&str] =
    &["--write_buffer_size=65536", "--target_file_size_base=131072", "--max_bytes_for_level_base=524288"];

type Model = BTreeMap<String, BTreeMap<Vec<u8>, Vec<u8>>>;

fn ldb_model(dir: &Path, cfs: &[String]) -> Model {
    cfs.iter().map(|cf| (cf.clone(), ldb_scan(dir, Some(cf)).into_iter().collect())).collect()
}

fn pairs(m: &BTreeMap<Vec<u8>, Vec<u8>>) -> Pairs {
    m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// Shale's forward and reverse scans and gets of every column family equal `model`.
fn check_shale_view(db: &DB, model: &Model, ctx: &str) {
    for (cf, m) in model {
        let want = pairs(m);
        assert_same_pairs(&shale_scan(db, cf), &want, &format!("{ctx}: forward scan of {cf}"));
        let mut rev = want.clone();
        rev.reverse();
        assert_same_pairs(&shale_scan_reverse(db, cf), &rev, &format!("{ctx}: reverse scan of {cf}"));
        let h = db.cf_handle(cf).expect("cf handle");
        for (k, v) in m.iter().step_by(3) {
            let got = db.get_cf(h, k).unwrap_or_else(|e| panic!("{ctx}: get in {cf}: {e}"));
            assert_eq!(got.as_deref(), Some(v.as_slice()), "{ctx}: get {} in {cf}", encode_hex(k));
        }
        assert_eq!(db.get_cf(h, b"absent-key").unwrap(), None, "{ctx}: absent key in {cf}");
    }
}

/// `ldb scan` of every column family equals `model`.
fn check_ldb_view(dir: &Path, model: &Model, ctx: &str) {
    for (cf, m) in model {
        assert_same_pairs(&ldb_scan(dir, Some(cf)), &pairs(m), &format!("{ctx}: ldb scan of {cf}"));
    }
}

fn shale_options() -> Options {
    let mut o = Options::default();
    o.set_level_compaction_dynamic_level_bytes(true);
    o
}

/// A database RocksDB 11.8.1 made: Shale reads what ldb reads, writes over it (puts, deletes,
/// a flush and a compaction, then writes left in its WAL); ldb then reads Shale's result and
/// Shale reopens it.
fn rocksdb_db_round_trip(dir: &Path, expect_cfs: usize, ctx: &str) {
    let cfs = list_cf(dir);
    assert_eq!(cfs.len(), expect_cfs, "{ctx}: column families {cfs:?}");
    let mut model = ldb_model(dir, &cfs);
    assert!(model.values().map(|m| m.len()).sum::<usize>() > 0, "{ctx}: ldb saw no data");
    {
        let db = open_all(dir, &shale_options());
        check_shale_view(&db, &model, &format!("{ctx}: first open"));
        for (n, (cf, m)) in model.iter_mut().enumerate() {
            let h = db.cf_handle(cf).unwrap();
            let old: Vec<Vec<u8>> = m.keys().step_by(9).take(50).cloned().collect();
            for k in old {
                db.delete_cf(h, &k).unwrap();
                m.remove(&k);
            }
            let mut b = WriteBatch::default();
            for i in 0..150u32 {
                let k = format!("shale-{n}-{i:04}").into_bytes();
                let v = format!("shale value {i} in {cf}").into_bytes();
                b.put_cf(h, &k, &v);
                m.insert(k, v);
            }
            db.write(b).unwrap();
            db.flush_cf(h).unwrap();
            db.compact_range_cf(h, None::<&[u8]>, None::<&[u8]>);
            for i in 0..20u32 {
                let k = format!("shale-wal-{n}-{i:02}").into_bytes();
                db.put_cf(h, &k, b"left in the WAL").unwrap();
                m.insert(k, b"left in the WAL".to_vec());
            }
        }
        check_shale_view(&db, &model, &format!("{ctx}: after Shale's writes"));
    }
    check_ldb_view(dir, &model, &format!("{ctx}: after Shale wrote"));
    let db = open_all(dir, &shale_options());
    check_shale_view(&db, &model, &format!("{ctx}: Shale reopen"));
}

/// db_bench 11.8.1 `fillrandom,overwrite` with `flags`, then the round trip.
fn rocksdb_case(test: &str, num: usize, flags: &[&str], expect_cfs: usize) {
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    db_bench_fill(&dir, num, flags);
    rocksdb_db_round_trip(&dir, expect_cfs, test);
}

fn with_small_files(extra: &[&str]) -> Vec<String> {
    SMALL_FILES.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(|s| s.as_str()).collect()
}

/// What rust-rocksdb 0.25 users have: RocksDB 11.8.1's defaults (db_bench adds only the file
/// sizes that make several levels), with dynamic level bytes as `Options::default()` has it.
#[test]
fn rocksdb_11_defaults_open_in_shale() {
    let f = with_small_files(&["--level_compaction_dynamic_level_bytes=true"]);
    rocksdb_case("rocksdb_11_defaults_open_in_shale", 8000, &strs(&f), 1);
}

#[test]
fn rocksdb_11_every_compression_with_and_without_bloom() {
    for c in ["none", "snappy", "zlib", "lz4", "lz4hc", "zstd"] {
        for bloom in [false, true] {
            let ct = format!("--compression_type={c}");
            let mut extra = vec![ct.as_str()];
            if bloom {
                extra.push("--bloom_bits=10");
            }
            let f = with_small_files(&extra);
            rocksdb_case(&format!("rocksdb_11 compression={c} bloom={bloom}"), 3000, &strs(&f), 1);
        }
    }
}

#[test]
fn rocksdb_11_every_format_version() {
    for fv in 2..=7 {
        let a = format!("--format_version={fv}");
        let f = with_small_files(&[&a, "--bloom_bits=10"]);
        rocksdb_case(&format!("rocksdb_11 format_version={fv}"), 3000, &strs(&f), 1);
    }
}

#[test]
fn rocksdb_11_every_checksum_type() {
    for ct in 0..=4 {
        for fv in [6, 7] {
            let a = format!("--checksum_type={ct}");
            let b = format!("--format_version={fv}");
            let f = with_small_files(&[&a, &b]);
            rocksdb_case(&format!("rocksdb_11 checksum_type={ct} format_version={fv}"), 2000, &strs(&f), 1);
        }
    }
}

#[test]
fn rocksdb_11_dynamic_level_bytes_on_and_off() {
    for dynamic in [true, false] {
        let a = format!("--level_compaction_dynamic_level_bytes={dynamic}");
        let f = with_small_files(&[&a, "--compression_type=lz4"]);
        rocksdb_case(&format!("rocksdb_11 dynamic_level_bytes={dynamic}"), 12_000, &strs(&f), 1);
    }
}

#[test]
fn rocksdb_11_three_column_families() {
    let f = with_small_files(&["--num_column_families=3", "--bloom_bits=10"]);
    rocksdb_case("rocksdb_11 three column families", 9000, &strs(&f), 3);
}

/// db_bench's default 64 MiB write buffer keeps a small fill in the WAL only.
#[test]
fn rocksdb_11_everything_in_the_wal() {
    let test = "rocksdb_11 everything in the WAL";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    db_bench_fill(&dir, 5000, &["--num_column_families=2"]);
    assert!(sst_files(&dir).is_empty(), "{test}: expected no tables yet");
    rocksdb_db_round_trip(&dir, 2, test);
}

#[test]
fn rocksdb_11_bzip2_tables_read_as_ldb_reads_them() {
    // BZip2 (compression type 5) is read and written since issue 10: a table RocksDB 11.8.1
    // compressed with it reads the same as `ldb scan` prints it.
    let f = with_small_files(&["--compression_type=bzip2"]);
    rocksdb_case("rocksdb_11 bzip2", 2000, &strs(&f), 1);
}

// ---- Shale -> RocksDB 11.8.1 ----

/// (column family, compression, bloom filter)
const FAMILIES: &[(&str, DBCompressionType, bool)] = &[
    ("default", DBCompressionType::None, true),
    ("cf_snappy", DBCompressionType::Snappy, false),
    ("cf_lz4", DBCompressionType::Lz4, true),
    ("cf_zstd", DBCompressionType::Zstd, true),
];

fn cf_options(fv: i32, compression: DBCompressionType, bloom: bool) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_compression_type(compression);
    o.set_write_buffer_size(128 * 1024);
    o.set_level_compaction_dynamic_level_bytes(true);
    let mut t = BlockBasedOptions::default();
    t.set_format_version(fv);
    if bloom {
        t.set_bloom_filter(10.0, false);
    }
    o.set_block_based_table_factory(&t);
    o
}

fn open_shale(dir: &Path, fv: i32) -> DB {
    let descs: Vec<ColumnFamilyDescriptor> =
        FAMILIES.iter().map(|(n, c, b)| ColumnFamilyDescriptor::new(*n, cf_options(fv, *c, *b))).collect();
    DB::open_cf_descriptors(&cf_options(fv, DBCompressionType::None, true), dir, descs).expect("Shale open")
}

/// Shale writes a database with table format `fv`; returns what it holds.
fn shale_build(dir: &Path, fv: i32) -> Model {
    let mut model: Model = FAMILIES.iter().map(|(n, ..)| (n.to_string(), BTreeMap::new())).collect();
    let db = open_shale(dir, fv);
    for (c, (name, ..)) in FAMILIES.iter().enumerate() {
        let h = db.cf_handle(name).unwrap();
        let m = model.get_mut(*name).unwrap();
        for i in 0..2500u32 {
            let k = format!("key{i:06}").into_bytes();
            let v = format!("{c}/{i}:").repeat(1 + i as usize % 13).into_bytes();
            db.put_cf(h, &k, &v).unwrap();
            m.insert(k, v);
        }
        db.flush_cf(h).unwrap();
        for i in (0..2500u32).step_by(7) {
            let k = format!("key{i:06}").into_bytes();
            db.delete_cf(h, &k).unwrap();
            m.remove(&k);
        }
        db.delete_range_cf(h, b"key000100", b"key000200").unwrap();
        m.retain(|k, _| !(k.as_slice() >= b"key000100".as_slice() && k.as_slice() < b"key000200".as_slice()));
        db.flush_cf(h).unwrap();
        db.compact_range_cf(h, None::<&[u8]>, None::<&[u8]>);
        for i in 0..40u32 {
            let k = format!("wal-{i:03}").into_bytes();
            db.put_cf(h, &k, b"only in the WAL").unwrap();
            m.insert(k, b"only in the WAL".to_vec());
        }
    }
    model
}

fn shale_to_rocksdb(fv: i32) {
    let test = format!("shale_to_rocksdb_11 format_version={fv}");
    if !use_rocksdb_11(&test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut model = shale_build(&dir, fv);
    let d = format!("--db={}", dir.display());

    // Every table passes 11.8.1's verification, and says which format it has.
    let tables = sst_files(&dir);
    assert!(!tables.is_empty(), "{test}: no tables");
    for f in &tables {
        let (ok, out, err) =
            try_tool("sst_dump", &args(&[&format!("--file={}", f.display()), "--command=verify"]));
        assert!(
            ok && !out.contains("Corruption") && !err.contains("Corruption"),
            "{test}: {}: {out}{err}",
            f.display()
        );
        let (ok, out, err) =
            try_tool("sst_dump", &args(&[&format!("--file={}", f.display()), "--show_properties"]));
        assert!(ok, "{test}: sst_dump --show_properties {}: {out}{err}", f.display());
    }
    // ldb reads every column family, with its own options and with Shale's OPTIONS file.
    check_ldb_view(&dir, &model, &test);
    for (cf, m) in &model {
        let out = run_tool(
            "ldb",
            &args(&[&d, "--try_load_options", "scan", "--hex", &format!("--column_family={cf}")]),
        );
        let n = out.lines().filter(|l| l.starts_with("0x")).count();
        assert_eq!(n, m.len(), "{test}: ldb --try_load_options scan of {cf}");
    }
    run_tool("ldb", &args(&[&d, "manifest_dump"]));

    // RocksDB 11.8.1 writes and compacts; Shale reopens and sees it.
    run_tool("ldb", &args(&[&d, "put", "rocksdb-key", "rocksdb-value"]));
    run_tool("ldb", &args(&[&d, "put", "--column_family=cf_zstd", "key000003", "overwritten by RocksDB"]));
    run_tool("ldb", &args(&[&d, "delete", "--column_family=cf_lz4", "key000001"]));
    run_tool("ldb", &args(&[&d, "compact", "--column_family=cf_snappy"]));
    run_tool("ldb", &args(&[&d, "compact"]));
    model.get_mut("default").unwrap().insert(b"rocksdb-key".to_vec(), b"rocksdb-value".to_vec());
    model.get_mut("cf_zstd").unwrap().insert(b"key000003".to_vec(), b"overwritten by RocksDB".to_vec());
    model.get_mut("cf_lz4").unwrap().remove(b"key000001".as_slice());
    check_ldb_view(&dir, &model, &format!("{test}: after RocksDB wrote"));
    let db = open_shale(&dir, fv);
    check_shale_view(&db, &model, &format!("{test}: Shale reopens after RocksDB"));
    db.put(b"after-rocksdb", b"shale again").unwrap();
    model.get_mut("default").unwrap().insert(b"after-rocksdb".to_vec(), b"shale again".to_vec());
    drop(db);
    check_ldb_view(&dir, &model, &format!("{test}: RocksDB reads Shale's last write"));
}

#[test]
fn shale_format_5_to_rocksdb_11() {
    shale_to_rocksdb(5);
}

#[test]
fn shale_format_6_to_rocksdb_11() {
    shale_to_rocksdb(6);
}

#[test]
fn shale_format_7_to_rocksdb_11() {
    shale_to_rocksdb(7);
}
