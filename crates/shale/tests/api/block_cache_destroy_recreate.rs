//! A database destroyed and created again in the same process, with the same `Cache`, must
//! not read the blocks its earlier incarnation left in the cache: the new tables reuse the old
//! file numbers and offsets, so a cache keyed by (file number, offset) would return stale
//! values. Keys carry a per-open unique base (RocksDB's OffsetableCacheKey from the session).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{BlockBasedOptions, Cache, Options, DB};

fn options(cache: &Cache) -> Options {
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(cache);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_block_based_table_factory(&t);
    o
}

#[test]
fn recreated_database_does_not_read_stale_cached_blocks() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("db");
    let cache = Cache::new_lru_cache(8 << 20);
    let o = options(&cache);
    for generation in 0..3 {
        {
            let db = DB::open(&o, &path).unwrap();
            assert_eq!(db.get(b"k").unwrap(), None, "generation {generation} starts empty");
            for i in 0..100 {
                db.put(format!("k{i:03}"), format!("g{generation}-{i}")).unwrap();
            }
            db.put(b"k", format!("gen{generation}")).unwrap();
            db.flush().unwrap();
            // Read twice: a miss that fills the cache, then a hit.
            for _ in 0..2 {
                assert_eq!(db.get(b"k").unwrap(), Some(format!("gen{generation}").into_bytes()));
                assert_eq!(db.get(b"k050").unwrap(), Some(format!("g{generation}-50").into_bytes()));
            }
        }
        DB::destroy(&o, &path).unwrap();
    }
    // Same data, reopened (not destroyed): a new open reads its own file's blocks correctly.
    {
        let db = DB::open(&o, &path).unwrap();
        db.put(b"k", b"kept").unwrap();
        db.flush().unwrap();
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"kept"[..]));
    }
    let db = DB::open(&o, &path).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"kept"[..]));
}
