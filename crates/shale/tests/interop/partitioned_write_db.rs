//! A database whose tables Shale writes with a partitioned index and partitioned Bloom
//! filters (`set_index_type(TwoLevelIndexSearch)`, `set_partition_filters(true)`,
//! `set_metadata_block_size(256)`, a 4-byte prefix extractor): flushed tables, the
//! compaction's output and an `SstFileWriter` file (ingested) all have several index
//! partitions and a partitioned filter. Shale reads them back: every pair, forward and
//! reverse; seeks to absent keys land on the next key (and seek_for_prev on the one
//! before); gets return the values; lookups of absent keys, and prefix seeks of absent
//! prefixes, read (almost) no data block. RocksDB 11.8.1's `sst_dump --command=check`
//! checks every table, `--show_properties` shows the partitions, and `ldb scan` (which
//! loads Shale's OPTIONS file: index_type=kTwoLevelIndexSearch, partition_filters=true,
//! metadata_block_size=256) lists the same pairs. Reopened with index and filter blocks in
//! the block cache (partitions pinned and not), Shale reads the same. Compactions run only when asked, so the
//! files listed are stable. Data-block reads are counted by the
//! `rocksdb.shale.data-blocks-read` property with the block cache disabled.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{
    BlockBasedIndexType, BlockBasedOptions, BlockBasedTablePinningTier, Cache, Direction, IteratorMode,
    Options, ReadOptions, SliceTransform, SstFileWriter, DB,
};
use tools::*;

const KEYS: u64 = 6000;

/// Keys with even prefixes "p000", "p002", ...: odd prefixes are absent.
fn key(i: u64) -> Vec<u8> {
    format!("p{:03}:{:08}", (i / 60) * 2, i * 2).into_bytes()
}

fn absent_key(i: u64) -> Vec<u8> {
    format!("p{:03}:{:08}", (i / 60) * 2, i * 2 + 1).into_bytes()
}

fn value(i: u64) -> Vec<u8> {
    format!("value{i}").into_bytes()
}

fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_prefix_extractor(SliceTransform::create_fixed_prefix(4));
    let mut t = BlockBasedOptions::default();
    t.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
    t.set_partition_filters(true);
    t.set_metadata_block_size(256);
    t.set_bloom_filter(10.0, false);
    t.disable_cache();
    o.set_block_based_table_factory(&t);
    o
}

/// RocksDB 11.8.1's `sst_dump --show_properties` of one table: its index partitions and
/// filter policy.
fn check_partitioned(table: &Path) {
    let out = run_tool("sst_dump", &args(&[&format!("--file={}", table.display()), "--show_properties"]));
    let field = |name: &str| {
        out.lines()
            .find_map(|l| l.trim().strip_prefix(name).map(|v| v.trim().to_string()))
            .unwrap_or_else(|| panic!("no {name} in sst_dump output:\n{out}"))
    };
    let parts: u64 = field("# index partitions:").parse().unwrap();
    assert!(parts >= 2, "{}: {parts} index partitions\n{out}", table.display());
    assert!(field("top-level index size:").parse::<u64>().unwrap() > 0, "{out}");
    assert_eq!(field("filter policy name:"), "bloomfilter", "{out}");
    assert!(field("filter block size:").parse::<u64>().unwrap() > 0, "{out}");
}

fn reads(db: &DB) -> u64 {
    db.property_int_value("rocksdb.shale.data-blocks-read").unwrap().expect("property")
}

#[test]
fn shale_partitioned_tables_are_read_back_and_by_rocksdb_11() {
    let test = "shale_partitioned_tables_are_read_back_and_by_rocksdb_11";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    {
        let db = DB::open(&options(), &dir).unwrap();
        // Two flushes over one key range, so the compaction rewrites them (no trivial move).
        for half in 0..2 {
            for i in (half..KEYS).step_by(2) {
                db.put(key(i), value(i)).unwrap();
            }
            db.flush().unwrap();
        }
        let flushed = sst_files(&dir);
        assert_eq!(flushed.len(), 2);
        for t in &flushed {
            check_partitioned(t);
        }
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        let compacted = sst_files(&dir);
        assert_eq!(compacted.len(), 1);
        assert!(!flushed.contains(&compacted[0]));
        check_partitioned(&compacted[0]);

        // An external file written with the same options, ingested after the other keys.
        let ext = tmp.path().join("ext.sst");
        let wo = options();
        let mut w = SstFileWriter::create(&wo);
        w.open(&ext).unwrap();
        for i in KEYS..KEYS + 3000 {
            w.put(key(i), value(i)).unwrap();
        }
        w.finish().unwrap();
        check_partitioned(&ext);
        run_tool("sst_dump", &args(&[&format!("--file={}", ext.display()), "--command=check"]));
        db.ingest_external_file(vec![&ext]).unwrap();
    }
    let text = latest_options_text(&dir);
    for line in ["index_type=kTwoLevelIndexSearch", "partition_filters=true", "metadata_block_size=256"] {
        assert!(text.lines().any(|l| l.trim() == line), "no {line} in\n{text}");
    }

    // RocksDB 11.8.1 checks every table (filters included) and reads the database.
    run_tool("sst_dump", &args(&[&format!("--file={}", dir.display()), "--command=check"]));
    let total = KEYS + 3000;
    let want: Pairs = (0..total).map(|i| (key(i), value(i))).collect();
    assert_same_pairs(&ldb_scan(&dir, None), &want, "ldb scan");

    let db = DB::open(&options(), &dir).unwrap();
    assert_same_pairs(&shale_scan_default(&db), &want, "Shale scan");
    let mut back = shale_scan_reverse(&db, "default");
    back.reverse();
    assert_same_pairs(&back, &want, "Shale reverse scan");

    // Seeks to absent keys, across partitions.
    for i in (0..total - 1).step_by(37) {
        let mut it = db.iterator(IteratorMode::From(&absent_key(i), Direction::Forward));
        let (k, v) = it.next().unwrap().unwrap();
        assert_eq!((k.to_vec(), v.to_vec()), (key(i + 1), value(i + 1)), "seek to {i}+");
        let mut it = db.iterator(IteratorMode::From(&absent_key(i), Direction::Reverse));
        let (k, _) = it.next().unwrap().unwrap();
        assert_eq!(k.to_vec(), key(i), "seek_for_prev to {i}+");
    }

    // Gets: present keys read their blocks, absent ones are answered by the filter.
    let before = reads(&db);
    for i in (0..total).step_by(13) {
        assert_eq!(db.get(key(i)).unwrap(), Some(value(i)), "get {i}");
    }
    let present = reads(&db) - before;
    assert!(present >= total / 13, "present-key lookups read data blocks ({present})");
    let before = reads(&db);
    let n = 1000;
    for i in 0..n {
        assert_eq!(db.get(absent_key(i * 9)).unwrap(), None);
    }
    let absent = reads(&db) - before;
    assert!(absent * 20 <= n, "{n} absent-key lookups read {absent} data blocks");

    // Prefix seeks: a present prefix lists its keys, an absent one reads no data block.
    let mut ro = ReadOptions::default();
    ro.set_prefix_same_as_start(true);
    let it = db.iterator_opt(IteratorMode::From(b"p010", Direction::Forward), ro);
    let got: Vec<Vec<u8>> = it.map(|r| r.unwrap().0.to_vec()).collect();
    let expected: Vec<Vec<u8>> = (300..360).map(key).collect();
    assert_eq!(got, expected);
    let before = reads(&db);
    let mut absent_prefixes = 0;
    for p in (1..150).step_by(2) {
        let mut ro = ReadOptions::default();
        ro.set_prefix_same_as_start(true);
        let prefix = format!("p{p:03}");
        let mut it = db.iterator_opt(IteratorMode::From(prefix.as_bytes(), Direction::Forward), ro);
        assert!(it.next().is_none(), "prefix {prefix}");
        absent_prefixes += 1;
    }
    let absent = reads(&db) - before;
    assert!(
        absent * 10 <= absent_prefixes,
        "{absent_prefixes} absent-prefix seeks read {absent} data blocks"
    );
    drop(db);

    // The same tables with index and filter blocks in the block cache, partitions pinned
    // or not.
    for pin in [BlockBasedTablePinningTier::None, BlockBasedTablePinningTier::All] {
        let mut o = options();
        let mut t = BlockBasedOptions::default();
        t.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
        t.set_partition_filters(true);
        t.set_metadata_block_size(256);
        t.set_bloom_filter(10.0, false);
        t.set_block_cache(&Cache::new_lru_cache(1 << 20));
        t.set_cache_index_and_filter_blocks(true);
        t.set_partition_pinning_tier(pin);
        o.set_block_based_table_factory(&t);
        let db = DB::open(&o, &dir).unwrap();
        assert_same_pairs(&shale_scan_default(&db), &want, "Shale scan, cached index and filter");
        for i in (0..total).step_by(17) {
            assert_eq!(db.get(key(i)).unwrap(), Some(value(i)), "get {i}, cached index and filter");
            assert_eq!(db.get(absent_key(i)).unwrap(), None);
        }
    }
}
