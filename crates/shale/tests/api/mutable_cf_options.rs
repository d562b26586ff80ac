//! Column-family options RocksDB 11.8.1 marks mutable (`cf_mutable_options_type_info`):
//! each acts when the family opens with it and again after `set_options` (the next flush,
//! compaction or read uses the new value), and the OPTIONS file written afterwards holds it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::BTreeSet;
use std::path::Path;

use shale::{DBCompactionStyle, DBCompressionType, Options, WaitForCompactOptions, DB};

use crate::util;

fn blob_files(dir: &Path) -> BTreeSet<String> {
    util::files_ending(dir, ".blob").into_iter().collect()
}

fn blob_bytes(dir: &Path, names: &BTreeSet<String>) -> u64 {
    names.iter().map(|n| std::fs::metadata(dir.join(n)).unwrap().len()).sum()
}

fn table_names(db: &DB) -> BTreeSet<String> {
    db.live_files().unwrap().into_iter().map(|f| f.name).collect()
}

/// Values that compress well (a run of one byte after a short header).
fn value(i: u32, len: usize) -> Vec<u8> {
    let mut v = format!("{i:06}:").into_bytes();
    v.resize(len, b'x');
    v
}

/// BlobDB's rows change on an open database, and the next flush or compaction uses them:
/// blob files on and off, `min_blob_size`, the blob codec, garbage collection and its age
/// cutoff.
#[test]
fn blob_rows_act_after_set_options() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_level_zero_file_num_compaction_trigger(100);
    let db = DB::open(&o, dir).unwrap();
    let put_round = |round: u32| {
        for i in 0..100u32 {
            db.put(format!("k{i:04}"), value(i + round * 1000, 400)).unwrap();
        }
        db.flush().unwrap();
    };
    put_round(0);
    assert!(blob_files(dir).is_empty(), "blob files are off by default");

    // On: the next flush writes the large values to a blob file, uncompressed.
    db.set_options(&[
        ("enable_blob_files", "true"),
        ("min_blob_size", "100"),
        ("blob_compression_type", "kNoCompression"),
        ("blob_file_size", "1048576"),
    ])
    .unwrap();
    let text = util::latest_options_text(dir);
    for want in ["enable_blob_files=true", "min_blob_size=100", "blob_compression_type=kNoCompression"] {
        assert!(text.contains(want), "{want} in {text}");
    }
    put_round(1);
    let first = blob_files(dir);
    assert_eq!(first.len(), 1, "{first:?}");
    let plain = blob_bytes(dir, &first);
    assert!(plain >= 100 * 400, "uncompressed blobs: {plain} bytes");

    // ZSTD: the next blob file holds the same values in far fewer bytes.
    db.set_options(&[("blob_compression_type", "kZSTD")]).unwrap();
    assert!(util::latest_options_text(dir).contains("blob_compression_type=kZSTD"));
    put_round(2);
    let second: BTreeSet<String> = blob_files(dir).difference(&first).cloned().collect();
    assert_eq!(second.len(), 1, "{second:?}");
    let packed = blob_bytes(dir, &second);
    assert!(packed * 4 < plain, "ZSTD blobs take {packed} bytes, uncompressed {plain}");

    // A minimum above every value: the next flush keeps them in its table.
    db.set_options(&[("min_blob_size", "1000")]).unwrap();
    put_round(3);
    let after_min: BTreeSet<String> = blob_files(dir);
    assert_eq!(after_min.len(), 2, "no blob file for values under min_blob_size: {after_min:?}");
    for i in 0..100u32 {
        assert_eq!(db.get(format!("k{i:04}")).unwrap(), Some(value(i + 3000, 400)));
    }

    // A full compaction (bottommost level included) with GC off: the blobs stay in their
    // file, which the compacted table still references.
    let mut full = shale::CompactOptions::default();
    full.set_bottommost_level_compaction(shale::BottommostLevelCompaction::Force);
    db.set_options(&[("min_blob_size", "100")]).unwrap();
    put_round(4);
    let gc_victim: BTreeSet<String> = blob_files(dir).difference(&after_min).cloned().collect();
    assert_eq!(gc_victim.len(), 1, "{gc_victim:?}");
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &full);
    let kept = blob_files(dir);
    assert!(kept.is_superset(&gc_victim), "without GC the live blob file stays: {kept:?}");

    // GC on with cutoff 1.0: the next compaction relocates every live blob, so the file
    // goes.
    db.set_options(&[
        ("enable_blob_garbage_collection", "true"),
        ("blob_garbage_collection_age_cutoff", "1.0"),
    ])
    .unwrap();
    let text = util::latest_options_text(dir);
    assert!(text.contains("enable_blob_garbage_collection=true"), "{text}");
    assert!(text.contains("blob_garbage_collection_age_cutoff=1.000000"), "{text}");
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &full);
    let relocated = blob_files(dir);
    assert!(relocated.is_disjoint(&gc_victim), "GC relocated the blobs: {relocated:?}");
    for i in 0..100u32 {
        assert_eq!(db.get(format!("k{i:04}")).unwrap(), Some(value(i + 4000, 400)));
    }

    // Off again: the next flush writes no blob file.
    db.set_options(&[("enable_blob_files", "false")]).unwrap();
    assert!(util::latest_options_text(dir).contains("enable_blob_files=false"));
    put_round(5);
    assert_eq!(blob_files(dir), relocated, "blob files off: nothing new");
    drop(db);

    // The values in force reach the next open through the OPTIONS file.
    let (loaded, _) =
        Options::load_latest(dir, shale::Env::new().unwrap(), false, shale::Cache::new_lru_cache(1 << 20))
            .unwrap();
    let db = DB::open(&loaded, dir).unwrap();
    for i in 0..100u32 {
        assert_eq!(db.get(format!("k{i:04}")).unwrap(), Some(value(i + 5000, 400)));
    }
}

fn universal(extra: &str) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(DBCompressionType::None);
    o.set_num_levels(4);
    o.set_compaction_style(DBCompactionStyle::Universal);
    o.set_level_zero_file_num_compaction_trigger(4);
    if extra.is_empty() {
        o
    } else {
        o.get_options_from_string(extra).unwrap()
    }
}

/// Flushes one table of keys `first..first + n`.
fn table(db: &DB, first: u32, n: u32, tag: &str) {
    for i in first..first + n {
        db.put(format!("k{i:06}"), format!("{tag}{i}")).unwrap();
    }
    db.flush().unwrap();
}

fn wait(db: &DB) {
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
}

/// Universal's `allow_trivial_move`: a compaction whose files do not overlap moves them to
/// the output level unchanged (same table files); without it, or with overlapping files,
/// they are rewritten. Set at open and by `set_options`.
#[test]
fn universal_allow_trivial_move_moves_disjoint_runs() {
    // At open: four disjoint tables, picked together, move to the last level as they are.
    let tmp = tempfile::tempdir().unwrap();
    let db =
        DB::open(&universal("compaction_options_universal={allow_trivial_move=true}"), tmp.path()).unwrap();
    assert!(util::latest_options_text(tmp.path()).contains("allow_trivial_move=true"));
    let mut flushed = BTreeSet::new();
    for t in 0..4 {
        table(&db, t * 100, 100, "a");
        flushed.extend(table_names(&db));
    }
    wait(&db);
    let files = db.live_files().unwrap();
    assert_eq!(
        files.iter().map(|f| f.name.clone()).collect::<BTreeSet<_>>(),
        flushed,
        "moved, not rewritten"
    );
    assert!(files.iter().all(|f| f.level == 3), "{:?}", files.iter().map(|f| f.level).collect::<Vec<_>>());

    // Overlapping tables are merged even with the option on: none of them survives as it
    // was flushed.
    db.set_options(&[("disable_auto_compactions", "true")]).unwrap();
    let before = table_names(&db);
    for _ in 0..4 {
        table(&db, 50, 100, "b");
    }
    let overlapping: BTreeSet<String> = table_names(&db).difference(&before).cloned().collect();
    assert_eq!(overlapping.len(), 4);
    db.set_options(&[("disable_auto_compactions", "false")]).unwrap();
    wait(&db);
    let after = table_names(&db);
    assert!(after.is_disjoint(&overlapping), "overlapping runs were merged: {after:?} {overlapping:?}");
    for i in 0..400u32 {
        let want = if (50..150).contains(&i) { format!("b{i}") } else { format!("a{i}") };
        assert_eq!(db.get(format!("k{i:06}")).unwrap(), Some(want.into_bytes()));
    }
    drop(db);

    // Off (the default): the same disjoint tables are rewritten into one.
    let tmp = tempfile::tempdir().unwrap();
    let db = DB::open(&universal(""), tmp.path()).unwrap();
    assert!(util::latest_options_text(tmp.path()).contains("allow_trivial_move=false"));
    let mut flushed = BTreeSet::new();
    for t in 0..4 {
        table(&db, t * 100, 100, "a");
        flushed.extend(table_names(&db));
    }
    wait(&db);
    let rewritten = table_names(&db);
    assert_eq!(rewritten.len(), 1, "{rewritten:?}");
    assert!(rewritten.is_disjoint(&flushed));

    // Turned on by set_options: the next compaction moves its disjoint files.
    db.set_options(&[("compaction_options_universal", "{allow_trivial_move=true;}")]).unwrap();
    assert!(util::latest_options_text(tmp.path()).contains("allow_trivial_move=true"));
    let mut before = rewritten.clone();
    for t in 4..8 {
        table(&db, t * 100, 100, "c");
        before.extend(table_names(&db));
    }
    wait(&db);
    let now = table_names(&db);
    assert_eq!(now, before, "the second compaction moved every file");
    for i in 0..800u32 {
        let want = if i < 400 { format!("a{i}") } else { format!("c{i}") };
        assert_eq!(db.get(format!("k{i:06}")).unwrap(), Some(want.into_bytes()));
    }
}

/// `compaction_options_fifo={ttl=...}` is deprecated in RocksDB 11.8.1: any value is taken
/// and changes nothing (the family's `ttl` is FIFO's age limit).
#[test]
fn fifo_struct_ttl_is_deprecated_and_accepted() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compaction_style(DBCompactionStyle::Fifo);
    let o = o.get_options_from_string("compaction_options_fifo={ttl=3600;allow_compaction=true}").unwrap();
    let db = DB::open(&o, tmp.path()).unwrap();
    db.set_options(&[("compaction_options_fifo", "{ttl=7200;max_table_files_size=1048576;}")]).unwrap();
    let text = util::latest_options_text(tmp.path());
    assert!(text.contains("max_table_files_size=1048576"), "{text}");
    assert!(text.contains("allow_compaction=true"), "{text}");
}

/// `prepopulate_blob_cache=kFlushOnly` (at open through an option string, or by
/// `set_options`): the blobs a flush writes go into the blob cache, so the first read of each
/// is a cache hit; kDisable (the default) leaves the cache empty until reads fill it.
/// Compactions never warm it.
#[test]
fn prepopulate_blob_cache_warms_the_cache_at_flush() {
    use shale::statistics::Ticker;
    const N: u64 = 20;
    let run = |prepopulate_at_open: bool| {
        let tmp = tempfile::tempdir().unwrap();
        let cache = shale::Cache::new_lru_cache(8 << 20);
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_disable_auto_compactions(true);
        o.set_enable_blob_files(true);
        o.set_min_blob_size(100);
        o.set_blob_cache(&cache);
        o.enable_statistics();
        let o = if prepopulate_at_open {
            o.get_options_from_string("prepopulate_blob_cache=kFlushOnly").unwrap()
        } else {
            o
        };
        let db = DB::open(&o, tmp.path()).unwrap();
        let write = |round: u32| {
            for i in 0..N as u32 {
                db.put(format!("k{i:04}"), value(i + round * 1000, 300)).unwrap();
            }
            db.flush().unwrap();
        };
        write(0);
        if !prepopulate_at_open {
            // Default kDisable: the flush adds nothing.
            assert_eq!(cache.get_usage(), 0);
            assert_eq!(o.get_ticker_count(Ticker::BlobDbCacheAdd), 0);
            db.set_options(&[("prepopulate_blob_cache", "kFlushOnly")]).unwrap();
            assert!(util::latest_options_text(tmp.path()).contains("prepopulate_blob_cache=kFlushOnly"));
            write(1);
        } else {
            assert!(util::latest_options_text(tmp.path()).contains("prepopulate_blob_cache=kFlushOnly"));
        }
        let round = u32::from(!prepopulate_at_open);
        assert_eq!(o.get_ticker_count(Ticker::BlobDbCacheAdd), N, "one add per blob flushed");
        assert_eq!(o.get_ticker_count(Ticker::BlobDbCacheBytesWrite), N * 300);
        assert!(cache.get_usage() >= (N * 300) as usize, "usage {}", cache.get_usage());
        for i in 0..N as u32 {
            assert_eq!(db.get(format!("k{i:04}")).unwrap(), Some(value(i + round * 1000, 300)));
        }
        assert_eq!(o.get_ticker_count(Ticker::BlobDbCacheHit), N, "every first read hits");
        assert_eq!(o.get_ticker_count(Ticker::BlobDbCacheMiss), 0);

        // Off again: the next flush leaves the cache as it is.
        db.set_options(&[("prepopulate_blob_cache", "kDisable")]).unwrap();
        write(2);
        assert_eq!(o.get_ticker_count(Ticker::BlobDbCacheAdd), N);
        assert!(db.set_options(&[("prepopulate_blob_cache", "kAll")]).is_err());
    };
    run(true);
    run(false);
}

/// `uncache_aggressiveness`: once a compaction replaces a table, the old table's blocks
/// leave the block cache when its reader goes (at 0, the default, they stay until evicted).
/// Set at open through an option string and by `set_options`.
#[test]
fn uncache_aggressiveness_erases_an_obsolete_tables_blocks() {
    let cache = shale::Cache::new_lru_cache(64 << 20);
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(DBCompressionType::None);
    o.set_disable_auto_compactions(true);
    let mut t = shale::BlockBasedOptions::default();
    t.set_block_cache(&cache);
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, tmp.path()).unwrap();
    let mut full = shale::CompactOptions::default();
    full.set_bottommost_level_compaction(shale::BottommostLevelCompaction::Force);
    let read_all = |round: u32| {
        for i in 0..2000u32 {
            assert_eq!(db.get(format!("k{i:05}")).unwrap(), Some(util::value(u64::from(i + round), 100)));
        }
    };
    for i in 0..2000u32 {
        db.put(format!("k{i:05}"), util::value(u64::from(i), 100)).unwrap();
    }
    db.flush().unwrap();
    read_all(0);
    let filled = cache.get_usage();
    assert!(filled > 200_000, "the table's blocks are cached: {filled}");

    // Default 0: the replaced table's blocks stay cached.
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &full);
    util::wait_for_background(&db);
    assert!(cache.get_usage() >= filled, "blocks left cached at 0: {} < {filled}", cache.get_usage());

    // Raised by set_options: the next replaced table's blocks go.
    db.set_options(&[("uncache_aggressiveness", "10000")]).unwrap();
    assert!(util::latest_options_text(tmp.path()).contains("uncache_aggressiveness=10000"));
    let before_reads = cache.get_usage();
    read_all(0);
    let with_second = cache.get_usage();
    let second = with_second - before_reads;
    assert!(second > 200_000, "the compacted table's blocks are cached: {second}");
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &full);
    util::wait_until(60, "the obsolete table's blocks to leave the cache", || {
        cache.get_usage() <= with_second - second * 9 / 10
    });
    drop(db);

    // At open, through an option string.
    let cache = shale::Cache::new_lru_cache(64 << 20);
    let tmp = tempfile::tempdir().unwrap();
    let mut t = shale::BlockBasedOptions::default();
    t.set_block_cache(&cache);
    o.set_block_based_table_factory(&t);
    let o = o.get_options_from_string("uncache_aggressiveness=300").unwrap();
    let db = DB::open(&o, tmp.path()).unwrap();
    for i in 0..2000u32 {
        db.put(format!("k{i:05}"), util::value(u64::from(i + 7), 100)).unwrap();
    }
    db.flush().unwrap();
    for i in 0..2000u32 {
        assert!(db.get(format!("k{i:05}")).unwrap().is_some());
    }
    let filled = cache.get_usage();
    assert!(filled > 200_000, "{filled}");
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &full);
    util::wait_until(60, "the obsolete table's blocks to leave the cache", || {
        cache.get_usage() < filled / 10
    });
}

fn bytes_at_temperature(db: &DB, t: u8) -> u64 {
    db.property_value(format!("rocksdb.live-sst-files-size-at-temperature{t}"))
        .unwrap()
        .unwrap()
        .parse()
        .unwrap()
}

/// `default_write_temperature` and `last_level_temperature`: flushes record the default
/// temperature, compactions into the last level the last level's; the MANIFEST keeps them
/// (a reopen reports the same), `rocksdb.live-sst-files-size-at-temperature<N>` counts the
/// bytes at each; set at open through an option string and by `set_options`.
#[test]
fn write_temperatures_are_recorded_per_table() {
    const WARM: u8 = 0x08;
    const COLD: u8 = 0x0C;
    const HOT: u8 = 0x04;
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let o =
        o.get_options_from_string("default_write_temperature=kWarm;last_level_temperature=kCold").unwrap();
    let db = DB::open(&o, tmp.path()).unwrap();
    let text = util::latest_options_text(tmp.path());
    assert!(text.contains("default_write_temperature=kWarm"), "{text}");
    assert!(text.contains("last_level_temperature=kCold"), "{text}");
    let total = |db: &DB| -> u64 { db.live_files().unwrap().iter().map(|f| f.size as u64).sum() };
    // Two overlapping tables, so the compaction below merges them (a trivial move keeps a
    // file's temperature, as RocksDB's).
    for round in 0..2 {
        for i in 0..500u32 {
            db.put(format!("k{i:05}"), format!("v{i}-{round}")).unwrap();
        }
        db.flush().unwrap();
    }
    assert_eq!(bytes_at_temperature(&db, WARM), total(&db), "a flush writes kWarm");
    assert_eq!(bytes_at_temperature(&db, COLD), 0);
    assert_eq!(bytes_at_temperature(&db, 0), 0);
    // Into the last level (dynamic level bytes: level 0 compacts to level 6): kCold.
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert!(db.live_files().unwrap().iter().all(|f| f.level == 6));
    assert_eq!(bytes_at_temperature(&db, COLD), total(&db), "the last level is kCold");
    assert_eq!(bytes_at_temperature(&db, WARM), 0);

    // set_options: the next flush records kHot.
    db.set_options(&[("default_write_temperature", "kHot")]).unwrap();
    assert!(util::latest_options_text(tmp.path()).contains("default_write_temperature=kHot"));
    for i in 0..100u32 {
        db.put(format!("k{i:05}"), format!("w{i}")).unwrap();
    }
    db.flush().unwrap();
    let hot = bytes_at_temperature(&db, HOT);
    assert!(hot > 0);
    assert_eq!(hot + bytes_at_temperature(&db, COLD), total(&db));
    assert!(db.set_options(&[("last_level_temperature", "kLukewarm")]).is_err());
    drop(db);

    // The MANIFEST keeps each table's temperature.
    let db = DB::open(&o, tmp.path()).unwrap();
    assert_eq!(bytes_at_temperature(&db, HOT), hot);
    assert_eq!(hot + bytes_at_temperature(&db, COLD), total(&db));

    // kUnknown for the last level: compactions there take the default.
    db.set_options(&[("last_level_temperature", "kUnknown"), ("default_write_temperature", "kWarm")])
        .unwrap();
    let mut full = shale::CompactOptions::default();
    full.set_bottommost_level_compaction(shale::BottommostLevelCompaction::Force);
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &full);
    assert_eq!(bytes_at_temperature(&db, WARM), total(&db));
    assert_eq!(bytes_at_temperature(&db, HOT), 0);

    // An ingested copy takes the default write temperature; a linked file keeps kUnknown.
    db.set_options(&[("default_write_temperature", "kHot")]).unwrap();
    let writer_opts = Options::default();
    let sst = |name: &str, key: &str| {
        let path = tmp.path().join(name);
        let mut w = shale::SstFileWriter::create(&writer_opts);
        w.open(&path).unwrap();
        w.put(key, b"x").unwrap();
        w.finish().unwrap();
        path
    };
    let before = total(&db);
    db.ingest_external_file(vec![sst("copied.sst", "zz1")]).unwrap();
    assert_eq!(bytes_at_temperature(&db, HOT), total(&db) - before, "the copy is kHot");
    let mut link = shale::IngestExternalFileOptions::default();
    link.set_move_files(true);
    let before_unknown = bytes_at_temperature(&db, 0);
    db.ingest_external_file_opts(&link, vec![sst("linked.sst", "zz2")]).unwrap();
    assert!(bytes_at_temperature(&db, 0) > before_unknown, "the linked file is kUnknown");
}
