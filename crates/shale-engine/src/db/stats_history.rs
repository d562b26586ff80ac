//! The stats history: RocksDB's periodic `PersistStats` task (`stats_persist_period_sec`) and
//! `GetStatsHistory`.
//!
//! Each run reads every ticker of the statistics object. The first run (at open) only keeps
//! the counts; each later run computes, per ticker, the count minus the previous run's, and
//! keeps that map under the run's time in seconds:
//! - in memory (`persist_stats_to_disk = false`): a map time -> deltas, its oldest entries
//!   dropped while RocksDB's size estimate of it exceeds `stats_history_buffer_size`;
//! - on disk (`persist_stats_to_disk = true`): one write batch into the hidden column family
//!   `___rocksdb_stats_history___` (RocksDB's `kPersistentStatsColumnFamilyName`).
//!
//! The hidden family's entries (RocksDB's `monitoring/persistent_stats_history.cc`):
//!
//! ```text
//! key                                            value
//! +------------+---+-------------------------+   +------------------------+
//! | 0000000123 | # | rocksdb.block.cache.miss |   | "42"  (decimal delta)  |
//! +------------+---+-------------------------+   +------------------------+
//!   10 digits, zero-padded seconds ("%010d"), so keys sort by time
//! "__persistent_stats_format_version__"      -> "1"
//! "__persistent_stats_compatible_version__"  -> "1"
//! ```
//!
//! The two version keys are written when the family is created; at a later open with
//! `persist_stats_to_disk`, a family without them, or with a format newer than 1 that is not
//! compatible with 1, is dropped and created again (RocksDB's
//! `PersistentStatsProcessFormatVersion`). The family's options are RocksDB's
//! `OptimizeForPersistentStats` whatever the caller gives. It is opened whenever the MANIFEST
//! holds it (with or without `persist_stats_to_disk`), without the caller naming it; it gets
//! a handle only when named. `DB::list_cf` lists it, as RocksDB's `ListColumnFamilies` does.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::cf::CfHandle;
use super::DbInner;
use crate::config::{RealClock, SystemClock};
use crate::error::{Error, Result};
use crate::statistics::Ticker;

/// RocksDB's `kPersistentStatsColumnFamilyName`.
pub const PERSISTENT_STATS_COLUMN_FAMILY_NAME: &str = "___rocksdb_stats_history___";
pub const FORMAT_VERSION_KEY: &str = "__persistent_stats_format_version__";
pub const COMPATIBLE_VERSION_KEY: &str = "__persistent_stats_compatible_version__";
/// RocksDB's `kStatsCFCurrentFormatVersion` and `kStatsCFCompatibleFormatVersion`.
pub const FORMAT_VERSION: u64 = 1;
pub const COMPATIBLE_VERSION: u64 = 1;

/// The stats history's state (`Stats::history`, a leaf lock).
#[derive(Default)]
pub struct StatsHistory {
    /// The tickers at the last run (RocksDB's `stats_slice_`); None before the first.
    slice: Option<BTreeMap<String, u64>>,
    /// The in-memory snapshots by time in seconds (RocksDB's `stats_history_`).
    pub in_memory: BTreeMap<u64, BTreeMap<String, u64>>,
    /// When the last run was, in the stats clock's seconds (None before the first).
    last_run: Option<u64>,
}

/// RocksDB's `EstimateInMemoryStatsHistorySize` with the sizes of its 64-bit build: a
/// `std::map` is 48 bytes, a `std::string` 32 plus its capacity (15 for short strings), a
/// count 8; every snapshot is counted at the size of the oldest one.
fn estimate_size(history: &BTreeMap<u64, BTreeMap<String, u64>>) -> usize {
    const MAP: usize = 48;
    const STRING: usize = 32;
    const U64: usize = 8;
    let Some(first) = history.values().next() else {
        return MAP;
    };
    let per_slice: usize = U64 + MAP + first.keys().map(|k| k.len().max(15) + STRING + U64).sum::<usize>();
    per_slice * history.len()
}

/// The write options of RocksDB's stats writes: low priority, no slowdown, not synced.
pub fn low_pri_write() -> crate::config::WriteSettings {
    crate::config::WriteSettings { low_pri: true, no_slowdown: true, ..Default::default() }
}

/// RocksDB's `EncodePersistentStatsKey`: the time as ten zero-padded digits, `#`, the name.
fn stats_key(seconds: u64, name: &str) -> String {
    format!("{seconds:010}#{name}")
}

/// RocksDB's `parseKey`: the time and the ticker name of a key; None for a key without `#`
/// (the version keys), which ends a scan.
pub fn parse_key(key: &[u8]) -> Result<Option<(u64, String)>> {
    let Some(pos) = key.iter().position(|&b| b == b'#') else {
        return Ok(None);
    };
    let bad = || Error::corruption(format!("{PERSISTENT_STATS_COLUMN_FAMILY_NAME}: bad key {key:?}"));
    let time = std::str::from_utf8(&key[..pos]).map_err(|_| bad())?.parse::<u64>().map_err(|_| bad())?;
    let name = String::from_utf8(key[pos + 1..].to_vec()).map_err(|_| bad())?;
    Ok(Some((time, name)))
}

pub fn parse_u64(what: &[u8], key: &[u8]) -> Result<u64> {
    std::str::from_utf8(what).ok().and_then(|s| s.parse::<u64>().ok()).ok_or_else(|| {
        Error::corruption(format!(
            "{PERSISTENT_STATS_COLUMN_FAMILY_NAME}: value of {:?} is not a number: {:?}",
            String::from_utf8_lossy(key),
            String::from_utf8_lossy(what)
        ))
    })
}

impl DbInner {
    /// The stats clock's time in seconds.
    pub fn stats_now_seconds(&self) -> u64 {
        let micros = match &self.config.stats_history_clock {
            Some(c) => c.now_micros(),
            None => RealClock.now_micros(),
        };
        micros / 1_000_000
    }

    /// When the next stats run is due: a period after the last one (None before the first,
    /// which open takes).
    pub fn stats_next_due(&self) -> Option<u64> {
        let h = self.stats.history.lock().ok()?;
        h.last_run.map(|t| t + u64::from(self.live_options.stats_persist_period_sec()))
    }

    /// The hidden stats family, if open.
    pub fn stats_cf(&self) -> Option<Arc<CfHandle>> {
        self.handles.read().iter().flatten().find(|h| h.name == PERSISTENT_STATS_COLUMN_FAMILY_NAME).cloned()
    }

    /// One run of RocksDB's `PersistStats` (see the module comment). Failures to write go to
    /// the info LOG, as RocksDB's.
    pub fn persist_stats(&self) {
        if self.shutting_down.load(Ordering::Acquire) {
            return;
        }
        let now = self.stats_now_seconds();
        let Some(statistics) = self.config.statistics.as_deref() else {
            return;
        };
        let counts: BTreeMap<String, u64> =
            Ticker::iter().map(|t| (t.name().to_string(), statistics.ticker_count(*t))).collect();
        self.info_log.log(format_args!("------- PERSISTING STATS -------"));
        let Ok(mut h) = self.stats.history.lock() else {
            self.info_log.log(format_args!("Stats history lock poisoned; stats not persisted"));
            return;
        };
        let previous = h.slice.replace(counts);
        h.last_run = Some(now);
        let deltas = |prev: &BTreeMap<String, u64>, cur: &BTreeMap<String, u64>| -> BTreeMap<String, u64> {
            cur.iter().filter_map(|(k, v)| prev.get(k).map(|p| (k.clone(), v.wrapping_sub(*p)))).collect()
        };
        let current = h.slice.clone().unwrap_or_default();
        if self.config.persist_stats_to_disk {
            drop(h);
            let mut batch = crate::batch::Batch::default();
            if let Some(prev) = &previous {
                self.info_log.log(format_args!("Reading {} stats from statistics", prev.len()));
                if let Some(cf) = self.stats_cf() {
                    for (name, delta) in deltas(prev, &current) {
                        batch.put_cf(cf.id, stats_key(now, &name), delta.to_string());
                    }
                }
            }
            match self.write(&low_pri_write(), batch) {
                Ok(()) => self.info_log.log(format_args!(
                    "Writing {} stats with timestamp {now} to persistent stats CF succeeded",
                    current.len()
                )),
                Err(e) => self.info_log.log(format_args!("Writing to persistent stats CF failed -- {e}")),
            }
        } else {
            if let Some(prev) = &previous {
                self.info_log.log(format_args!(
                    "Storing {} stats with timestamp {now} to in-memory stats history",
                    current.len()
                ));
                let d = deltas(prev, &current);
                h.in_memory.insert(now, d);
            }
            let limit = usize::try_from(self.live_options.stats_history_buffer_size()).unwrap_or(usize::MAX);
            let size = estimate_size(&h.in_memory);
            self.info_log.log(format_args!(
                "[Pre-GC] In-memory stats history size: {size} bytes, slice count: {}",
                h.in_memory.len()
            ));
            while estimate_size(&h.in_memory) > limit && h.in_memory.pop_first().is_some() {}
            self.info_log.log(format_args!(
                "[Post-GC] In-memory stats history size: {size} bytes, slice count: {}",
                h.in_memory.len()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sort_by_time_and_parse_back() {
        assert_eq!(stats_key(7, "rocksdb.a"), "0000000007#rocksdb.a");
        assert!(stats_key(9, "z") < stats_key(10, "a"));
        assert!(stats_key(u32::MAX as u64, "z").as_str() < FORMAT_VERSION_KEY);
        assert_eq!(parse_key(b"0000000123#x.y").unwrap(), Some((123, "x.y".to_string())));
        assert_eq!(parse_key(FORMAT_VERSION_KEY.as_bytes()).unwrap(), None);
        assert!(parse_key(b"12a#x").is_err());
    }

    #[test]
    fn size_estimate_counts_every_slice_at_the_first_ones_size() {
        let mut h = BTreeMap::new();
        assert_eq!(estimate_size(&h), 48);
        let m: BTreeMap<String, u64> = [("short".to_string(), 1), ("a".repeat(20), 2)].into();
        h.insert(1, m.clone());
        h.insert(2, BTreeMap::new());
        assert_eq!(estimate_size(&h), 2 * (8 + 48 + (15 + 40) + (20 + 40)));
    }
}
