//! `Options::load_latest` returns the options the latest OPTIONS file holds (DB options and
//! each family's), not defaults: reopening with them writes the same values again. An option
//! Shale does not build is NotSupported unless at RocksDB's default; unknown names follow
//! `ignore_unknown_options`. A RocksDB 11.8.1 OPTIONS file loads with its values.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::options_file::{latest_options_file, OptionsFile};
use shale::{
    BlockBasedOptions, Cache, ChecksumType, DBCompactionStyle, DBCompressionType, Env, ErrorKind, Options, DB,
};

/// The error of a load that must fail (Options has no Debug for `unwrap_err`).
fn err<T>(r: shale::Result<T>) -> shale::Error {
    match r {
        Ok(_) => panic!("load_latest succeeded"),
        Err(e) => e,
    }
}

fn latest(path: &Path) -> (u64, OptionsFile) {
    latest_options_file(&*shale::fs::default_fs(), path).unwrap().expect("an OPTIONS file")
}

fn cf_opts(c: DBCompressionType, wbs: usize, l0: i32, bloom: Option<f64>, block: usize) -> Options {
    let mut o = Options::default();
    o.set_compression_type(c);
    o.set_write_buffer_size(wbs);
    o.set_level_zero_file_num_compaction_trigger(l0);
    let mut t = BlockBasedOptions::default();
    if let Some(b) = bloom {
        t.set_bloom_filter(b, false);
    }
    t.set_block_size(block);
    o.set_block_based_table_factory(&t);
    o
}

fn make_db(path: &Path) {
    let mut db_opts = cf_opts(DBCompressionType::Zstd, 3 << 20, 7, Some(10.0), 8192);
    db_opts.create_if_missing(true);
    db_opts.create_missing_column_families(true);
    db_opts.set_max_background_jobs(3);
    let mut other = cf_opts(DBCompressionType::Lz4, 5 << 20, 3, None, 16384);
    let mut t = BlockBasedOptions::default();
    t.set_block_size(16384);
    t.set_checksum_type(ChecksumType::CRC32c);
    other.set_block_based_table_factory(&t);
    other.set_compaction_style(DBCompactionStyle::Universal);
    let descs = vec![
        shale::ColumnFamilyDescriptor::new("default", db_opts.clone()),
        shale::ColumnFamilyDescriptor::new("other", other),
    ];
    let db = DB::open_cf_descriptors(&db_opts, path, descs).unwrap();
    db.put(b"k", b"v").unwrap();
    db.put_cf(db.cf_handle("other").unwrap(), b"k2", b"v2").unwrap();
}

#[test]
fn loaded_options_are_the_files_and_reopen_writes_them_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    make_db(&path);
    let (n0, _) = latest(&path);

    let (opts, descs) =
        Options::load_latest(&path, Env::new().unwrap(), false, Cache::new_lru_cache(1 << 20)).unwrap();
    assert_eq!(descs.iter().map(|d| d.name()).collect::<Vec<_>>(), ["default", "other"]);
    let db = DB::open_cf_descriptors(&opts, &path, descs).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.get_cf(db.cf_handle("other").unwrap(), b"k2").unwrap().as_deref(), Some(&b"v2"[..]));
    drop(db);

    // The reopen wrote a new OPTIONS file from the loaded options: the same values.
    let (n1, file) = latest(&path);
    assert!(n1 > n0);
    assert_eq!(file.db_option("max_background_jobs"), Some("3"));
    assert_eq!(file.db_option("create_missing_column_families"), Some("true"));
    let d = file.cf("default").unwrap();
    assert_eq!(d.option("compression"), Some("kZSTD"));
    assert_eq!(d.option("write_buffer_size"), Some("3145728"));
    assert_eq!(d.option("level0_file_num_compaction_trigger"), Some("7"));
    assert_eq!(d.table_option("block_size"), Some("8192"));
    assert_eq!(d.table_option("filter_policy"), Some("bloomfilter:10:false"));
    let o = file.cf("other").unwrap();
    assert_eq!(o.option("compression"), Some("kLZ4Compression"));
    assert_eq!(o.option("write_buffer_size"), Some("5242880"));
    assert_eq!(o.option("level0_file_num_compaction_trigger"), Some("3"));
    assert_eq!(o.option("compaction_style"), Some("kCompactionStyleUniversal"));
    assert_eq!(o.table_option("block_size"), Some("16384"));
    assert_eq!(o.table_option("filter_policy"), Some("nullptr"));
    assert_eq!(o.table_option("checksum"), Some("kCRC32c"));
    // RocksDB 11.8.1's default block checksum.
    assert_eq!(d.table_option("checksum"), Some("kXXH3"));
}

/// Writes `text` as the database's newest OPTIONS file.
fn write_options(path: &Path, text: &str) {
    let (n, _) = latest(path);
    std::fs::write(path.join(format!("OPTIONS-{:06}", n + 1)), text).unwrap();
}

#[test]
fn options_shale_does_not_build_are_refused_unless_default_and_unknown_ones_follow_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    make_db(&path);
    let (_, file) = latest(&path);
    let load = |ignore: bool| {
        Options::load_latest(&path, Env::new().unwrap(), ignore, Cache::new_lru_cache(1 << 20))
    };

    // At RocksDB's default, an option Shale does not apply changes nothing.
    let mut f = file.clone();
    f.cfs[0].options.push(("compaction_pri".into(), "kMinOverlappingRatio".into()));
    f.cfs[0].options.push(("force_consistency_checks".into(), "true".into()));
    write_options(&path, &f.to_text());
    load(false).unwrap();

    // Every compaction_pri of RocksDB is applied.
    for value in ["kByCompensatedSize", "kRoundRobin"] {
        let mut f = file.clone();
        f.cfs[1].options.retain(|(k, _)| k != "compaction_pri");
        f.cfs[1].options.push(("compaction_pri".into(), value.into()));
        write_options(&path, &f.to_text());
        load(false).unwrap_or_else(|e| panic!("compaction_pri {value}: {e}"));
    }

    // inplace_update_support loads, as in RocksDB (which refuses it only when a database
    // opens with allow_concurrent_memtable_write: tests/api/inplace_update.rs).
    let (name, value) = ("inplace_update_support", "true");
    let mut f = file.clone();
    f.cfs[1].options.retain(|(k, _)| k != name);
    f.cfs[1].options.push((name.into(), value.into()));
    write_options(&path, &f.to_text());
    load(false).unwrap_or_else(|e| panic!("{name}: {e}"));

    // A name RocksDB does not know: InvalidArgument in RocksDB 11.8.1's words, even with
    // ignore_unknown_options, since the file names 11.8.1 (RocksDB's parser skips unknown
    // options only in files a newer RocksDB wrote)...
    let mut f = file.clone();
    assert_eq!(f.rocksdb_version, "11.8.1");
    f.db_options.push(("no_such_option".into(), "1".into()));
    write_options(&path, &f.to_text());
    for ignore in [false, true] {
        let e = err(load(ignore));
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert!(e.to_string().contains("Extra option not recognized: no_such_option"), "{e}");
    }
    // ... and a struct field the same way.
    let mut g = file.clone();
    let u = g.cfs[0]
        .option("compaction_options_fifo")
        .unwrap()
        .replace("age_for_warm=0;", "age_for_warm=0;zz=1;");
    shale::options_file::set_option(&mut g.cfs[0].options, "compaction_options_fifo", &u);
    write_options(&path, &g.to_text());
    let e = err(load(true));
    assert!(e.to_string().contains("Unrecognized option: compaction_options_fifo.zz"), "{e}");
    // In a file of a newer RocksDB, ignore_unknown_options skips them.
    f.rocksdb_version = "11.9.0".into();
    write_options(&path, &f.to_text());
    assert_eq!(err(load(false)).kind(), ErrorKind::InvalidArgument);
    load(true).unwrap();
}

#[test]
fn rocksdb_11_options_file_loads_with_its_values() {
    if !tools::use_rocksdb_11("rocksdb_11_options_file_loads_with_its_values") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    tools::db_bench_run(&path, "fillseq", 1000, &["--compression_type=zstd", "--write_buffer_size=2097152"]);
    let (n0, file) = latest(&path);
    assert_eq!(file.rocksdb_version, "11.8.1");

    // Every option 11.8.1 writes is known: the file loads strictly.
    let (opts, descs) =
        Options::load_latest(&path, Env::new().unwrap(), false, Cache::new_lru_cache(1 << 20))
            .unwrap_or_else(|e| panic!("{e}"));
    let db = DB::open_cf_descriptors(&opts, &path, descs).unwrap();
    assert_eq!(tools::shale_scan(&db, "default").len(), 1000);
    drop(db);
    let (n1, again) = latest(&path);
    assert!(n1 > n0);
    let d = again.cf("default").unwrap();
    assert_eq!(d.option("compression"), Some("kZSTD"));
    assert_eq!(d.option("write_buffer_size"), Some("2097152"));
    let src = file.cf("default").unwrap();
    for t in ["format_version", "block_size", "pin_top_level_index_and_filter", "checksum"] {
        assert_eq!(d.table_option(t), src.table_option(t), "{t}");
    }
    for c in [
        "hard_pending_compaction_bytes_limit",
        "max_write_buffer_number",
        "level0_file_num_compaction_trigger",
    ] {
        assert_eq!(d.option(c), src.option(c), "{c}");
    }
    assert_eq!(again.db_option("max_background_jobs"), file.db_option("max_background_jobs"));
}

#[test]
fn cuckoo_table_options_load_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    let mut c = shale::CuckooTableOptions::default();
    c.set_hash_ratio(0.8);
    c.set_cuckoo_block_size(4);
    opts.set_cuckoo_table_factory(&c);
    drop(DB::open(&opts, &path).unwrap());

    let (opts, descs) =
        Options::load_latest(&path, Env::new().unwrap(), false, Cache::new_lru_cache(1 << 20))
            .unwrap_or_else(|e| panic!("{e}"));
    drop(DB::open_cf_descriptors(&opts, &path, descs).unwrap());
    let (_, file) = latest(&path);
    let d = file.cf("default").unwrap();
    assert_eq!(d.table_factory, "CuckooTable");
    assert_eq!(d.table_option("hash_table_ratio"), Some("0.800000"));
    assert_eq!(d.table_option("cuckoo_block_size"), Some("4"));
}
