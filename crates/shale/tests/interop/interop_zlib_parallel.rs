//! zlib's `compression_opts` (window bits, strategy, a dictionary) and parallel compression
//! (`parallel_threads`) against RocksDB 11.8.1's tools (skipped with a printed reason when
//! they are absent):
//! - tables Shale writes with zlib at window bits -9, -14 and -15, each strategy 1..=4 and
//!   a zlib dictionary pass `sst_dump --command=verify`, and `ldb scan` reads them as Shale
//!   does (RocksDB inflates every zlib block with window bits -14);
//! - tables RocksDB writes with zlib and a dictionary read in Shale as `ldb scan` prints them;
//! - tables written, flushed and compacted with `parallel_threads` 4 (ZSTD, zlib, LZ4HC)
//!   pass `sst_dump --command=verify` and `ldb scan`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{DBCompressionType, Options, DB};
use tools::*;

fn record(i: u32) -> (Vec<u8>, Vec<u8>) {
    let k = format!("row:{:08}", (i as u64 * 2_654_435_761) % 100_000_000).into_bytes();
    let v =
        format!("{{\"id\":{i},\"name\":\"row {i}\",\"group\":{},\"tags\":[\"a\",\"b{}\"]}}", i % 97, i % 13)
            .into_bytes();
    (k, v)
}

/// Writes 8000 records, flushes, and (with `compact`) compacts; returns the model.
fn write_db(dir: &Path, opts: &Options, compact: bool) -> Pairs {
    let db = DB::open(opts, dir).unwrap();
    let mut model: Pairs = (0..8000).map(record).collect();
    for (i, (k, v)) in model.iter().enumerate() {
        db.put(k, v).unwrap();
        if compact && i % 2000 == 1999 {
            db.flush().unwrap();
        }
    }
    db.flush().unwrap();
    if compact {
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
    }
    model.sort();
    model.dedup_by(|a, b| a.0 == b.0);
    assert_same_pairs(&shale_scan(&db, "default"), &model, "Shale's own read");
    model
}

fn verify_with_rocksdb(dir: &Path, model: &Pairs, ctx: &str) {
    let ssts = sst_files(dir);
    assert!(!ssts.is_empty(), "{ctx}: no tables");
    for f in ssts {
        let out = run_tool("sst_dump", &args(&[&format!("--file={}", f.display()), "--command=verify"]));
        assert!(!out.contains("Corruption"), "{ctx}: {out}");
    }
    assert_same_pairs(&ldb_scan(dir, None), model, &format!("{ctx}: ldb scan"));
}

fn table_bytes(dir: &Path) -> u64 {
    sst_files(dir).iter().map(|p| std::fs::metadata(p).unwrap().len()).sum()
}

#[test]
fn shale_zlib_window_bits_strategies_and_dictionary_read_by_rocksdb_11() {
    let test = "Shale's zlib tables (window bits, strategies, dictionary) read by RocksDB 11.8.1";
    if !use_rocksdb_11(test) {
        return;
    }
    // (name, window_bits, strategy, max_dict_bytes)
    let cases: &[(&str, i32, i32, i32)] = &[
        ("default", -14, 0, 0),
        ("window -9", -9, 0, 0),
        ("window -15", -15, 0, 0),
        ("filtered", -14, 1, 0),
        ("huffman only", -14, 2, 0),
        ("rle", -14, 3, 0),
        ("fixed", -14, 4, 0),
        ("dictionary", -14, 0, 16384),
    ];
    let mut sizes = Vec::new();
    for (name, window_bits, strategy, max_dict) in cases {
        let ctx = format!("{test}: {name}");
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_compression_type(DBCompressionType::Zlib);
        opts.set_compression_options(*window_bits, 32767, *strategy, *max_dict);
        let model = write_db(&dir, &opts, false);
        let text = latest_options_text(&dir);
        assert!(text.contains(&format!("strategy={strategy};window_bits={window_bits};")), "{ctx}");
        verify_with_rocksdb(&dir, &model, &ctx);
        sizes.push((*name, table_bytes(&dir)));
    }
    // The settings act: Huffman-only coding finds no matches, a dictionary pays.
    let size = |n: &str| sizes.iter().find(|s| s.0 == n).map(|s| s.1).unwrap();
    assert!(size("huffman only") > size("default"), "{sizes:?}");
    assert!(size("dictionary") < size("default"), "{sizes:?}");
}

#[test]
fn rocksdb_11_zlib_dictionary_tables_read_by_shale() {
    let test = "RocksDB 11.8.1's zlib dictionary tables read by Shale";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    db_bench_fill(
        &dir,
        20_000,
        &[
            "--write_buffer_size=1048576",
            "--target_file_size_base=2097152",
            "--compression_type=zlib",
            "--compression_max_dict_bytes=16384",
        ],
    );
    assert!(!sst_files(&dir).is_empty(), "{test}: no tables");
    let want = ldb_scan(&dir, None);
    let db = DB::open(&Options::default(), &dir).unwrap();
    assert_same_pairs(&shale_scan(&db, "default"), &want, test);
}

#[test]
fn parallel_compression_tables_read_by_rocksdb_11() {
    let test = "Shale's tables compressed with parallel_threads 4, read by RocksDB 11.8.1";
    if !use_rocksdb_11(test) {
        return;
    }
    for (name, c) in [
        ("zstd", DBCompressionType::Zstd),
        ("zlib", DBCompressionType::Zlib),
        ("lz4hc", DBCompressionType::Lz4hc),
    ] {
        let ctx = format!("{test}: {name}");
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_compression_type(c);
        opts.set_compression_options_parallel_threads(4);
        let model = write_db(&dir, &opts, true);
        assert!(latest_options_text(&dir).contains("parallel_threads=4;"), "{ctx}");
        verify_with_rocksdb(&dir, &model, &ctx);
        // Reopened from its OPTIONS file's values, as written.
        drop(DB::open(&opts, &dir).unwrap());
    }
}
