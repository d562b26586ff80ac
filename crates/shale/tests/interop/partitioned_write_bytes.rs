//! Shale's partitioned index and partitioned filters are RocksDB 11.8.1's, byte for byte:
//! RocksDB 11.8.1's `db_bench` writes tables with `--partition_index_and_filters=1` (and
//! with `--partition_index=1` alone), small `--metadata_block_size` so there are many
//! partitions, with Bloom and Ribbon filters (and format_version 4's legacy Bloom; 5
//! otherwise, no compression, db_bench's `--index_shortening_mode=2`), with
//! `--optimize_filters_for_memory` on (the flushed table) and off (the compacted one),
//! index restart intervals 1 and 4, with and without a prefix extractor, filters
//! decoupled from the index partitions (the default) and coupled to them
//! (`--decouple_partitioned_filters=false`); Shale's
//! table builder rebuilds each table from its entries with the same options, and the
//! files are equal from the first byte to the end of the top-level index (data blocks,
//! filter partitions, top-level filter index, index partitions, top-level index, with
//! their trailers), and the properties that describe them are equal too.
//! Skipped (with the reason printed) where RocksDB 11.8.1's tools are absent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;
use std::sync::Arc;

use shale::table::{Table, TableBuilder, TableBuilderOptions};
use tools::*;

struct Case {
    name: &'static str,
    flags: &'static [&'static str],
    partition_filters: bool,
    /// Some(bloom_before_level): RocksDB's Ribbon policy.
    ribbon: Option<i32>,
    prefix: Option<usize>,
    /// RocksDB's decouple_partitioned_filters.
    decoupled: bool,
    /// 5, or 4 (legacy Bloom filters).
    format_version: u32,
    /// index_block_restart_interval (delta-encoded handles between restarts).
    index_restart: usize,
    /// optimize_filters_for_memory (then only the flushed table is compared: its filters
    /// are the first the policy sizes, so the rounding balance starts at zero for both).
    optimize_for_memory: bool,
}

fn rebuild(src: &Path, dst: &Path, case: &Case, level: i32) -> Arc<Table> {
    let (file, size, opts) = table_file(src);
    let t = Table::open(file, size, opts).unwrap();
    let mut o = TableBuilderOptions::new(shale::key::bytewise_internal_comparator());
    o.format_version = case.format_version;
    o.index_block_restart_interval = case.index_restart;
    o.checksum = shale::table::ChecksumType::Xxh3;
    o.filter_bits_per_key = Some(10.0);
    o.filter_rounding = case.optimize_for_memory.then(shale::table::filter::FilterRounding::new);
    // db_bench's default --index_shortening_mode=2.
    o.index_shortening = shale::table::builder::IndexShorteningMode::ShortenSeparatorsAndSuccessor;
    o.filter_ribbon_before_level = case.ribbon;
    o.filter_level = level;
    o.partitioned_index = true;
    o.partition_filters = case.partition_filters;
    o.decouple_partitioned_filters = case.decoupled;
    o.metadata_block_size = 256;
    if let Some(n) = case.prefix {
        let p = Arc::new(shale::SliceTransform::create_fixed_prefix(n));
        o.prefix_extractor_name = p.name().to_string();
        o.prefix_extractor = Some(p);
    }
    let f = shale::fs::default_fs().new_writable_file(dst).unwrap();
    let mut b = TableBuilder::new(o, f);
    let mut it = t.iter(false);
    it.seek_to_first();
    while it.valid() {
        b.add(it.key(), it.value()).unwrap();
        it.next();
    }
    it.status().unwrap();
    b.finish().unwrap();
    t
}

fn compare(case: &Case) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let mut flags = vec![
        "--compression_type=none",
        "--bloom_bits=10",
        "--metadata_block_size=256",
        "--write_buffer_size=4194304",
        "--disable_auto_compactions=1",
    ];
    let ofm_flag = format!("--optimize_filters_for_memory={}", case.optimize_for_memory);
    flags.push(&ofm_flag);
    let fv_flag = format!("--format_version={}", case.format_version);
    flags.push(&fv_flag);
    let restart_flag = format!("--index_block_restart_interval={}", case.index_restart);
    flags.push(&restart_flag);
    flags.extend_from_slice(case.flags);
    let prefix_flag;
    if let Some(n) = case.prefix {
        prefix_flag = format!("--prefix_size={n}");
        flags.push(&prefix_flag);
    }
    // One flush (level 0: Bloom under the Ribbon policy), then a compaction to the last
    // level (Ribbon).
    let benchmarks = if case.optimize_for_memory { "fillrandom,flush" } else { "fillrandom,compact" };
    db_bench_run(&db, benchmarks, 6000, &flags);
    let files = sst_files(&db);
    assert!(!files.is_empty(), "{}: no table", case.name);
    for f in &files {
        // The compaction's output is at a level >= 1.
        let out = dir.path().join("shale.sst");
        // A flush's filter level is -1.
        let level = if case.optimize_for_memory { -1 } else { 6 };
        let theirs = rebuild(f, &out, case, level);
        let (file, size, opts) = table_file(&out);
        let ours = Table::open(file, size, opts).unwrap();
        let (tp, op) = (theirs.properties(), ours.properties());
        let ctx = format!("{}: {}", case.name, f.display());
        let mut mismatches = Vec::new();
        assert!(tp.index_partitions >= 3, "{ctx}: only {} index partitions", tp.index_partitions);
        for (what, a, b) in [
            ("data size", tp.data_size, op.data_size),
            ("index size", tp.index_size, op.index_size),
            ("index partitions", tp.index_partitions, op.index_partitions),
            ("top-level index size", tp.top_level_index_size, op.top_level_index_size),
            ("filter size", tp.filter_size, op.filter_size),
            ("filter entries", tp.num_filter_entries, op.num_filter_entries),
            ("index key is user key", tp.index_key_is_user_key, op.index_key_is_user_key),
        ] {
            if a != b {
                mismatches.push(format!("{what}: RocksDB {a}, Shale {b}"));
            }
        }
        assert!(mismatches.is_empty(), "{ctx}: {mismatches:?}");
        assert_eq!(op.filter_policy_name, tp.filter_policy_name, "{ctx}");
        assert_eq!(op.prefix_extractor_name, tp.prefix_extractor_name, "{ctx}");
        assert!(tp.filter_size > 0 && tp.num_filter_entries >= 2000, "{ctx}: no filter");
        for name in [
            "rocksdb.block.based.table.index.type",
            "rocksdb.block.based.table.decoupled.partitioned.filters",
        ] {
            assert_eq!(op.user_collected.get(name), tp.user_collected.get(name), "{ctx}: {name}");
        }
        let th = theirs.footer().index_handle;
        assert_eq!(ours.footer().index_handle, th, "{ctx}: top-level index handle");
        let end = (th.offset + th.size + 5) as usize;
        let a = std::fs::read(f).unwrap();
        let b = std::fs::read(&out).unwrap();
        if let Some(at) = (0..end).find(|&i| a[i] != b[i]) {
            panic!("{ctx}: files differ at byte {at} (data ends at {})", tp.data_size);
        }
    }
}

#[test]
fn partitioned_tables_equal_rocksdb_11s() {
    if !use_rocksdb_11("partitioned_tables_equal_rocksdb_11s") {
        return;
    }
    let cases = [
        Case {
            name: "bloom, partitioned filters",
            flags: &["--partition_index_and_filters=1"],
            partition_filters: true,
            ribbon: None,
            prefix: None,
            decoupled: true,
            format_version: 5,
            index_restart: 1,
            optimize_for_memory: false,
        },
        Case {
            name: "format_version 4: legacy Bloom partitioned filters",
            flags: &["--partition_index_and_filters=1"],
            partition_filters: true,
            ribbon: None,
            prefix: Some(8),
            decoupled: true,
            format_version: 4,
            index_restart: 1,
            optimize_for_memory: false,
        },
        Case {
            name: "index_block_restart_interval 4: delta-encoded handles in partitions and top levels",
            flags: &["--partition_index_and_filters=1"],
            partition_filters: true,
            ribbon: None,
            prefix: None,
            decoupled: true,
            format_version: 5,
            index_restart: 4,
            optimize_for_memory: false,
        },
        Case {
            name: "optimize_filters_for_memory: partitions sized to the allocator",
            flags: &["--partition_index_and_filters=1"],
            partition_filters: true,
            ribbon: None,
            prefix: None,
            decoupled: true,
            format_version: 5,
            index_restart: 1,
            optimize_for_memory: true,
        },
        Case {
            name: "partitioned index, full filter",
            flags: &["--partition_index=1"],
            partition_filters: false,
            ribbon: None,
            prefix: None,
            decoupled: true,
            format_version: 5,
            index_restart: 1,
            optimize_for_memory: false,
        },
        Case {
            name: "ribbon, partitioned filters",
            flags: &["--partition_index_and_filters=1", "--use_ribbon_filter=1"],
            partition_filters: true,
            ribbon: Some(0),
            prefix: None,
            decoupled: true,
            format_version: 5,
            index_restart: 1,
            optimize_for_memory: false,
        },
        Case {
            name: "bloom, partitioned filters, prefix extractor",
            flags: &["--partition_index_and_filters=1"],
            partition_filters: true,
            ribbon: None,
            prefix: Some(8),
            decoupled: true,
            format_version: 5,
            index_restart: 1,
            optimize_for_memory: false,
        },
        Case {
            name: "bloom, partitioned filters coupled to the index partitions, prefix extractor",
            flags: &["--partition_index_and_filters=1", "--decouple_partitioned_filters=false"],
            partition_filters: true,
            ribbon: None,
            prefix: Some(8),
            decoupled: false,
            format_version: 5,
            index_restart: 1,
            optimize_for_memory: false,
        },
        Case {
            name: "ribbon, partitioned filters coupled to the index partitions",
            flags: &[
                "--partition_index_and_filters=1",
                "--decouple_partitioned_filters=false",
                "--use_ribbon_filter=1",
            ],
            partition_filters: true,
            ribbon: Some(0),
            prefix: None,
            decoupled: false,
            format_version: 5,
            index_restart: 1,
            optimize_for_memory: false,
        },
    ];
    for c in &cases {
        compare(c);
    }
}
