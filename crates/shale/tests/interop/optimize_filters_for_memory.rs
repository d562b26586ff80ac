//! `BlockBasedOptions::set_optimize_filters_for_memory` acts, as in RocksDB 11.8.1 where it
//! is on by default: a flushed table's Bloom filter over db_bench's first 1000 keys (10 bits
//! per key, format_version 5) is byte for byte the one RocksDB 11.8.1's `db_bench` writes
//! (7 probes, from the 10.24 bits per key reached), and with the option off the one RocksDB
//! 7.8.3 writes (6 probes). The OPTIONS file records the setting. When RocksDB 11.8.1's
//! tools are here, its filter is also made afresh and compared.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{BlockBasedOptions, Options, DB};
use tools::*;

const ROCKSDB_11: &str =
    include_str!("../../../shale-format/src/table/filter/testdata/fastbloom_1000_rocksdb11.hex");
const ROCKSDB_7: &str = include_str!("../../../shale-format/src/table/filter/testdata/fastbloom_1000.hex");

fn db_bench_key(n: u64) -> Vec<u8> {
    let mut k = n.to_be_bytes().to_vec();
    k.resize(16, b'0');
    k
}

fn varint(b: &[u8], p: &mut usize) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    loop {
        let c = b[*p];
        *p += 1;
        v |= u64::from(c & 0x7f) << shift;
        if c < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// The full filter block of a format_version 5 table: footer -> metaindex -> "fullfilter.*".
fn filter_block(sst: &Path) -> Vec<u8> {
    let data = std::fs::read(sst).unwrap();
    let footer = &data[data.len() - 53..];
    assert_eq!(u32::from_le_bytes(footer[41..45].try_into().unwrap()), 5, "format_version");
    let mut p = 1;
    let (mo, ms) = (varint(footer, &mut p) as usize, varint(footer, &mut p) as usize);
    let meta = &data[mo..mo + ms];
    let restarts = u32::from_le_bytes(meta[meta.len() - 4..].try_into().unwrap()) as usize;
    let end = meta.len() - 4 - 4 * restarts;
    let (mut p, mut last) = (0, Vec::new());
    while p < end {
        let shared = varint(meta, &mut p) as usize;
        let unshared = varint(meta, &mut p) as usize;
        let vlen = varint(meta, &mut p) as usize;
        let mut key = last[..shared].to_vec();
        key.extend_from_slice(&meta[p..p + unshared]);
        p += unshared;
        let value = &meta[p..p + vlen];
        p += vlen;
        if key.starts_with(b"fullfilter.") {
            let mut q = 0;
            let (fo, fs) = (varint(value, &mut q) as usize, varint(value, &mut q) as usize);
            return data[fo..fo + fs].to_vec();
        }
        last = key;
    }
    panic!("no full filter in {}", sst.display());
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Writes db_bench's keys 0..1000 with Shale and flushes them into one table; returns its
/// filter block and the OPTIONS file's text.
fn shale_filter(dir: &Path, optimize: Option<bool>) -> (Vec<u8>, String) {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    let mut t = BlockBasedOptions::default();
    t.set_bloom_filter(10.0, false);
    t.set_format_version(5);
    if let Some(v) = optimize {
        t.set_optimize_filters_for_memory(v);
    }
    opts.set_block_based_table_factory(&t);
    opts.set_compression_type(shale::DBCompressionType::None);
    let db = DB::open(&opts, dir).unwrap();
    for i in 0..1000 {
        db.put(db_bench_key(i), [b'v'; 100]).unwrap();
    }
    db.flush().unwrap();
    drop(db);
    let ssts = sst_files(dir);
    assert_eq!(ssts.len(), 1, "{ssts:?}");
    (filter_block(&ssts[0]), latest_options_text(dir))
}

#[test]
fn filters_follow_optimize_filters_for_memory() {
    let tmp = tempfile::tempdir().unwrap();

    // On by default, as in RocksDB 11.8.1.
    let (filter, options) = shale_filter(&tmp.path().join("default"), None);
    assert_eq!(hex(&filter), ROCKSDB_11.trim(), "default: RocksDB 11.8.1's filter");
    assert_eq!(filter[filter.len() - 3], 7, "probes");
    assert!(options.contains("  optimize_filters_for_memory=true\n"), "{options}");

    let (filter, _) = shale_filter(&tmp.path().join("on"), Some(true));
    assert_eq!(hex(&filter), ROCKSDB_11.trim(), "on: RocksDB 11.8.1's filter");

    // Off: the probe count follows the bits per key asked for, as before RocksDB 9.
    let (filter, options) = shale_filter(&tmp.path().join("off"), Some(false));
    assert_eq!(hex(&filter), ROCKSDB_7.trim(), "off: RocksDB 7.8.3's filter");
    assert_eq!(filter[filter.len() - 3], 6, "probes");
    assert!(options.contains("  optimize_filters_for_memory=false\n"), "{options}");
}

#[test]
fn rocksdb_11_writes_the_same_filter() {
    let test = "rocksdb_11_writes_the_same_filter";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rocksdb");
    let out = run_tool(
        "db_bench",
        &args(&[
            &format!("--db={}", dir.display()),
            "--benchmarks=fillseq,flush",
            "--num=1000",
            "--bloom_bits=10",
            "--compression_type=none",
            "--format_version=5",
        ]),
    );
    let ssts = sst_files(&dir);
    assert_eq!(ssts.len(), 1, "{ssts:?}\n{out}");
    let theirs = filter_block(&ssts[0]);
    let (ours, _) = shale_filter(&tmp.path().join("shale"), None);
    assert_eq!(hex(&ours), hex(&theirs));
}
