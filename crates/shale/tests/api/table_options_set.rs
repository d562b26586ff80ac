//! `set_options(&[("block_based_table_factory", "{...}")])`, RocksDB's SetOptions of the
//! block-based table options: the fields named change for the tables written from then on
//! (each one's effect seen in the next flush's table), the others keep their values, the
//! OPTIONS file shows them, and bad input is refused as RocksDB 11.8.1 refuses it (the
//! table factory's `ValidateOptions` messages). Also `ReadOptions::set_auto_readahead_size`:
//! a bounded scan reads ahead no further than the bound's data block.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::{Path, PathBuf};
use std::sync::Arc;

use shale::statistics::Ticker;
use shale::table::{Table, TableReaderOptions};
use shale::{BlockBasedOptions, DBCompressionType, ErrorKind, Options, ReadOptions, DB};

fn ssts(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .collect();
    v.sort();
    v
}

fn open_table(path: &Path) -> Arc<Table> {
    let size = std::fs::metadata(path).unwrap().len();
    let file = shale::fs::default_fs().new_random_access_file(path).unwrap();
    let opts = TableReaderOptions::standalone(
        shale::key::bytewise_internal_comparator(),
        path.display().to_string(),
    );
    Table::open(file, size, opts).unwrap()
}

/// Writes 2000 keys and flushes; returns the new table.
fn flush_one(db: &DB, dir: &Path, round: u32) -> Arc<Table> {
    let before = ssts(dir);
    for i in 0..2000 {
        db.put(format!("key{round}-{i:06}"), format!("value {i} ").repeat(8)).unwrap();
    }
    db.flush().unwrap();
    let new: Vec<PathBuf> = ssts(dir).into_iter().filter(|p| !before.contains(p)).collect();
    assert_eq!(new.len(), 1, "{new:?}");
    open_table(&new[0])
}

fn options_file(dir: &Path) -> String {
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            let n = p.file_name()?.to_str()?.strip_prefix("OPTIONS-")?.parse().ok()?;
            Some((n, p))
        })
        .collect();
    files.sort();
    std::fs::read_to_string(&files.last().unwrap().1).unwrap()
}

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_compression_type(DBCompressionType::None);
    o
}

#[test]
fn table_factory_fields_change_the_next_tables() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(), dir.path()).unwrap();
    let first = flush_one(&db, dir.path(), 0);
    let blocks_4k = first.properties().num_data_blocks;
    assert!(blocks_4k > 20, "{blocks_4k}");

    db.set_options(&[("block_based_table_factory", "{block_size=16384;}")]).unwrap();
    let t = flush_one(&db, dir.path(), 1);
    let blocks_16k = t.properties().num_data_blocks;
    assert!(blocks_16k * 3 < blocks_4k, "{blocks_16k} blocks of 16 KiB vs {blocks_4k} of 4 KiB");
    let text = options_file(dir.path());
    assert!(text.contains("  block_size=16384\n"), "{text}");

    // block_align: data blocks on 4 KiB boundaries, index values stored whole; block_size
    // (set above) is kept.
    db.set_options(&[("block_based_table_factory", "{block_align=true;block_size=4096}")]).unwrap();
    let t = flush_one(&db, dir.path(), 2);
    assert_eq!(t.properties().index_value_is_delta_encoded, 0);
    assert_eq!(t.properties().data_size % 4096, 0, "data padded to 4 KiB");
    let text = options_file(dir.path());
    assert!(text.contains("  block_align=true\n"), "{text}");
    let mut it = t.iter(true);
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    assert_eq!(n, 2000);

    // Deprecated fields are accepted (RocksDB ignores them too); unknown ones are not.
    db.set_options(&[("block_based_table_factory", "{hash_index_allow_collision=false;}")]).unwrap();
    let e = db.set_options(&[("block_based_table_factory", "{no_such_field=1;}")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("no_such_field"), "{e}");
    // A bad value.
    let e = db.set_options(&[("block_based_table_factory", "{block_size=big;}")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

/// The reader-side fields act on the table readers opened from then on, as RocksDB's cloned
/// table factory does; readers already open keep theirs: `cache_index_and_filter_blocks`
/// puts the next table's index and filter into the block cache, `block_cache` names the
/// cache later readers use, `no_block_cache` leaves later readers without one.
#[test]
fn reader_side_fields_act_on_readers_opened_from_then_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.enable_statistics();
    let mut t = BlockBasedOptions::default();
    t.set_bloom_filter(10.0, false);
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, dir.path()).unwrap();
    flush_one(&db, dir.path(), 0);
    let get = |k: &str| assert!(db.get(k).unwrap().is_some(), "{k}");
    let tick = |t: Ticker| o.get_ticker_count(t);
    get("key0-000001");
    assert_eq!(tick(Ticker::BlockCacheIndexAdd), 0, "the reader holds its index");
    assert_eq!(tick(Ticker::BlockCacheFilterAdd), 0, "the reader holds its filter");

    db.set_options(&[("block_based_table_factory", "{cache_index_and_filter_blocks=true;}")]).unwrap();
    assert!(options_file(dir.path()).contains("  cache_index_and_filter_blocks=true\n"));
    get("key0-000002");
    assert_eq!(tick(Ticker::BlockCacheIndexAdd), 0, "the open reader keeps its choice");
    flush_one(&db, dir.path(), 1);
    get("key1-000001");
    assert!(tick(Ticker::BlockCacheIndexAdd) >= 1, "the new table's index is cached");
    assert!(tick(Ticker::BlockCacheFilterAdd) >= 1, "the new table's filter is cached");

    let capacity = || db.property_int_value("rocksdb.block-cache-capacity").unwrap().unwrap();
    assert_eq!(capacity(), 32 << 20, "the default cache");
    db.set_options(&[("block_based_table_factory", "{block_cache=1M;}")]).unwrap();
    assert_eq!(capacity(), 1 << 20, "the cache named");

    // RocksDB refuses no_block_cache while cache_index_and_filter_blocks is on
    // (`BlockBasedTableFactory::ValidateOptions`), so that one is turned off with it.
    db.set_options(&[(
        "block_based_table_factory",
        "{cache_index_and_filter_blocks=false;no_block_cache=true;}",
    )])
    .unwrap();
    flush_one(&db, dir.path(), 2);
    let data_adds = tick(Ticker::BlockCacheDataAdd);
    for i in (0..2000).step_by(50) {
        get(&format!("key2-{i:06}"));
    }
    assert_eq!(tick(Ticker::BlockCacheDataAdd), data_adds, "a reader without a block cache");
    get("key1-000500");
    assert!(tick(Ticker::BlockCacheDataAdd) > data_adds, "an older reader keeps its cache");
}

#[test]
fn table_factory_changes_are_validated_as_rocksdb_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.set_compression_type(DBCompressionType::Snappy);
    let db = DB::open(&o, dir.path()).unwrap();
    let refused = |v: &str| {
        let e = db.set_options(&[("block_based_table_factory", v)]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{v}: {e}");
        e.to_string()
    };
    assert!(refused("{block_align=true;}").contains("Enable block_align, but compression enabled"));
    db.set_options(&[("compression", "kNoCompression")]).unwrap();
    assert!(refused("{block_align=true;block_size=5000;}")
        .contains("Block alignment requested but block size is not a power of 2"));
    assert!(refused("{super_block_alignment_size=3000;}").contains("not a power of 2"));
    assert!(refused("{super_block_alignment_space_overhead_ratio=2;}")
        .contains("Super block alignment space overhead is too high"));
    assert!(refused("{use_udi_as_primary_index=true;}").contains("requires user_defined_index_factory"));
    // Nothing of a refused change stuck: the next table is as before.
    let t = flush_one(&db, dir.path(), 0);
    assert_eq!(t.properties().index_value_is_delta_encoded, 1);
    // All of them at once, valid: taken.
    db.set_options(&[(
        "block_based_table_factory",
        "{block_align=true;super_block_alignment_size=65536;super_block_alignment_space_overhead_ratio=8;}",
    )])
    .unwrap();
    let t = flush_one(&db, dir.path(), 1);
    assert_eq!(t.properties().data_size % 4096, 0);
}

#[test]
fn open_refuses_block_align_with_compression() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.set_compression_type(DBCompressionType::Lz4);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put("k", "v").unwrap();
    drop(db);
    // Through the OPTIONS file: load it, turn block_align on, and open with it.
    let (mut loaded, cfs) = Options::load_latest(
        dir.path(),
        shale::Env::new().unwrap(),
        false,
        shale::Cache::new_lru_cache(1 << 20),
    )
    .unwrap();
    assert_eq!(cfs.len(), 1);
    let text = options_file(dir.path()).replace("block_align=false", "block_align=true");
    let path = dir.path().join("OPTIONS-999999");
    std::fs::write(&path, text).unwrap();
    let (reloaded, _) = Options::load_latest(
        dir.path(),
        shale::Env::new().unwrap(),
        false,
        shale::Cache::new_lru_cache(1 << 20),
    )
    .unwrap();
    std::fs::remove_file(&path).unwrap();
    let e = match DB::open(&reloaded, dir.path()) {
        Ok(_) => panic!("block_align with LZ4 opens"),
        Err(e) => e,
    };
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("Enable block_align, but compression enabled"), "{e}");
    loaded.create_if_missing(false);
    DB::open(&loaded, dir.path()).unwrap();
}

#[test]
fn auto_readahead_size_stops_reads_ahead_at_the_upper_bound() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.set_write_buffer_size(64 << 20);
    o.enable_statistics();
    let db = DB::open(&o, dir.path()).unwrap();
    for i in 0..4000u32 {
        db.put(format!("key{i:06}"), vec![b'a' + (i % 26) as u8; 1000]).unwrap();
    }
    db.flush().unwrap();
    let prefetched = |auto: bool| {
        let before = o.get_ticker_count(Ticker::PrefetchBytes);
        let mut ro = ReadOptions::default();
        ro.fill_cache(false);
        ro.set_iterate_upper_bound("key002000");
        ro.set_auto_readahead_size(auto);
        let mut n = 0;
        for kv in db.iterator_opt(shale::IteratorMode::Start, ro) {
            kv.unwrap();
            n += 1;
        }
        assert_eq!(n, 2000);
        o.get_ticker_count(Ticker::PrefetchBytes) - before
    };
    let bounded = prefetched(true);
    let unbounded = prefetched(false);
    // 2000 values of 1000 bytes lie before the bound: about 2 MB of blocks. Bounded, reads
    // ahead end with the bound's block (one block of slack); unbounded, they run up to
    // 256 KiB past it.
    assert!(bounded > 0, "reads ahead still happen");
    assert!(bounded < 2_000 * 1_100 + 8192, "{bounded}");
    assert!(unbounded > bounded + 64 * 1024, "{unbounded} vs {bounded}");
}

/// `sample_for_compression` (a column-family option RocksDB's SetOptions changes): the next
/// table records the sizes LZ4 and ZSTD would give its data.
#[test]
fn sample_for_compression_reaches_the_next_tables() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(), dir.path()).unwrap();
    let t = flush_one(&db, dir.path(), 0);
    assert_eq!(t.properties().slow_compression_estimated_data_size, 0);
    db.set_options(&[("sample_for_compression", "1")]).unwrap();
    assert!(options_file(dir.path()).contains("  sample_for_compression=1\n"));
    let t = flush_one(&db, dir.path(), 1);
    let p = t.properties();
    assert!(p.slow_compression_estimated_data_size > 0, "{p:?}");
    assert!(p.fast_compression_estimated_data_size > 0, "{p:?}");
    assert!(p.slow_compression_estimated_data_size < p.data_size, "{p:?}");
    db.set_options(&[("sample_for_compression", "0")]).unwrap();
    let t = flush_one(&db, dir.path(), 2);
    assert_eq!(t.properties().fast_compression_estimated_data_size, 0);
}

/// The pinning choices act on readers opened from then on, as RocksDB's cloned factory:
/// with `cache_index_and_filter_blocks`, `pin_l0_filter_and_index_blocks_in_cache` set by
/// `set_options` makes the next level-0 table's reader hold its index and filter in the
/// cache (pinned usage grows by them), while the reader opened before keeps releasing its
/// own after each read.
#[test]
fn pinning_choices_act_on_readers_opened_from_then_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    let mut t = BlockBasedOptions::default();
    t.set_bloom_filter(10.0, false);
    t.set_cache_index_and_filter_blocks(true);
    let cache = shale::Cache::new_lru_cache(8 << 20);
    t.set_block_cache(&cache);
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, dir.path()).unwrap();
    let pinned = || cache.get_pinned_usage();
    flush_one(&db, dir.path(), 0);
    assert!(db.get("key0-000001").unwrap().is_some());
    let before = pinned();
    assert!(before < 1024, "nothing of the table is held between reads: {before}");

    db.set_options(&[("block_based_table_factory", "{pin_l0_filter_and_index_blocks_in_cache=true;}")])
        .unwrap();
    assert!(options_file(dir.path()).contains("  pin_l0_filter_and_index_blocks_in_cache=true\n"));
    assert!(db.get("key0-000002").unwrap().is_some());
    assert_eq!(pinned(), before, "the open reader keeps its choice");
    flush_one(&db, dir.path(), 1);
    assert!(db.get("key1-000001").unwrap().is_some());
    assert!(pinned() > before + 1024, "the new reader pins its index and filter: {}", pinned());
    assert!(db.get("key0-000003").unwrap().is_some());
    assert!(pinned() > before + 1024);
}
