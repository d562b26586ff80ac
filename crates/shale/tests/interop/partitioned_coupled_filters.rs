//! A database RocksDB 11.8.1's `db_bench` created with partitioned filters coupled to the
//! index partitions (`--partition_index_and_filters=1 --decouple_partitioned_filters=false`)
//! is opened by Shale with the options `load_latest` reads from its OPTIONS file: Shale's
//! flushes and compaction write coupled partitioned filters too (no
//! "decoupled.partitioned.filters" property, several index partitions), its OPTIONS file
//! keeps `decouple_partitioned_filters=false`, RocksDB 11.8.1's `sst_dump --command=check`
//! and `ldb scan` read the result, Shale's gets and scans return every pair, and absent keys
//! read almost no data block. The same options with a compression dictionary (ZSTD,
//! `max_dict_bytes`) write coupled filters too: the buffered blocks' keys are replayed into
//! the filter partitions as their index entries are made (RocksDB's `MaybeEnterUnbuffered`),
//! so every present key passes its partition's filter, through Shale and through RocksDB
//! 11.8.1's `ldb get`. Compactions run only when asked.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use shale::table::Table;
use shale::{Cache, Env, Options, DB};
use tools::*;

const DECOUPLED: &str = "rocksdb.block.based.table.decoupled.partitioned.filters";

fn key(i: u64) -> Vec<u8> {
    format!("key{:08}", i * 2).into_bytes()
}

fn absent_key(i: u64) -> Vec<u8> {
    format!("key{:08}", i * 2 + 1).into_bytes()
}

#[test]
fn coupled_partitioned_filters_from_a_rocksdb_options_file() {
    let test = "coupled_partitioned_filters_from_a_rocksdb_options_file";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let flags = [
        "--partition_index_and_filters=1",
        "--decouple_partitioned_filters=false",
        "--bloom_bits=10",
        "--metadata_block_size=256",
        "--compression_type=none",
        "--disable_auto_compactions=1",
    ];
    db_bench_run(&dir, "fillrandom", 1000, &flags);
    let rocksdb_tables = sst_files(&dir);

    let (mut o, _) = Options::load_latest(&dir, Env::new().unwrap(), false, Cache::new_lru_cache(0)).unwrap();
    o.set_disable_auto_compactions(true);

    let n = 6000;
    {
        let db = DB::open(&o, &dir).unwrap();
        for half in 0..2 {
            for i in (half..n).step_by(2) {
                db.put(key(i), format!("value{i}")).unwrap();
            }
            db.flush().unwrap();
        }
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
    }
    let tables = sst_files(&dir);
    assert!(!tables.is_empty());
    for f in &tables {
        assert!(!rocksdb_tables.contains(f), "{} was not rewritten", f.display());
        let (file, size, opts) = table_file(f);
        let t = Table::open(file, size, opts).unwrap();
        let p = t.properties();
        assert!(p.index_partitions >= 2, "{}: {} index partitions", f.display(), p.index_partitions);
        assert!(p.filter_size > 0, "{}: no filter", f.display());
        assert_eq!(p.user_collected.get(DECOUPLED), None, "{}: filters not coupled", f.display());
    }
    let text = latest_options_text(&dir);
    assert!(text.lines().any(|l| l.trim() == "decouple_partitioned_filters=false"), "{text}");

    run_tool("sst_dump", &args(&[&format!("--file={}", dir.display()), "--command=check"]));
    let scanned = ldb_scan(&dir, None);
    let db = DB::open(&o, &dir).unwrap();
    assert_same_pairs(&shale_scan_default(&db), &scanned, "Shale scan vs ldb scan");
    for i in (0..n).step_by(11) {
        assert_eq!(db.get(key(i)).unwrap(), Some(format!("value{i}").into_bytes()));
    }
    let reads = || db.property_int_value("rocksdb.shale.data-blocks-read").unwrap().expect("property");
    let before = reads();
    let lookups = 1000;
    for i in 0..lookups {
        assert_eq!(db.get(absent_key(i * 5)).unwrap(), None);
    }
    let absent = reads() - before;
    assert!(absent * 20 <= lookups, "{lookups} absent-key lookups read {absent} data blocks");
    drop(db);

    // The same options with a compression dictionary, in a database of their own.
    let dict_dir = tmp.path().join("dict");
    let mut with_dict = o.clone();
    with_dict.create_if_missing(true);
    with_dict.set_compression_type(shale::DBCompressionType::Zstd);
    with_dict.set_compression_options(-14, 32767, 0, 16 << 10);
    let db = DB::open(&with_dict, &dict_dir).unwrap();
    for half in 0..2 {
        for i in (half..n).step_by(2) {
            db.put(key(i), format!("value{i}")).unwrap();
        }
        db.flush().unwrap();
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    for f in sst_files(&dict_dir) {
        let (file, size, opts) = table_file(&f);
        let t = Table::open(file, size, opts).unwrap();
        let p = t.properties();
        assert!(p.index_partitions >= 2, "{}: {} index partitions", f.display(), p.index_partitions);
        assert!(p.compression_options.contains("max_dict_bytes=16384;"), "{}", p.compression_options);
        assert_eq!(p.user_collected.get(DECOUPLED), None, "{}: filters not coupled", f.display());
    }
    // Every present key passes its filter partition; absent ones almost never.
    for i in 0..n {
        assert_eq!(db.get(key(i)).unwrap(), Some(format!("value{i}").into_bytes()), "key {i}");
    }
    let before = reads_of(&db);
    for i in 0..lookups {
        assert_eq!(db.get(absent_key(i * 5)).unwrap(), None);
    }
    let absent = reads_of(&db) - before;
    assert!(absent * 20 <= lookups, "{lookups} absent-key lookups read {absent} data blocks");
    let scanned = shale_scan_default(&db);
    drop(db);
    run_tool("sst_dump", &args(&[&format!("--file={}", dict_dir.display()), "--command=check"]));
    assert_same_pairs(&ldb_scan(&dict_dir, None), &scanned, "ldb scan of the dictionary tables");
    for i in (0..n).step_by(293) {
        assert_eq!(
            ldb_get(&dict_dir, None, &key(i)),
            Some(format!("value{i}").into_bytes()),
            "ldb get key {i}"
        );
    }
}

fn reads_of(db: &DB) -> u64 {
    db.property_int_value("rocksdb.shale.data-blocks-read").unwrap().expect("property")
}
