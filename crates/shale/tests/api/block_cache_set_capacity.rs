//! `Cache::set_capacity` changes the one cache every database and clone shares (RocksDB's
//! `SetCapacity`), evicting down to the new size; `get_pinned_usage` counts the blocks an open
//! iterator holds and falls back to 0 when it is dropped.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{BlockBasedOptions, Cache, Options, DB};

#[test]
fn set_capacity_resizes_the_shared_cache_and_pinned_usage_follows_readers() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = Cache::new_lru_cache(8 << 20);
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(&cache);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, tmp.path()).unwrap();
    // The entry-statistics collector's entry (RocksDB's InternalStats holds it): pinned.
    let idle = cache.get_pinned_usage();
    assert_eq!(idle, 64);
    for i in 0..5000 {
        db.put(format!("k{i:05}"), vec![b'v'; 200]).unwrap();
    }
    db.flush().unwrap();
    for i in 0..5000 {
        assert!(db.get(format!("k{i:05}")).unwrap().is_some());
    }
    assert!(cache.get_usage() > 512 << 10, "{}", cache.get_usage());
    assert_eq!(cache.get_pinned_usage(), idle, "no reader holds a block");

    let mut it = db.raw_iterator();
    it.seek(b"k02500");
    assert!(it.valid());
    assert!(cache.get_pinned_usage() > 0, "the iterator's data block is pinned");
    drop(it);
    assert_eq!(cache.get_pinned_usage(), idle);

    // Resize through a clone: the database's cache is the same one.
    let mut handle = cache.clone();
    handle.set_capacity(256 << 10);
    assert!(cache.get_usage() <= 256 << 10, "shrunk: {}", cache.get_usage());
    assert_eq!(db.property_int_value("rocksdb.block-cache-capacity").unwrap(), Some(256 << 10));
    for i in 0..5000 {
        assert!(db.get(format!("k{i:05}")).unwrap().is_some());
    }
    assert!(cache.get_usage() <= 256 << 10, "stays within the new capacity: {}", cache.get_usage());
}
