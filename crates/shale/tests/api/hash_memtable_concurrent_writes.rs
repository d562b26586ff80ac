//! HashSkipList and HashLinkList cannot insert concurrently: with
//! `allow_concurrent_memtable_write` (the default) RocksDB 11.8.1's
//! `CheckConcurrentWritesSupported` refuses them at open and at column family creation,
//! with or without a prefix extractor (it judges the factory as given); without concurrent
//! writes they open. The skip list and the vector accept concurrent writes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{ErrorKind, MemtableFactory, Options, SliceTransform, DB};

const MESSAGE: &str = "Memtable doesn't allow concurrent writes (allow_concurrent_memtable_write)";

fn hash_factories() -> [MemtableFactory; 2] {
    [
        MemtableFactory::HashSkipList { bucket_count: 1000, height: 4, branching_factor: 4 },
        MemtableFactory::HashLinkList { bucket_count: 1000 },
    ]
}

#[test]
fn hash_memtables_are_refused_with_concurrent_writes_as_rocksdb() {
    for factory in hash_factories() {
        for prefix in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let mut o = Options::default();
            o.create_if_missing(true);
            o.set_memtable_factory(factory.clone());
            if prefix {
                o.set_prefix_extractor(SliceTransform::create_fixed_prefix(3));
            }
            let e =
                DB::open(&o, dir.path()).expect_err("RocksDB refuses a hash memtable with concurrent writes");
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
            assert!(e.to_string().contains(MESSAGE), "{e}");
            // Nothing was created.
            assert!(!dir.path().join("CURRENT").exists());
            // Concurrent writes off: it opens, and reads what it wrote.
            o.set_allow_concurrent_memtable_write(false);
            let db = DB::open(&o, dir.path()).unwrap();
            db.put(b"aaa1", b"1").unwrap();
            assert_eq!(db.get(b"aaa1").unwrap().as_deref(), Some(&b"1"[..]));
        }
    }
}

#[test]
fn create_cf_refuses_a_hash_memtable_with_concurrent_writes() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    let mut db = DB::open(&o, dir.path()).unwrap();
    for factory in hash_factories() {
        let mut cf = Options::default();
        cf.set_prefix_extractor(SliceTransform::create_fixed_prefix(3));
        cf.set_memtable_factory(factory);
        let e = db.create_cf("hash", &cf).expect_err("refused");
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert!(e.to_string().contains(MESSAGE), "{e}");
        assert!(db.cf_handle("hash").is_none());
    }
    // The skip list and the vector take concurrent writes.
    for (name, factory) in [("skip", MemtableFactory::SkipList), ("vector", MemtableFactory::Vector)] {
        let mut cf = Options::default();
        cf.set_memtable_factory(factory);
        db.create_cf(name, &cf).unwrap();
    }
    drop(db);
    // A database opened without concurrent writes takes a hash family.
    o.set_allow_concurrent_memtable_write(false);
    let mut db = DB::open_cf(&o, dir.path(), ["default", "skip", "vector"]).unwrap();
    let mut cf = Options::default();
    cf.set_prefix_extractor(SliceTransform::create_fixed_prefix(3));
    cf.set_memtable_factory(MemtableFactory::HashLinkList { bucket_count: 10 });
    db.create_cf("hash", &cf).unwrap();
    let h = db.cf_handle("hash").unwrap();
    db.put_cf(&h, b"abc1", b"v").unwrap();
    assert_eq!(db.get_cf(&h, b"abc1").unwrap().as_deref(), Some(&b"v"[..]));
}
