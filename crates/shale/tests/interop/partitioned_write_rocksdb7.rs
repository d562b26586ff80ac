//! RocksDB 7.8.3 (Debian's `ldb` and `sst_dump`, which predate decoupled filter
//! partitions) reads the partitioned index and partitioned Bloom filters Shale writes at
//! format_version 5, decoupled (RocksDB 11's default) and coupled alike: `sst_dump
//! --command=check` checks every table, `--show_properties` shows several index
//! partitions, and `ldb scan` and `ldb get` return Shale's pairs (present keys found
//! through the filter partitions, absent ones not). Skipped where the tools are absent.
//! Compactions run only when asked.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use shale::{BlockBasedIndexType, Options, DB};
use tools::*;

fn key(i: u64) -> Vec<u8> {
    format!("key{:08}", i * 2).into_bytes()
}

#[test]
fn rocksdb_7_reads_shale_partitioned_tables() {
    let test = "rocksdb_7_reads_shale_partitioned_tables";
    if !tools_available(test, &["ldb", "sst_dump"]) {
        return;
    }
    for coupled in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_disable_auto_compactions(true);
        let mut t = rocksdb7_tables();
        t.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
        t.set_partition_filters(true);
        t.set_metadata_block_size(256);
        t.set_bloom_filter(10.0, false);
        o.set_block_based_table_factory(&t);
        if coupled {
            // Coupled filters come from an OPTIONS file (rust-rocksdb has no setter): the
            // empty database's file, edited, and read back by `load_latest`.
            drop(DB::open(&o, &dir).unwrap());
            for f in std::fs::read_dir(&dir).unwrap() {
                let p = f.unwrap().path();
                if p.file_name().unwrap().to_string_lossy().starts_with("OPTIONS-") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    assert!(text.contains("decouple_partitioned_filters=true"));
                    let text = text
                        .replace("decouple_partitioned_filters=true", "decouple_partitioned_filters=false");
                    std::fs::write(&p, text).unwrap();
                }
            }
            let cache = shale::Cache::new_lru_cache(1 << 20);
            o = Options::load_latest(&dir, shale::Env::new().unwrap(), false, cache).unwrap().0;
            o.set_disable_auto_compactions(true);
        }
        let n = 5000;
        {
            let db = DB::open(&o, &dir).unwrap();
            for i in 0..n {
                db.put(key(i), format!("value{i}")).unwrap();
            }
            db.flush().unwrap();
        }
        let ctx = if coupled { "coupled" } else { "decoupled" };
        for f in sst_files(&dir) {
            let out = run_tool("sst_dump", &args(&[&format!("--file={}", f.display()), "--show_properties"]));
            let parts: u64 = out
                .lines()
                .find_map(|l| l.trim().strip_prefix("# index partitions:"))
                .unwrap_or_else(|| panic!("{ctx}: no index partitions in\n{out}"))
                .trim()
                .parse()
                .unwrap();
            assert!(parts >= 2, "{ctx}: {parts} index partitions");
            let decoupled = out.contains("rocksdb.block.based.table.decoupled.partitioned.filters");
            assert_eq!(decoupled, !coupled, "{ctx}:\n{out}");
        }
        run_tool("sst_dump", &args(&[&format!("--file={}", dir.display()), "--command=check"]));
        let want: Pairs = (0..n).map(|i| (key(i), format!("value{i}").into_bytes())).collect();
        assert_same_pairs(&ldb_scan(&dir, None), &want, ctx);
        for i in (0..n).step_by(97) {
            assert_eq!(
                ldb_get(&dir, None, &key(i)),
                Some(format!("value{i}").into_bytes()),
                "{ctx}: get {i}"
            );
            assert_eq!(ldb_get(&dir, None, format!("key{:08}", i * 2 + 1).as_bytes()), None, "{ctx}");
        }
    }
}
