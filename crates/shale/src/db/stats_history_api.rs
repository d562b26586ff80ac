//! The persistent stats family's API side: its options (RocksDB's
//! `OptimizeForPersistentStats`), its creation and version keys at open, and
//! `get_stats_history`. The stats runs themselves are the engine's (`stats_history.rs`).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::cf::CfHandle;
use super::column_family::ColumnFamily;
use super::stats_history::{
    low_pri_write, parse_key, parse_u64, COMPATIBLE_VERSION, COMPATIBLE_VERSION_KEY, FORMAT_VERSION,
    FORMAT_VERSION_KEY, PERSISTENT_STATS_COLUMN_FAMILY_NAME,
};
use super::{DBCommon, DBInner, DbInner, ThreadMode};
use crate::error::{Error, Result};
use crate::options::Options;

/// RocksDB's `OptimizeForPersistentStats` on default column-family options.
pub(crate) fn stats_cf_options() -> Options {
    Options {
        write_buffer_size: 2 << 20,
        target_file_size_base: 2 * 1048576,
        max_bytes_for_level_base: 10 * 1048576,
        soft_pending_compaction_bytes_limit: 256 * 1048576,
        hard_pending_compaction_bytes_limit: 1073741824,
        compression: crate::options::DBCompressionType::None,
        ..Options::default()
    }
}

/// The snapshots of `DB::get_stats_history`, oldest first: each its time in seconds and the
/// tickers' deltas since the snapshot before (RocksDB's `StatsHistoryIterator`).
pub struct StatsHistoryIterator {
    snapshots: std::vec::IntoIter<(u64, BTreeMap<String, u64>)>,
}

impl Iterator for StatsHistoryIterator {
    type Item = (u64, BTreeMap<String, u64>);
    fn next(&mut self) -> Option<Self::Item> {
        self.snapshots.next()
    }
}

/// At open, with `persist_stats_to_disk`: the hidden family created when missing (with its
/// version keys), or checked and created again when its version keys are missing or
/// incompatible (RocksDB's `InitPersistStatsColumnFamily` and
/// `PersistentStatsProcessFormatVersion`).
pub(crate) fn init_stats_cf(inner: &Arc<DbInner>, created_now: bool) -> Result<()> {
    let write_versions = |cf: &Arc<CfHandle>| -> Result<()> {
        let mut batch = shale_engine::batch::Batch::default();
        batch.put_cf(cf.id, FORMAT_VERSION_KEY, FORMAT_VERSION.to_string());
        batch.put_cf(cf.id, COMPATIBLE_VERSION_KEY, COMPATIBLE_VERSION.to_string());
        inner.write(&low_pri_write(), batch)
    };
    let create = || -> Result<Arc<CfHandle>> {
        let mut o = stats_cf_options();
        o.write_buffer_manager = inner.config.write_buffer_manager.clone();
        o.rate_limiter = inner.config.rate_limiter.clone();
        let mut made =
            super::create_cf::create_cfs(inner, &[(PERSISTENT_STATS_COLUMN_FAMILY_NAME.to_string(), o)])?;
        made.pop().ok_or_else(|| Error::corruption("creating the persistent stats column family made none"))
    };
    let Some(cf) = inner.stats_cf() else {
        return write_versions(&create()?);
    };
    if created_now {
        return write_versions(&cf);
    }
    let ro = crate::ReadOptions::default();
    let read = |key: &str| -> Result<Option<u64>> {
        match inner.get_impl(&cf, key.as_bytes(), &ro)? {
            Some(v) if !v.is_empty() => Ok(Some(parse_u64(&v, key.as_bytes())?)),
            _ => Ok(None),
        }
    };
    let (format, compatible) = (read(FORMAT_VERSION_KEY), read(COMPATIBLE_VERSION_KEY));
    let recreate = match (&format, &compatible) {
        (Ok(Some(f)), Ok(Some(c))) => {
            let incompatible = FORMAT_VERSION < *f && COMPATIBLE_VERSION < *c;
            if incompatible {
                inner.info_log.log_at(
                    crate::LogLevel::Warn,
                    format_args!(
                        "Recreating persistent stats column family due to corrupted or incompatible format \
                     version. Recovered format: {f}; recovered format compatible since: {c}"
                    ),
                );
            }
            incompatible
        }
        _ => {
            let show = |r: &Result<Option<u64>>, key: &str| match r {
                Ok(Some(_)) => "OK".to_string(),
                Ok(None) => format!("NotFound: Persistent stats version key {key} not found."),
                Err(e) => e.to_string(),
            };
            inner.info_log.log_at(
                crate::LogLevel::Warn,
                format_args!(
                    "Recreating persistent stats column family since reading persistent stats version key \
                 failed. Format key: {}, compatible key: {}",
                    show(&format, FORMAT_VERSION_KEY),
                    show(&compatible, COMPATIBLE_VERSION_KEY)
                ),
            );
            true
        }
    };
    if recreate {
        super::cf::drop_cf(inner, &cf)?;
        write_versions(&create()?)?;
    }
    Ok(())
}

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// The stats snapshots taken at times in `[start_time, end_time)` seconds (RocksDB's
    /// `GetStatsHistory`; a Shale extension, rust-rocksdb 0.25 has none). In memory or read
    /// from the hidden family as `persist_stats_to_disk` says; from the family, a snapshot at
    /// `end_time` itself is included too, as RocksDB's `PersistentStatsHistoryIterator` does.
    pub fn get_stats_history(&self, start_time: u64, end_time: u64) -> Result<StatsHistoryIterator> {
        let mut out = Vec::new();
        if self.inner.config.persist_stats_to_disk {
            let Some(handle) = self.inner.stats_cf() else {
                return Ok(StatsHistoryIterator { snapshots: out.into_iter() });
            };
            let cf = ColumnFamily::new(handle);
            let from = format!("{start_time:010}");
            let mode = crate::IteratorMode::From(from.as_bytes(), crate::Direction::Forward);
            let mut current: Option<(u64, BTreeMap<String, u64>)> = None;
            for item in self.iterator_cf(&cf, mode) {
                let (k, v) = item?;
                let Some((time, name)) = parse_key(&k)? else { break };
                if time > end_time {
                    break;
                }
                if current.as_ref().is_some_and(|(t, _)| *t != time) {
                    out.extend(current.take());
                }
                let value = parse_u64(&v, &k)?;
                current.get_or_insert_with(|| (time, BTreeMap::new())).1.insert(name, value);
            }
            out.extend(current);
        } else {
            let h = self
                .inner
                .stats
                .history
                .lock()
                .map_err(|_| Error::corruption("stats history lock poisoned"))?;
            out.extend(h.in_memory.range(start_time..end_time.max(start_time)).map(|(t, m)| (*t, m.clone())));
        }
        Ok(StatsHistoryIterator { snapshots: out.into_iter() })
    }
}
