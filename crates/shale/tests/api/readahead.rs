//! An iterator's readahead, as RocksDB 11.8.1's (`table/prefetch.rs`): after two sequential
//! data block reads of a table it reads ahead, 8 KiB doubling up to 256 KiB, so a scan reads a
//! table in few large reads; `ReadOptions::readahead_size` reads that much ahead from the
//! first read; backward scans and point lookups read block by block. File reads are counted
//! by the fault-injecting file system; the prefetch tickers and the perf context's
//! `block_read_count` (file reads of blocks only) count as RocksDB's.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::Arc;

use shale::fs::{FaultInjectionFs, MemFileSystem, OpKind};
use shale::perf::{set_perf_stats, PerfContext, PerfMetric, PerfStatsLevel};
use shale::statistics::Ticker;
use shale::{DBCompressionType, IteratorMode, Options, ReadOptions, DB};

const KEYS: u64 = 4000;

/// One table of about 4 MB (about a thousand 4 KiB data blocks), no compression.
fn open() -> (Arc<FaultInjectionFs>, Options, DB) {
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_file_system(fs.clone());
    o.set_compression_type(DBCompressionType::None);
    o.set_write_buffer_size(64 << 20);
    o.enable_statistics();
    let db = DB::open(&o, "/db").unwrap();
    for i in 0..KEYS {
        db.put(format!("key{i:06}"), vec![b'a' + (i % 26) as u8; 1000]).unwrap();
    }
    db.flush().unwrap();
    (fs, o, db)
}

/// File reads made by `f`.
fn reads_of(fs: &FaultInjectionFs, f: impl FnOnce()) -> u64 {
    let before = fs.count(OpKind::Read);
    f();
    fs.count(OpKind::Read) - before
}

fn no_fill() -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.fill_cache(false);
    ro
}

fn scan(db: &DB, ro: ReadOptions, mode: IteratorMode) -> u64 {
    let mut n = 0;
    for kv in db.iterator_opt(mode, ro) {
        let (k, v) = kv.unwrap();
        assert_eq!(v.len(), 1000, "{k:?}");
        n += 1;
    }
    n
}

#[test]
fn forward_scans_read_ahead_backward_scans_do_not() {
    let (fs, o, db) = open();
    let backward = reads_of(&fs, || assert_eq!(scan(&db, no_fill(), IteratorMode::End), KEYS));
    // Backward: one read per data block (RocksDB reads ahead forward only).
    assert!(backward >= 900, "{backward} reads backward");
    let hits_before = o.get_ticker_count(Ticker::PrefetchHits);
    assert_eq!(hits_before, 0, "no readahead backward");

    set_perf_stats(PerfStatsLevel::EnableCount);
    let mut ctx = PerfContext::default();
    ctx.reset();
    let forward = reads_of(&fs, || assert_eq!(scan(&db, no_fill(), IteratorMode::Start), KEYS));
    let block_reads = ctx.metric(PerfMetric::BlockReadCount);
    set_perf_stats(PerfStatsLevel::Disable);
    // Two single blocks, then 8, 16, ... 256 KiB ahead: about 4 MB / 256 KiB + 6 reads.
    assert!(forward <= 40, "{forward} reads forward (backward: {backward})");
    assert!(forward >= 10, "{forward} reads: more than 256 KiB each?");
    // Blocks served from the readahead buffer are no block reads (RocksDB's BlockFetcher).
    assert_eq!(block_reads, 2, "only the first two blocks were read alone");
    let hits = o.get_ticker_count(Ticker::PrefetchHits);
    assert!(hits >= 900, "{hits} blocks from the readahead buffer");
    let bytes = o.get_ticker_count(Ticker::PrefetchBytes);
    assert!(bytes >= 4_000_000, "{bytes} bytes read ahead");
    assert!(o.get_ticker_count(Ticker::PrefetchBytesUseful) >= 4_000_000 - 8192);
    // Every block missed the cache all the same (fill_cache false keeps it so).
    assert!(o.get_ticker_count(Ticker::BlockCacheDataMiss) >= 2 * 900);
}

#[test]
fn readahead_size_reads_that_much_from_the_first_read() {
    let (fs, _o, db) = open();
    let mut ro = no_fill();
    ro.set_readahead_size(1 << 20);
    let forward = reads_of(&fs, || assert_eq!(scan(&db, ro, IteratorMode::Start), KEYS));
    // About 4 MB in reads of 1 MiB and a block.
    assert!((4..=6).contains(&forward), "{forward} reads of 1 MiB");
}

#[test]
fn point_lookups_and_random_seeks_read_single_blocks() {
    let (fs, o, db) = open();
    let keys: Vec<u64> = (0..100).map(|i| (i * 1571) % KEYS).collect();
    let n = reads_of(&fs, || {
        for &i in &keys {
            assert!(db.get_opt(format!("key{i:06}"), &no_fill()).unwrap().is_some());
        }
    });
    assert_eq!(n, keys.len() as u64, "one read per lookup");
    let mut it = db.raw_iterator_opt(no_fill());
    let n = reads_of(&fs, || {
        for &i in &keys {
            it.seek(format!("key{i:06}"));
            assert!(it.valid());
        }
    });
    assert_eq!(n, keys.len() as u64, "one read per seek far from the last");
    assert_eq!(o.get_ticker_count(Ticker::PrefetchBytes), 0);
}

#[test]
fn compactions_read_compaction_readahead_size_ahead() {
    for (size, most) in [(2u64 << 20, 12u64), (0, u64::MAX)] {
        let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_file_system(fs.clone());
        o.set_compression_type(DBCompressionType::None);
        o.set_write_buffer_size(64 << 20);
        o.set_disable_auto_compactions(true);
        o.set_compaction_readahead_size(size as usize);
        o.enable_statistics();
        let db = DB::open(&o, "/db").unwrap();
        // Two overlapping tables of about 2 MB each.
        for round in 0..2u64 {
            for i in 0..2000u64 {
                db.put(format!("key{:06}", i * 2 + round), vec![b'a' + (i % 26) as u8; 1000]).unwrap();
            }
            db.flush().unwrap();
        }
        let n = reads_of(&fs, || db.compact_range(None::<&[u8]>, None::<&[u8]>));
        if size > 0 {
            // About 4 MB of input in 2 MiB reads (plus each table's open).
            assert!(n <= most, "{n} reads with compaction_readahead_size {size}");
        } else {
            assert!(n >= 900, "{n} reads: block by block without readahead");
        }
        // A compaction's readahead is no user scan's: the prefetch tickers stay 0.
        assert_eq!(o.get_ticker_count(Ticker::PrefetchBytes), 0);
        assert_eq!(db.iterator(IteratorMode::Start).count(), 4000);
    }
}
