//! DB-wide options RocksDB 11.8.1 registers (`options/db_options.cc`) that rust-rocksdb 0.25
//! has no setter for, kept by `Options` so that an options string or an OPTIONS file sets
//! them, the OPTIONS file and the LOG show them, and the database acts on them as RocksDB
//! does (their rows are the `dbopt` block of `options_table.rs`):
//!
//! - `enforce_single_del_contracts` (default true): a flush or compaction meeting a
//!   SingleDelete whose next older entry of the same key, in the same snapshot stripe, is a
//!   Delete fails with Corruption (RocksDB's `CompactionIterator` message); false drops the
//!   SingleDelete and goes on (`shale_engine::compaction::job`).
//! - `best_efforts_recovery` (default false): an open with table or blob files missing or
//!   cut short recovers each family at its latest complete point in time, replaying no WAL
//!   (`db/best_efforts.rs`).
//! - `prefix_seek_opt_in_only` (default false): every iterator is made as with
//!   `total_order_seek` (RocksDB's `ArenaWrappedDBIter::Init`), so only `auto_prefix_mode`
//!   and `prefix_same_as_start` use the prefix extractor (`db/iterator.rs::PrefixMode::of`).
//! - `strict_bytes_per_sync` (default false; mutable: `DB::set_db_options` changes it for the
//!   files created from then on, `shale_engine::db::live_options`): each write-back `bytes_per_sync` or `wal_bytes_per_sync` asks for
//!   first waits for the one before and covers the file from its start
//!   (`sync_file_range(0, end, WAIT_BEFORE | WRITE)`, RocksDB's posix `RangeSync`), so at most
//!   about that many bytes are in write-back at once (`WritableFile::range_sync_strict`).
//! - `flush_verify_memtable_count` (default true): a flush (or a table written at open)
//!   compares the entries it read with those the memtables hold, and the entries it added
//!   with the table's `num_entries`; a difference is Corruption in RocksDB's words
//!   (`db/flush.rs::verify_flush_counts`), ignored when false.
//! - `compaction_verify_record_count` (default true): a compaction compares the point
//!   entries it read with its inputs' counts (`db/record_count.rs`).
//! - `read_io_executor_threads` (default 1): RocksDB's executor of asynchronous reads
//!   (`GetAsync`, `MultiGetAsync`, built only with coroutines); neither rust-rocksdb nor Shale
//!   has asynchronous reads, so what remains of it is RocksDB's open-time check: a value
//!   below 1 is InvalidArgument "read_io_executor_threads must be greater than zero".
//! - `lowest_used_cache_tier` (default kNonVolatileBlockTier): whether the block and blob
//!   caches spill to a secondary cache. Shale's caches have no secondary cache (neither has
//!   rust-rocksdb's API a way to give one), so every tier reads and fills the one cache,
//!   which is RocksDB's behaviour with no secondary cache configured.
//! - `follower_refresh_catchup_period_ms`, `follower_catchup_retry_count`,
//!   `follower_catchup_retry_wait_ms`: read only by RocksDB's follower DB
//!   (`DBImplFollower`, `DB::OpenAsFollower`). rust-rocksdb has no follower open and neither
//!   has Shale; on a primary RocksDB keeps and writes them, and so does Shale.
//! - `metadata_write_temperature`, `wal_write_temperature` (default kUnknown): the
//!   temperature RocksDB hands its FileSystem when it creates a MANIFEST, OPTIONS or other
//!   metadata file, or a WAL (`FileOptions::temperature`); nothing records it (unlike a
//!   table's, which the MANIFEST holds). RocksDB's posix file system takes no temperature,
//!   nor do Shale's (`shale_base::fs`), so the file is created the same at every value.
//!
//! And the deprecated names (`disable_data_sync`, `concurrent_prepare`,
//! `access_hint_on_compaction_start`, `rate_limiter`) accept any text and change nothing, as
//! RocksDB's `kDeprecated`; `rate_limiter_bytes_per_sec` makes a generic rate limiter of that
//! many bytes a second (RocksDB's `NewGenericRateLimiter` defaults: a 100 ms refill period,
//! fairness 10), as `set_ratelimiter` does, and is never written (RocksDB's
//! `kDontSerialize`).

/// RocksDB's `CacheTier` names (`cache_tier_string_map`).
pub(crate) const CACHE_TIERS: &[&str] =
    &["kVolatileTier", "kVolatileCompressedTier", "kNonVolatileBlockTier"];

/// The options of this module, at RocksDB 11.8.1's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DbOptExtra {
    pub enforce_single_del_contracts: bool,
    pub best_efforts_recovery: bool,
    pub prefix_seek_opt_in_only: bool,
    pub strict_bytes_per_sync: bool,
    pub flush_verify_memtable_count: bool,
    pub compaction_verify_record_count: bool,
    pub read_io_executor_threads: i32,
    /// One of [`CACHE_TIERS`].
    pub lowest_used_cache_tier: &'static str,
    pub follower_refresh_catchup_period_ms: u64,
    pub follower_catchup_retry_count: u64,
    pub follower_catchup_retry_wait_ms: u64,
    /// RocksDB's `Temperature` byte (`options_table::enum_names::TEMPERATURE`).
    pub metadata_write_temperature: u8,
    pub wal_write_temperature: u8,
}

impl Default for DbOptExtra {
    fn default() -> Self {
        DbOptExtra {
            enforce_single_del_contracts: true,
            best_efforts_recovery: false,
            prefix_seek_opt_in_only: false,
            strict_bytes_per_sync: false,
            flush_verify_memtable_count: true,
            compaction_verify_record_count: true,
            read_io_executor_threads: 1,
            lowest_used_cache_tier: "kNonVolatileBlockTier",
            follower_refresh_catchup_period_ms: 10_000,
            follower_catchup_retry_count: 10,
            follower_catchup_retry_wait_ms: 100,
            metadata_write_temperature: 0,
            wal_write_temperature: 0,
        }
    }
}

impl DbOptExtra {
    /// RocksDB's `DBImpl::ValidateOptions` checks of these options, at open.
    pub(crate) fn validate(&self) -> crate::Result<()> {
        if self.read_io_executor_threads <= 0 {
            return Err(crate::Error::invalid_argument("read_io_executor_threads must be greater than zero"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_rocksdb_11s_and_validation_refuses_no_executor_threads() {
        let d = DbOptExtra::default();
        assert!(d.enforce_single_del_contracts);
        assert_eq!(d.lowest_used_cache_tier, "kNonVolatileBlockTier");
        assert!(d.validate().is_ok());
        let bad = DbOptExtra { read_io_executor_threads: 0, ..DbOptExtra::default() };
        let e = bad.validate().unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
        assert!(e.to_string().contains("read_io_executor_threads must be greater than zero"), "{e}");
    }
}
