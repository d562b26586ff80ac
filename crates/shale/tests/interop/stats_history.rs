//! `stats_persist_period_sec`, `persist_stats_to_disk` and `stats_history_buffer_size` act as
//! RocksDB 11.8.1's `PersistStats` (issue 33): each period a snapshot of the tickers' deltas,
//! kept in memory (bounded by the buffer size) or in the hidden family
//! `___rocksdb_stats_history___`, which RocksDB 11.8.1's `ldb` reads. A mock clock moves the
//! period forward; each test waits for the snapshot it caused, never for wall time.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::tools::*;
use crate::util::wait_until;
use shale::{MockSystemClock, Options, DB, PERSISTENT_STATS_COLUMN_FAMILY_NAME as STATS_CF};

const START: u64 = 1_000_000;
const PERIOD: u64 = 60;
const KEYS_WRITTEN: &str = "rocksdb.number.keys.written";

fn options(clock: &Arc<MockSystemClock>, to_disk: bool) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.enable_statistics();
    o.set_stats_dump_period_sec(0);
    o.set_stats_persist_period_sec(PERIOD as u32);
    o.set_persist_stats_to_disk(to_disk);
    o.set_stats_history_clock(clock.clone());
    o
}

fn history(db: &DB, start: u64, end: u64) -> Vec<(u64, BTreeMap<String, u64>)> {
    db.get_stats_history(start, end).unwrap().collect()
}

/// Moves the clock one period on and waits for the snapshot at the new time.
fn next_period(db: &DB, clock: &MockSystemClock) -> BTreeMap<String, u64> {
    clock.sleep_for_seconds(PERIOD);
    let t = clock.now_seconds();
    let mut got = None;
    wait_until(60, &format!("the stats snapshot at {t}"), || {
        got = history(db, t, t + 1).into_iter().find(|(time, _)| *time == t).map(|(_, m)| m);
        got.is_some()
    });
    got.unwrap()
}

#[test]
fn in_memory_snapshots_hold_each_periods_deltas() {
    let dir = tempfile::tempdir().unwrap();
    let clock = MockSystemClock::new(START);
    let db = DB::open(&options(&clock, false), dir.path()).unwrap();
    // Open took the first run, which only records the counts.
    assert!(history(&db, 0, u64::MAX).is_empty());
    for i in 0..5 {
        db.put(format!("k{i}"), "v").unwrap();
    }
    let first = next_period(&db, &clock);
    assert_eq!(first[KEYS_WRITTEN], 5, "{first:?}");
    // Every ticker of the statistics object is in a snapshot.
    assert_eq!(first.len(), shale::statistics::Ticker::iter().count());
    for i in 0..3 {
        db.put(format!("j{i}"), "v").unwrap();
    }
    db.get("k1").unwrap();
    let second = next_period(&db, &clock);
    assert_eq!(second[KEYS_WRITTEN], 3, "{second:?}");
    assert_eq!(second["rocksdb.number.keys.read"], 1, "{second:?}");
    // [start, end): the end is left out.
    let times: Vec<u64> = history(&db, 0, START + 2 * PERIOD).iter().map(|(t, _)| *t).collect();
    assert_eq!(times, vec![START + PERIOD]);
    let times: Vec<u64> = history(&db, START + PERIOD + 1, u64::MAX).iter().map(|(t, _)| *t).collect();
    assert_eq!(times, vec![START + 2 * PERIOD]);
    drop(db);
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(log.contains("------- PERSISTING STATS -------"), "{log}");
    assert!(log.contains("to in-memory stats history"), "{log}");
}

#[test]
fn in_memory_history_keeps_what_the_buffer_holds() {
    let dir = tempfile::tempdir().unwrap();
    let clock = MockSystemClock::new(START);
    // RocksDB's estimate of one snapshot (64-bit sizes): the time, a map, and per ticker its
    // name's string (capacity at least 15) and count.
    let per_slice: usize =
        8 + 48 + shale::statistics::Ticker::iter().map(|t| t.name().len().max(15) + 32 + 8).sum::<usize>();
    let mut o = options(&clock, false);
    o.set_stats_history_buffer_size(2 * per_slice);
    let db = DB::open(&o, dir.path()).unwrap();
    for round in 1..=4u64 {
        db.put(format!("k{round}"), "v").unwrap();
        next_period(&db, &clock);
    }
    let times: Vec<u64> = history(&db, 0, u64::MAX).iter().map(|(t, _)| *t).collect();
    assert_eq!(times, vec![START + 3 * PERIOD, START + 4 * PERIOD]);
    drop(db);

    // Without statistics there is nothing to snapshot.
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_stats_persist_period_sec(1);
    let db = DB::open(&o, dir.path()).unwrap();
    assert!(history(&db, 0, u64::MAX).is_empty());
}

/// The stats family's pairs as RocksDB 11.8.1's ldb reads them.
fn ldb_stats(dir: &Path) -> BTreeMap<String, String> {
    ldb_scan(dir, Some(STATS_CF))
        .into_iter()
        .map(|(k, v)| (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap()))
        .collect()
}

#[test]
fn persisted_snapshots_live_in_the_hidden_family() {
    let dir = tempfile::tempdir().unwrap();
    let clock = MockSystemClock::new(START);
    let o = options(&clock, true);
    let db = DB::open(&o, dir.path()).unwrap();
    // The family exists (list_cf shows it, as RocksDB's ListColumnFamilies) but has no handle.
    assert_eq!(DB::list_cf(&o, dir.path()).unwrap(), vec!["default".to_string(), STATS_CF.to_string()]);
    assert!(db.cf_handle(STATS_CF).is_none());
    for i in 0..5 {
        db.put(format!("k{i}"), "v").unwrap();
    }
    let first = next_period(&db, &clock);
    assert_eq!(first[KEYS_WRITTEN], 5, "{first:?}");
    db.put("x", "y").unwrap();
    let second = next_period(&db, &clock);
    // The user's put and the first snapshot's own batch, one key per ticker.
    let tickers = shale::statistics::Ticker::iter().count() as u64;
    assert_eq!(second[KEYS_WRITTEN], 1 + tickers, "{second:?}");
    // Creating the family again is refused.
    let mut db = db;
    assert!(db.create_cf(STATS_CF, &Options::default()).is_err());
    drop(db);

    // Reopened, the history is read back from the family.
    let db = DB::open(&o, dir.path()).unwrap();
    let back = history(&db, 0, u64::MAX);
    assert_eq!(back.iter().map(|(t, _)| *t).collect::<Vec<_>>(), vec![START + PERIOD, START + 2 * PERIOD]);
    assert_eq!(back[0].1, first);
    assert_eq!(back[1].1, second);
    // From the family the end time is kept, as RocksDB's persistent iterator does.
    assert_eq!(history(&db, START + PERIOD, START + PERIOD).len(), 1);
    drop(db);

    // Without persist_stats_to_disk the family is still opened without being named.
    let mut plain = Options::default();
    plain.create_if_missing(true);
    let db = DB::open(&plain, dir.path()).unwrap();
    assert_eq!(db.get("k3").unwrap().as_deref(), Some(&b"v"[..]));
    drop(db);
    // Named, it gets a handle (with the stats family's own options).
    let db = open_all(dir.path(), &plain);
    assert!(db.cf_handle(STATS_CF).is_some());
    let pairs = shale_scan(&db, STATS_CF);
    drop(db);

    let text = latest_options_text(dir.path());
    assert!(text.contains(&format!("[CFOptions \"{STATS_CF}\"]")), "{text}");
    if !use_rocksdb_11("persisted_snapshots_live_in_the_hidden_family") {
        return;
    }
    let stats = ldb_stats(dir.path());
    assert_eq!(stats["__persistent_stats_format_version__"], "1");
    assert_eq!(stats["__persistent_stats_compatible_version__"], "1");
    assert_eq!(stats[&format!("{:010}#{KEYS_WRITTEN}", START + PERIOD)], "5");
    assert_eq!(stats[&format!("{:010}#{KEYS_WRITTEN}", START + 2 * PERIOD)], (1 + tickers).to_string());
    assert_eq!(stats.len() as u64, 2 + 2 * tickers);
    assert_same_pairs(&ldb_scan(dir.path(), Some(STATS_CF)), &pairs, "ldb reads the stats family");
}
