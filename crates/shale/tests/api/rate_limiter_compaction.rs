//! `set_ratelimiter`: compaction (and flush) table writes go through RocksDB's
//! GenericRateLimiter, so a compaction that writes B bytes at R bytes/s takes at least
//! about B / R seconds (less one refill period's burst); the data comes out whole. The
//! auto-tuned limiter opens and throttles too.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::time::{Duration, Instant};

use shale::statistics::Ticker;
use shale::{DBCompressionType, Options, DB};

const RATE: i64 = 1 << 20; // 1 MiB/s
const PERIOD_US: i64 = 10_000;

fn value(i: u32) -> Vec<u8> {
    // Incompressible-looking bytes (compression is off anyway).
    let mut x = 0x9e37_79b9u32.wrapping_mul(i + 1);
    (0..400)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// The bytes of the live tables (the compaction's outputs). From the Version, not a
/// directory listing: an input table may still be on disk (a purge held off by a reader) or
/// be deleted between the listing and its stat.
fn live_table_bytes(db: &DB) -> u64 {
    db.live_files().unwrap().iter().map(|f| f.size as u64).sum()
}

fn run(auto_tuned: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(DBCompressionType::None);
    o.set_disable_auto_compactions(true);
    if auto_tuned {
        o.set_auto_tuned_ratelimiter(RATE, PERIOD_US, 10);
    } else {
        o.set_ratelimiter(RATE, PERIOD_US, 10);
    }
    o.enable_statistics();
    let db = DB::open(&o, tmp.path()).unwrap();
    // Four overlapping flushes of 1000 keys x 400 bytes.
    for round in 0..4u32 {
        for i in 0..1000u32 {
            db.put(format!("key{:06}", i * 4 + round % 2).as_bytes(), value(i + round * 1000)).unwrap();
        }
        db.flush().unwrap();
    }
    let flushed = live_table_bytes(&db);
    let bytes = Ticker::RateLimiterBytesWrite;
    // The flushes asked the limiter for their tables' bytes (RocksDB's statistics count each
    // granted request).
    assert_eq!(o.get_ticker_count(bytes), flushed);
    let requests = o.get_ticker_count(Ticker::RateLimiterRequestsWrite);
    assert!(requests >= 4, "{requests} requests");
    let t = Instant::now();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let took = t.elapsed();
    let written = live_table_bytes(&db);
    assert_eq!(o.get_ticker_count(bytes), flushed + written);
    // Over 1 MiB at 1 MiB/s in 10 ms refills: requests waited for refills.
    assert!(o.get_ticker_count(Ticker::RateLimiterDelayedRequestsWrite) > 0);
    assert!(o.get_ticker_count(Ticker::NumberRateLimiterDrains) > 0);
    assert!(o.get_ticker_count(Ticker::RateLimiterTotalWaitMicrosWrite) > 0);
    assert_eq!(o.get_ticker_count(Ticker::RateLimiterBytesRead), 0, "reads never ask (kWritesOnly)");
    // The auto-tuned limiter starts at half the rate, so the plain bound holds for both.
    let burst = (RATE * PERIOD_US / 1_000_000) as u64;
    let floor = Duration::from_secs_f64((written - burst) as f64 / RATE as f64);
    assert!(written > 700_000, "compaction output {written} bytes");
    assert!(took >= floor, "auto_tuned {auto_tuned}: {written} bytes compacted in {took:?}, under {floor:?}");
    for round in 2..4u32 {
        for i in (0..1000u32).step_by(37) {
            let k = format!("key{:06}", i * 4 + round % 2);
            assert_eq!(db.get(k.as_bytes()).unwrap().unwrap(), value(i + round * 1000), "{k}");
        }
    }
}

#[test]
fn rate_limited_compaction_takes_bytes_over_rate() {
    run(false);
}

#[test]
fn auto_tuned_rate_limiter_throttles_too() {
    run(true);
}
