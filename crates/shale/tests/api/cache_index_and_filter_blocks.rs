//! `cache_index_and_filter_blocks`: a table's index and filter blocks live in the block cache
//! (roles index-block and filter-block, counted by BLOCK_CACHE_INDEX_* / FILTER_*), not with
//! the open table; evicted, they are read again. `pin_l0_filter_and_index_blocks_in_cache` and
//! the unpartitioned pinning tier keep them pinned (never evicted, in the pinned usage).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::statistics::Ticker;
use shale::{BlockBasedOptions, BlockBasedTablePinningTier, Cache, Options, DB};

fn open(
    dir: &std::path::Path,
    cache: &Cache,
    cached: bool,
    pin: Option<BlockBasedTablePinningTier>,
) -> (DB, Options) {
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(cache);
    t.set_bloom_filter(10.0, false);
    t.set_cache_index_and_filter_blocks(cached);
    if let Some(tier) = pin {
        t.set_unpartitioned_pinning_tier(tier);
    }
    let mut o = Options::default();
    o.create_if_missing(true);
    o.enable_statistics();
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, dir).unwrap();
    (db, o)
}

fn fill(db: &DB) {
    for i in 0..20_000 {
        db.put(format!("k{i:06}"), vec![b'v'; 50]).unwrap();
    }
    db.flush().unwrap();
}

/// The count of `role` (RocksDB's camel-case name) in `rocksdb.block-cache-entry-stats`.
fn role_count(db: &DB, role: &str) -> u64 {
    let text = db.property_value("rocksdb.block-cache-entry-stats").unwrap().unwrap();
    let Some(at) = text.find(&format!(" {role}(")) else { return 0 };
    let rest = &text[at + role.len() + 2..];
    rest[..rest.find(',').unwrap()].parse().unwrap()
}

#[test]
fn index_and_filter_served_from_the_cache_and_read_again_after_eviction() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = Cache::new_lru_cache(8 << 20);
    let readers_held = {
        let (db, _) = open(&tmp.path().join("held"), &cache, false, None);
        fill(&db);
        assert!(db.get(b"k000001").unwrap().is_some());
        db.property_int_value("rocksdb.estimate-table-readers-mem").unwrap().unwrap()
    };
    let (db, o) = open(&tmp.path().join("cached"), &cache, true, None);
    fill(&db);
    // Reopen so that the table is opened by a read.
    drop(db);
    let (db, o2) = open(&tmp.path().join("cached"), &cache, true, None);
    drop(o);
    let readers_cached = db.property_int_value("rocksdb.estimate-table-readers-mem").unwrap().unwrap();
    assert!(
        readers_cached + 4096 < readers_held,
        "index and filter not held: {readers_cached} vs {readers_held}"
    );
    assert_eq!(role_count(&db, "IndexBlock"), 1);
    assert_eq!(role_count(&db, "FilterBlock"), 1);
    assert_eq!(role_count(&db, "Misc"), 1, "the entry-statistics collector's entry");
    for i in (0..20_000).step_by(97) {
        assert_eq!(db.get(format!("k{i:06}")).unwrap().unwrap(), vec![b'v'; 50]);
        assert!(db.get(format!("k{i:06}a")).unwrap().is_none());
    }
    assert!(o2.get_ticker_count(Ticker::BlockCacheIndexHit) > 100);
    assert!(o2.get_ticker_count(Ticker::BlockCacheFilterHit) > 100);
    assert_eq!(o2.get_ticker_count(Ticker::BlockCacheIndexMiss), 0);
    assert!(o2.get_ticker_count(Ticker::BloomFilterUseful) > 100, "the cached filter answers");
    // Not pinned: evicted with everything else, then read again on the next lookup.
    let mut c = cache.clone();
    c.set_capacity(0);
    assert_eq!(cache.get_usage(), cache.get_pinned_usage(), "only pinned entries are left");
    c.set_capacity(8 << 20);
    assert_eq!(db.get(b"k000100").unwrap().unwrap(), vec![b'v'; 50]);
    assert_eq!(o2.get_ticker_count(Ticker::BlockCacheIndexMiss), 1);
    assert_eq!(o2.get_ticker_count(Ticker::BlockCacheFilterMiss), 1);
}

#[test]
fn pinned_index_and_filter_survive_eviction() {
    let tmp = tempfile::tempdir().unwrap();
    for (tier, pinned) in [
        (BlockBasedTablePinningTier::FlushAndSimilar, true),
        (BlockBasedTablePinningTier::All, true),
        (BlockBasedTablePinningTier::None, false),
        (BlockBasedTablePinningTier::Fallback, false),
    ] {
        let cache = Cache::new_lru_cache(8 << 20);
        let dir = tmp.path().join(format!("{tier:?}"));
        let (db, _) = open(&dir, &cache, true, Some(tier));
        fill(&db);
        drop(db);
        let (db, o) = open(&dir, &cache, true, Some(tier));
        assert!(db.get(b"k000001").unwrap().is_some());
        let idle = 64; // the entry-statistics collector's entry
        let mut c = cache.clone();
        c.set_capacity(0);
        if pinned {
            assert!(cache.get_pinned_usage() > idle + 4096, "{tier:?}: {}", cache.get_pinned_usage());
        } else {
            assert_eq!(cache.get_pinned_usage(), idle, "{tier:?}");
        }
        c.set_capacity(8 << 20);
        assert!(db.get(b"k000002").unwrap().is_some());
        let misses = o.get_ticker_count(Ticker::BlockCacheIndexMiss);
        assert_eq!(misses, u64::from(!pinned), "{tier:?}");
    }
    // pin_l0_filter_and_index_blocks_in_cache is the fallback of the unpartitioned tier.
    let cache = Cache::new_lru_cache(8 << 20);
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(&cache);
    t.set_cache_index_and_filter_blocks(true);
    t.set_pin_l0_filter_and_index_blocks_in_cache(true);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_block_based_table_factory(&t);
    let dir = tmp.path().join("pin_l0");
    let db = DB::open(&o, &dir).unwrap();
    fill(&db);
    drop(db);
    let db = DB::open(&o, &dir).unwrap();
    assert!(db.get(b"k000001").unwrap().is_some());
    cache.clone().set_capacity(0);
    assert!(cache.get_pinned_usage() > 64 + 4096);
}

/// With a strict capacity limit and a cache full of pinned entries, a read that must cache a
/// block fails with RocksDB's MemoryLimit status, and works again once room is made.
#[test]
fn strict_limit_fails_reads_when_the_cache_is_full_of_pinned_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let mut lo = shale::LruCacheOptions::default();
    lo.set_capacity(16 << 10);
    lo.set_num_shard_bits(0);
    lo.set_strict_capacity_limit(true);
    let cache = Cache::new_lru_cache_opts(&lo);
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(&cache);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, tmp.path()).unwrap();
    for i in 0..5000 {
        db.put(format!("k{i:05}"), vec![b'v'; 100]).unwrap();
    }
    db.flush().unwrap();
    // Iterators positioned in different blocks pin them until the cache is full.
    let mut its = Vec::new();
    let mut err = None;
    for i in (0..5000).step_by(100) {
        let mut it = db.raw_iterator();
        it.seek(format!("k{i:05}"));
        if let Err(e) = it.status() {
            err = Some(e);
            break;
        }
        its.push(it);
    }
    let e = err.expect("a read must fail once pinned blocks fill the strict cache");
    assert_eq!(e.kind(), shale::ErrorKind::Aborted, "{e}");
    assert!(
        e.to_string().contains("Memory limit reached: Insert failed due to LRU cache being full."),
        "{e}"
    );
    assert!(cache.get_usage() <= 16 << 10);
    let ge = db.get(b"k02550").unwrap_err();
    assert_eq!(ge.kind(), shale::ErrorKind::Aborted);
    its.clear();
    assert_eq!(db.get(b"k02550").unwrap().unwrap(), vec![b'v'; 100]);
}
