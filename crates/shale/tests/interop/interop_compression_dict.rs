//! Compression dictionaries (`compression_opts.max_dict_bytes`, `zstd_max_train_bytes`) both
//! ways with RocksDB 11.8.1's tools (skipped with a printed reason when they are absent):
//! - tables Shale writes with dictionaries (ZSTD trained, ZSTD and LZ4 raw-content, Snappy
//!   storing an unused one as RocksDB does) carry the "rocksdb.compression_dict" meta block,
//!   pass `sst_dump --command=verify`, and `ldb scan` reads them; they compress better than
//!   without a dictionary;
//! - tables `db_bench --compression_max_dict_bytes=16384` writes (trained and raw) read in
//!   Shale as `ldb scan` prints them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{DBCompressionType, Options, DB};
use tools::*;

/// Small, similar records: what dictionaries are for.
fn record(i: u32) -> (Vec<u8>, Vec<u8>) {
    let k = format!("user:{:08}", (i as u64 * 2_654_435_761) % 100_000_000).into_bytes();
    let v = format!(
        "{{\"id\":{i},\"name\":\"user number {i}\",\"email\":\"user{i}@example.com\",\"active\":{},\"score\":{}}}",
        i.is_multiple_of(2),
        i % 1000
    )
    .into_bytes();
    (k, v)
}

fn write_db(dir: &Path, compression: DBCompressionType, dict: Option<(i32, i32)>) -> (Pairs, u64) {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_compression_type(compression);
    if let Some((max_dict, train)) = dict {
        opts.set_compression_options(-14, 32767, 0, max_dict);
        opts.set_zstd_max_train_bytes(train);
    }
    let db = DB::open(&opts, dir).unwrap();
    let mut model: Pairs = (0..20_000).map(record).collect();
    for (k, v) in &model {
        db.put(k, v).unwrap();
    }
    db.flush().unwrap();
    model.sort();
    model.dedup_by(|a, b| a.0 == b.0);
    let size: u64 = sst_files(dir).iter().map(|p| std::fs::metadata(p).unwrap().len()).sum();
    assert_same_pairs(&shale_scan(&db, "default"), &model, "Shale's own read");
    (model, size)
}

fn has_dict_block(dir: &Path) -> bool {
    sst_files(dir).iter().all(|p| {
        let b = std::fs::read(p).unwrap();
        b.windows(b"rocksdb.compression_dict".len()).any(|w| w == b"rocksdb.compression_dict")
    })
}

#[test]
fn shale_dictionary_tables_read_by_rocksdb_11() {
    let test = "Shale's dictionary-compressed tables read by RocksDB 11.8.1";
    if !use_rocksdb_11(test) {
        return;
    }
    let cases: &[(&str, DBCompressionType, (i32, i32), bool)] = &[
        ("zstd trained", DBCompressionType::Zstd, (16384, 100 * 16384), true),
        ("zstd raw", DBCompressionType::Zstd, (16384, 0), true),
        ("lz4 raw", DBCompressionType::Lz4, (16384, 0), true),
        // Snappy has no dictionaries: RocksDB stores one anyway and compresses without it.
        ("snappy", DBCompressionType::Snappy, (16384, 0), false),
    ];
    for (name, c, dict, smaller) in cases {
        let ctx = format!("{test}: {name}");
        let tmp = tempfile::tempdir().unwrap();
        let (_, plain) = write_db(&tmp.path().join("plain"), *c, None);
        let dir = tmp.path().join("dict");
        let (model, with_dict) = write_db(&dir, *c, Some(*dict));
        assert!(has_dict_block(&dir), "{ctx}: no compression_dict meta block");
        if *smaller {
            assert!(with_dict < plain, "{ctx}: {with_dict} bytes with the dictionary, {plain} without");
        }
        for f in sst_files(&dir) {
            run_tool("sst_dump", &args(&[&format!("--file={}", f.display()), "--command=verify"]));
        }
        assert_same_pairs(&ldb_scan(&dir, None), &model, &format!("{ctx}: ldb scan"));
    }
}

#[test]
fn rocksdb_11_dictionary_tables_read_by_shale() {
    let test = "RocksDB 11.8.1's dictionary-compressed tables read by Shale";
    if !use_rocksdb_11(test) {
        return;
    }
    let small = ["--write_buffer_size=1048576", "--target_file_size_base=2097152"];
    let cases: &[(&str, &[&str])] = &[
        (
            "zstd trained",
            &[
                "--compression_type=zstd",
                "--compression_max_dict_bytes=16384",
                "--compression_zstd_max_train_bytes=1638400",
            ],
        ),
        ("zstd raw", &["--compression_type=zstd", "--compression_max_dict_bytes=16384"]),
        ("lz4 raw", &["--compression_type=lz4", "--compression_max_dict_bytes=16384"]),
    ];
    for (name, flags) in cases {
        let ctx = format!("{test}: {name}");
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        let all: Vec<&str> = small.iter().chain(flags.iter()).copied().collect();
        db_bench_fill(&dir, 30_000, &all);
        assert!(!sst_files(&dir).is_empty(), "{ctx}: no tables");
        assert!(has_dict_block(&dir), "{ctx}: RocksDB wrote no dictionary");
        let want = ldb_scan(&dir, None);
        let db = DB::open(&Options::default(), &dir).unwrap();
        assert_same_pairs(&shale_scan(&db, "default"), &want, &ctx);
    }
}
