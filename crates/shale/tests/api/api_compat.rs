//! Code written the way rust-rocksdb's README and docs write it compiles unchanged against
//! Shale (`use shale as rocksdb;`), and does what it says.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::families;
use families::open_cf_all;

use shale as rocksdb;

use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamilyDescriptor, DBCompressionType, Direction, IteratorMode, Options,
    ReadOptions, WriteBatch, WriteOptions, DB,
};

#[test]
fn readme_basic_usage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("_path_for_rocksdb_storage");
    {
        let db = DB::open_default(&path).unwrap();
        db.put(b"my key", b"my value").unwrap();
        match db.get(b"my key") {
            Ok(Some(value)) => assert_eq!(String::from_utf8(value).unwrap(), "my value"),
            Ok(None) => panic!("value not found"),
            Err(e) => panic!("operational problem encountered: {}", e),
        }
        db.delete(b"my key").unwrap();
        assert!(db.get(b"my key").unwrap().is_none());
    }
    let _ = DB::destroy(&Options::default(), &path);
    assert!(!path.exists());
}

#[test]
fn options_batches_iterators_and_column_families() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();

    let mut block_opts = BlockBasedOptions::default();
    block_opts.set_bloom_filter(10.0, false);
    block_opts.set_block_size(16 * 1024);
    let cache = Cache::new_lru_cache(8 * 1024 * 1024);
    block_opts.set_block_cache(&cache);

    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    opts.increase_parallelism(2);
    opts.set_max_background_jobs(2);
    #[allow(deprecated)]
    opts.set_max_background_compactions(2);
    #[allow(deprecated)]
    opts.set_max_background_flushes(1);
    opts.set_compression_type(DBCompressionType::Lz4);
    opts.set_write_buffer_size(64 * 1024 * 1024);
    opts.set_max_write_buffer_number(3);
    opts.set_target_file_size_base(64 * 1024 * 1024);
    opts.set_level_zero_file_num_compaction_trigger(4);
    opts.set_block_based_table_factory(&block_opts);
    opts.optimize_level_style_compaction(512 * 1024 * 1024);

    let mut cf_opts = Options::default();
    cf_opts.set_max_write_buffer_number(16);
    let cf = ColumnFamilyDescriptor::new("cf1", cf_opts);
    let db = DB::open_cf_descriptors(&opts, path, vec![cf]).unwrap();
    drop(db);
    let db = DB::open_cf_with_opts(&opts, path, [("cf1", Options::default())]).unwrap();

    let cf1 = db.cf_handle("cf1").unwrap();
    db.put_cf(cf1, b"key1", b"value1").unwrap();
    assert_eq!(db.get_cf(cf1, b"key1").unwrap(), Some(b"value1".to_vec()));

    let mut batch = WriteBatch::default();
    batch.put(b"my key", b"my value");
    batch.put(b"key2", b"value2");
    batch.put(b"key3", b"value3");
    batch.delete(b"key2");
    batch.put_cf(cf1, b"key4", b"value4");
    db.write(batch).unwrap();

    let mut write_opts = WriteOptions::default();
    write_opts.set_sync(false);
    write_opts.disable_wal(false);
    db.put_opt(b"key5", b"value5", &write_opts).unwrap();

    // Items are Result<(Box<[u8]>, Box<[u8]>), Error>.
    let iter = db.iterator(IteratorMode::Start);
    let mut seen = Vec::new();
    for item in iter {
        let (key, value) = item.unwrap();
        let key: Box<[u8]> = key;
        let value: Box<[u8]> = value;
        seen.push((key.to_vec(), value.to_vec()));
    }
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[0].0, b"key3");

    let iter = db.iterator(IteratorMode::From(b"key4", Direction::Forward));
    let keys: Vec<String> =
        iter.map(Result::unwrap).map(|(k, _)| String::from_utf8(k.to_vec()).unwrap()).collect();
    assert_eq!(keys, vec!["key5", "my key"]);
    let iter = db.iterator(IteratorMode::From(b"key4", Direction::Reverse));
    assert_eq!(iter.count(), 1);
    let iter = db.iterator(IteratorMode::End);
    assert_eq!(iter.map(|r| r.unwrap()).next().unwrap().0.as_ref(), b"my key");
    let cf_keys: Vec<Box<[u8]>> = db.iterator_cf(cf1, IteratorMode::Start).map(|r| r.unwrap().0).collect();
    assert_eq!(cf_keys.len(), 2);

    let mut raw = db.raw_iterator();
    raw.seek_to_first();
    while raw.valid() {
        let _k: &[u8] = raw.key().unwrap();
        let _v: &[u8] = raw.value().unwrap();
        raw.next();
    }
    raw.status().unwrap();
    drop(raw);

    let snapshot = db.snapshot();
    db.put(b"key3", b"changed").unwrap();
    assert_eq!(snapshot.get(b"key3").unwrap(), Some(b"value3".to_vec()));
    let mut read_opts = ReadOptions::default();
    read_opts.set_snapshot(&snapshot);
    read_opts.set_iterate_upper_bound(b"key9".to_vec());
    assert_eq!(db.get_opt(b"key3", &read_opts).unwrap(), Some(b"value3".to_vec()));
    assert_eq!(db.iterator_opt(IteratorMode::Start, read_opts).count(), 2);
    drop(snapshot);

    // get_pinned: a slice-like value.
    let pinned = db.get_pinned(b"key3").unwrap().unwrap();
    assert_eq!(&*pinned, b"changed");
    assert_eq!(pinned.as_ref(), b"changed");
    assert_eq!(pinned.len(), 7);
    assert!(db.get_pinned(b"nope").unwrap().is_none());
    let pinned_cf = db.get_pinned_cf(cf1, b"key4").unwrap().unwrap();
    assert_eq!(&pinned_cf[..], b"value4");
    let mut ro = ReadOptions::default();
    ro.fill_cache(false);
    assert!(db.get_pinned_opt(b"key5", &ro).unwrap().is_some());

    // key_may_exist: never false for a present key.
    assert!(db.key_may_exist(b"key3"));
    assert!(db.key_may_exist_cf(cf1, b"key4"));

    let values = db.multi_get([b"key3".as_slice(), b"missing"]);
    assert_eq!(values.len(), 2);
    assert!(values[1].as_ref().unwrap().is_none());

    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    db.compact_range_cf(cf1, Some(b"a"), Some(b"z"));
    assert!(db.property_value("rocksdb.stats").unwrap().is_some());
    assert!(db.property_int_value("rocksdb.estimate-num-keys").unwrap().is_some());
    assert!(db.key_may_exist(b"key3"));
    assert_eq!(db.get(b"key3").unwrap(), Some(b"changed".to_vec()));
    drop(db);

    let cfs = DB::list_cf(&Options::default(), path).unwrap();
    assert_eq!(cfs, vec!["default".to_string(), "cf1".to_string()]);
    let mut db = open_cf_all(&opts, path, cfs).unwrap();
    db.create_cf("new_cf", &Options::default()).unwrap();
    db.put_cf(db.cf_handle("new_cf").unwrap(), b"n", b"1").unwrap();
    let new_cf = db.cf_handle("new_cf").unwrap();
    db.flush_cfs_opt(&[new_cf], &rocksdb::FlushOptions::default()).unwrap();
    assert_eq!(db.property_int_value_cf(new_cf, "rocksdb.num-files-at-level0").unwrap(), Some(1));
    assert_eq!(db.full_iterator_cf(new_cf, IteratorMode::Start).count(), 1);
    let identity = db.get_db_identity().unwrap();
    assert_eq!(identity.len(), 36);
    assert_eq!(std::fs::read(path.join("IDENTITY")).unwrap(), [identity.as_slice(), b"\n"].concat());
    db.drop_cf("new_cf").unwrap();
    assert_eq!(db.get(b"key5").unwrap(), Some(b"value5".to_vec()));
}

#[test]
fn errors_display_like_rust_rocksdb() {
    let dir = tempfile::tempdir().unwrap();
    let err: rocksdb::Error = DB::open(&Options::default(), dir.path().join("missing")).err().unwrap();
    let shown = format!("{err}");
    assert!(shown.starts_with("Invalid argument: "), "{shown}");
    assert_eq!(err.kind(), rocksdb::ErrorKind::InvalidArgument);
    let s: String = err.into_string();
    assert_eq!(s, shown);
    // Error is a std error that can be boxed.
    let boxed: Box<dyn std::error::Error> =
        Box::new(DB::open(&Options::default(), dir.path().join("m")).err().unwrap());
    assert!(!boxed.to_string().is_empty());
}
