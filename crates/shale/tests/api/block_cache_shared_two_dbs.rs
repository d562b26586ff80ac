//! Two databases opened with one `Cache` (rust-rocksdb's documented pattern of one block cache
//! for the process) each write the same keys with different values and flush: their first
//! tables carry the same file number and their blocks the same offsets. Each database must
//! read its own values, from the cache as well as from its file: the cache keys a block by a
//! per-file unique base (RocksDB's OffsetableCacheKey), never by (file number, offset) alone.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{BlockBasedOptions, Cache, Options, DB};

fn open(dir: &std::path::Path, cache: &Cache) -> DB {
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(cache);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_block_based_table_factory(&t);
    DB::open(&o, dir).unwrap()
}

#[test]
fn two_databases_sharing_a_cache_read_their_own_blocks() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = Cache::new_lru_cache(8 << 20);
    let a = open(&tmp.path().join("a"), &cache);
    let b = open(&tmp.path().join("b"), &cache);
    for i in 0..200 {
        let k = format!("k{i:03}");
        a.put(&k, format!("a-{i}")).unwrap();
        b.put(&k, format!("b-{i}")).unwrap();
    }
    a.put(b"k", b"from-a").unwrap();
    b.put(b"k", b"from-b").unwrap();
    a.flush().unwrap();
    b.flush().unwrap();
    assert_eq!(
        a.property_value("rocksdb.live-sst-files-size").unwrap(),
        b.property_value("rocksdb.live-sst-files-size").unwrap(),
        "same layout, so the two tables' blocks sit at the same offsets"
    );
    // A's reads fill the shared cache first; then B reads, then A again (cache hits).
    for round in 0..2 {
        assert_eq!(a.get(b"k").unwrap().as_deref(), Some(&b"from-a"[..]), "round {round}");
        assert_eq!(b.get(b"k").unwrap().as_deref(), Some(&b"from-b"[..]), "round {round}");
        for i in (0..200).step_by(7) {
            let k = format!("k{i:03}");
            assert_eq!(a.get(&k).unwrap(), Some(format!("a-{i}").into_bytes()), "a {k}");
            assert_eq!(b.get(&k).unwrap(), Some(format!("b-{i}").into_bytes()), "b {k}");
        }
        let mut it = b.raw_iterator();
        it.seek_to_first();
        let mut n = 0;
        while it.valid() {
            assert!(it.value().unwrap().starts_with(b"b-") || it.value() == Some(&b"from-b"[..]));
            n += 1;
            it.next();
        }
        assert_eq!(n, 201);
    }
    assert!(cache.get_usage() > 0, "the blocks went through the shared cache");
}
