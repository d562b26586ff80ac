//! Column-family options that had no row, or that `set_options` refused (helper cfblob,
//! issue 33), each shown acting as RocksDB 11.8.1's:
//! - `memtable_verify_per_key_checksum_on_seek` (and RocksDB's misspelled alias
//!   `memtable_veirfy_per_key_checksum_on_seek`): parsed, written, changed by `set_options`;
//!   its detection of an entry a search passes is shown beside the memtable
//!   (`shale-engine/src/memtable/protection_tests.rs`);
//! - `blob_compression_opts`: the next flush compresses its blobs with the new settings
//!   (ZSTD's frame checksum makes each blob 4 bytes longer);
//! - `plain_table_factory`: `set_options` changes a PlainTable family's table options for
//!   the next table; a block-based family answers RocksDB's InvalidArgument;
//! - `compaction_options_fifo.age_for_warm`: deprecated in RocksDB 11.8.1, kept and written.

use std::path::Path;

use shale::{ErrorKind, KeyEncodingType, PlainTableFactoryOptions, SliceTransform, DB};

use crate::util;

use util::create_options as base;

#[test]
fn verify_per_key_checksum_on_seek_row_and_alias() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = base()
        .get_options_from_string(
            "memtable_protection_bytes_per_key=8;memtable_verify_per_key_checksum_on_seek=true",
        )
        .unwrap();
    o.create_if_missing(true);
    let db = DB::open(&o, path).unwrap();
    let text = util::latest_options_text(path);
    assert!(text.contains("  memtable_verify_per_key_checksum_on_seek=true\n"), "{text}");
    assert!(!text.contains("veirfy"), "the alias is never written");
    for i in 0..300u32 {
        db.put(format!("k{i:04}"), util::value(u64::from(i), 20)).unwrap();
    }
    // Every lookup and seek checks the entries its search passes: sound entries read back.
    assert_eq!(db.get("k0150").unwrap(), Some(util::value(150, 20)));
    let mut it = db.raw_iterator();
    it.seek(b"k0200");
    assert_eq!(it.key(), Some(&b"k0200"[..]));
    // Mutable, by its name and by RocksDB's misspelled alias.
    db.set_options(&[("memtable_veirfy_per_key_checksum_on_seek", "false")]).unwrap();
    let text = util::latest_options_text(path);
    assert!(text.contains("  memtable_verify_per_key_checksum_on_seek=false\n"), "{text}");
    db.set_options(&[("memtable_verify_per_key_checksum_on_seek", "true")]).unwrap();
    db.flush().unwrap();
    db.put("k0150", "new").unwrap();
    assert_eq!(db.get("k0150").unwrap(), Some(b"new".to_vec()));
    let e = db.set_options(&[("memtable_verify_per_key_checksum_on_seek", "maybe")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

/// The sizes of the blob files in `dir`, by file name.
fn blob_sizes(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<_> = util::files_ending(dir, ".blob")
        .into_iter()
        .map(|n| {
            let len = std::fs::metadata(dir.join(&n)).unwrap().len();
            (n, len)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn set_options_changes_blob_compression_opts_of_the_next_blob_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = base();
    o.set_enable_blob_files(true);
    o.set_min_blob_size(0);
    o.set_blob_compression_type(shale::DBCompressionType::Zstd);
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, path).unwrap();
    let text = util::latest_options_text(path);
    assert!(text.contains("  blob_compression_opts={checksum=false;"), "{text}");
    let value = |i: u32| format!("value {i:03} ").repeat(40).into_bytes();
    let write = |db: &DB, tag: &str| {
        for i in 0..100u32 {
            db.put(format!("{tag}{i:03}"), value(i)).unwrap();
        }
        db.flush().unwrap();
    };
    write(&db, "a");
    let first = blob_sizes(path);
    assert_eq!(first.len(), 1, "{first:?}");
    // The same values under keys of the same length, after turning on ZSTD's frame
    // checksum: each of the 100 blobs is 4 bytes longer, the rest of the file the same.
    db.set_options(&[("blob_compression_opts", "{checksum=true;}")]).unwrap();
    let text = util::latest_options_text(path);
    assert!(text.contains("  blob_compression_opts={checksum=true;"), "{text}");
    assert!(text.contains("level=32767;"), "fields not named keep their values: {text}");
    write(&db, "b");
    let second = blob_sizes(path);
    assert_eq!(second.len(), 2, "{second:?}");
    assert_eq!(second[1].1, first[0].1 + 400, "{first:?} then {second:?}");
    // Another level changes the compressed bytes (level 1 against ZSTD's default 3).
    db.set_options(&[("blob_compression_opts", "{checksum=false;level=1;}")]).unwrap();
    write(&db, "c");
    let third = blob_sizes(path);
    assert_eq!(third.len(), 3, "{third:?}");
    for i in [0u32, 57, 99] {
        for tag in ["a", "b", "c"] {
            assert_eq!(db.get(format!("{tag}{i:03}")).unwrap(), Some(value(i)), "{tag}{i:03}");
        }
    }
    let e = db.set_options(&[("blob_compression_opts", "{no_such=1;}")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    drop(db);
    // The values read back after a reopen (the blob files' checksummed frames verified).
    let db = DB::open(&o, path).unwrap();
    assert_eq!(db.get("b042").unwrap(), Some(value(42)));
}

fn plain(key_len: u32) -> PlainTableFactoryOptions {
    PlainTableFactoryOptions {
        user_key_length: key_len,
        bloom_bits_per_key: 10,
        hash_table_ratio: 0.75,
        index_sparseness: 16,
        huge_page_tlb_size: 0,
        encoding_type: KeyEncodingType::Plain,
        full_scan_mode: false,
        store_index_in_file: false,
    }
}

#[test]
fn set_options_changes_plain_table_options_of_the_next_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = base();
    o.set_prefix_extractor(SliceTransform::create_fixed_prefix(4));
    o.set_plain_table_factory(&plain(0));
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, path).unwrap();
    let write = |db: &DB, tag: &str| {
        for i in 0..200u32 {
            db.put(format!("{tag}{i:07}"), "v").unwrap();
        }
        db.flush().unwrap();
    };
    let tables = || {
        let mut v: Vec<_> = util::files_ending(path, ".sst")
            .into_iter()
            .map(|n| std::fs::metadata(path.join(&n)).unwrap().len())
            .collect();
        v.sort();
        v
    };
    write(&db, "a");
    let variable = tables();
    // Fixed 8-byte keys from the next table on: no key sizes stored, so the same records
    // take 200 bytes less.
    db.set_options(&[("plain_table_factory", "{user_key_len=8;}")]).unwrap();
    write(&db, "b");
    let both = tables();
    assert_eq!(both.len(), 2);
    assert!(both[0] < variable[0], "fixed-length keys' table {} against {}", both[0], variable[0]);
    for tag in ["a", "b"] {
        assert_eq!(db.get(format!("{tag}0000123")).unwrap(), Some(b"v".to_vec()));
    }
    let e = db.set_options(&[("plain_table_factory", "{no_such=1;}")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    drop(db);
    // A block-based family: RocksDB's TableFactoryParseFn refuses another factory's alias.
    let Err(e) = base().get_options_from_string("plain_table_factory={user_key_len=8}") else {
        panic!("plain_table_factory applied to a block-based family")
    };
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("Cannot modify BlockBasedTable as plain_table_factory"), "{e}");
    let dir2 = tempfile::tempdir().unwrap();
    let db = DB::open(&base(), dir2.path()).unwrap();
    let e = db.set_options(&[("plain_table_factory", "{user_key_len=8;}")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

#[test]
fn fifo_age_for_warm_is_kept_and_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let o = base().get_options_from_string("compaction_options_fifo={age_for_warm=600}").unwrap();
    let mut o = o;
    o.create_if_missing(true);
    let db = DB::open(&o, path).unwrap();
    assert!(util::latest_options_text(path).contains("age_for_warm=600;"));
    db.set_options(&[("compaction_options_fifo", "{age_for_warm=3600;}")]).unwrap();
    let text = util::latest_options_text(path);
    assert!(
        text.contains("allow_compaction=false;age_for_warm=3600;max_table_files_size=1073741824;"),
        "{text}"
    );
    let e = db.set_options(&[("compaction_options_fifo", "{age_for_warm=x;}")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

/// `prop` of the properties of every live table, in file-number order.
fn table_props(
    db: &DB,
    dir: &Path,
    prop: impl Fn(&shale::table::properties::TableProperties) -> String,
) -> Vec<String> {
    let mut files: Vec<_> = db.live_files().unwrap().into_iter().map(|lf| lf.name).collect();
    files.sort();
    files
        .into_iter()
        .map(|name| {
            let f = dir.join(name.trim_start_matches('/'));
            let size = std::fs::metadata(&f).unwrap().len();
            let file = shale::fs::default_fs().new_random_access_file(&f).unwrap();
            let opts = shale::table::reader::TableReaderOptions::standalone(
                shale::key::bytewise_internal_comparator(),
                f.display().to_string(),
            );
            prop(shale::table::reader::Table::open(file, size, opts).unwrap().properties())
        })
        .collect()
}

/// The `rocksdb.prefix.extractor.name` of every live table, in file-number order.
fn table_extractors(db: &DB, dir: &Path) -> Vec<String> {
    table_props(db, dir, |p| p.prefix_extractor_name.clone())
}

/// `prefix_same_as_start` seeks to `k{i}aa` for 50 families of keys `k{i}bb?`: the keys
/// each finds, stepping to the end of the prefix.
fn prefix_seeks(db: &DB) -> Vec<Vec<Vec<u8>>> {
    (0..50u32)
        .map(|i| {
            let mut ro = shale::ReadOptions::default();
            ro.set_prefix_same_as_start(true);
            let mut it = db.raw_iterator_opt(ro);
            it.seek(format!("k{i:02}aa"));
            let mut keys = Vec::new();
            while let Some(k) = it.key() {
                keys.push(k.to_vec());
                it.next();
            }
            it.status().unwrap();
            keys
        })
        .collect()
}

#[test]
fn set_options_changes_the_prefix_extractor() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = base();
    o.set_prefix_extractor(SliceTransform::create_fixed_prefix(5));
    o.set_memtable_prefix_bloom_ratio(0.2);
    o.set_disable_auto_compactions(true);
    let mut t = shale::BlockBasedOptions::default();
    t.set_bloom_filter(10.0, false);
    t.set_whole_key_filtering(false);
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, path).unwrap();
    // Keys `k{i}bbx` in one table, and `k{i}bbz` in the memtable, both made under the
    // 5-byte extractor: their filters hold `k{i}bb`.
    for i in 0..50u32 {
        db.put(format!("k{i:02}bbx"), "t").unwrap();
    }
    db.flush().unwrap();
    for i in 0..50u32 {
        db.put(format!("k{i:02}bbz"), "m").unwrap();
    }
    assert_eq!(db.get("k07bbx").unwrap(), Some(b"t".to_vec()), "the table's reader is open");
    // Under the 5-byte extractor a seek to `k{i}aa` has a prefix neither filter holds.
    assert!(prefix_seeks(&db).iter().all(Vec::is_empty));
    // A 3-byte extractor from now on: `k{i}` is the prefix of the targets and of every key.
    // The table and the memtable were built with the old one, so their prefix filters are
    // not consulted (RocksDB's PrefixExtractorChanged) and every seek finds its family.
    db.set_options(&[("prefix_extractor", "rocksdb.FixedPrefix.3")]).unwrap();
    let text = util::latest_options_text(path);
    assert!(text.contains("  prefix_extractor=rocksdb.FixedPrefix.3\n"), "{text}");
    let found = prefix_seeks(&db);
    for (i, keys) in found.iter().enumerate() {
        let want = [format!("k{i:02}bbx").into_bytes(), format!("k{i:02}bbz").into_bytes()];
        assert_eq!(keys, &want, "seek {i}");
    }
    // The next table records the new extractor; gets read every key still.
    db.flush().unwrap();
    assert_eq!(table_extractors(&db, path), ["rocksdb.FixedPrefix.5", "rocksdb.FixedPrefix.3"]);
    assert_eq!(prefix_seeks(&db), found);
    for i in 0..50u32 {
        assert_eq!(db.get(format!("k{i:02}bbx")).unwrap(), Some(b"t".to_vec()));
        assert_eq!(db.get(format!("k{i:02}bbz")).unwrap(), Some(b"m".to_vec()));
    }
    // Back to none; a name RocksDB has no built-in extractor of is refused.
    db.set_options(&[("prefix_extractor", "nullptr")]).unwrap();
    assert!(util::latest_options_text(path).contains("  prefix_extractor=nullptr\n"));
    let e = db.set_options(&[("prefix_extractor", "my.Extractor")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

#[test]
fn compression_manager_builtin_v2_is_recorded_by_the_next_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = base();
    o.set_compression_type(shale::DBCompressionType::Lz4);
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, path).unwrap();
    assert!(util::latest_options_text(path).contains("  compression_manager=nullptr\n"));
    let write = |db: &DB, tag: &str| {
        for i in 0..100u32 {
            db.put(format!("{tag}{i:03}"), util::value(u64::from(i), 100)).unwrap();
        }
        db.flush().unwrap();
    };
    write(&db, "a");
    // RocksDB 11.8.1 registers one id, "BuiltinV2": the built-in manager, named in each
    // table's compression options as RocksDB's builder names an explicit manager.
    db.set_options(&[("compression_manager", "BuiltinV2")]).unwrap();
    let text = util::latest_options_text(path);
    assert!(text.contains("  compression_manager=BuiltinCompressionManagerV2\n"), "{text}");
    write(&db, "b");
    db.set_options(&[("compression", "kNoCompression")]).unwrap();
    write(&db, "c");
    // Any other id (RocksDB's own written name too) is none, as RocksDB's loader leaves it.
    db.set_options(&[("compression_manager", "BuiltinCompressionManagerV2")]).unwrap();
    assert!(util::latest_options_text(path).contains("  compression_manager=nullptr\n"));
    db.set_options(&[("compression", "kLZ4Compression")]).unwrap();
    write(&db, "d");
    let props = table_props(&db, path, |p| p.compression_options.clone());
    assert_eq!(props.len(), 4);
    assert!(props[0].ends_with("checksum=0; _type=4; "), "{props:?}");
    assert!(
        props[1].ends_with(
            "checksum=0; _type=4; _compression_manager=BuiltinCompressionManagerV2; \
             _compressor=BuiltinLZ4CompressorV2; "
        ),
        "{props:?}"
    );
    assert!(
        props[2].ends_with("_type=0; _compression_manager=BuiltinCompressionManagerV2; _compressor=; "),
        "{props:?}"
    );
    assert!(props[3].ends_with("checksum=0; _type=4; "), "{props:?}");
    // The data is the same either way.
    for tag in ["a", "b", "c", "d"] {
        assert_eq!(db.get(format!("{tag}042")).unwrap(), Some(util::value(42, 100)));
    }
}

#[test]
fn blob_cache_by_text_caches_blob_values() {
    use shale::statistics::Ticker::{BlobDbCacheAdd, BlobDbCacheHit, BlobDbCacheMiss};
    let dir = tempfile::tempdir().unwrap();
    let mut o =
        base().get_options_from_string("enable_blob_files=true;min_blob_size=0;blob_cache=1M").unwrap();
    o.create_if_missing(true);
    o.enable_statistics();
    let db = DB::open(&o, dir.path()).unwrap();
    let text = util::latest_options_text(dir.path());
    assert!(!text.lines().any(|l| l.trim_start().starts_with("blob_cache=")), "never written: {text}");
    for i in 0..50u32 {
        db.put(format!("k{i:03}"), util::value(u64::from(i), 200)).unwrap();
    }
    db.flush().unwrap();
    assert_eq!(util::files_ending(dir.path(), ".blob").len(), 1);
    for _ in 0..2 {
        for i in 0..50u32 {
            assert_eq!(db.get(format!("k{i:03}")).unwrap(), Some(util::value(u64::from(i), 200)));
        }
    }
    // First reads miss and fill the cache the option made; second reads hit it.
    assert_eq!(o.get_ticker_count(BlobDbCacheMiss), 50);
    assert_eq!(o.get_ticker_count(BlobDbCacheAdd), 50);
    assert_eq!(o.get_ticker_count(BlobDbCacheHit), 50);
    // Immutable, as RocksDB's.
    let e = db.set_options(&[("blob_cache", "2M")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("Option not changeable: blob_cache"), "{e}");
}
