//! `Cache::new_hyper_clock_cache(capacity, estimated_entry_charge)` makes the cache RocksDB
//! 11.8.1's `HyperClockCacheOptions::MakeSharedCache` makes: with an estimate of 0 an
//! AutoHyperClockCache, whose table grows with its entries; with an estimate a
//! FixedHyperClockCache, whose slot table is sized from the capacity and the estimate
//! (`FixedHyperClockTable::CalcHashBits`) and holds at most 84% of its slots. A large estimate
//! with small blocks bounds the cache by its slots, not its bytes: reads evict though the
//! capacity has room, and read the same blocks again from the table file.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::statistics::Ticker;
use shale::{BlockBasedOptions, Cache, Options, DB};

/// A database of about 1000 small data blocks read through `cache`, every key twice: the
/// data-block misses of the second pass, and the LOG's `block_cache_name` line.
fn second_pass_misses(cache: &Cache) -> (u64, String) {
    let tmp = tempfile::tempdir().unwrap();
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(cache);
    t.set_block_size(256);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.enable_statistics();
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, tmp.path()).unwrap();
    for i in 0..2000 {
        db.put(format!("k{i:05}"), vec![b'v'; 100]).unwrap();
    }
    db.flush().unwrap();
    for i in 0..2000 {
        assert!(db.get(format!("k{i:05}")).unwrap().is_some());
    }
    let misses = o.get_ticker_count(Ticker::BlockCacheDataMiss);
    for i in 0..2000 {
        assert_eq!(db.get(format!("k{i:05}")).unwrap().unwrap(), vec![b'v'; 100]);
    }
    let log = std::fs::read_to_string(tmp.path().join("LOG")).unwrap();
    let name = log.lines().find(|l| l.starts_with("  block_cache_name: ")).unwrap().to_string();
    (o.get_ticker_count(Ticker::BlockCacheDataMiss) - misses, name)
}

#[test]
fn a_large_estimated_entry_charge_bounds_the_cache_by_its_slots() {
    // 4 MiB is one shard (shards of at least 32 MiB). All ~1000 blocks (~400 KiB) fit.
    let auto = Cache::new_hyper_clock_cache(4 << 20, 0);
    let (misses, name) = second_pass_misses(&auto);
    assert_eq!(name, "  block_cache_name: AutoHyperClockCache");
    assert_eq!(misses, 0, "every block stayed cached");

    // 4 MiB / (64 KiB * 0.7 + 64) = 91.3 -> 92 slots -> 128, of which 107 may hold entries
    // (the statistics collector's entry is one of them).
    let fixed = Cache::new_hyper_clock_cache(4 << 20, 64 << 10);
    let idle = fixed.get_usage();
    assert_eq!(idle, 128 * 64, "the table's slots are charged up front, the collector's entry 0");
    let (misses, name) = second_pass_misses(&fixed);
    assert_eq!(name, "  block_cache_name: FixedHyperClockCache");
    assert!(misses > 800, "at most 106 data blocks stay cached: {misses} misses");
    // At most 106 blocks of about 300 bytes: far below the capacity.
    let used = fixed.get_usage() - idle;
    assert!(used > 0 && used < 106 * 512, "{used}");

    // The same with shard bits given (two shards of 2 MiB: 64 slots, 53 entries each).
    let two = Cache::new_hyper_clock_cache_with_shard_bits(4 << 20, 64 << 10, 1);
    assert_eq!(two.get_usage(), 2 * 64 * 64);
    let (misses, _) = second_pass_misses(&two);
    assert!(misses > 800, "{misses}");
}
