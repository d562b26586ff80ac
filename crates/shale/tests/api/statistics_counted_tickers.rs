//! `Options::enable_statistics`: one workload (writes alone and in groups, sync writes, a
//! flush, a compaction, point reads from memtable and tables, multi-gets, iterators) moves
//! every ticker Shale counts (`statistics::COUNTED_TICKERS`) and the histograms it records;
//! the text of `get_statistics` is RocksDB's, with the same numbers as `get_ticker_count`.
//! The tickers Shale does not count are each explained (`statistics::why_not_counted`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::Arc;

use shale::statistics::{why_not_counted, Histogram, StatsLevel, Ticker, COUNTED_TICKERS};
use shale::{BlockBasedOptions, Options, WriteOptions, DB};

#[test]
fn workload_moves_every_counted_ticker() {
    let tmp = tempfile::tempdir().unwrap();
    let mut t = BlockBasedOptions::default();
    t.set_bloom_filter(10.0, false);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_block_based_table_factory(&t);
    o.enable_statistics();
    o.set_statistics_level(StatsLevel::ExceptDetailedTimers);
    let db = Arc::new(DB::open(&o, tmp.path()).unwrap());

    // Two overlapping tables, then a compaction that merges them (not a trivial move).
    for round in 0..2 {
        for i in 0..300 {
            db.put(format!("k{i:04}"), format!("v{round}-{i}")).unwrap();
        }
        if round == 1 {
            // Dropped at the bottommost level by RocksDB's reasons: a deletion with nothing
            // under it left (obsolete), entries under a range tombstone.
            db.delete(b"k0299").unwrap();
            db.delete_range(b"k0290", b"k0295").unwrap();
        }
        db.flush().unwrap();
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    // A newer table in level 0, and a memtable.
    for i in (0..300).step_by(3) {
        db.put(format!("k{i:04}"), format!("new-{i}")).unwrap();
    }
    db.flush().unwrap();
    db.put(b"k0001", b"mem").unwrap();
    let mut sync = WriteOptions::default();
    sync.set_sync(true);
    db.put_opt(b"synced", b"1", &sync).unwrap();
    db.flush_wal(true).unwrap();

    // Concurrent sync writes until one leader has written for another.
    for _ in 0..20 {
        let threads: Vec<_> = (0..4)
            .map(|n| {
                let db = db.clone();
                std::thread::spawn(move || {
                    let mut sync = WriteOptions::default();
                    sync.set_sync(true);
                    for i in 0..50 {
                        db.put_opt(format!("t{n}-{i}"), b"x", &sync).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        if o.get_ticker_count(Ticker::WriteDoneByOther) > 0 {
            break;
        }
    }

    // Reads: memtable hit, level-0 hit, deeper hit (twice: miss then cache hit), absent
    // keys inside the tables' range (the bloom filter says no).
    for _ in 0..2 {
        assert_eq!(db.get(b"k0001").unwrap().as_deref(), Some(&b"mem"[..]));
        assert_eq!(db.get(b"k0003").unwrap().as_deref(), Some(&b"new-3"[..]));
        assert_eq!(db.get(b"k0004").unwrap().as_deref(), Some(&b"v1-4"[..]));
        for i in 0..50 {
            assert_eq!(db.get(format!("k{i:04}x")).unwrap(), None);
        }
    }
    // Counted per call (RocksDB counts before it looks for the WAL; this one is gone).
    let _ = db.get_updates_since(0);
    let got = db.multi_get([&b"k0004"[..], b"nope", b"k0005"]);
    assert_eq!(got.len(), 3);
    let mut it = db.raw_iterator();
    it.seek(b"k0100");
    assert!(it.valid());
    it.next();
    it.prev();
    it.seek_to_first();
    drop(it);

    let mut missing = Vec::new();
    for t in COUNTED_TICKERS {
        let n = o.get_ticker_count(*t);
        // A stall and a table that fails to open are not part of this workload.
        if matches!(t, Ticker::StallMicros | Ticker::NoFileErrors) {
            continue;
        }
        // Prefix filters checked by `get` need whole_key_filtering=false: tests/api/prefix_seek_filter.rs.
        if matches!(
            t,
            Ticker::BloomFilterPrefixChecked
                | Ticker::BloomFilterPrefixUseful
                | Ticker::BloomFilterPrefixTruePositive
        ) {
            continue;
        }
        // Range conversion needs min_tombstones_for_range_conversion: tests/api/option_rows_mtrc.rs.
        if matches!(t, Ticker::ReadPathRangeTombstonesInserted | Ticker::ReadPathRangeTombstonesDiscarded) {
            continue;
        }
        // An iterator's readahead needs sequential reads of more blocks: tests/api/readahead.rs.
        if matches!(t, Ticker::PrefetchBytes | Ticker::PrefetchBytesUseful | Ticker::PrefetchHits) {
            continue;
        }
        // Reads of files with a temperature (`default_temperature`, the write temperatures):
        // tests/api/option_rows_cfopt.rs.
        if matches!(
            t,
            Ticker::HotFileReadBytes
                | Ticker::WarmFileReadBytes
                | Ticker::CoolFileReadBytes
                | Ticker::ColdFileReadBytes
                | Ticker::IceFileReadBytes
                | Ticker::HotFileReadCount
                | Ticker::WarmFileReadCount
                | Ticker::CoolFileReadCount
                | Ticker::ColdFileReadCount
                | Ticker::IceFileReadCount
        ) {
            continue;
        }
        // The read-amplification bitmap needs read_amp_bytes_per_bit: tests/api/read_amp_bitmap.rs.
        if matches!(t, Ticker::ReadAmpEstimateUsefulBytes | Ticker::ReadAmpTotalReadBytes) {
            continue;
        }
        // In-place updates need inplace_update_support: tests/api/inplace_update.rs.
        if *t == Ticker::NumberKeysUpdated {
            continue;
        }
        // Level 1 or deeper: where a manual compaction puts its output depends on the levels.
        // Last-level reads too (tests/api/option_rows_cfopt.rs reads a last-level table).
        if matches!(
            t,
            Ticker::GetHitL1
                | Ticker::GetHitL2AndUp
                | Ticker::LastLevelReadBytes
                | Ticker::LastLevelReadCount
        ) {
            continue;
        }
        // A compaction filter's removals, the DB mutex wait (StatsLevel::All only) and
        // background errors: `other_tickers_move_where_rocksdb_counts_them` below.
        if matches!(
            t,
            Ticker::CompactionKeyDropUser
                | Ticker::DbMutexWaitMicros
                | Ticker::ErrorHandlerBgErrorCount
                | Ticker::ErrorHandlerBgIoErrorCount
        ) {
            continue;
        }
        // Index and filter blocks in the cache, a strict cache's refusals, the row cache and
        // FIFO compaction need their own options: tests/api/statistics_feature_tickers.rs.
        if matches!(
            t,
            Ticker::BlockCacheIndexMiss
                | Ticker::BlockCacheIndexHit
                | Ticker::BlockCacheIndexAdd
                | Ticker::BlockCacheIndexBytesInsert
                | Ticker::BlockCacheFilterMiss
                | Ticker::BlockCacheFilterHit
                | Ticker::BlockCacheFilterAdd
                | Ticker::BlockCacheFilterBytesInsert
                | Ticker::BlockCacheAddFailures
                | Ticker::RowCacheHit
                | Ticker::RowCacheMiss
                | Ticker::FifoMaxSizeCompactions
                | Ticker::FifoTtlCompactions
                | Ticker::FifoChangeTemperatureCompactions
        ) {
            continue;
        }
        // A failing merge operator: tests/api/statistics_merge_failures.rs. More versions of one
        // key than `max_sequential_skip_in_iterations` under an iterator: tests/api/hint_options.rs.
        if matches!(t, Ticker::NumberMergeFailures | Ticker::NumberOfReseeksInIteration) {
            continue;
        }
        // A rate limiter's requests (no limiter here): tests/api/rate_limiter_compaction.rs.
        if t.name().starts_with("rocksdb.rate.limiter.") || *t == Ticker::NumberRateLimiterDrains {
            continue;
        }
        // BlobDB's blob files, blob cache and garbage collection: tests/api/statistics_blob_tickers.rs.
        if t.name().starts_with("rocksdb.blobdb.") {
            continue;
        }
        if n == 0 {
            missing.push(t.name());
        }
        assert!(why_not_counted(*t).is_none());
    }
    assert!(missing.is_empty(), "counted tickers that did not move: {missing:?}");
    assert!(o.get_ticker_count(Ticker::GetHitL1) + o.get_ticker_count(Ticker::GetHitL2AndUp) >= 2);
    assert_eq!(o.get_ticker_count(Ticker::NumberMultigetKeysRead), 3);
    assert_eq!(o.get_ticker_count(Ticker::NumberMultigetKeysFound), 2);
    assert_eq!(o.get_ticker_count(Ticker::NoIteratorCreated), o.get_ticker_count(Ticker::NoIteratorDeleted));
    assert!(o.get_ticker_count(Ticker::BloomFilterUseful) >= 50, "absent keys filtered");
    assert!(o.get_ticker_count(Ticker::BlockCacheDataHit) > 0);
    assert!(o.get_ticker_count(Ticker::CompactReadBytes) > o.get_ticker_count(Ticker::CompactWriteBytes) / 2);

    for h in [
        Histogram::DbGet,
        Histogram::DbWrite,
        Histogram::DbSeek,
        Histogram::DbMultiget,
        Histogram::FlushTime,
        Histogram::CompactionTime,
        Histogram::NumFilesInSingleCompaction,
        Histogram::WalFileSyncMicros,
        Histogram::TableOpenIoMicros,
        Histogram::SstReadMicros,
        Histogram::BytesPerRead,
        Histogram::BytesPerWrite,
        Histogram::BytesPerMultiget,
    ] {
        let d = o.get_histogram_data(h);
        assert!(d.count() > 0, "{} recorded nothing", h.name());
        assert!(d.max() >= d.median(), "{}", h.name());
    }

    // The text: RocksDB's lines, with the numbers the getters give.
    let text = o.get_statistics().unwrap();
    let hits = o.get_ticker_count(Ticker::BlockCacheHit);
    assert!(text.contains(&format!("\nrocksdb.block.cache.hit COUNT : {hits}\n")), "{text}");
    let d = o.get_histogram_data(Histogram::DbGet);
    let line = text.lines().find(|l| l.starts_with("rocksdb.db.get.micros ")).unwrap();
    assert!(line.ends_with(&format!(" COUNT : {} SUM : {}", d.count(), d.sum())), "{line}");
    assert_eq!(text.lines().count(), 263 + 80);
}

#[test]
fn statistics_off_and_disabled_level_count_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    assert!(o.get_statistics().is_none());
    o.enable_statistics();
    o.set_statistics_level(StatsLevel::DisableAll);
    let db = DB::open(&o, tmp.path()).unwrap();
    db.put(b"a", b"b").unwrap();
    db.get(b"a").unwrap();
    assert_eq!(o.get_ticker_count(Ticker::NumberKeysWritten), 0);
    assert_eq!(o.get_histogram_data(Histogram::DbWrite).count(), 0);
    o.set_statistics_level(StatsLevel::ExceptHistogramOrTimers);
    db.put(b"a", b"c").unwrap();
    assert_eq!(o.get_ticker_count(Ticker::NumberKeysWritten), 1);
    assert_eq!(o.get_histogram_data(Histogram::DbWrite).count(), 0, "no timers at this level");
}

/// rust-rocksdb 0.25's `StatsLevel` discriminants skip 1 (DisableAll = 0, then 2..=6), and
/// its `set_statistics_level` hands them to RocksDB 11.8.1's C API, which takes them as
/// RocksDB's own `StatsLevel` (0..=5, clamped). So `ExceptHistogramOrTimers` (2) is RocksDB's
/// kExceptTimers: histograms are recorded, timings are not; the LOG's
/// `Options.statistics stats level` line prints the value RocksDB holds.
#[test]
fn statistics_level_is_the_one_rocksdb_11_gets_from_rust_rocksdb() {
    let stats_level_line = |dir: &std::path::Path| {
        let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
        let line = log.lines().find(|l| l.contains("Options.statistics stats level: ")).unwrap().to_string();
        line.rsplit(' ').next().unwrap().parse::<u8>().unwrap()
    };
    for (level, rocksdb) in [
        (None, 3),
        (Some(StatsLevel::DisableAll), 0),
        (Some(StatsLevel::ExceptHistogramOrTimers), 2),
        (Some(StatsLevel::ExceptTimers), 3),
        (Some(StatsLevel::ExceptDetailedTimers), 4),
        (Some(StatsLevel::ExceptTimeForMutex), 5),
        (Some(StatsLevel::All), 5),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let mut o = Options::default();
        o.create_if_missing(true);
        o.enable_statistics();
        if let Some(l) = level {
            o.set_statistics_level(l);
        }
        let db = DB::open(&o, tmp.path()).unwrap();
        assert_eq!(stats_level_line(tmp.path()), rocksdb, "{level:?}");
        db.put(b"a", b"b").unwrap();
        let hist = o.get_histogram_data(Histogram::BytesPerWrite).count();
        let timed = o.get_histogram_data(Histogram::DbWrite).count();
        // kExceptTickers = kDisableAll (0) counts nothing; above kExceptHistogramOrTimers (1)
        // histograms; above kExceptTimers (2) timings.
        assert_eq!(o.get_ticker_count(Ticker::NumberKeysWritten), u64::from(rocksdb > 0), "{level:?}");
        assert_eq!(hist, u64::from(rocksdb > 1), "{level:?}");
        assert_eq!(timed, u64::from(rocksdb > 2), "{level:?}");
    }
}

#[test]
fn other_tickers_move_where_rocksdb_counts_them() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.enable_statistics();
    o.set_statistics_level(StatsLevel::All);
    o.set_compaction_filter("drop_odd", |_level: u32, key: &[u8], _value: &[u8]| {
        if key.last().is_some_and(|b| b % 2 == 1) {
            shale::CompactionDecision::Remove
        } else {
            shale::CompactionDecision::Keep
        }
    });
    let db = DB::open(&o, tmp.path()).unwrap();
    for i in 0..100u8 {
        db.put([b'k', i], b"v").unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(o.get_ticker_count(Ticker::CompactionKeyDropUser), 50);
    // At StatsLevel::All the DB mutex's waits are timed (RocksDB's InstrumentedMutex); the
    // ticker exists and reads the sum (possibly 0 µs on an idle mutex).
    let before = o.get_ticker_count(Ticker::DbMutexWaitMicros);
    for _ in 0..1000 {
        db.property_int_value("rocksdb.num-immutable-mem-table").unwrap();
    }
    assert!(o.get_ticker_count(Ticker::DbMutexWaitMicros) >= before);
    let text = o.get_statistics().unwrap();
    assert!(text.contains("\nrocksdb.compaction.key.drop.user COUNT : 50\n"), "{text}");
}

/// An iterator counts the bytes (key and value) of every entry a seek or a step lands on,
/// and the steps that land on one, as RocksDB's `DBIter` (`rocksdb.db.iter.bytes.read`,
/// `rocksdb.number.db.next.found`); added to the statistics when the iterator is dropped.
#[test]
fn iterator_counts_the_bytes_of_each_entry_it_lands_on() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.enable_statistics();
    let db = DB::open(&o, tmp.path()).unwrap();
    let mut expected = 0u64;
    for i in 0..50u64 {
        let (k, v) = (format!("key{i:03}"), "v".repeat(i as usize));
        expected += (k.len() + v.len()) as u64;
        db.put(&k, &v).unwrap();
    }
    db.flush().unwrap();
    let before = |t| o.get_ticker_count(t);
    let (bytes0, next0, found0, seek0) = (
        before(Ticker::IterBytesRead),
        before(Ticker::NumberDbNext),
        before(Ticker::NumberDbNextFound),
        before(Ticker::NumberDbSeek),
    );
    {
        let mut it = db.raw_iterator();
        it.seek_to_first();
        let mut n = 0;
        while it.valid() {
            n += 1;
            it.next();
        }
        assert_eq!(n, 50);
    }
    assert_eq!(o.get_ticker_count(Ticker::IterBytesRead) - bytes0, expected);
    assert_eq!(o.get_ticker_count(Ticker::NumberDbNext) - next0, 50);
    assert_eq!(o.get_ticker_count(Ticker::NumberDbNextFound) - found0, 49);
    // SeekToFirst counts as a seek, as RocksDB's DBIter::SeekToFirst.
    assert_eq!(o.get_ticker_count(Ticker::NumberDbSeek) - seek0, 1);
}
