//! The engine's configuration: per family (this file) what the compaction pickers and the
//! memtables read, in the engine's own terms; database-wide ([`DbConfig`], `config/db.rs`)
//! what the database reads of RocksDB's `DBOptions`. The facade (`shale::options_engine`)
//! builds the family's from the user's `Options` when a family opens and again at every
//! `set_options`, resolving RocksDB's sanitizing there (`max_compaction_bytes = 0`, the
//! 30-day `ttl` and periodic-compaction defaults, ingestion behind), so the engine sees
//! plain values.
//!
//! Defaults are RocksDB 11.8.1's (`ColumnFamilyOptions`), resolved as its
//! `SanitizeCfOptions` leaves them for a block-based family with no compaction filter.

use std::path::PathBuf;
use std::sync::Arc;

use crate::cache::BlockCache;
use crate::comparator::BytewiseComparator;
use crate::key::InternalKeyComparator;
use crate::memtable::write_buffer_manager::WriteBufferManagerState;
use crate::slice_transform::SliceTransformRef;
use crate::table::builder::{CompressionOpts, TableBuilderOptions};
use crate::table::{AutoReadahead, TableFormat};
use shale_base::compression::CompressionType;

mod db;
mod family;
pub use db::{DbConfig, LogCallback, LogLevel, RealClock, SystemClock, TableIds, UserLogger, UserSink};
pub use family::{BlobSettings, CfCallbacks, MetaPinning, Pin, PrepopulateBlocks};

/// How a family compacts (RocksDB's `CompactionStyle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionStyle {
    Level,
    Universal,
    Fifo,
    /// RocksDB's `kCompactionStyleNone` (its NullCompactionPicker): no compaction is ever
    /// picked, automatic or for a manual range; level sizes and write stalls count as
    /// leveled.
    None,
}

/// Which file a level compaction picks first (RocksDB's `CompactionPri`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionPri {
    ByCompensatedSize,
    OldestLargestSeqFirst,
    OldestSmallestSeqFirst,
    MinOverlappingRatio,
    RoundRobin,
}

/// What a manual compaction does with the bottommost level (RocksDB's
/// `BottommostLevelCompaction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BottommostLevel {
    /// Leave it alone.
    Skip,
    /// Rewrite it only when the family has a compaction filter (the default).
    IfHaveCompactionFilter,
    /// Always rewrite it.
    Force,
    /// Always rewrite it, skipping files this compaction wrote itself.
    ForceOptimized,
}

/// How one write runs (RocksDB's `WriteOptions`), RocksDB's defaults by `Default`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteSettings {
    /// The WAL is fsynced before the write is acknowledged.
    pub sync: bool,
    /// The write skips the WAL.
    pub disable_wal: bool,
    /// Fail with Incomplete instead of waiting when writes are stalled.
    pub no_slowdown: bool,
    /// Records of a family that does not exist (dropped) are skipped, not refused.
    pub ignore_missing_column_families: bool,
    /// Throttled while compaction is behind.
    pub low_pri: bool,
    /// A concurrent insert of the batch keeps one insert hint per memtable for the batch
    /// (`db/write.rs::insert_batch`).
    pub memtable_insert_hint_per_batch: bool,
}

/// Where reads may be served from (RocksDB's `ReadTier`; the facade re-exports it as
/// rust-rocksdb's).
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum ReadTier {
    All = 0,
    BlockCache,
    Persisted,
    Memtable,
}

/// How one read or iterator runs (RocksDB's `ReadOptions`), RocksDB's defaults by
/// `Default`. The facade's `ReadOptions` holds one and hands it to the engine by reference.
#[derive(Clone)]
pub struct ReadSettings {
    pub snapshot: Option<crate::key::SequenceNumber>,
    pub lower_bound: Option<Vec<u8>>,
    pub upper_bound: Option<Vec<u8>>,
    pub fill_cache: bool,
    pub verify_checksums: bool,
    pub prefix_same_as_start: bool,
    pub total_order_seek: bool,
    /// `set_auto_prefix_mode` (a Shale extension: RocksDB's `ReadOptions::auto_prefix_mode`).
    pub auto_prefix_mode: bool,
    /// `set_tailing`: iterators see writes made after their creation (`db/iterator.rs`).
    pub tailing: bool,
    /// `set_auto_refresh_iterator_with_snapshot` (`db/iterator.rs`).
    pub auto_refresh_iterator_with_snapshot: bool,
    /// `set_pin_data`: iterators keep every data block they read (`iter/db_iter.rs`).
    pub pin_data: bool,
    /// `set_max_skippable_internal_keys` (0: no limit; `iter/db_iter.rs`).
    pub max_skippable_internal_keys: u64,
    /// `set_timestamp`: reads see the newest version with a timestamp <= this one
    /// (column families with user-defined timestamps only; docs/timestamps.md).
    pub timestamp: Option<Vec<u8>>,
    /// `set_iter_start_ts`: iterators return every version with a timestamp in
    /// `[iter_start_ts, timestamp]`.
    pub iter_start_ts: Option<Vec<u8>>,
    /// `set_read_tier` (RocksDB's `read_tier`).
    pub read_tier: ReadTier,
    /// `set_deadline`: microseconds since the epoch (0: none).
    pub deadline_us: u64,
    /// `set_io_timeout`: microseconds (0: none).
    pub io_timeout_us: u64,
    /// `set_ignore_range_deletions`: reads do not apply range tombstones.
    pub ignore_range_deletions: bool,
    /// `set_readahead_size` (0: implicit auto readahead; `table/prefetch.rs`).
    pub readahead_size: usize,
    /// `set_auto_readahead_size` (RocksDB's default true): with an upper bound, reads ahead
    /// stop at the data block that holds it.
    pub auto_readahead_size: bool,
    /// `set_background_purge_on_iterator_cleanup` (RocksDB's default false): the files an
    /// iterator was the last to hold are deleted by the thread dropping it (false) or by a
    /// flush-pool thread (true; `db/obsolete.rs::reader_released`).
    pub background_purge_on_iterator_cleanup: bool,
    /// `set_async_io` (RocksDB's default false): iterators read the next readahead window in
    /// the background (`table/prefetch.rs`).
    pub async_io: bool,
}

impl Default for ReadSettings {
    fn default() -> Self {
        ReadSettings {
            snapshot: None,
            lower_bound: None,
            upper_bound: None,
            fill_cache: true,
            verify_checksums: true,
            prefix_same_as_start: false,
            total_order_seek: false,
            auto_prefix_mode: false,
            tailing: false,
            auto_refresh_iterator_with_snapshot: false,
            pin_data: false,
            max_skippable_internal_keys: 0,
            timestamp: None,
            iter_start_ts: None,
            read_tier: ReadTier::All,
            deadline_us: 0,
            io_timeout_us: 0,
            ignore_range_deletions: false,
            readahead_size: 0,
            auto_readahead_size: true,
            background_purge_on_iterator_cleanup: false,
            async_io: false,
        }
    }
}

impl ReadSettings {
    /// What this read asks of the table blocks it loads (`table/reader.rs`).
    pub fn block_reads(&self) -> crate::table::reader::BlockReads {
        crate::table::reader::BlockReads {
            fill_cache: self.fill_cache,
            verify_checksums: self.verify_checksums,
            no_io: self.read_tier == ReadTier::BlockCache,
            deadline_us: self.deadline_us,
            io_timeout_us: self.io_timeout_us,
            readahead_size: self.readahead_size,
            for_compaction: false,
            auto_readahead: crate::table::AutoReadahead::default(),
            async_io: self.async_io,
        }
    }

    /// The upper bound a table iterator's reads ahead stop at (`auto_readahead_size`).
    pub fn readahead_upper(&self) -> Option<Arc<Vec<u8>>> {
        self.upper_bound.as_ref().filter(|_| self.auto_readahead_size).map(|u| Arc::new(u.clone()))
    }
}

/// How an ingestion of external table files runs (RocksDB's `IngestExternalFileOptions`),
/// RocksDB's defaults by `Default`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IngestSettings {
    /// Link (or rename) the files into the database instead of copying them.
    pub move_files: bool,
    /// With snapshots held, give the files a sequence number of their own.
    pub snapshot_consistency: bool,
    /// A file may get a global sequence number (otherwise one would be needed: refused).
    pub allow_global_seqno: bool,
    /// A memtable overlapping the files may be flushed first (otherwise: refused).
    pub allow_blocking_flush: bool,
    /// Into the last level with sequence number 0, below every key there.
    pub ingest_behind: bool,
    /// Also write the assigned sequence number into each file's
    /// "rocksdb.external_sst_file.global_seqno" property, in place (RocksDB's deprecated
    /// `write_global_seqno`, for readers older than RocksDB 5.16).
    pub write_global_seqno: bool,
}

impl Default for IngestSettings {
    fn default() -> Self {
        IngestSettings {
            move_files: false,
            snapshot_consistency: true,
            allow_global_seqno: true,
            allow_blocking_flush: true,
            ingest_behind: false,
            write_global_seqno: false,
        }
    }
}

/// When a size-ratio pick stops adding runs (RocksDB's `CompactionStopStyle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopStyle {
    /// The next run is compared with the last run picked.
    Similar,
    /// The next run is compared with the total picked so far (the default).
    Total,
}

/// RocksDB's `CompactionOptionsUniversal`, with its defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct UniversalSettings {
    pub size_ratio: u32,
    pub min_merge_width: u32,
    pub max_merge_width: u32,
    pub max_size_amplification_percent: u32,
    /// -1: always compress; n: a compaction compresses only while the runs older than its
    /// output hold less than n% of the data.
    pub compression_size_percent: i32,
    pub stop_style: StopStyle,
    /// -1: `level0_file_num_compaction_trigger`; 0: derived from the write buffer size;
    /// n: at most n runs.
    pub max_read_amp: i32,
    /// A compaction whose input files' key ranges do not overlap moves them all to its
    /// output level unchanged (RocksDB's `allow_trivial_move`; never for periodic
    /// compactions or into level 0).
    pub allow_trivial_move: bool,
    /// RocksDB's `reduce_file_locking` (default true, mutable; a field of the universal
    /// options, read for every style): a compaction handed to the BOTTOM pool holds only
    /// its deepest input level's files (level 0: one file) while it waits, and the BOTTOM
    /// thread picks again (`db/scheduler.rs`, `picker::intended_for_bottom`). False: it
    /// holds every input and runs as picked. Manual compactions are not handed over.
    pub reduce_file_locking: bool,
    /// RocksDB's EXPERIMENTAL `incremental`: a size-amplification compaction takes, when it
    /// can, only a window of the second-last run's files (with what they overlap in the last
    /// run and the runs above) of about `max_compaction_bytes / 2`, not every run
    /// (`compaction/universal.rs`); outputs into the last level are then cut at the next
    /// older run's file boundaries as well (`CompactionPlan::grandparents`).
    pub incremental: bool,
}

impl Default for UniversalSettings {
    fn default() -> Self {
        UniversalSettings {
            size_ratio: 1,
            min_merge_width: 2,
            max_merge_width: u32::MAX,
            max_size_amplification_percent: 200,
            compression_size_percent: -1,
            stop_style: StopStyle::Total,
            max_read_amp: -1,
            allow_trivial_move: false,
            reduce_file_locking: true,
            incremental: false,
        }
    }
}

/// BlobDB's garbage collection (`enable_blob_garbage_collection`,
/// `blob_garbage_collection_age_cutoff`, `blob_garbage_collection_force_threshold`).
#[derive(Debug, Clone, PartialEq)]
pub struct BlobGc {
    pub enable: bool,
    pub age_cutoff: f64,
    /// 1.0: never forced.
    pub force_threshold: f64,
}

/// A family's configuration: what the pickers and the compaction's output codec depend on,
/// and what the database (write path, flush, compaction driver, reads) reads of the family.
#[derive(Debug, Clone)]
pub struct CfConfig {
    pub style: CompactionStyle,
    pub pri: CompactionPri,
    pub disable_auto_compactions: bool,
    /// The deepest level a compaction writes: the last level, or the one above it when the
    /// last is kept for ingestion behind.
    pub max_output_level: usize,
    pub level0_file_num_compaction_trigger: i32,
    pub level0_stop_writes_trigger: i32,
    pub write_buffer_size: usize,
    pub max_bytes_for_level_base: u64,
    pub max_bytes_for_level_multiplier: f64,
    pub max_bytes_for_level_multiplier_additional: Vec<i32>,
    pub level_compaction_dynamic_level_bytes: bool,
    /// Resolved: never 0 (RocksDB's 25 × `target_file_size_base`).
    pub max_compaction_bytes: u64,
    /// Resolved `ttl` (0: off), as the level picker's min-overlapping-ratio order reads it.
    pub ttl: u64,
    /// The age limits of age-based compactions, resolved per style (RocksDB's
    /// `SanitizeCfOptions`): `(ttl, periodic_compaction_seconds)`, 0 meaning off.
    pub age_ttl: u64,
    pub age_periodic: u64,
    /// RocksDB's `read_triggered_compaction_threshold` (0.0: off). Whatever its value, point
    /// reads and iterator moves are sampled (1 in 1024, each counting 1024) and a file's
    /// collapsible ones (it held no final value: not found, a deletion, merge operands) are
    /// added to its `FileMetaData::sampled`; while it is above 0, a table above the last
    /// non-empty level (or on level 0) whose count per byte exceeds it is compacted into the
    /// next level, reason ReadTriggered (`compaction::picker::pick_read_triggered`, and
    /// universal's `compaction::universal`); never under FIFO.
    pub read_triggered_compaction_threshold: f64,
    /// RocksDB's `preserve_internal_time_seconds` (0: off; mutable): while set, the database
    /// samples its sequence-number-to-time mapping (`db/seqno_time.rs`), tables written
    /// carry the part of it their sequence range needs (`rocksdb.seqno.time.map`), and a
    /// compaction keeps the sequence numbers of entries written within that many seconds
    /// (it does not zero them at the bottommost level).
    pub preserve_internal_time_seconds: u64,
    /// RocksDB's `preclude_last_level_data_seconds` (0: off; mutable): a compaction into the
    /// last level (level or universal style, at least 3 levels) writes entries written
    /// within that many seconds to the level above it instead (`compaction/proximal.rs`).
    /// It turns the sequence-number-to-time mapping on as `preserve_internal_time_seconds`
    /// does (the larger of the two is its span).
    pub preclude_last_level_data_seconds: u64,
    /// The database's `daily_offpeak_time_utc` (None: no window): in the window, periodic
    /// compaction takes the tables due by the next window's start
    /// (`compaction::offpeak::periodic_limit`).
    pub daily_offpeak: Option<crate::compaction::offpeak::DailyOffpeak>,
    /// RocksDB's `bottommost_file_compaction_delay` (seconds, 0: none): a bottommost file
    /// becomes a "BottommostFiles" compaction's input only this long after it was created
    /// (`compaction::picker::pick_bottommost_files`).
    pub bottommost_file_compaction_delay: u32,
    /// RocksDB's `target_file_size_is_upper_bound`: compaction outputs are cut counting their
    /// estimated tail (`compaction::job::JobInput::target_file_size_is_upper_bound`).
    pub target_file_size_is_upper_bound: bool,
    /// RocksDB's `default_temperature`: the temperature a table file of kUnknown temperature
    /// is counted at when read (`shale_format::io_stats`).
    pub default_temperature: u8,
    pub fifo_max_table_files_size: u64,
    pub fifo_allow_compaction: bool,
    /// RocksDB's `compaction_options_fifo.max_data_files_size` (0: off): when set, FIFO's
    /// size limit, counting table *and* blob file bytes (`compaction::fifo`).
    pub fifo_max_data_files_size: u64,
    /// RocksDB's `compaction_options_fifo.use_kv_ratio_compaction`: intra-L0 compaction merges
    /// tables in tiers toward a target size derived from `fifo_max_data_files_size` and the
    /// observed table/blob byte ratio (`compaction::fifo::pick_ratio_intra_l0`).
    pub fifo_use_kv_ratio_compaction: bool,
    /// RocksDB's `compaction_options_fifo.file_temperature_age_thresholds`: (age in seconds,
    /// temperature byte), ages increasing; a level-0 table whose data is older than an age is
    /// rewritten (or copied) to that temperature, one table at a time.
    pub fifo_temperature_ages: Vec<(u64, u8)>,
    /// RocksDB's `allow_trivial_copy_when_change_temperature`: a temperature change copies the
    /// file's bytes instead of rewriting its entries.
    pub fifo_trivial_copy: bool,
    /// RocksDB's `trivial_copy_buffer_size`: the copy's read buffer, bytes.
    pub fifo_trivial_copy_buffer_size: u64,
    pub universal: UniversalSettings,
    pub compression: CompressionType,
    pub compression_opts: CompressionOpts,
    pub compression_per_level: Vec<CompressionType>,
    pub bottommost_compression: Option<CompressionType>,
    /// `bottommost_compression_opts`, when enabled.
    pub bottommost_compression_opts: Option<CompressionOpts>,
    pub blob_gc: BlobGc,
    /// RocksDB's `uncache_aggressiveness` (0: off): how hard the readers of tables that
    /// leave the database erase their blocks from the block cache.
    pub uncache_aggressiveness: u32,

    // What the database reads of the family besides the pickers.
    pub num_levels: usize,
    pub max_write_buffer_number: i32,
    pub level0_slowdown_writes_trigger: i32,
    /// 0: no limit.
    pub soft_pending_compaction_bytes_limit: u64,
    /// 0: no limit.
    pub hard_pending_compaction_bytes_limit: u64,
    /// The immutable memtables a flush waits for (`min_write_buffer_number_to_merge`,
    /// within 1 and `max_write_buffer_number - 1`).
    pub flush_merge_min: usize,
    /// `max_write_buffer_size_to_maintain` resolved (a negative value is
    /// `max_write_buffer_number × write_buffer_size`, as RocksDB's `SanitizeCfOptions`).
    pub max_write_buffer_size_to_maintain: i64,
    pub target_file_size_base: u64,
    pub target_file_size_multiplier: i32,
    /// The last level is kept for files ingested behind (the database's or the family's
    /// `allow_ingest_behind`).
    pub ingest_behind: bool,
    /// DBWithTTL's time to live in seconds (values carry a write-time suffix); None: not a
    /// TTL database.
    pub ttl_db: Option<i32>,
    pub paranoid_file_checks: bool,
    // ---- helper cfmisc (issue 33) ----
    /// RocksDB's `memtable_op_scan_flush_trigger` (0: off) and
    /// `memtable_avg_op_scan_flush_trigger`: iterators made from then on mark the active
    /// memtable for flush (`iter::db_iter::ScanFlush`).
    pub memtable_op_scan_flush_trigger: u32,
    pub memtable_avg_op_scan_flush_trigger: u32,
    /// RocksDB's `min_tombstones_for_range_conversion` (0: off): iterators made from then
    /// on add a range tombstone over long runs of point tombstones they pass
    /// (`iter::db_iter::RangeConv`).
    pub min_tombstones_for_range_conversion: u32,
    /// RocksDB's `persist_user_defined_timestamps` (immutable, default true). False: the
    /// tables this family writes hold user keys without timestamps (`TableBuilderOptions::
    /// strip_timestamps`), flush writes each key with the minimum timestamp and waits for
    /// `full_history_ts_low` (`db/flush.rs`), tables read back see the minimum timestamp.
    pub persist_user_defined_timestamps: bool,
    /// RocksDB's `verify_output_flags` (`VerifyOutputFlags` bits, 0: none): what a
    /// compaction checks of its output tables before installing them.
    pub verify_output_flags: u32,
    /// RocksDB's `memtable_batch_lookup_optimization`: a multi_get looks a family's sorted
    /// keys up in each skip-list memtable from the path the previous key left.
    pub memtable_batch_lookup_optimization: bool,
    // ---- end of helper cfmisc ----
    /// RocksDB's `force_consistency_checks`: a version's level order is checked.
    pub force_consistency_checks: bool,
    pub report_bg_io_stats: bool,
    pub optimize_filters_for_hits: bool,
    /// Writes to the family are refused (ingestion only).
    pub disallow_memtable_writes: bool,
    pub strict_max_successive_merges: bool,
    pub max_sequential_skip_in_iterations: u64,
    pub experimental_mempurge_threshold: f64,
    /// A flush's codec (RocksDB's `GetCompressionFlush`).
    pub flush_compression: CompressionType,
    pub blob: BlobSettings,
    /// The family's blob value cache (`set_blob_cache`).
    pub blob_cache: Option<Arc<BlockCache>>,
    /// The family's own block cache; None: the database's default one.
    pub block_cache: Option<Arc<BlockCache>>,
    /// `no_block_cache`: tables read without a block cache.
    pub no_block_cache: bool,
    /// `cf_paths`: the family's table directories and their target sizes.
    pub cf_paths: Vec<(PathBuf, u64)>,
    pub table_format: TableFormat,
    pub prefix_extractor: Option<SliceTransformRef>,
    /// What every table of the family is written with: the options of one table less what
    /// each table sets itself (its number, times, level, target size, the family's id and
    /// name).
    pub table: TableBuilderOptions,
    /// Readahead of iterators over the family's tables.
    pub auto_readahead: AutoReadahead,
    pub meta_pinning: MetaPinning,
    /// `index_block_search_type`: how the family's table readers search index blocks.
    pub index_block_search: crate::table::block::IndexBlockSearch,
    /// `read_amp_bytes_per_bit`: the read-amplification bitmap of the data blocks the
    /// family's table readers read (0: none).
    pub read_amp_bytes_per_bit: u32,
    /// RocksDB's `block_protection_bytes_per_key` (0, 1, 2, 4 or 8): table readers opened
    /// from then on (and blocks warmed into the cache as tables are written) keep that many
    /// checksum bytes per entry of each data, index and metaindex block they parse, checked
    /// by every cursor step (`shale_format::table::block`).
    pub block_protection_bytes_per_key: u8,
    pub prepopulate_block_cache: PrepopulateBlocks,
    /// What a new memtable of the family takes.
    pub memtable: MemTableConfig,
    pub callbacks: CfCallbacks,
    /// RocksDB's `default_write_temperature`: the temperature (its `Temperature` byte, 0
    /// kUnknown) recorded for the tables flushes and compactions write.
    pub default_write_temperature: u8,
    /// RocksDB's `last_level_temperature` (sanitized to 0 under FIFO): the temperature of
    /// compaction outputs written to the last level, when set.
    pub last_level_temperature: u8,
    /// RocksDB's `sst_partitioner_factory` (issue 33, helper cftbl): compactions into levels
    /// below 0 cut their outputs where it asks (`compaction/job.rs`), and a file spanning
    /// one of its boundaries is not moved down unchanged (`db/compact.rs::moves_trivially`).
    pub sst_partitioner: Option<crate::compaction::partitioner::SstPartitionerFactory>,
}

impl Default for CfConfig {
    fn default() -> Self {
        const THIRTY_DAYS: u64 = 30 * 24 * 60 * 60;
        CfConfig {
            style: CompactionStyle::Level,
            pri: CompactionPri::MinOverlappingRatio,
            disable_auto_compactions: false,
            max_output_level: 6,
            level0_file_num_compaction_trigger: 4,
            level0_stop_writes_trigger: 36,
            write_buffer_size: 64 << 20,
            max_bytes_for_level_base: 256 << 20,
            max_bytes_for_level_multiplier: 10.0,
            max_bytes_for_level_multiplier_additional: vec![1; 7],
            level_compaction_dynamic_level_bytes: true,
            max_compaction_bytes: 25 * (64 << 20),
            ttl: THIRTY_DAYS,
            age_ttl: THIRTY_DAYS,
            age_periodic: 0,
            read_triggered_compaction_threshold: 0.0,
            preserve_internal_time_seconds: 0,
            preclude_last_level_data_seconds: 0,
            daily_offpeak: None,
            bottommost_file_compaction_delay: 0,
            target_file_size_is_upper_bound: false,
            default_temperature: 0,
            fifo_max_table_files_size: 1 << 30,
            fifo_allow_compaction: false,
            fifo_max_data_files_size: 0,
            fifo_use_kv_ratio_compaction: false,
            fifo_temperature_ages: Vec::new(),
            fifo_trivial_copy: false,
            fifo_trivial_copy_buffer_size: 4096,
            universal: UniversalSettings::default(),
            compression: CompressionType::Lz4,
            compression_opts: CompressionOpts::default(),
            compression_per_level: Vec::new(),
            bottommost_compression: None,
            bottommost_compression_opts: None,
            blob_gc: BlobGc { enable: false, age_cutoff: 0.25, force_threshold: 1.0 },
            uncache_aggressiveness: 0,
            num_levels: 7,
            max_write_buffer_number: 2,
            level0_slowdown_writes_trigger: 20,
            soft_pending_compaction_bytes_limit: 64 << 30,
            hard_pending_compaction_bytes_limit: 256 << 30,
            flush_merge_min: 1,
            max_write_buffer_size_to_maintain: 0,
            target_file_size_base: 64 << 20,
            target_file_size_multiplier: 1,
            ingest_behind: false,
            ttl_db: None,
            paranoid_file_checks: false,
            memtable_op_scan_flush_trigger: 0,
            memtable_avg_op_scan_flush_trigger: 0,
            min_tombstones_for_range_conversion: 0,
            persist_user_defined_timestamps: true,
            verify_output_flags: 0,
            memtable_batch_lookup_optimization: false,
            force_consistency_checks: true,
            report_bg_io_stats: false,
            optimize_filters_for_hits: false,
            disallow_memtable_writes: false,
            strict_max_successive_merges: false,
            max_sequential_skip_in_iterations: 8,
            experimental_mempurge_threshold: 0.0,
            flush_compression: CompressionType::Lz4,
            blob: BlobSettings::default(),
            blob_cache: None,
            block_cache: None,
            no_block_cache: false,
            cf_paths: Vec::new(),
            table_format: TableFormat::default(),
            prefix_extractor: None,
            table: default_table(),
            auto_readahead: AutoReadahead::default(),
            meta_pinning: MetaPinning::default(),
            index_block_search: Default::default(),
            read_amp_bytes_per_bit: 0,
            block_protection_bytes_per_key: 0,
            prepopulate_block_cache: PrepopulateBlocks::default(),
            memtable: MemTableConfig {
                arena_block_size: 1 << 20,
                write_buffer_size: 64 << 20,
                inplace_update_num_locks: 10000,
                ..MemTableConfig::default()
            },
            callbacks: CfCallbacks::default(),
            default_write_temperature: 0,
            last_level_temperature: 0,
            sst_partitioner: None,
        }
    }
}

/// The tables of a family with RocksDB 11.8.1's `BlockBasedTableOptions` (format version 7,
/// XXH3 checksums, `optimize_filters_for_memory`, no filter) and the default codec.
fn default_table() -> TableBuilderOptions {
    let mut t = TableBuilderOptions::new(InternalKeyComparator::new(Arc::new(BytewiseComparator)));
    t.compression = CompressionType::Lz4;
    t.filter_rounding = Some(crate::table::filter::FilterRounding::new());
    t.format_version = 7;
    t.checksum = crate::table::ChecksumType::Xxh3;
    t
}

impl CfConfig {
    /// The target size of a table written to `level` (`target_file_size_base` times the
    /// multiplier per level below 1). 0 is kept, as RocksDB's `MaxFileSizeForLevel` keeps it:
    /// a compaction output then ends after each key.
    pub fn target_file_size(&self, level: usize) -> u64 {
        let mut size = self.target_file_size_base;
        for _ in 1..level.max(1) {
            size = size.saturating_mul(self.target_file_size_multiplier as u64);
        }
        size
    }

    /// Level sizes follow the data (`level_compaction_dynamic_level_bytes`, leveled
    /// compaction only).
    pub fn dynamic_level_bytes_in_force(&self) -> bool {
        self.level_compaction_dynamic_level_bytes && self.style == CompactionStyle::Level
    }

    /// The family runs a compaction filter: a TTL database's, or the user's filter or
    /// factory.
    pub fn has_compaction_filter(&self) -> bool {
        self.ttl_db.is_some_and(|t| t > 0)
            || self.callbacks.compaction_filter.is_some()
            || self.callbacks.compaction_filter_factory.is_some()
    }

    /// RocksDB's `MinAndMaxPreserveSeconds` for one family: the span its
    /// sequence-number-to-time mapping covers, the larger of `preserve_internal_time_seconds`
    /// and `preclude_last_level_data_seconds` (0: the family needs no mapping).
    pub fn seqno_time_seconds(&self) -> u64 {
        self.preserve_internal_time_seconds.max(self.preclude_last_level_data_seconds)
    }

    /// RocksDB's `Compaction::GetOutputTemperature` (no override): a compaction into the
    /// last of `num_levels` levels writes `last_level_temperature` when it is set, any
    /// other table `default_write_temperature`.
    pub fn output_temperature(&self, output_level: usize, num_levels: usize) -> u8 {
        if output_level + 1 == num_levels && self.last_level_temperature != 0 {
            self.last_level_temperature
        } else {
            self.default_write_temperature
        }
    }

    /// The static size target of `level` (level >= 1): the base times the multiplier and
    /// RocksDB's `MaxBytesMultiplerAdditional(l)` (1 past the list's end) per level below 1.
    pub fn max_bytes_for_level(&self, level: usize) -> u64 {
        let mut size = self.max_bytes_for_level_base.max(1) as f64;
        for l in 1..level.max(1) {
            let extra = self.max_bytes_for_level_multiplier_additional.get(l).copied().unwrap_or(1);
            size *= self.max_bytes_for_level_multiplier * f64::from(extra);
        }
        size as u64
    }
}

/// What a new memtable takes from its family (RocksDB's `ImmutableMemTableOptions` and the
/// memtable representation).
#[derive(Clone, Default)]
pub struct MemTableConfig {
    /// The sanitized `arena_block_size` of point entries.
    pub arena_block_size: usize,
    /// The database's write buffer manager the memtable's arenas are charged to.
    pub write_buffer_manager: Option<Arc<WriteBufferManagerState>>,
    pub max_successive_merges: usize,
    /// `memtable_huge_page_size` (0: none).
    pub huge_page_size: usize,
    /// Sizes the prefix Bloom filter (`write_buffer_size × memtable_prefix_bloom_size_ratio`).
    pub write_buffer_size: usize,
    pub prefix_bloom_ratio: f64,
    pub whole_key_filtering: bool,
    pub prefix_extractor: Option<SliceTransformRef>,
    /// A hash memtable representation (hash skip list or hash linked list) was chosen; it
    /// buckets by the prefix extractor, and is the skip list without one.
    pub hash_rep: bool,
    /// The vector memtable (`MemtableFactory::Vector`, RocksDB's VectorRepFactory): point
    /// entries appended to a vector that reads sort, with room for this many entries at
    /// first (the factory's `count`). None: the skip list (or a hash representation).
    pub vector_rep: Option<usize>,
    /// `inplace_update_support`: Puts overwrite the key's newest value in place when it
    /// is of the same type and at least as long (see `MemTable::put`).
    pub inplace_update_support: bool,
    /// `inplace_update_num_locks`: the stripes of in-place update locks.
    pub inplace_update_num_locks: usize,
    /// The database's statistics (`rocksdb.number.keys.updated`), if enabled.
    pub statistics: Option<std::sync::Arc<shale_format::statistics::Statistics>>,
    /// RocksDB's `memtable_max_range_deletions` (0: no limit): a memtable holding this many
    /// range deletions is full, whatever its size.
    pub max_range_deletions: u64,
    /// RocksDB's `memtable_protection_bytes_per_key` (0, 1, 2, 4 or 8): each point entry
    /// carries that many bytes of a checksum of its key, sequence, type and value, verified
    /// when a read or a flush comes to it (see `MemTable`'s per-key protection).
    pub protection_bytes_per_key: u8,
    /// RocksDB's `paranoid_memory_checks`: reads check the order of the entries they land on
    /// and step over, and answer Corruption when it is broken.
    pub paranoid_memory_checks: bool,
    /// RocksDB's `memtable_verify_per_key_checksum_on_seek` (helper cfblob, issue 33): with
    /// `protection_bytes_per_key` above 0, a skip-list search (point lookups, iterator
    /// seeks) checks the protection bytes of every entry it compares against on its way,
    /// not only of the entry it lands on.
    pub verify_checksum_on_seek: bool,
    /// The database's `allow_data_in_errors` (RocksDB's memtable options carry it): the
    /// memtable's Corruption messages name the entry's key and sequence when true.
    pub allow_data_in_errors: bool,
    /// RocksDB's `memtable_insert_with_hint_prefix_extractor` (helper cfmisc, issue 33): the
    /// write leader's skip-list inserts start from a splice kept per prefix.
    pub insert_with_hint_prefix_extractor: Option<SliceTransformRef>,
}

impl std::fmt::Debug for MemTableConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemTableConfig")
            .field("arena_block_size", &self.arena_block_size)
            .field("write_buffer_manager", &self.write_buffer_manager.is_some())
            .field("max_successive_merges", &self.max_successive_merges)
            .field("huge_page_size", &self.huge_page_size)
            .field("write_buffer_size", &self.write_buffer_size)
            .field("prefix_bloom_ratio", &self.prefix_bloom_ratio)
            .field("whole_key_filtering", &self.whole_key_filtering)
            .field("prefix_extractor", &self.prefix_extractor)
            .field("hash_rep", &self.hash_rep)
            .field("vector_rep", &self.vector_rep)
            .field("inplace_update_support", &self.inplace_update_support)
            .field("inplace_update_num_locks", &self.inplace_update_num_locks)
            .field("statistics", &self.statistics.is_some())
            .field("max_range_deletions", &self.max_range_deletions)
            .field("protection_bytes_per_key", &self.protection_bytes_per_key)
            .field("paranoid_memory_checks", &self.paranoid_memory_checks)
            .field("verify_checksum_on_seek", &self.verify_checksum_on_seek)
            .field("allow_data_in_errors", &self.allow_data_in_errors)
            .finish()
    }
}
