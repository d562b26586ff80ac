//! The table counts the compaction picker weighs (`FileMetaData::table_stats`), loaded
//! when a Version is built, outside the DB mutex (RocksDB 11.8.1's
//! `Version::UpdateAccumulatedStats`, which `VersionSet::ProcessManifestWrites` runs with the
//! mutex released, and which `Recover` runs at open unless `skip_stats_update_on_db_open`).
//!
//! The picker, the scheduler and the properties run under the DB mutex; they read only the
//! slot, never a table (`DbInner::file_stats`), as RocksDB's picker reads only
//! `FileMetaData` (`compensated_file_size`, `TryGetNewestKeyTime`). The table cache asserts
//! in debug builds that no table is opened under the mutex (`table_cache.rs`).
//!
//! As RocksDB's: each Version build loads the files not yet loaded, level 0 first, at most
//! 20 of them (`kMaxInitCount`, to cap the I/O of one build) unless the table cache keeps
//! every table open (`max_open_files = -1`: then every file, since opening costs nothing
//! more); if no loaded file has values (`accumulated_raw_value_size_ == 0`), files are
//! loaded from the last level up until one has. A file is loaded once; a table whose
//! properties cannot be read is logged ("Unable to load table properties for file ...")
//! and counts by its size alone. Loaded counts are copied with the metadata (a trivial
//! move or copy keeps them). Shale also keeps the table's newest key time here, which
//! RocksDB's `TryGetNewestKeyTime` takes from the pinned reader (every reader is pinned with
//! the default `max_open_files = -1`); a file not loaded falls back, as in RocksDB, to the
//! next newer file's oldest ancestor time (`compaction/fifo.rs`).

use crate::version::edit::{FileMetaData, TableStats};
use crate::version::Version;

use super::cf::CfHandle;
use super::info_log::InfoLog;
use super::table_cache::TableCache;

/// RocksDB's `kMaxInitCount`.
const MAX_INIT_COUNT: usize = 20;

/// Loads `f`'s counts from its table; false when they were loaded already.
fn load(table_cache: &TableCache, cf: &CfHandle, f: &FileMetaData, log: Option<&InfoLog>) -> bool {
    if f.table_stats.get().is_some() {
        return false;
    }
    let stats = match table_cache.get(cf, f) {
        Ok(e) => {
            let p = e.table.properties();
            Some(TableStats {
                num_entries: p.num_entries,
                num_deletions: p.num_deletions,
                num_range_deletions: p.num_range_deletions,
                raw_key_size: p.raw_key_size,
                raw_value_size: p.raw_value_size,
                newest_key_time: p.raw_u64(crate::table::properties::names::NEWEST_KEY_TIME).unwrap_or(0),
            })
        }
        Err(e) => {
            if let Some(log) = log {
                log.log_at(
                    crate::config::LogLevel::Error,
                    format_args!("Unable to load table properties for file {} --- {e}", f.number),
                );
            }
            None
        }
    };
    f.table_stats.set(stats);
    true
}

/// Loads the counts of `v`'s files (see the module comment). Must run without the DB mutex.
pub fn init_file_stats(table_cache: &TableCache, cf: &CfHandle, v: &Version, log: Option<&InfoLog>) {
    let unbounded = table_cache.is_unbounded();
    let mut count = 0;
    'levels: for level in 0..v.num_levels() {
        for f in v.files(level) {
            if load(table_cache, cf, f, log) && !unbounded {
                count += 1;
                if count >= MAX_INIT_COUNT {
                    break 'levels;
                }
            }
        }
    }
    let has_values = |v: &Version| {
        v.all_files().any(|(_, f)| f.table_stats.get().flatten().is_some_and(|s| s.raw_value_size > 0))
    };
    if has_values(v) {
        return;
    }
    for level in (0..v.num_levels()).rev() {
        for f in v.files(level).iter().rev() {
            if load(table_cache, cf, f, log)
                && f.table_stats.get().flatten().is_some_and(|s| s.raw_value_size > 0)
            {
                return;
            }
        }
    }
}
