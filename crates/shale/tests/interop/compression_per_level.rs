//! Per-level compression acts as RocksDB 11.8.1's `GetCompressionType` (issue 33): each table
//! records the codec it was written with (`rocksdb.compression_name`), flushes use
//! `compression_per_level[0]`, a compaction into level L entry `L - base_level + 1`,
//! `bottommost_compression` (and its options) the bottommost level; `min_level_to_compress`
//! fills `compression_per_level` as RocksDB's C API does. RocksDB 11.8.1's `sst_dump` verifies
//! every table and `ldb scan` reads the databases (with the OPTIONS files Shale wrote).
//! `optimize_filters_for_hits` (a layout option of the same path) is here too.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeMap;
use std::path::Path;

use shale::table::reader::Table;
use shale::{DBCompressionType as C, Options, DB};
use tools::*;

/// Every live table: (level, compression name, compression options) by file name.
fn tables(db: &DB, dir: &Path) -> BTreeMap<String, (i32, String, String)> {
    let mut out = BTreeMap::new();
    for lf in db.live_files().unwrap() {
        let path = dir.join(lf.name.trim_start_matches('/'));
        let (file, size, opts) = table_file(&path);
        let t = Table::open(file, size, opts).unwrap();
        let p = t.properties();
        out.insert(lf.name.clone(), (lf.level, p.compression_name.clone(), p.compression_options.clone()));
    }
    out
}

/// Whether `name` (a table's `rocksdb.compression_name`) says codec `c`: format_version 7
/// lists the codec ids used ("BuiltinV2;05;"), an uncompressed table none.
fn is_codec(name: &str, c: C) -> bool {
    let id = match c {
        C::None => return !name.contains(';') || name.trim_end_matches(';').split(';').count() == 1,
        C::Snappy => "01",
        C::Zlib => "02",
        C::Bz2 => "03",
        C::Lz4 => "04",
        C::Lz4hc => "05",
        C::Zstd => "07",
    };
    name.split(';').any(|x| x == id)
}

/// A value that compresses a little (so every codec is used) but not to nothing.
fn value(i: u32) -> String {
    let mut x = i.wrapping_mul(2_654_435_761) | 1;
    let mut s = String::new();
    for k in 0..12 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        s.push_str(&format!("{:08x}-field{}-", x, k % 3));
    }
    s
}

#[test]
fn each_level_gets_its_codec() {
    let dir = tempfile::tempdir().unwrap();
    let per_level = [C::None, C::Snappy, C::Lz4, C::Zstd];
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_num_levels(4);
    o.set_level_compaction_dynamic_level_bytes(false);
    o.set_compression_per_level(&per_level);
    o.set_write_buffer_size(64 << 10);
    o.set_target_file_size_base(32 << 10);
    o.set_max_bytes_for_level_base(96 << 10);
    o.set_max_bytes_for_level_multiplier(2.0);
    o.set_level_zero_file_num_compaction_trigger(2);
    let db = DB::open(&o, dir.path()).unwrap();
    for i in 0..6000u32 {
        db.put(format!("key{:06}", (i * 7919) % 6000), value(i)).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compact(&shale::WaitForCompactOptions::default()).unwrap();
    let t = tables(&db, dir.path());
    let mut levels = std::collections::BTreeSet::new();
    for (name, (level, codec, _)) in &t {
        levels.insert(*level);
        let want = per_level[(*level as usize).min(3)];
        assert!(is_codec(codec, want), "{name} in level {level}: {codec}, want {want:?}");
    }
    assert!(levels.len() >= 3, "tables in levels {levels:?} only: {t:?}");
    let text = latest_options_text(dir.path());
    assert!(
        text.contains("compression_per_level=kNoCompression:kSnappyCompression:kLZ4Compression:kZSTD"),
        "{text}"
    );
    rocksdb_reads(dir.path(), &db, "each_level_gets_its_codec");
}

#[test]
fn bottommost_compression_and_its_options() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_compression_type(C::Snappy);
    o.set_bottommost_compression_type(C::Zstd);
    o.set_bottommost_compression_options(-14, 19, 0, 4096, true);
    o.set_bottommost_zstd_max_train_bytes(65536, true);
    let db = DB::open(&o, dir.path()).unwrap();
    // Two overlapping level-0 tables: the compaction rewrites them (one alone would move
    // down unchanged, as RocksDB's trivial move when the codecs match).
    for half in 0..2u32 {
        for i in (half..3000).step_by(2) {
            db.put(format!("key{i:06}"), value(i)).unwrap();
        }
        db.flush().unwrap();
    }
    db.compact_range::<&[u8], &[u8]>(None, None);
    for i in 0..100u32 {
        db.put(format!("new{i:06}"), value(i)).unwrap();
    }
    db.flush().unwrap();
    let t = tables(&db, dir.path());
    let l0: Vec<_> = t.values().filter(|(l, _, _)| *l == 0).collect();
    let deep: Vec<_> = t.values().filter(|(l, _, _)| *l > 0).collect();
    assert!(!l0.is_empty() && !deep.is_empty(), "{t:?}");
    for (_, codec, copts) in &l0 {
        assert!(is_codec(codec, C::Snappy), "a flush uses compression: {codec}");
        assert!(copts.contains("level=32767;"), "{copts}");
    }
    for (level, codec, copts) in &deep {
        assert!(is_codec(codec, C::Zstd), "the bottommost level {level}: {codec}");
        assert!(copts.contains("level=19;") && copts.contains("zstd_max_train_bytes=65536;"), "{copts}");
        assert!(copts.contains("max_dict_bytes=4096;"), "{copts}");
    }
    let text = latest_options_text(dir.path());
    assert!(text.contains("bottommost_compression=kZSTD"), "{text}");
    assert!(text.contains("bottommost_compression_opts={checksum=false;max_dict_buffer_bytes=0;enabled=true;max_dict_bytes=4096;"), "{text}");
    rocksdb_reads(dir.path(), &db, "bottommost_compression_and_its_options");
}

#[test]
fn min_level_to_compress_fills_compression_per_level() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_compression_type(C::Lz4);
    o.set_num_levels(4);
    o.set_min_level_to_compress(2);
    let db = DB::open(&o, dir.path()).unwrap();
    for i in 0..2000u32 {
        db.put(format!("key{i:06}"), value(i)).unwrap();
    }
    db.flush().unwrap();
    let t = tables(&db, dir.path());
    assert_eq!(t.len(), 1);
    for (level, codec, _) in t.values() {
        assert_eq!(*level, 0);
        assert!(is_codec(codec, C::None), "levels below 2 are not compressed: {codec}");
    }
    let text = latest_options_text(dir.path());
    assert!(
        text.contains("compression_per_level=kNoCompression:kNoCompression:kLZ4Compression:kLZ4Compression"),
        "{text}"
    );
    // Back in through load_latest, the same list.
    drop(db);
    let (loaded, _) = Options::load_latest(
        dir.path(),
        shale::Env::new().unwrap(),
        false,
        shale::Cache::new_lru_cache(1 << 20),
    )
    .unwrap();
    let db = DB::open(&loaded, dir.path()).unwrap();
    db.put(b"x", b"y").unwrap();
    db.flush().unwrap();
    drop(db);
    assert!(
        latest_options_text(dir.path()).contains("compression_per_level=kNoCompression:kNoCompression:kLZ4")
    );
    let db = DB::open(&loaded, dir.path()).unwrap();
    rocksdb_reads(dir.path(), &db, "min_level_to_compress_fills_compression_per_level");
}

/// `optimize_filters_for_hits`: a compaction's outputs in the bottommost level have no
/// filter; a flush's tables keep theirs.
#[test]
fn optimize_filters_for_hits_leaves_the_last_level_without_filters() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let mut t = shale::BlockBasedOptions::default();
    t.set_bloom_filter(10.0, false);
    o.set_block_based_table_factory(&t);
    o.set_optimize_filters_for_hits(true);
    let db = DB::open(&o, dir.path()).unwrap();
    for half in 0..2u32 {
        for i in (half..2000).step_by(2) {
            db.put(format!("key{i:06}"), value(i)).unwrap();
        }
        db.flush().unwrap();
    }
    db.compact_range::<&[u8], &[u8]>(None, None);
    db.put(b"key000001", b"new").unwrap();
    db.flush().unwrap();
    let mut seen = (0, 0);
    for lf in db.live_files().unwrap() {
        let (file, size, opts) = table_file(&dir.path().join(lf.name.trim_start_matches('/')));
        let p = Table::open(file, size, opts).unwrap().properties().clone();
        if lf.level == 0 {
            assert!(p.filter_size > 0 && p.filter_policy_name == "bloomfilter", "flush: {p:?}");
            seen.0 += 1;
        } else {
            assert_eq!((p.filter_size, p.filter_policy_name.as_str()), (0, ""), "level {}", lf.level);
            seen.1 += 1;
        }
    }
    assert!(seen.0 > 0 && seen.1 > 0, "{seen:?}");
    assert_eq!(db.get(b"key001999").unwrap(), Some(value(1999).into_bytes()));
    assert!(latest_options_text(dir.path()).contains("optimize_filters_for_hits=true"));
    rocksdb_reads(dir.path(), &db, "optimize_filters_for_hits_leaves_the_last_level_without_filters");
}
