//! Prefix Bloom filters across RocksDB and Shale, both ways.
//!
//! RocksDB -> Shale: `db_bench --prefix_size=9 --keys_per_prefix=10 --key_size=17
//! --bloom_bits=10` (RocksDB 7.8.3, and 11.8.1 when its tools run here) writes keys
//! `BE64(p) '0' BE64(v)`: 9-byte prefixes `BE64(p) '0'`. Shale opens the database with the
//! same extractor and seeks the absent prefixes `BE64(p) '1'`, which lie inside every
//! table's key range. Each such seek reads a data block only of a table whose RocksDB-written
//! filter does not exclude the prefix (checked table by table through `Table::prefix_may_match`),
//! so most seeks read nothing, while the same seeks in total order read blocks. Data-block
//! reads are counted by the `rocksdb.shale.data-blocks-read` property, block cache off.
//! The same with partitioned index and filters (`--partition_index_and_filters`, small
//! partitions): each seek asks the filter partition its target falls in.
//!
//! Shale -> RocksDB: tables Shale writes with a prefix extractor pass `sst_dump
//! --command=verify`, `sst_dump --show_properties` shows RocksDB's property names and values
//! (extractor name, prefix and whole-key filtering flags), and `ldb scan` reads the data.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;
use std::sync::Arc;

use shale::table::{PrefixSeek, Table};
use shale::{BlockBasedOptions, Options, ReadOptions, SliceTransform, DB};
use tools::*;

const PREFIX_LEN: usize = 9;
const NUM: u64 = 6000;
const KEYS_PER_PREFIX: u64 = 10;

fn shale_options() -> Options {
    let mut t = BlockBasedOptions::default();
    t.set_bloom_filter(10.0, false);
    t.disable_cache();
    let mut o = Options::default();
    o.set_block_based_table_factory(&t);
    o.set_disable_auto_compactions(true);
    o.set_prefix_extractor(SliceTransform::create_fixed_prefix(PREFIX_LEN));
    o
}

fn absent_prefix(p: u64) -> Vec<u8> {
    let mut k = p.to_be_bytes().to_vec();
    k.push(b'1');
    k
}

fn reads(db: &DB) -> u64 {
    db.property_int_value("rocksdb.shale.data-blocks-read").unwrap().expect("property")
}

fn open_tables(dir: &Path, extractor: &Arc<SliceTransform>) -> Vec<Arc<Table>> {
    sst_files(dir)
        .iter()
        .map(|f| {
            let (file, size, opts) = table_file(f);
            Table::open_for_cf(file, size, opts, shale::key::MAX_SEQUENCE_NUMBER, Some(extractor.clone()))
                .unwrap()
        })
        .collect()
}

/// Seeks every absent prefix of the first 300 prefixes; checks each prefix seek against
/// the tables' own filters.
fn check_rocksdb_prefix_filters(dir: &Path, test: &str) {
    let tables_before = sst_files(dir);
    assert!(tables_before.len() >= 2, "{test}: db_bench wrote {} tables", tables_before.len());
    let extractor = Arc::new(SliceTransform::create_fixed_prefix(PREFIX_LEN));
    let tables = open_tables(dir, &extractor);
    for t in &tables {
        assert_eq!(t.properties().prefix_extractor_name, "rocksdb.FixedPrefix.9");
    }
    let db = DB::open(&shale_options(), dir).unwrap();
    assert_eq!(sst_files(dir), tables_before, "{test}: Shale wrote a table");

    let seek = PrefixSeek { extractor: extractor.clone(), upper_bound: None, auto_prefix_mode: false };
    let (mut prefix_reads, mut excluded_everywhere, mut total_order_reads) = (0, 0, 0);
    for p in 0..300u64 {
        let target = absent_prefix(p);
        let maybe =
            tables.iter().filter(|t| t.prefix_may_match(&target, &seek, false) != Some(false)).count();
        let before = reads(&db);
        let mut ro = ReadOptions::default();
        ro.set_prefix_same_as_start(true);
        let mut it = db.raw_iterator_opt(ro);
        it.seek(&target);
        it.status().unwrap();
        assert!(!it.valid(), "{test}: prefix {p} is absent");
        let n = reads(&db) - before;
        // A table whose filter excludes the prefix is not read; at most two blocks of each
        // other: where a data block ends with prefix p and the next starts with p + 1, the
        // index separator is shortened to exactly `BE64(p) '1'` (the target), so a seek in
        // a user-key index lands on the block before and steps into the next one.
        assert!(n <= 2 * maybe as u64, "{test}: prefix {p}: {n} blocks read, {maybe} tables may hold it");
        prefix_reads += n;
        excluded_everywhere += usize::from(maybe == 0);

        let before = reads(&db);
        let mut ro = ReadOptions::default();
        ro.set_total_order_seek(true);
        let mut it = db.raw_iterator_opt(ro);
        it.seek(&target);
        it.status().unwrap();
        assert!(it.valid(), "{test}: total order lands on the next prefix");
        total_order_reads += reads(&db) - before;
    }
    eprintln!(
        "{test}: {} tables; 300 absent-prefix seeks: {excluded_everywhere} excluded by every filter, \
         {prefix_reads} data blocks read in prefix mode, {total_order_reads} in total order",
        tables.len()
    );
    // Every table was consulted and (almost always) said no.
    assert!(
        excluded_everywhere >= 250,
        "{test}: only {excluded_everywhere} of 300 seeks excluded by every filter"
    );
    assert!(total_order_reads >= 300, "{test}: total-order seeks read {total_order_reads} blocks");
    assert!(prefix_reads * 10 < total_order_reads, "{test}: {prefix_reads} vs {total_order_reads}");

    // Present prefixes: every key of the prefix, as ldb sees them.
    let all = ldb_scan(dir, None);
    for p in [0u64, 7, 123, 599] {
        let mut prefix = p.to_be_bytes().to_vec();
        prefix.push(b'0');
        let got: Vec<Vec<u8>> = db.prefix_iterator(&prefix).map(|r| r.unwrap().0.to_vec()).collect();
        let want: Vec<Vec<u8>> =
            all.iter().filter(|(k, _)| k.starts_with(&prefix)).map(|(k, _)| k.clone()).collect();
        assert!(!want.is_empty());
        assert_eq!(got, want, "{test}: prefix {p}");
    }
}

fn db_bench_prefix_db(dir: &Path, extra: &[&str]) {
    let keys_per_prefix = format!("--keys_per_prefix={KEYS_PER_PREFIX}");
    let mut flags = vec![
        "--prefix_size=9",
        &keys_per_prefix,
        "--key_size=17",
        "--bloom_bits=10",
        "--write_buffer_size=65536",
        "--compression_type=none",
        "--disable_auto_compactions=1",
    ];
    flags.extend_from_slice(extra);
    db_bench_run(dir, "fillrandom,flush", NUM as usize, &flags);
}

/// Partitioned index and filters with small partitions (several per table).
const PARTITIONED: &[&str] =
    &["--partition_index=1", "--partition_index_and_filters=1", "--metadata_block_size=128"];

#[test]
fn rocksdb_7_prefix_filters_are_used() {
    let test = "rocksdb_7_prefix_filters_are_used";
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    db_bench_prefix_db(tmp.path(), &[]);
    check_rocksdb_prefix_filters(tmp.path(), test);
    let tmp = tempfile::tempdir().unwrap();
    db_bench_prefix_db(tmp.path(), PARTITIONED);
    check_rocksdb_prefix_filters(tmp.path(), &format!("{test} (partitioned filters)"));
}

#[test]
fn rocksdb_11_prefix_filters_are_used() {
    let test = "rocksdb_11_prefix_filters_are_used";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    db_bench_prefix_db(tmp.path(), &[]);
    check_rocksdb_prefix_filters(tmp.path(), test);
    let tmp = tempfile::tempdir().unwrap();
    db_bench_prefix_db(tmp.path(), PARTITIONED);
    check_rocksdb_prefix_filters(tmp.path(), &format!("{test} (partitioned filters)"));
}

fn check_shale_tables(test: &str, whole_key_filtering: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let mut t = BlockBasedOptions::default();
    t.set_bloom_filter(10.0, false);
    t.set_whole_key_filtering(whole_key_filtering);
    t.set_format_version(5); // RocksDB 7.8.3's tools read these tables
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_prefix_extractor(SliceTransform::create_fixed_prefix(3));
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, tmp.path()).unwrap();
    let mut want = Vec::new();
    for i in 0..500u32 {
        let k = format!("{:03}-{i:05}", i % 37).into_bytes();
        let v = format!("value{i}").into_bytes();
        db.put(&k, &v).unwrap();
        want.push((k, v));
    }
    db.flush().unwrap();
    drop(db);
    want.sort();
    let tables = sst_files(tmp.path());
    assert_eq!(tables.len(), 1);
    let f = tables[0].display().to_string();
    let (ok, out, err) = try_tool("sst_dump", &args(&[&format!("--file={f}"), "--command=verify"]));
    assert!(ok && out.contains("The file is ok"), "{test}: verify: {out}{err}");
    let props = run_tool("sst_dump", &args(&[&format!("--file={f}"), "--show_properties"]));
    let wkf = if whole_key_filtering { "0x31" } else { "0x30" };
    for line in [
        "prefix extractor name: rocksdb.FixedPrefix.3".to_string(),
        "# rocksdb.block.based.table.prefix.filtering: 0x31".to_string(),
        format!("# rocksdb.block.based.table.whole.key.filtering: {wkf}"),
        "filter policy name: bloomfilter".to_string(),
    ] {
        assert!(props.contains(&line), "{test}: sst_dump shows no {line:?}:\n{props}");
    }
    // The filter holds the 37 prefixes, plus the 500 keys with whole-key filtering.
    let entries = if whole_key_filtering { 537 } else { 37 };
    assert!(props.contains(&format!("# entries for filter: {entries}")), "{test}: {props}");
    assert_same_pairs(&ldb_scan(tmp.path(), None), &want, test);
}

#[test]
fn shale_prefix_tables_read_by_rocksdb_tools() {
    let test = "shale_prefix_tables_read_by_rocksdb_tools";
    if !tools_available(test, &["sst_dump", "ldb"]) {
        return;
    }
    check_shale_tables(test, true);
    check_shale_tables(test, false);
}

#[test]
fn shale_prefix_tables_read_by_rocksdb_11_tools() {
    let test = "shale_prefix_tables_read_by_rocksdb_11_tools";
    if !use_rocksdb_11(test) {
        return;
    }
    check_shale_tables(test, true);
    check_shale_tables(test, false);
}
