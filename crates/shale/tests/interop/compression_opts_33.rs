//! `compression_opts.checksum` and `compression_opts.max_compressed_bytes_per_kb` (and the
//! same fields of `bottommost_compression_opts`) act as RocksDB 11.8.1's (issue 33):
//! - `checksum` (ZSTD): each compressed block's frame carries ZSTD's content checksum, four
//!   bytes more per compressed data block than the same table without it;
//! - `max_compressed_bytes_per_kb`: a block is kept compressed only at or under this many
//!   bytes per KiB (capped at 1023); 0 or less turns compression off (the table is written as
//!   an uncompressed one, its "rocksdb.compression_options" still naming the configured type);
//! - both are written to the OPTIONS file and each table's "rocksdb.compression_options";
//! - RocksDB 11.8.1's `sst_dump --command=verify` and `ldb scan` read every table.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::table::reader::Table;
use shale::{DBCompressionType as C, Options, DB};
use tools::*;

/// Values that compress about 2:1 with ZSTD (half of their bytes random hex).
fn value(i: u32) -> String {
    let mut x = i.wrapping_mul(2_654_435_761) | 1;
    let mut s = String::new();
    for _ in 0..8 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        s.push_str(&format!("{x:08x}--------"));
    }
    s
}

/// The properties of the database's one live table.
fn only_table(db: &DB, dir: &Path) -> shale::table::properties::TableProperties {
    let files = db.live_files().unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    let (file, size, opts) = table_file(&dir.join(files[0].name.trim_start_matches('/')));
    Table::open(file, size, opts).unwrap().properties().clone()
}

/// A database written with ZSTD and `extra` options, flushed into one table.
fn write(dir: &Path, extra: &str) -> (DB, shale::table::properties::TableProperties) {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(C::Zstd);
    let mut o = if extra.is_empty() { o } else { o.get_options_from_string(extra).unwrap() };
    o.create_if_missing(true);
    let db = DB::open(&o, dir).unwrap();
    for i in 0..4000u32 {
        db.put(format!("key{i:06}"), value(i)).unwrap();
    }
    db.flush().unwrap();
    let p = only_table(&db, dir);
    (db, p)
}

/// Shale's 4,000 pairs, read by RocksDB 11.8.1 (`tools::rocksdb_reads`).
fn rocksdb_reads(dir: &Path, db: &DB, test: &str) {
    assert_eq!(shale_scan(db, "default").len(), 4000);
    tools::rocksdb_reads(dir, db, test);
}

#[test]
fn zstd_checksum_adds_four_bytes_per_compressed_block() {
    let plain_dir = tempfile::tempdir().unwrap();
    let sum_dir = tempfile::tempdir().unwrap();
    let (plain_db, plain) = write(plain_dir.path(), "");
    let (sum_db, sum) = write(sum_dir.path(), "compression_opts={checksum=true}");
    assert!(plain.compression_options.contains("checksum=0;"), "{}", plain.compression_options);
    assert!(sum.compression_options.contains("checksum=1;"), "{}", sum.compression_options);
    // Same keys, same blocks: each (compressed) data block is four bytes longer.
    assert_eq!(plain.num_data_blocks, sum.num_data_blocks);
    assert!(plain.num_data_blocks > 10, "{}", plain.num_data_blocks);
    assert_eq!(sum.data_size, plain.data_size + 4 * sum.num_data_blocks);
    let text = latest_options_text(sum_dir.path());
    assert!(text.contains("compression_opts={checksum=true;"), "{text}");
    rocksdb_reads(plain_dir.path(), &plain_db, "zstd_checksum plain");
    rocksdb_reads(sum_dir.path(), &sum_db, "zstd_checksum");
    // The OPTIONS file loads back with the field.
    let (o, _) = Options::load_latest(
        sum_dir.path(),
        shale::Env::new().unwrap(),
        true,
        shale::Cache::new_lru_cache(1 << 20),
    )
    .unwrap();
    drop(sum_db);
    let db = DB::open(&o, sum_dir.path()).unwrap();
    for i in 4000..4100u32 {
        db.put(format!("key{i:06}"), value(i)).unwrap();
    }
    db.flush().unwrap();
    let newest = db.live_files().unwrap().into_iter().max_by_key(|f| f.name.clone()).unwrap();
    let (file, size, opts) = table_file(&sum_dir.path().join(newest.name.trim_start_matches('/')));
    let p = Table::open(file, size, opts).unwrap().properties().clone();
    assert!(p.compression_options.contains("checksum=1;"), "{}", p.compression_options);
}

#[test]
fn max_compressed_bytes_per_kb_keeps_blocks_raw_above_the_bound() {
    let d896 = tempfile::tempdir().unwrap();
    let d300 = tempfile::tempdir().unwrap();
    let d0 = tempfile::tempdir().unwrap();
    let (db896, p896) = write(d896.path(), "");
    let (db300, p300) = write(d300.path(), "compression_opts={max_compressed_bytes_per_kb=300}");
    let (db0, p0) = write(d0.path(), "compression_opts={max_compressed_bytes_per_kb=0}");
    let raw_bytes = p896.raw_key_size + p896.raw_value_size;
    // 896: the blocks compress (about 2:1); 300: none fits, every block is stored raw.
    assert!(p896.data_size * 10 < raw_bytes * 7, "{} of {raw_bytes}", p896.data_size);
    assert!(p300.data_size > raw_bytes * 9 / 10, "{} of {raw_bytes}", p300.data_size);
    assert_eq!(p0.data_size, p300.data_size);
    assert!(p896.compression_options.contains("max_compressed_bytes_per_kb=896;"));
    assert!(
        p300.compression_options.contains("max_compressed_bytes_per_kb=300;"),
        "{}",
        p300.compression_options
    );
    // 300: configured and tried (RocksDB names the manager and no codec used); 0: no
    // compressor at all (no manager name); both keep `_type=7` (ZSTD, as configured).
    assert!(p300.compression_name.starts_with("BuiltinV2;"), "{}", p300.compression_name);
    assert!(p0.compression_name.starts_with(';'), "{}", p0.compression_name);
    assert!(p0.compression_options.contains("_type=7;"), "{}", p0.compression_options);
    let text = latest_options_text(d300.path());
    assert!(text.contains("max_compressed_bytes_per_kb=300;"), "{text}");
    rocksdb_reads(d896.path(), &db896, "per_kb 896");
    rocksdb_reads(d300.path(), &db300, "per_kb 300");
    rocksdb_reads(d0.path(), &db0, "per_kb 0");
}

#[test]
fn bottommost_compression_opts_take_both_fields() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.set_compression_type(C::Zstd);
    let mut o = o
        .get_options_from_string(
            "bottommost_compression=kZSTD;\
             bottommost_compression_opts={enabled=true;checksum=true;max_compressed_bytes_per_kb=1000}",
        )
        .unwrap();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, dir.path()).unwrap();
    // Two overlapping level-0 tables, so the compaction rewrites them.
    for half in 0..2u32 {
        for i in (half..4000).step_by(2) {
            db.put(format!("key{i:06}"), value(i)).unwrap();
        }
        db.flush().unwrap();
    }
    for lf in db.live_files().unwrap() {
        let (file, size, opts) = table_file(&dir.path().join(lf.name.trim_start_matches('/')));
        let p = Table::open(file, size, opts).unwrap().properties().clone();
        assert!(p.compression_options.contains("checksum=0;"), "{}", p.compression_options);
    }
    db.compact_range::<&[u8], &[u8]>(None, None);
    let bottom = only_table(&db, dir.path());
    assert!(bottom.compression_options.contains("checksum=1;"), "{}", bottom.compression_options);
    assert!(
        bottom.compression_options.contains("max_compressed_bytes_per_kb=1000;"),
        "{}",
        bottom.compression_options
    );
    let text = latest_options_text(dir.path());
    assert!(text.contains("bottommost_compression_opts={checksum=true;"), "{text}");
    rocksdb_reads(dir.path(), &db, "bottommost_compression_opts");
}
