//! DB-wide options RocksDB 11.8.1 registers (`options/db_options.cc`) that rust-rocksdb 0.25
//! has no setter for, set by name (options strings, OPTIONS files), written to the OPTIONS
//! file as RocksDB writes them and acting as RocksDB's (their rows are the `dbmisc` block of
//! `options_table.rs`):
//!
//! - `allow_data_in_errors` (default false, immutable): error messages keep user keys out
//!   unless it is set. A failed merge is RocksDB's Corruption "Merge operator failed" (with
//!   Shale's name of the operator and what went wrong) and never names the key, set or not,
//!   as RocksDB's `kMergeOperatorFailed` status; the memtable's per-key checksum and
//!   `paranoid_memory_checks` Corruptions add RocksDB's details (the entry's type, user key
//!   and sequence; the two keys out of order) only when set (`shale_engine::memtable`).
//! - `daily_offpeak_time_utc` (default "", mutable in RocksDB through `SetDBOptions`, which
//!   rust-rocksdb 0.25 lacks): "HH:mm-HH:mm" in UTC; in that window a periodic compaction
//!   takes the tables that will be due by the next window's start
//!   (`shale_engine::compaction::offpeak`). Any text is accepted when set, as RocksDB's
//!   string option; the open checks it with RocksDB's InvalidArgument messages.
//!
//! - `max_compaction_trigger_wakeup_seconds` (default 43200, mutable in RocksDB; fixed at open
//!   in Shale): a quiet database looks at its families' time-based compactions every
//!   RocksDB's `ComputeTriggerCompactionPeriod` seconds: this value, no more than the stats
//!   dump and persist periods nor a fifth of the shortest `periodic_compaction_seconds`,
//!   `ttl` or `bottommost_file_compaction_delay`, at least 1 (`shale_engine::compaction::
//!   trigger`); each look logs RocksDB's "Running the periodic task to trigger compactions.".
//! - `fast_sst_open` (default false, mutable): RocksDB keeps in the MANIFEST the metadata a
//!   file system hands out for an open table file (`FSRandomAccessFile::
//!   GetFileOpenMetadata`), to reopen it faster. RocksDB's posix file system hands out none
//!   (NotSupported), and Shale's file systems have no such metadata, so nothing is recorded
//!   and opens are the same at both values, as RocksDB's on posix; the value is kept,
//!   written and logged.
//! - `open_files_async` (default false, immutable): the live tables are not opened by the
//!   open but by a background thread right after it (RocksDB's `BGWorkAsyncFileOpen`, up
//!   to `max_file_opening_threads` at a time); a table that fails to open there is logged
//!   (`BGWorkAsyncFileOpen: LoadTableHandlers failed for CF <name>: <status>`) and becomes
//!   the database's background error; reads that need it open it themselves. RocksDB's
//!   checks: a FIFO family is NotSupported, and `skip_stats_update_on_db_open` must be set
//!   (InvalidArgument).
//!
//! The object-registry names, as RocksDB 11.8.1 reads them with `GetDBOptionsFromString` and
//! from an OPTIONS file (`options/db_options.cc`; its default `ConfigOptions` has
//! `ignore_unsupported_options`, so an id nothing registered is skipped without an error and
//! the option keeps its value). An id is the value itself or the `id` field of `{id=..;..}`:
//!
//! - `env` (never written: kDontSerialize): "" or an id the default Env answers to leaves the
//!   default Env; `MockEnv` and `CompositeEnv`, the Envs RocksDB registers, are made as owned
//!   objects, which this option (a static Env pointer) cannot hold: InvalidArgument "Cannot
//!   make a static Environment from a guarded one : <id>"; any other id is skipped.
//! - `statistics` (never written: kDontSerialize): "" and `BasicStatistics` make a new
//!   statistics object (RocksDB's `CreateDBStatistics`, Shale's `enable_statistics`),
//!   `nullptr` removes it, other ids are skipped.
//! - `listeners`: the listeners named, ':'-separated, replace the list; RocksDB registers no
//!   listener, so each id is skipped and the list is empty, as rust-rocksdb's options (which
//!   have no listeners) always are; nothing is written.
//! - `wal_filter`: `nullptr` or an id; RocksDB registers no WAL filter, so none is set, as
//!   rust-rocksdb's options (which have no WAL filter) always are; the OPTIONS file says
//!   `wal_filter=nullptr`, as RocksDB's.
//!
//! Every option here is DB-wide: the database hands its value to each family's settings
//! (`db/open.rs`, `db/create_cf.rs`), so a family's options given at open or creation cannot
//! change it.

use shale_engine::compaction::offpeak::DailyOffpeak;

/// The options of this module, at RocksDB 11.8.1's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DbMiscExtra {
    pub allow_data_in_errors: bool,
    pub daily_offpeak_time_utc: String,
    pub max_compaction_trigger_wakeup_seconds: u64,
    pub fast_sst_open: bool,
    pub open_files_async: bool,
    /// Kept for `open_files_async`'s check (`Options::set_skip_stats_update_on_db_open`).
    pub skip_stats_update_on_db_open: bool,
}

impl Default for DbMiscExtra {
    fn default() -> Self {
        DbMiscExtra {
            allow_data_in_errors: false,
            daily_offpeak_time_utc: String::new(),
            max_compaction_trigger_wakeup_seconds: 43_200,
            fast_sst_open: false,
            open_files_async: false,
            skip_stats_update_on_db_open: false,
        }
    }
}

impl DbMiscExtra {
    /// RocksDB's `DBImpl::ValidateOptions` checks of these options, at open.
    pub(crate) fn validate(&self) -> crate::Result<()> {
        match DailyOffpeak::parse(&self.daily_offpeak_time_utc) {
            Err(_) => Err(crate::Error::invalid_argument(
                "daily_offpeak_time_utc should be set in the format HH:mm-HH:mm (e.g. 04:30-07:30)",
            )),
            Ok(Some(o)) if o.start == o.end => {
                Err(crate::Error::invalid_argument("start_time and end_time cannot be the same"))
            }
            Ok(_) => Ok(()),
        }
    }

    /// The off-peak window, once `validate` passed (None: no window, or text RocksDB's
    /// `OffpeakTimeOption` would not take, which keeps no window either).
    pub(crate) fn daily_offpeak(&self) -> Option<DailyOffpeak> {
        DailyOffpeak::parse(&self.daily_offpeak_time_utc).ok().flatten()
    }

    /// The DB-wide values a family's settings take from the database's.
    pub(crate) fn adopt_db_wide(&mut self, db: &shale_engine::config::DbConfig) {
        self.allow_data_in_errors = db.allow_data_in_errors;
        self.daily_offpeak_time_utc = db.daily_offpeak.map(|o| o.to_string()).unwrap_or_default();
    }
}

/// The id an object-registry value names: the value, or the `id` field of `{id=..;..}` (or
/// of `id=..;..`); "" when it names none.
fn registry_id(v: &str) -> crate::Result<String> {
    let t = v.trim();
    if !t.contains('=') {
        return Ok(t.trim_start_matches('{').trim_end_matches('}').trim().to_string());
    }
    let fields = crate::options_table::struct_fields("id", t)?;
    Ok(fields.into_iter().find(|(k, _)| *k == "id").map(|(_, v)| v.to_string()).unwrap_or_default())
}

/// `env=`: see the module comment.
pub(crate) fn set_env(_: &mut crate::Options, v: &str) -> crate::Result<bool> {
    match registry_id(v)?.as_str() {
        id @ ("MockEnv" | "CompositeEnv") => Err(crate::Error::invalid_argument(format!(
            "Cannot make a static Environment from a guarded one : {id}"
        ))),
        _ => Ok(true),
    }
}

/// `statistics=`: see the module comment.
pub(crate) fn set_statistics(o: &mut crate::Options, v: &str) -> crate::Result<bool> {
    match registry_id(v)?.as_str() {
        "" | "BasicStatistics" => o.enable_statistics(),
        "nullptr" => o.statistics = None,
        _ => {}
    }
    Ok(true)
}

/// `listeners=`: see the module comment (every id is one RocksDB has not registered).
pub(crate) fn set_listeners(_: &mut crate::Options, v: &str) -> crate::Result<bool> {
    let t = v.trim();
    let inner = t.strip_prefix('{').and_then(|x| x.strip_suffix('}')).unwrap_or(t);
    if inner.matches('{').count() != inner.matches('}').count() {
        return Err(crate::options_table::bad_value("listeners", v));
    }
    Ok(true)
}

/// `wal_filter=`: see the module comment (every id is one RocksDB has not registered).
pub(crate) fn set_wal_filter(_: &mut crate::Options, v: &str) -> crate::Result<bool> {
    registry_id(v)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offpeak_text_is_checked_with_rocksdb_11s_messages() {
        let with = |s: &str| DbMiscExtra { daily_offpeak_time_utc: s.to_string(), ..DbMiscExtra::default() };
        assert!(with("").validate().is_ok());
        assert!(with("04:30-07:30").validate().is_ok());
        let e = with("4:30").validate().unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
        assert!(
            e.to_string().contains("daily_offpeak_time_utc should be set in the format HH:mm-HH:mm"),
            "{e}"
        );
        let e = with("05:00-05:00").validate().unwrap_err();
        assert!(e.to_string().contains("start_time and end_time cannot be the same"), "{e}");
    }
}
