//! Issue 33, InvalidArgument refusals of the option and open layer (docs/refusals.md, its
//! second table): inputs RocksDB 11.8.1 takes (as given, or sanitized to a legal value) that
//! Shale refused, and messages matched to RocksDB's.

use std::time::Duration;

use shale::{
    BlockBasedOptions, ColumnFamilyDescriptor, ColumnFamilyTtl, DBCompactionStyle, DBPath,
    DataBlockIndexType, ErrorKind, KeyEncodingType, Options, PlainTableFactoryOptions, DB,
};

use crate::util;

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o
}

/// The `name=value` line of the OPTIONS file's `[CFOptions "default"]` section.
fn default_cf_option(dir: &std::path::Path, name: &str) -> String {
    let text = util::latest_options_text(dir);
    let section = text.split("[CFOptions \"default\"]").nth(1).expect("no default family section");
    let prefix = format!("{name}=");
    section
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {name} in the default family's section"))
        .to_string()
}

/// RocksDB's SanitizeCfOptions raises `num_levels` to 1, and to 2 with level compaction; it
/// refuses neither (Shale refused both with InvalidArgument).
#[test]
fn num_levels_below_the_style_minimum_is_raised() {
    for (style, given, want) in [
        (DBCompactionStyle::Level, 0, 2),
        (DBCompactionStyle::Level, 1, 2),
        (DBCompactionStyle::Level, -3, 2),
        (DBCompactionStyle::Universal, 0, 1),
        (DBCompactionStyle::Fifo, -1, 1),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = opts();
        o.set_compaction_style(style);
        o.set_num_levels(given);
        let db = DB::open(&o, dir.path()).unwrap_or_else(|e| panic!("{style:?} num_levels {given}: {e}"));
        for i in 0..10u32 {
            db.put(i.to_be_bytes(), b"v").unwrap();
        }
        db.flush().unwrap();
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        assert_eq!(db.get(3u32.to_be_bytes()).unwrap().as_deref(), Some(&b"v"[..]));
        assert_eq!(default_cf_option(dir.path(), "num_levels"), want.to_string(), "{style:?} {given}");
        if style == DBCompactionStyle::Level {
            // The manual compaction moved the table to the last of the two levels.
            assert_eq!(util::int_prop(&db, "rocksdb.num-files-at-level1"), 1);
        }
        drop(db);
        DB::open(&o, dir.path()).unwrap();
    }
    // The same for a family created later.
    let dir = tempfile::tempdir().unwrap();
    let mut db = DB::open(&opts(), dir.path()).unwrap();
    let mut cf = Options::default();
    cf.set_num_levels(0);
    db.create_cf("zero", &cf).unwrap();
    db.put_cf(db.cf_handle("zero").unwrap(), b"k", b"v").unwrap();
    let text = util::latest_options_text(dir.path());
    let section = text.split("[CFOptions \"zero\"]").nth(1).unwrap();
    assert!(section.lines().any(|l| l.trim() == "num_levels=2"), "{section}");
}

/// RocksDB's SanitizeCfOptions clamps `write_buffer_size` to at least 64 KiB at open, and its
/// SetOptions takes 0 as given (Shale refused 0 at both).
#[test]
fn write_buffer_size_zero_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.set_write_buffer_size(0);
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(default_cf_option(dir.path(), "write_buffer_size"), "65536");
    db.put(b"a", b"1").unwrap();
    // SetOptions builds on the sanitized options and does not sanitize again.
    db.set_options(&[("write_buffer_size", "0")]).unwrap();
    assert_eq!(default_cf_option(dir.path(), "write_buffer_size"), "0");
    for i in 0..50u32 {
        db.put(i.to_be_bytes(), [7u8; 100]).unwrap();
    }
    db.flush().unwrap();
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(49u32.to_be_bytes()).unwrap().as_deref(), Some(&[7u8; 100][..]));
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(db.get(49u32.to_be_bytes()).unwrap().as_deref(), Some(&[7u8; 100][..]));
}

/// rust-rocksdb 0.25 applies a descriptor's `ColumnFamilyTtl` only when the database opens
/// with TTL; a plain open takes the descriptor (Shale refused a `Duration` there).
#[test]
fn family_ttl_outside_a_ttl_open_is_taken_and_not_applied() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.create_missing_column_families(true);
    let d = ColumnFamilyDescriptor::new_with_ttl(
        "short",
        Options::default(),
        ColumnFamilyTtl::Duration(Duration::from_secs(1)),
    );
    let db = DB::open_cf_descriptors(&o, dir.path(), [d]).unwrap();
    let cf = db.cf_handle("short").unwrap();
    db.put_cf(cf, b"k", b"v").unwrap();
    db.flush_cf(cf).unwrap();
    std::thread::sleep(Duration::from_millis(2100));
    db.compact_range_cf(cf, None::<&[u8]>, None::<&[u8]>);
    // No TTL: the value is still there, and it is the value written (no timestamp suffix).
    assert_eq!(db.get_cf(cf, b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

/// RocksDB's plain-table key encoder writes kPlain records when the family has no prefix
/// extractor, whatever `encoding_type` asks (Shale refused kPrefix without one at open).
#[test]
fn plain_table_kprefix_without_prefix_extractor_writes_plain_records() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.set_plain_table_factory(&PlainTableFactoryOptions {
        user_key_length: 0,
        bloom_bits_per_key: 10,
        hash_table_ratio: 0.0,
        index_sparseness: 16,
        huge_page_tlb_size: 0,
        encoding_type: KeyEncodingType::Prefix,
        full_scan_mode: false,
        store_index_in_file: false,
    });
    let db = DB::open(&o, dir.path()).unwrap();
    for i in 0..300u32 {
        db.put(format!("key{i:05}"), format!("value{i}")).unwrap();
    }
    db.flush().unwrap();
    assert_eq!(db.get(b"key00123").unwrap().as_deref(), Some(&b"value123"[..]));
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    let got: Vec<_> = db.iterator(shale::IteratorMode::Start).map(|r| r.unwrap()).collect();
    assert_eq!(got.len(), 300);
    assert_eq!(&*got[299].0, b"key00299");
    assert_eq!(db.get(b"key00007").unwrap().as_deref(), Some(&b"value7"[..]));
}

/// RocksDB 11.8.1's words for GetOptionsFromString's refusals: an unknown option is
/// `ConfigureOptions`' "Extra option not recognized", an unknown field of a struct option
/// `ParseStruct`'s "Unrecognized option: <struct>.<field>", a pair without '=' StringToMap's.
#[test]
fn options_string_refusals_in_rocksdb_words() {
    let mut base = Options::default();
    let msg = |r: shale::Result<Options>| {
        let e = util::expect_err(r);
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        e.to_string()
    };
    assert_eq!(
        msg(base.get_options_from_string("no_such_option=1")),
        "Invalid argument: Extra option not recognized: no_such_option"
    );
    assert_eq!(
        msg(base.get_options_from_string("write_buffer_size")),
        "Invalid argument: Mismatched key value pair, '=' expected"
    );
    for (s, field) in [
        ("compaction_options_fifo={no_such=1}", "compaction_options_fifo.no_such"),
        ("compaction_options_universal={no_such=1}", "compaction_options_universal.no_such"),
        ("compression_opts={no_such=1}", "compression_opts.no_such"),
        ("bottommost_compression_opts={no_such=1}", "bottommost_compression_opts.no_such"),
    ] {
        assert_eq!(
            msg(base.get_options_from_string(s)),
            format!("Invalid argument: Unrecognized option: {field}")
        );
    }
    assert!(msg(base.get_options_from_string("a=\0")).contains("must not contain NUL (0x00) bytes"));
}

/// Values RocksDB's option parser takes that Shale's refused as "invalid value":
/// `max_bytes_for_level_multiplier` 0 or less (SanitizeCfOptions makes it 1 at open),
/// `experimental_mempurge_threshold` below 0 (MemPurge off) and `target_file_size_base` 0
/// (each compaction output ends after one key).
#[test]
fn option_values_rocksdb_parses_are_taken() {
    let base = opts();
    let o = base.clone().get_options_from_string("max_bytes_for_level_multiplier=-2").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(default_cf_option(dir.path(), "max_bytes_for_level_multiplier"), "1.000000");
    // SetOptions takes 0 as given (RocksDB's SetOptions does not sanitize).
    db.set_options(&[("max_bytes_for_level_multiplier", "0")]).unwrap();
    assert_eq!(default_cf_option(dir.path(), "max_bytes_for_level_multiplier"), "0.000000");
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    drop(db);

    let o = base.clone().get_options_from_string("experimental_mempurge_threshold=-1.5").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&o, dir.path()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    // MemPurge is off: the flush wrote a table.
    assert_eq!(util::int_prop(&db, "rocksdb.num-files-at-level0"), 1);
    drop(db);

    let o = base.clone().get_options_from_string("target_file_size_base=0").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&o, dir.path()).unwrap();
    // Two overlapping level-0 tables, so that the compaction is not a trivial move.
    for v in [&b"old"[..], b"v"] {
        for i in 0..5u32 {
            db.put(i.to_be_bytes(), v).unwrap();
        }
        db.flush().unwrap();
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(db.get(4u32.to_be_bytes()).unwrap().as_deref(), Some(&b"v"[..]));
    let files: usize =
        (0..7).map(|l| util::int_prop(&db, &format!("rocksdb.num-files-at-level{l}")) as usize).sum();
    assert_eq!(files, 5, "one output file per key");
}

/// The refusal `r` ends in: its kind and RocksDB 11.8.1's message.
fn refused<T>(r: shale::Result<T>, kind: ErrorKind, msg: &str) {
    let e = util::expect_err(r);
    assert_eq!(e.kind(), kind, "{e}");
    assert!(e.to_string().contains(msg), "{e}\nwants: {msg}");
}

/// RocksDB 11.8.1's `DBImpl::ValidateOptions` refuses `keep_log_file_num` 0 at open
/// (InvalidArgument); the option is not mutable (SetDBOptions: "Option not changeable"), and
/// a family's options do not carry it (create_cf with such options is taken). Shale's setter
/// raised 0 to 1.
#[test]
fn keep_log_file_num_zero_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.set_keep_log_file_num(0);
    refused(DB::open(&o, dir.path()), ErrorKind::InvalidArgument, "keep_log_file_num must be greater than 0");
    let parsed = opts().get_options_from_string("keep_log_file_num=0").unwrap();
    refused(
        DB::open(&parsed, dir.path()),
        ErrorKind::InvalidArgument,
        "keep_log_file_num must be greater than 0",
    );
    assert!(!dir.path().join("CURRENT").exists(), "nothing written by a refused open");

    let mut db = DB::open(&opts(), dir.path()).unwrap();
    refused(
        db.set_db_options(&[("keep_log_file_num", "0")]),
        ErrorKind::InvalidArgument,
        "Option not changeable: keep_log_file_num",
    );
    db.create_cf("one", &o).unwrap();
    db.put_cf(&db.cf_handle("one").unwrap(), b"k", b"v").unwrap();
    assert_eq!(db.get_cf(&db.cf_handle("one").unwrap(), b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

/// RocksDB 11.8.1's `BlockBasedTableFactory::ValidateOptions`: index and filter blocks in the
/// block cache, or pinned there, need a block cache. Refused at open, at create_cf and by a
/// SetOptions that would leave the pair (which then changes nothing).
#[test]
fn index_and_filter_in_cache_without_a_block_cache_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let with = |cache_meta: bool, pin_l0: bool| {
        let mut o = opts();
        let mut t = BlockBasedOptions::default();
        t.disable_cache();
        t.set_cache_index_and_filter_blocks(cache_meta);
        t.set_pin_l0_filter_and_index_blocks_in_cache(pin_l0);
        o.set_block_based_table_factory(&t);
        o
    };
    let msg_cache = "Enable cache_index_and_filter_blocks, , but block cache is disabled";
    let msg_pin = "Enable pin_l0_filter_and_index_blocks_in_cache, , but block cache is disabled";
    refused(DB::open(&with(true, false), dir.path()), ErrorKind::InvalidArgument, msg_cache);
    refused(DB::open(&with(false, true), dir.path()), ErrorKind::InvalidArgument, msg_pin);

    let mut db = DB::open(&with(false, false), dir.path()).unwrap();
    refused(db.create_cf("one", &with(true, true)), ErrorKind::InvalidArgument, msg_cache);
    assert!(db.cf_handle("one").is_none());
    db.create_cf("two", &opts()).unwrap();
    let two = db.cf_handle("two").unwrap();
    db.set_options_cf(&two, &[("block_based_table_factory", "{cache_index_and_filter_blocks=true;}")])
        .unwrap();
    refused(
        db.set_options_cf(&two, &[("block_based_table_factory", "{no_block_cache=true;}")]),
        ErrorKind::InvalidArgument,
        msg_cache,
    );
    let text = util::latest_options_text(dir.path());
    let section = text.split("[TableOptions/BlockBasedTable \"two\"]").nth(1).unwrap();
    assert!(section.contains("  no_block_cache=false\n"), "unchanged: {section}");
}

/// RocksDB 11.8.1's `BlockBasedTableFactory::ValidateOptions`: with the data-block hash index,
/// `data_block_hash_table_util_ratio` must be above 0 (open, create_cf, SetOptions); without
/// it any ratio is taken.
#[test]
fn data_block_hash_ratio_zero_or_less_with_the_hash_index_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let with = |index: DataBlockIndexType, ratio: f64| {
        let mut o = opts();
        let mut t = BlockBasedOptions::default();
        t.set_data_block_index_type(index);
        t.set_data_block_hash_ratio(ratio);
        o.set_block_based_table_factory(&t);
        o
    };
    let msg = "data_block_hash_table_util_ratio should be greater than 0 when data_block_index_type is set to kDataBlockBinaryAndHash";
    for ratio in [0.0, -0.5] {
        refused(
            DB::open(&with(DataBlockIndexType::BinaryAndHash, ratio), dir.path()),
            ErrorKind::InvalidArgument,
            msg,
        );
    }
    let mut db = DB::open(&with(DataBlockIndexType::BinarySearch, 0.0), dir.path()).unwrap();
    refused(
        db.create_cf("one", &with(DataBlockIndexType::BinaryAndHash, 0.0)),
        ErrorKind::InvalidArgument,
        msg,
    );
    db.create_cf("two", &with(DataBlockIndexType::BinaryAndHash, 0.75)).unwrap();
    let two = db.cf_handle("two").unwrap();
    refused(
        db.set_options_cf(&two, &[("block_based_table_factory", "{data_block_hash_table_util_ratio=0;}")]),
        ErrorKind::InvalidArgument,
        msg,
    );
    db.put_cf(&two, b"k", b"v").unwrap();
    db.flush_cf(&two).unwrap();
    assert_eq!(db.get_cf(&two, b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

/// RocksDB 11.8.1's `ColumnFamilyData::ValidateOptions`: with blob garbage collection on,
/// its age cutoff and force threshold must lie in [0, 1] (open, create_cf, SetOptions); with
/// it off they are not looked at, nor by a read-only open.
#[test]
fn blob_gc_cutoff_and_threshold_outside_zero_to_one_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let with = |gc: bool, cutoff: f64, force: f64| {
        let mut o = opts();
        o.set_enable_blob_files(true);
        o.set_enable_blob_gc(gc);
        o.set_blob_gc_age_cutoff(cutoff);
        o.set_blob_gc_force_threshold(force);
        o
    };
    let cutoff_msg = "The age cutoff for blob garbage collection should be in the range [0.0, 1.0].";
    let force_msg =
        "The garbage ratio threshold for forcing blob garbage collection should be in the range [0.0, 1.0].";
    refused(DB::open(&with(true, 1.5, 1.0), dir.path()), ErrorKind::InvalidArgument, cutoff_msg);
    refused(DB::open(&with(true, -0.1, 1.0), dir.path()), ErrorKind::InvalidArgument, cutoff_msg);
    refused(DB::open(&with(true, 0.25, 1.01), dir.path()), ErrorKind::InvalidArgument, force_msg);
    let mut db = DB::open(&with(false, 1.5, 2.0), dir.path()).unwrap();
    refused(db.create_cf("one", &with(true, 0.25, -1.0)), ErrorKind::InvalidArgument, force_msg);
    refused(
        db.set_options(&[("enable_blob_garbage_collection", "true")]),
        ErrorKind::InvalidArgument,
        cutoff_msg,
    );
    db.set_options(&[
        ("enable_blob_garbage_collection", "true"),
        ("blob_garbage_collection_age_cutoff", "1.0"),
        ("blob_garbage_collection_force_threshold", "0.0"),
    ])
    .unwrap();
    refused(
        db.set_options(&[("blob_garbage_collection_force_threshold", "1.5")]),
        ErrorKind::InvalidArgument,
        force_msg,
    );
    assert_eq!(default_cf_option(dir.path(), "blob_garbage_collection_force_threshold"), "0.000000");
    drop(db);
    // RocksDB's read-only open does not validate the options: taken.
    let ro = DB::open_for_read_only(&with(true, 1.5, 1.0), dir.path(), false).unwrap();
    assert_eq!(ro.get(b"none").unwrap(), None);
}

/// RocksDB 11.8.1's `CheckCompressionSupported` (first of `ColumnFamilyData::ValidateOptions`):
/// `compression_opts.zstd_max_train_bytes` above 0 needs `max_dict_bytes` above 0, whatever
/// the compression type (open, create_cf, SetOptions). The bottommost options are not checked.
#[test]
fn zstd_trainer_without_a_dictionary_size_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let with = |max_dict: i32, train: i32| {
        let mut o = opts();
        o.set_compression_type(shale::DBCompressionType::Zstd);
        o.set_compression_options(-14, 32767, 0, max_dict);
        o.set_zstd_max_train_bytes(train);
        o
    };
    let msg = "The dictionary size limit (`CompressionOptions::max_dict_bytes`) should be nonzero if we're using zstd's dictionary generator.";
    refused(DB::open(&with(0, 1 << 20), dir.path()), ErrorKind::InvalidArgument, msg);
    let mut snappy = with(0, 1 << 20);
    snappy.set_compression_type(shale::DBCompressionType::Snappy);
    refused(DB::open(&snappy, dir.path()), ErrorKind::InvalidArgument, msg);
    let mut bottom = with(0, 0);
    bottom.set_bottommost_compression_options(-14, 32767, 0, 0, true);
    bottom.set_bottommost_zstd_max_train_bytes(1 << 20, true);
    let mut db = DB::open(&bottom, dir.path()).unwrap();
    refused(db.create_cf("one", &with(0, 4096)), ErrorKind::InvalidArgument, msg);
    db.create_cf("two", &with(16384, 1 << 20)).unwrap();
    refused(
        db.set_options(&[("compression_opts", "{zstd_max_train_bytes=4096;}")]),
        ErrorKind::InvalidArgument,
        msg,
    );
    db.set_options(&[("compression_opts", "{max_dict_bytes=4096;zstd_max_train_bytes=4096;}")]).unwrap();
    let text = util::latest_options_text(dir.path());
    assert!(text.contains("zstd_max_train_bytes=4096;"), "{text}");
}

/// RocksDB 11.8.1's `DBImpl::ValidateOptions`: more than four `db_paths` are NotSupported at
/// open; four are taken.
#[test]
fn more_than_four_db_paths_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<DBPath> =
        (0..5).map(|i| DBPath::new(dir.path().join(format!("p{i}")), 1 << 30).unwrap()).collect();
    let db_dir = dir.path().join("db");
    let mut o = opts();
    o.set_db_paths(&paths);
    refused(
        DB::open(&o, &db_dir),
        ErrorKind::NotSupported,
        "More than four DB paths are not supported yet. ",
    );
    assert!(!db_dir.join("CURRENT").exists(), "nothing written by a refused open");
    o.set_db_paths(&paths[..4]);
    let db = DB::open(&o, &db_dir).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}
