//! The data-block hash index (`DataBlockIndexType::BinaryAndHash`) both ways with RocksDB
//! 11.8.1: tables db_bench writes with `--use_data_block_hash_index=true` answer every point
//! lookup in Shale (a wrong hash or bucket layout would send lookups to the wrong restart
//! interval and lose keys), and tables Shale writes with the index pass 11.8.1's
//! `sst_dump --command=verify` and answer 11.8.1's `ldb get` (which probes the index) and
//! `ldb scan`. Shale's tables with the index are larger than without by about one byte per
//! key over the util ratio, which shows the index is there.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeMap;
use std::path::Path;

use shale::{BlockBasedOptions, DataBlockIndexType, Options, DB};
use tools::*;

fn hash_options(hash: bool) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(shale::DBCompressionType::None);
    let mut t = BlockBasedOptions::default();
    if hash {
        t.set_data_block_index_type(DataBlockIndexType::BinaryAndHash);
        t.set_data_block_hash_ratio(0.75);
    }
    o.set_block_based_table_factory(&t);
    o
}

#[test]
fn rocksdb_11_hash_indexed_tables_read_in_shale() {
    let test = "rocksdb_11_hash_indexed_tables_read_in_shale";
    if !use_rocksdb_11(test) {
        return;
    }
    for compression in ["none", "lz4"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        let c = format!("--compression_type={compression}");
        db_bench_fill(
            &dir,
            6000,
            &[
                "--use_data_block_hash_index=true",
                "--data_block_hash_table_util_ratio=0.6",
                "--write_buffer_size=65536",
                "--target_file_size_base=131072",
                &c,
            ],
        );
        assert!(!sst_files(&dir).is_empty(), "db_bench wrote no table");
        let want = ldb_scan(&dir, None);
        assert!(want.len() > 1000, "{compression}: ldb saw {} pairs", want.len());
        let mut o = hash_options(true);
        o.create_if_missing(false);
        let db = open_all(&dir, &o);
        for (k, v) in &want {
            let got = db.get(k).unwrap();
            assert_eq!(got.as_deref(), Some(v.as_slice()), "{compression}: get {}", encode_hex(k));
            // Absent neighbours: a key one byte longer and one with its last byte changed.
            let mut longer = k.clone();
            longer.push(0);
            assert_eq!(db.get(&longer).unwrap(), None, "{compression}: absent {}", encode_hex(&longer));
        }
        assert_same_pairs(&shale_scan(&db, "default"), &want, &format!("{compression}: Shale scan"));
    }
}

fn shale_writes(dir: &Path, hash: bool) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let db = DB::open(&hash_options(hash), dir).unwrap();
    let mut model = BTreeMap::new();
    for round in 0..3u32 {
        for i in 0..4000u32 {
            let k = format!("key-{:07}", (i * 7919) % 20000).into_bytes();
            if round == 2 && i % 5 == 0 {
                db.delete(&k).unwrap();
                model.remove(&k);
            } else {
                let v = format!("value {round} {i}").into_bytes();
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
        }
        db.flush().unwrap();
    }
    for (k, v) in &model {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_slice()));
    }
    for i in 0..2000u32 {
        let k = format!("key-{:07}", 20000 + i).into_bytes();
        assert_eq!(db.get(&k).unwrap(), None);
    }
    model
}

fn table_bytes(dir: &Path) -> u64 {
    sst_files(dir).iter().map(|p| std::fs::metadata(p).unwrap().len()).sum()
}

#[test]
fn shale_hash_indexed_tables_read_in_rocksdb_11() {
    let test = "shale_hash_indexed_tables_read_in_rocksdb_11";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (with, without) = (tmp.path().join("hash"), tmp.path().join("plain"));
    let model = shale_writes(&with, true);
    let plain_model = shale_writes(&without, false);
    assert_eq!(model, plain_model);
    // Three tables of 4000 entries each: 4000 / 0.75 buckets per table, spread over blocks,
    // plus 2 bytes per block. The index is there, and nothing else differs much.
    let extra = table_bytes(&with) as i64 - table_bytes(&without) as i64;
    assert!((3 * 5000..3 * 7500).contains(&extra), "hash index adds {extra} bytes");
    for sst in sst_files(&with) {
        run_tool("sst_dump", &[format!("--file={}", sst.display()), "--command=verify".into()]);
    }
    let want: Pairs = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_same_pairs(&ldb_scan(&with, None), &want, "ldb scan of Shale's hash-indexed tables");
    for (k, v) in model.iter().step_by(97) {
        assert_eq!(ldb_get(&with, None, k).as_deref(), Some(v.as_slice()), "ldb get {}", encode_hex(k));
    }
    for k in [b"key-0000001".to_vec(), b"key-0025000".to_vec(), b"key-00000005".to_vec()] {
        if !model.contains_key(&k) {
            // 11.8.1's ldb prints "Key not found" for an absent key.
            let a = vec![format!("--db={}", with.display()), "get".into(), "--hex".into(), encode_hex(&k)];
            let (_, out, err) = try_tool("ldb", &a);
            assert!(
                out.to_lowercase().contains("not found") || err.to_lowercase().contains("not found"),
                "ldb get absent {}: {out}{err}",
                encode_hex(&k)
            );
        }
    }
}

/// `optimize_for_point_lookup` sets what RocksDB 11.8.1's `OptimizeForPointLookup` sets: a
/// fresh block-based factory (an earlier `block_size` is dropped) with the data-block hash
/// index at util ratio 0.75, a 10-bit Bloom filter and an LRU cache of the given size, and a
/// memtable Bloom of 2% holding whole keys. The OPTIONS file says so, the tables carry the
/// hash index and the filter (11.8.1's sst_dump shows the filter policy and verifies them),
/// and lookups answer as without it.
#[test]
fn optimize_for_point_lookup_sets_rocksdb_11_options() {
    let test = "optimize_for_point_lookup_sets_rocksdb_11_options";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(shale::DBCompressionType::None);
    let mut t = BlockBasedOptions::default();
    t.set_block_size(16 * 1024);
    o.set_block_based_table_factory(&t);
    o.optimize_for_point_lookup(8);
    let db = DB::open(&o, &dir).unwrap();
    let mut model = BTreeMap::new();
    for i in 0..4000u32 {
        let k = format!("key-{:07}", (i * 7919) % 20000).into_bytes();
        let v = format!("value {i}").into_bytes();
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    db.flush().unwrap();
    // In the memtable (its Bloom answers absent keys) and in the table.
    for i in 0..4000u32 {
        db.put(format!("mem-{i:05}").as_bytes(), b"m").unwrap();
    }
    for (k, v) in &model {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_slice()), "get {}", encode_hex(k));
    }
    for i in 0..4000u32 {
        assert_eq!(db.get(format!("mem-{i:05}").as_bytes()).unwrap().as_deref(), Some(&b"m"[..]));
        assert_eq!(db.get(format!("key-{:07}", 20000 + i).as_bytes()).unwrap(), None);
        assert_eq!(db.get(format!("mem-{i:05}x").as_bytes()).unwrap(), None);
    }
    let text = latest_options_text(&dir);
    for line in [
        "data_block_index_type=kDataBlockBinaryAndHash",
        "data_block_hash_table_util_ratio=0.750000",
        "filter_policy=bloomfilter:10:false",
        "block_size=4096",
        "memtable_prefix_bloom_size_ratio=0.020000",
        "memtable_whole_key_filtering=true",
    ] {
        assert!(text.lines().any(|l| l.trim() == line), "OPTIONS lacks {line}:\n{text}");
    }
    drop(db);
    // Same tables as an explicit hash-indexed factory would write, plus the filter.
    let without = tmp.path().join("plain");
    let plain = DB::open(&hash_options(false), &without).unwrap();
    for (k, v) in &model {
        plain.put(k, v).unwrap();
    }
    plain.flush().unwrap();
    drop(plain);
    let extra = table_bytes(&dir) as i64 - table_bytes(&without) as i64;
    // Hash index: about 4000 / 0.75 bytes; filter: 10 bits per key.
    assert!((5000 + 4000..7500 + 7000).contains(&extra), "hash index and filter add {extra} bytes");
    for sst in sst_files(&dir) {
        run_tool("sst_dump", &[format!("--file={}", sst.display()), "--command=verify".into()]);
        let props = run_tool("sst_dump", &[format!("--file={}", sst.display()), "--show_properties".into()]);
        assert!(props.contains("bloomfilter"), "sst_dump properties: {props}");
    }
    // ldb also replays the WAL's memtable keys.
    for i in 0..4000u32 {
        model.insert(format!("mem-{i:05}").into_bytes(), b"m".to_vec());
    }
    let want: Pairs = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_same_pairs(&ldb_scan(&dir, None), &want, "ldb scan of optimize_for_point_lookup's database");
}
