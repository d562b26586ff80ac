//! The engine's database-wide configuration: what the database (write path, WAL, flush,
//! recovery, scheduler, stats threads) reads of RocksDB's `DBOptions`, in the engine's own
//! names and types. The facade (`shale::options_engine`, `Options::engine_db_config`) builds
//! it once at open, resolving RocksDB's `SanitizeOptions` there (the recycled WAL count, the
//! write-back interval, the WAL directory, the background job limits, the delayed write
//! rate), so the database sees plain values. Database-wide options cannot change after open
//! (rust-rocksdb has no `set_db_options`), so it is never rebuilt.
//!
//! Defaults are RocksDB 11.8.1's (`DBOptions`), as `SanitizeOptions` leaves them.

use std::path::PathBuf;
use std::sync::Arc;

use crate::cache::BlockCache;
use crate::fs::FileSystemRef;
use crate::memtable::write_buffer_manager::WriteBufferManagerState;
use crate::statistics::Statistics;
use crate::table::compression::CompressionType;
use crate::wal::WalRecoveryMode;
use shale_format::rate_limiter::RateLimiter;

/// A clock in microseconds since the epoch (RocksDB's `SystemClock::NowMicros`), for the
/// stats history.
pub trait SystemClock: Send + Sync {
    fn now_micros(&self) -> u64;
}

/// The system's clock.
pub struct RealClock;

impl SystemClock for RealClock {
    fn now_micros(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(0)
    }
}

/// Info-log verbosity (RocksDB's `InfoLogLevel`, rust-rocksdb's `LogLevel`).
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum LogLevel {
    Debug = 0,
    Info,
    Warn,
    Error,
    Fatal,
    Header,
}

/// A user's logger: RocksDB's C-API callback logger, which gets each line's level and its
/// text (no stamp, no level prefix), or its stderr logger, which prints the prefix given,
/// the level prefix and the text. Lines below `level` are not given to it. The database's
/// info log writes to it instead of a LOG file.
pub struct UserLogger {
    pub level: LogLevel,
    pub sink: UserSink,
}

/// A callback logger's function: each line's level and text.
pub type LogCallback = Box<dyn Fn(LogLevel, &str) + Send + Sync>;

/// Where a user's logger puts lines.
pub enum UserSink {
    Stderr(Option<String>),
    Callback(LogCallback),
}

/// The identities a database open records in every table it writes (RocksDB's
/// "rocksdb.creating.db.identity", "rocksdb.creating.session.identity",
/// "rocksdb.creating.host.identity").
#[derive(Debug)]
pub struct TableIds {
    pub db_id: String,
    pub session_id: String,
    pub host_id: String,
}

/// What the database reads of the DB-wide options, resolved.
#[derive(Clone)]
pub struct DbConfig {
    /// `create_if_missing`.
    pub create_if_missing: bool,
    /// `create_missing_column_families`.
    pub create_missing_column_families: bool,
    /// `error_if_exists`.
    pub error_if_exists: bool,
    /// `paranoid_checks`.
    pub paranoid_checks: bool,
    /// `max_open_files` (-1: every table stays open).
    pub max_open_files: i32,
    /// `max_file_opening_threads`.
    pub max_file_opening_threads: i32,
    /// `max_background_flushes`, resolved from `max_background_jobs` (RocksDB's `GetBGJobLimits`).
    pub max_background_flushes: usize,
    /// `max_background_compactions`, resolved from `max_background_jobs`.
    pub max_background_compactions: usize,
    /// The Env's LOW and HIGH pool sizes (`Env::SetBackgroundThreads`), when set.
    pub env_threads: (Option<usize>, Option<usize>),
    /// The Env's BOTTOM pool size (0: bottommost compactions run in the LOW pool).
    pub env_bottom_threads: usize,
    /// `Env::LowerThreadPoolCPUPriority` for the (LOW, HIGH) pools.
    pub env_lower_cpu: (bool, bool),
    /// `Env::LowerThreadPoolIOPriority` for the (LOW, HIGH) pools.
    pub env_lower_io: (bool, bool),
    /// The file system given (`env`); None: the default one.
    pub fs: Option<FileSystemRef>,
    /// `use_fsync`.
    pub use_fsync: bool,
    /// `is_fd_close_on_exec`.
    pub is_fd_close_on_exec: bool,
    /// `use_direct_reads`.
    pub use_direct_reads: bool,
    /// `allow_mmap_reads`.
    pub allow_mmap_reads: bool,
    /// `advise_random_on_open`: a mapped table file is advised `MADV_RANDOM`
    /// (`shale_base::fs::ReadFileOptions::advise_random`).
    pub advise_random_on_open: bool,
    /// `use_direct_io_for_flush_and_compaction`.
    pub use_direct_io_for_flush_and_compaction: bool,
    /// `allow_mmap_writes`.
    pub allow_mmap_writes: bool,
    /// `writable_file_max_buffer_size`.
    pub writable_file_max_buffer_size: u64,
    /// `bytes_per_sync`, sanitized (1 MiB when unset and a rate limiter is given).
    pub bytes_per_sync: u64,
    /// `wal_bytes_per_sync`.
    pub wal_bytes_per_sync: u64,
    /// `wal_dir`, resolved: the database directory when unset (empty only in `Default`,
    /// which knows no database path).
    pub wal_dir: PathBuf,
    /// `wal_recovery_mode`.
    pub wal_recovery_mode: WalRecoveryMode,
    /// `WAL_ttl_seconds`.
    pub wal_ttl_seconds: u64,
    /// `WAL_size_limit_MB`.
    pub wal_size_limit_mb: u64,
    /// `recycle_log_file_num`, sanitized (0 with the WAL archive or a strict recovery mode).
    pub recycle_log_file_num: usize,
    /// `wal_compression`.
    pub wal_compression: CompressionType,
    /// `max_total_wal_size` (0: four times the families' memtable memory).
    pub max_total_wal_size: u64,
    /// `manual_wal_flush`.
    pub manual_wal_flush: bool,
    /// `track_and_verify_wals_in_manifest`.
    pub track_and_verify_wals_in_manifest: bool,
    /// `enforce_single_del_contracts`: a SingleDelete met by a Delete in a flush or
    /// compaction is Corruption (false: the SingleDelete is dropped).
    pub enforce_single_del_contracts: bool,
    /// `best_efforts_recovery`: an open recovers each family at its latest point in time
    /// whose files are all present, replaying no WAL.
    pub best_efforts_recovery: bool,
    /// `prefix_seek_opt_in_only`: iterators are made as with `total_order_seek`.
    pub prefix_seek_opt_in_only: bool,
    /// `strict_bytes_per_sync`: write-back of tables, blob files, the MANIFEST and WALs
    /// waits for the write-back asked for before (`WritableFile::range_sync_strict`).
    pub strict_bytes_per_sync: bool,
    /// `flush_verify_memtable_count`: a flush whose entry counts differ fails (Corruption).
    pub flush_verify_memtable_count: bool,
    /// `compaction_verify_record_count`: a compaction whose record counts differ fails.
    pub compaction_verify_record_count: bool,
    /// `track_and_verify_wals`: each new WAL records its predecessor; recovery checks the
    /// chain (a missing or mismatched WAL is Corruption).
    pub track_and_verify_wals: bool,
    /// `allow_data_in_errors`: error messages may show user keys (a failed merge's key, the
    /// memtable's corruption details); false keeps them out, as RocksDB's default.
    pub allow_data_in_errors: bool,
    /// `daily_offpeak_time_utc`, parsed (None: no window); each family's settings take it
    /// (`CfConfig::daily_offpeak`).
    pub daily_offpeak: Option<crate::compaction::offpeak::DailyOffpeak>,
    /// `max_compaction_trigger_wakeup_seconds`: the longest wait between two checks of the
    /// families' time-based compactions on a quiet database.
    pub max_compaction_trigger_wakeup_seconds: u64,
    /// `open_files_async`: the live tables are opened in the background after the open.
    pub open_files_async: bool,
    /// `skip_stats_update_on_db_open` (required by `open_files_async`).
    pub skip_stats_update_on_db_open: bool,
    /// `verify_sst_unique_id_in_manifest`: a block-based table opened whose MANIFEST entry
    /// records a unique id must give the same one from its properties (else Corruption).
    pub verify_sst_unique_id_in_manifest: bool,
    /// `file_checksum_gen_factory` is RocksDB's built-in `FileChecksumGenCrc32cFactory`:
    /// every table and blob file the database writes (flush, recovery, compaction,
    /// ingestion, repair) records its whole-file CRC32C in the MANIFEST
    /// (`shale_format::file_checksum`). False: no factory (RocksDB's nullptr default).
    pub file_checksum_crc32c: bool,
    /// `use_direct_io_for_compaction_reads`: compaction inputs are read through readers of
    /// their own opened with O_DIRECT (`TableCache::open_ephemeral`), unless
    /// `use_direct_reads` makes every read direct already.
    pub use_direct_io_for_compaction_reads: bool,
    /// `enforce_write_buffer_manager_during_recovery` (RocksDB's default true): WAL replay
    /// flushes every family holding replayed data whenever the write buffer manager says
    /// flush (`open.rs::replay_wal`).
    pub enforce_write_buffer_manager_during_recovery: bool,
    /// `max_manifest_file_size`.
    pub max_manifest_file_size: u64,
    /// `max_manifest_space_amp_pct`: a new MANIFEST once the current one passes
    /// `max(max_manifest_file_size, last compacted size x (1 + pct/100))`.
    pub max_manifest_space_amp_pct: i32,
    /// `verify_manifest_content_on_close`: at close the MANIFEST is read back (checksums and
    /// every record decoded); a damaged one is replaced by a new MANIFEST, checked again.
    pub verify_manifest_content_on_close: bool,
    /// `reuse_manifest_on_open`: a read-write open appends its changes to the MANIFEST it
    /// recovered from (when that ends at its last whole record and the file system can
    /// reopen it for appending) instead of writing a new one.
    pub reuse_manifest_on_open: bool,
    /// `async_wal_precreate`: the next WAL's file is created ahead by a background thread
    /// (`db/wal_precreate.rs`; off with `recycle_log_file_num`).
    pub async_wal_precreate: bool,
    /// `background_close_inactive_wals`: an inactive WAL synced whole is not closed by the
    /// sync (or the switch) that found it so, but by the next purge (`wal_sync.rs`).
    pub background_close_inactive_wals: bool,
    /// `optimize_manifest_for_recovery`: the open records only the recovery edits that change
    /// something (none after a clean close: no MANIFEST is written), and a close records the
    /// WALs the next open need not read (`db/manifest_close.rs`).
    pub optimize_manifest_for_recovery: bool,
    /// `write_dbid_to_manifest`.
    pub write_dbid_to_manifest: bool,
    /// `write_identity_file`.
    pub write_identity_file: bool,
    /// `avoid_flush_during_recovery`, sanitized (off with `allow_2pc`).
    pub avoid_flush_during_recovery: bool,
    /// `avoid_flush_during_shutdown`.
    pub avoid_flush_during_shutdown: bool,
    /// `max_write_batch_group_size_bytes`.
    pub max_write_batch_group_size_bytes: u64,
    /// `db_paths`: table directories with target sizes (empty: the database directory).
    pub db_paths: Vec<(PathBuf, u64)>,
    /// `atomic_flush`.
    pub atomic_flush: bool,
    /// `allow_2pc`.
    pub allow_2pc: bool,
    /// `allow_ingest_behind`: every family keeps its last level for files ingested behind.
    pub allow_ingest_behind: bool,
    /// `two_write_queues`.
    pub two_write_queues: bool,
    /// `enable_pipelined_write`.
    pub enable_pipelined_write: bool,
    /// `unordered_write`.
    pub unordered_write: bool,
    /// `allow_concurrent_memtable_write`.
    pub allow_concurrent_memtable_write: bool,
    /// `enable_write_thread_adaptive_yield`.
    pub enable_write_thread_adaptive_yield: bool,
    /// `write_thread_max_yield_usec`.
    pub write_thread_max_yield_usec: u64,
    /// `write_thread_slow_yield_usec`.
    pub write_thread_slow_yield_usec: u64,
    /// `delayed_write_rate`, resolved (16 MiB/s when 0), bytes per second.
    pub delayed_write_rate: u64,
    /// `write_buffer_manager`, or one of the database's own made from `db_write_buffer_size`.
    pub write_buffer_manager: Option<Arc<WriteBufferManagerState>>,
    /// `rate_limiter`.
    pub rate_limiter: Option<Arc<RateLimiter>>,
    /// `row_cache`.
    pub row_cache: Option<Arc<BlockCache>>,
    /// `statistics`.
    pub statistics: Option<Arc<Statistics>>,
    /// `max_subcompactions`.
    pub max_subcompactions: u32,
    /// `compaction_readahead_size`.
    pub compaction_readahead_size: u64,
    /// `avoid_unnecessary_blocking_io`.
    pub avoid_unnecessary_blocking_io: bool,
    /// `delete_obsolete_files_period_micros` at open (RocksDB's default 6 hours; 0: every
    /// purge scans): the period of the purge's full directory scan (`db/obsolete.rs`). A
    /// mutable DB option: the live value is `DbInner::delete_obsolete_files_period`.
    pub delete_obsolete_files_period_micros: u64,
    /// `use_adaptive_mutex`: the DB mutex spins before it blocks (`DbInner::lock_state`).
    pub use_adaptive_mutex: bool,
    /// `max_bgerror_resume_count` (0 or less: no automatic recovery).
    pub max_bgerror_resume_count: i32,
    /// `bgerror_resume_retry_interval`, microseconds.
    pub bgerror_resume_retry_interval: u64,
    /// `stats_dump_period_sec` (0: none).
    pub stats_dump_period_sec: u32,
    /// `stats_persist_period_sec` (0: none).
    pub stats_persist_period_sec: u32,
    /// `persist_stats_to_disk`.
    pub persist_stats_to_disk: bool,
    /// `stats_history_buffer_size`.
    pub stats_history_buffer_size: usize,
    /// The clock the stats snapshots read (the system clock when None; RocksDB's `Env` clock).
    pub stats_history_clock: Option<Arc<dyn SystemClock>>,
    /// `dump_malloc_stats`.
    pub dump_malloc_stats: bool,
    /// `db_log_dir` (empty: the LOG is in the database directory).
    pub db_log_dir: PathBuf,
    /// `info_log_level`.
    pub info_log_level: LogLevel,
    /// `max_log_file_size`, bytes (0: the LOG never rolls by size).
    pub max_log_file_size: u64,
    /// `log_file_time_to_roll`, seconds (0: never by time).
    pub log_file_time_to_roll: u64,
    /// `keep_log_file_num`.
    pub keep_log_file_num: usize,
    /// A TTL database (`DBWithTTL`): the TTL in seconds; every write carries its write time.
    pub ttl_db: Option<i32>,
    /// The identities every table this open writes records (set at open, after the DB id).
    pub table_ids: Option<Arc<TableIds>>,
    /// `log_readahead_size` (0: none).
    pub log_readahead_size: usize,
    /// `allow_fallocate`: WALs, compaction outputs and the MANIFEST reserve space ahead of
    /// their writes (see [`DbConfig::wal_preallocation`]).
    pub allow_fallocate: bool,
    /// `manifest_preallocation_size`: the MANIFEST's preallocation block.
    pub manifest_preallocation_size: u64,
}

impl Default for DbConfig {
    fn default() -> Self {
        DbConfig {
            create_if_missing: false,
            create_missing_column_families: false,
            error_if_exists: false,
            paranoid_checks: true,
            max_open_files: -1,
            max_file_opening_threads: 16,
            // `max_background_jobs` 2: one flush, one compaction.
            max_background_flushes: 1,
            max_background_compactions: 1,
            env_threads: (None, None),
            env_bottom_threads: 0,
            env_lower_cpu: (false, false),
            env_lower_io: (false, false),
            fs: None,
            use_fsync: false,
            is_fd_close_on_exec: true,
            use_direct_reads: false,
            allow_mmap_reads: false,
            advise_random_on_open: true,
            use_direct_io_for_flush_and_compaction: false,
            allow_mmap_writes: false,
            writable_file_max_buffer_size: 1024 * 1024,
            bytes_per_sync: 0,
            wal_bytes_per_sync: 0,
            wal_dir: PathBuf::new(),
            wal_recovery_mode: WalRecoveryMode::PointInTime,
            wal_ttl_seconds: 0,
            wal_size_limit_mb: 0,
            recycle_log_file_num: 0,
            wal_compression: CompressionType::None,
            max_total_wal_size: 0,
            manual_wal_flush: false,
            track_and_verify_wals_in_manifest: false,
            enforce_single_del_contracts: true,
            best_efforts_recovery: false,
            prefix_seek_opt_in_only: false,
            strict_bytes_per_sync: false,
            flush_verify_memtable_count: true,
            compaction_verify_record_count: true,
            track_and_verify_wals: false,
            allow_data_in_errors: false,
            daily_offpeak: None,
            max_compaction_trigger_wakeup_seconds: 43_200,
            open_files_async: false,
            skip_stats_update_on_db_open: false,
            verify_sst_unique_id_in_manifest: true,
            file_checksum_crc32c: false,
            use_direct_io_for_compaction_reads: false,
            enforce_write_buffer_manager_during_recovery: true,
            max_manifest_file_size: 1024 * 1024 * 1024,
            max_manifest_space_amp_pct: 500,
            verify_manifest_content_on_close: false,
            reuse_manifest_on_open: false,
            async_wal_precreate: false,
            background_close_inactive_wals: false,
            optimize_manifest_for_recovery: false,
            write_dbid_to_manifest: true,
            write_identity_file: true,
            avoid_flush_during_recovery: false,
            avoid_flush_during_shutdown: false,
            max_write_batch_group_size_bytes: 1 << 20,
            db_paths: Vec::new(),
            atomic_flush: false,
            allow_2pc: false,
            allow_ingest_behind: false,
            two_write_queues: false,
            enable_pipelined_write: false,
            unordered_write: false,
            allow_concurrent_memtable_write: true,
            enable_write_thread_adaptive_yield: true,
            write_thread_max_yield_usec: 100,
            write_thread_slow_yield_usec: 3,
            delayed_write_rate: 16 << 20,
            write_buffer_manager: None,
            rate_limiter: None,
            row_cache: None,
            statistics: None,
            max_subcompactions: 1,
            compaction_readahead_size: 2 << 20,
            avoid_unnecessary_blocking_io: false,
            delete_obsolete_files_period_micros: 6 * 60 * 60 * 1_000_000,
            use_adaptive_mutex: false,
            max_bgerror_resume_count: i32::MAX,
            bgerror_resume_retry_interval: 1_000_000,
            stats_dump_period_sec: 600,
            stats_persist_period_sec: 600,
            persist_stats_to_disk: false,
            stats_history_buffer_size: 1024 * 1024,
            stats_history_clock: None,
            dump_malloc_stats: false,
            db_log_dir: PathBuf::new(),
            info_log_level: LogLevel::Info,
            max_log_file_size: 0,
            log_file_time_to_roll: 0,
            keep_log_file_num: 1000,
            ttl_db: None,
            table_ids: None,
            log_readahead_size: 0,
            allow_fallocate: true,
            manifest_preallocation_size: 4 << 20,
        }
    }
}

impl DbConfig {
    /// Obsolete WALs go to the archive (`WAL_ttl_seconds` or `WAL_size_limit_MB` set).
    pub fn wal_archive_on(&self) -> bool {
        self.wal_ttl_seconds > 0 || self.wal_size_limit_mb > 0
    }
}

impl DbConfig {
    /// The preallocation of a new WAL made while a family of `write_buffer_size` fills its
    /// memtable, as RocksDB's `DBImpl::GetWalPreallocateBlockSize`: blocks of 1.1 x the
    /// write buffer, at most `max_total_wal_size` (when set) and the write buffer manager's
    /// budget (when it has one); space reserved with `allow_fallocate`.
    pub fn wal_preallocation(&self, write_buffer_size: u64) -> crate::fs::Preallocation {
        let mut b = write_buffer_size.saturating_add(write_buffer_size / 10);
        if self.max_total_wal_size > 0 {
            b = b.min(self.max_total_wal_size);
        }
        if let Some(w) = self.write_buffer_manager.as_ref().filter(|w| w.enabled()) {
            b = b.min(w.buffer_size() as u64);
        }
        crate::fs::Preallocation { block_size: b, fallocate: self.allow_fallocate }
    }

    /// The MANIFEST's preallocation: blocks of `manifest_preallocation_size`, space reserved
    /// with `allow_fallocate`.
    pub fn manifest_preallocation(&self) -> crate::fs::Preallocation {
        crate::fs::Preallocation {
            block_size: self.manifest_preallocation_size,
            fallocate: self.allow_fallocate,
        }
    }
}
