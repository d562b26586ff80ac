//! A prefix extractor on a family with user-defined timestamps (issue 33). RocksDB 11.8.1
//! accepts the pair and applies the extractor to user keys without their timestamp wherever
//! it filters or bounds by prefix: the memtable prefix Bloom (`MemTable::Add`, `Get`,
//! `MemTableIterator::Seek`), `DBIter`'s `prefix_same_as_start` check, the table filter
//! (`PrefixRangeMayMatch`, the full filter builder) and the level iterator's prefix-seek stop.
//! So a key shorter than the prefix is out of the extractor's domain at every read timestamp,
//! and a read at any timestamp meets the same filter bits as the write did.

use shale::perf::{set_perf_stats, PerfContext, PerfMetric, PerfStatsLevel};
use shale::statistics::Ticker;
use shale::{BlockBasedOptions, Options, ReadOptions, SliceTransform, U64TsComparator, DB};
use std::sync::Arc;

use crate::util;

fn options(memtable_whole_keys: bool) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    o.set_prefix_extractor(SliceTransform::create_fixed_prefix(4));
    o.set_memtable_prefix_bloom_ratio(0.1);
    o.set_memtable_whole_key_filtering(memtable_whole_keys);
    o.set_disable_auto_compactions(true);
    o.enable_statistics();
    let mut t = BlockBasedOptions::default();
    t.set_bloom_filter(10.0, false);
    // Gets check the prefix (not the whole key) in the table's filter.
    t.set_whole_key_filtering(false);
    o.set_block_based_table_factory(&t);
    o
}

fn at(ts: u64) -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_timestamp(ts.to_le_bytes());
    ro
}

fn same_prefix_at(ts: u64) -> ReadOptions {
    let mut ro = at(ts);
    ro.set_prefix_same_as_start(true);
    ro
}

fn key(i: u32, j: u32) -> String {
    format!("k{i:02}-{j}")
}

/// Keys `kII-J` (prefix `kII-`) for even I below 20 and J below 5, at timestamp 10 ("a"),
/// the even J again at 20 ("b"); and `ab`, shorter than the prefix, at 10.
fn fill(db: &DB) {
    for i in (0..20).step_by(2) {
        for j in 0..5 {
            db.put_with_ts(key(i, j), 10u64.to_le_bytes(), format!("a{i}{j}")).unwrap();
        }
    }
    for i in (0..20).step_by(2) {
        for j in (0..5).step_by(2) {
            db.put_with_ts(key(i, j), 20u64.to_le_bytes(), format!("b{i}{j}")).unwrap();
        }
    }
    db.put_with_ts("ab", 10u64.to_le_bytes(), "short").unwrap();
}

/// The prefix seek to `target` at `ts` with `prefix_same_as_start`: (key, timestamp, value).
fn prefix_scan(db: &DB, target: &str, ts: u64, reverse: bool) -> Vec<(String, u64, String)> {
    let mut it = db.raw_iterator_opt(same_prefix_at(ts));
    if reverse {
        it.seek_for_prev(target);
    } else {
        it.seek(target);
    }
    let mut out = Vec::new();
    while it.valid() {
        let t = u64::from_le_bytes(it.timestamp().unwrap().try_into().unwrap());
        let k = String::from_utf8(it.key().unwrap().to_vec()).unwrap();
        out.push((k, t, String::from_utf8(it.value().unwrap().to_vec()).unwrap()));
        if reverse {
            it.prev();
        } else {
            it.next();
        }
    }
    it.status().unwrap();
    out
}

/// The keys of prefix `kII-` as of timestamp `ts`, in key order.
fn expected(i: u32, ts: u64) -> Vec<(String, u64, String)> {
    (0..5)
        .filter(|_| ts >= 10)
        .map(|j| {
            if j % 2 == 0 && ts >= 20 {
                (key(i, j), 20, format!("b{i}{j}"))
            } else {
                (key(i, j), 10, format!("a{i}{j}"))
            }
        })
        .collect()
}

/// Reads that hold wherever the data is (memtable or table).
fn check_reads(db: &DB, place: &str) {
    for ts in [15u64, 25, u64::MAX] {
        assert_eq!(prefix_scan(db, "k04-", ts, false), expected(4, ts), "{place}: seek at {ts}");
        let mut back = expected(6, ts);
        back.reverse();
        assert_eq!(prefix_scan(db, "k06-9", ts, true), back, "{place}: seek_for_prev at {ts}");
        assert_eq!(prefix_scan(db, "k05-", ts, false), [], "{place}: absent prefix at {ts}");
    }
    assert_eq!(prefix_scan(db, "k04-", 5, false), [], "{place}: before any write");
    // Point gets hit, at each read timestamp, and miss.
    assert_eq!(db.get_opt(key(8, 2), &at(25)).unwrap().as_deref(), Some(&b"b82"[..]), "{place}");
    assert_eq!(db.get_opt(key(8, 2), &at(15)).unwrap().as_deref(), Some(&b"a82"[..]), "{place}");
    assert_eq!(db.get_opt(key(8, 3), &at(25)).unwrap().as_deref(), Some(&b"a83"[..]), "{place}");
    assert_eq!(db.get_opt(key(8, 2), &at(5)).unwrap(), None, "{place}");
    assert_eq!(db.get_opt(key(9, 2), &at(25)).unwrap(), None, "{place}");
    // `ab` is shorter than the prefix once its timestamp is stripped: out of the extractor's
    // domain, never filtered out, read at a timestamp whose bytes differ from its own.
    let ts = 300u64;
    assert_eq!(db.get_opt("ab", &at(ts)).unwrap().as_deref(), Some(&b"short"[..]), "{place}");
    let mut it = db.raw_iterator_opt(at(ts));
    it.seek("ab");
    assert_eq!(it.key(), Some(&b"ab"[..]), "{place}: prefix-mode seek to a short key");
    it.status().unwrap();
}

/// Runs `f` with the perf context counting: (memtable Bloom hits, misses).
fn memtable_bloom(f: impl FnOnce()) -> (u64, u64) {
    set_perf_stats(PerfStatsLevel::EnableCount);
    let mut ctx = PerfContext::default();
    ctx.reset();
    f();
    let r = (ctx.metric(PerfMetric::BloomMemtableHitCount), ctx.metric(PerfMetric::BloomMemtableMissCount));
    set_perf_stats(PerfStatsLevel::Disable);
    r
}

#[test]
fn prefix_extractor_with_timestamps_reads_as_rocksdb() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(false);
    // RocksDB 11.8.1 opens this family (Shale used to refuse it).
    let db = DB::open(&o, dir.path()).unwrap();
    fill(&db);

    check_reads(&db, "memtable");
    // The memtable's prefix Bloom holds prefixes without timestamps: a get or a prefix
    // seek at any read timestamp hits for a written prefix and misses for another.
    assert_eq!(memtable_bloom(|| assert!(db.get_opt(key(4, 1), &at(25)).unwrap().is_some())), (1, 0));
    assert_eq!(memtable_bloom(|| assert!(db.get_opt(key(4, 1), &at(u64::MAX)).unwrap().is_some())), (1, 0));
    assert_eq!(memtable_bloom(|| assert!(db.get_opt(key(5, 1), &at(25)).unwrap().is_none())), (0, 1));
    assert_eq!(
        memtable_bloom(|| assert!(db.get_opt("ab", &at(25)).unwrap().is_some())),
        (0, 0),
        "not in domain"
    );
    assert_eq!(memtable_bloom(|| assert_eq!(prefix_scan(&db, "k07-", 25, false), [])), (0, 1));
    assert_eq!(memtable_bloom(|| assert_eq!(prefix_scan(&db, "k08-", 25, false), expected(8, 25))), (1, 0));

    db.flush().unwrap();
    assert_eq!(util::int_prop(&db, "rocksdb.num-files-at-level0"), 1);
    check_reads(&db, "table");
    // The table's prefix filter. A seek to an absent prefix touches no data block, one to a
    // present prefix does (RocksDB counts seeks in its `*_LEVEL_SEEK_*` tickers, not in
    // `rocksdb.bloom.filter.prefix.*`: those stay still); gets of an absent prefix are
    // checked and useful, of a present one only checked, at any read timestamp.
    let checked = || o.get_ticker_count(Ticker::BloomFilterPrefixChecked);
    let useful = || o.get_ticker_count(Ticker::BloomFilterPrefixUseful);
    let blocks =
        || o.get_ticker_count(Ticker::BlockCacheDataHit) + o.get_ticker_count(Ticker::BlockCacheDataMiss);
    let (c0, u0, b0) = (checked(), useful(), blocks());
    assert_eq!(prefix_scan(&db, "k11-", 25, false), []);
    assert_eq!(prefix_scan(&db, "k11-9", 25, true), []);
    assert_eq!((checked() - c0, useful() - u0, blocks() - b0), (0, 0, 0), "seeks to an absent prefix");
    let b0 = blocks();
    assert_eq!(prefix_scan(&db, "k12-", u64::MAX, false), expected(12, 25));
    assert!(blocks() > b0, "a seek to a present prefix reads its block");
    let (c0, u0) = (checked(), useful());
    assert_eq!(db.get_opt(key(13, 0), &at(25)).unwrap(), None);
    assert_eq!((checked() - c0, useful() - u0), (1, 1), "get of an absent prefix");
    let (c0, u0) = (checked(), useful());
    assert!(db.get_opt(key(14, 0), &at(15)).unwrap().is_some());
    assert_eq!((checked() - c0, useful() - u0), (1, 0), "get of a present prefix");
    let (c0, u0) = (checked(), useful());
    assert!(db.get_opt("ab", &at(25)).unwrap().is_some());
    assert_eq!((checked() - c0, useful() - u0), (0, 0), "a short key is not checked");

    // Reopened, the same from the table.
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    check_reads(&db, "reopened");
}

#[test]
fn memtable_whole_key_filter_with_timestamps_matches_any_read_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(true), dir.path()).unwrap();
    fill(&db);
    // Whole keys are held without their timestamps: a get at another timestamp than the
    // write's still finds its key (a hit), an absent key misses.
    for ts in [10u64, 25, 300, u64::MAX] {
        let (hits, misses) = memtable_bloom(|| assert!(db.get_opt(key(2, 3), &at(ts)).unwrap().is_some()));
        assert_eq!((hits, misses), (1, 0), "read at {ts}");
        let (hits, misses) = memtable_bloom(|| assert!(db.get_opt("ab", &at(ts)).unwrap().is_some()));
        assert_eq!((hits, misses), (1, 0), "short key read at {ts}");
    }
    assert_eq!(memtable_bloom(|| assert!(db.get_opt(key(2, 7), &at(25)).unwrap().is_none())), (0, 1));
    check_reads(&db, "memtable, whole keys");
}
