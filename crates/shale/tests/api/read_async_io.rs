//! `ReadOptions::set_async_io` (RocksDB 11.8.1's `async_io`): an iterator's readahead reads
//! the next window in the background while the scan consumes the current one, counted in
//! `rocksdb.async.read.bytes`; a long scan returns the same keys and values with it as
//! without, and without it there is no background read.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::statistics::{Histogram, Ticker};
use shale::{Options, ReadOptions, DB};

type Entries = Vec<(Box<[u8]>, Box<[u8]>)>;

fn scan(db: &DB, async_io: bool, readahead: usize) -> Entries {
    let mut r = ReadOptions::default();
    r.set_async_io(async_io);
    r.set_readahead_size(readahead);
    r.fill_cache(false);
    db.iterator_opt(shale::IteratorMode::Start, r).map(|kv| kv.unwrap()).collect()
}

#[test]
fn a_long_scan_with_async_io_reads_ahead_in_the_background() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.enable_statistics();
    o.set_compression_type(shale::DBCompressionType::None);
    let db = DB::open(&o, tmp.path()).unwrap();
    for i in 0..20_000u32 {
        db.put(format!("key{i:08}"), format!("value {i} ").repeat(10)).unwrap();
    }
    db.flush().unwrap();

    for readahead in [0, 128 << 10] {
        o.get_statistics().unwrap();
        let before = o.get_histogram_data(Histogram::AsyncReadBytes);
        let plain = scan(&db, false, readahead);
        let after_plain = o.get_histogram_data(Histogram::AsyncReadBytes);
        assert_eq!(after_plain.count(), before.count(), "no background read without async_io");
        assert_eq!(plain.len(), 20_000);

        let prefetch_before = o.get_ticker_count(Ticker::PrefetchBytes);
        let with = scan(&db, true, readahead);
        let after = o.get_histogram_data(Histogram::AsyncReadBytes);
        assert_eq!(with, plain, "the same keys and values");
        let reads = after.count() - after_plain.count();
        let bytes = after.sum() - after_plain.sum();
        assert!(reads > 3, "readahead {readahead}: {reads} background reads");
        // More than a third of the ~2.4 MB table was read in the background.
        assert!(bytes > 800_000, "readahead {readahead}: {bytes} bytes in the background");
        assert!(o.get_ticker_count(Ticker::PrefetchBytes) - prefetch_before >= bytes);
    }
    let text = o.get_statistics().unwrap();
    assert!(text.contains("\nrocksdb.prefetched.bytes.discarded P50 : "), "{text}");
    assert!(!text.contains(
        "\nrocksdb.async.read.bytes P50 : 0.000000 P95 : 0.000000 P99 : 0.000000 P100 : 0.000000 COUNT : 0 "
    ));
}
