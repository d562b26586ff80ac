//! The rest of rust-rocksdb's option types and setters (`db_options.rs` there), over
//! `options.rs`. Every setter either acts, is accepted because it changes nothing Shale
//! returns or writes (each says why), or is recorded so that `open`/`create_cf` refuse it
//! with NotSupported naming the option (and the issue that will build it).

use std::path::{Path, PathBuf};

use crate::cf_descriptor::ColumnFamilyDescriptor;
use crate::compaction_filter::CompactionFilterFn;
use crate::compaction_filter_factory::CompactionFilterFactory;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::ffi_util::CStrLike;
use crate::merge_operator::MergeFn;
use crate::options::{BlockBasedOptions, Cache, DBCompressionType, Options, ReadOptions, WriteOptions};
use crate::slice_transform::SliceTransform;
use crate::statistics::{Histogram, HistogramData, StatsLevel, Ticker};

/// Info-log verbosity, as rust-rocksdb's `LogLevel` (the engine's type).
pub use shale_engine::config::LogLevel;

/// Where reads may be served from, as rust-rocksdb's `ReadTier` (the engine's type).
pub use shale_engine::config::ReadTier;

/// Which file a level compaction picks first, as rust-rocksdb's `CompactionPri`.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum CompactionPri {
    ByCompensatedSize = 0,
    OldestLargestSeqFirst = 1,
    OldestSmallestSeqFirst = 2,
    MinOverlappingRatio = 3,
    RoundRobin = 4,
}

/// The index format of block-based tables, as rust-rocksdb's `BlockBasedIndexType`.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum BlockBasedIndexType {
    BinarySearch,
    HashSearch,
    TwoLevelIndexSearch,
}

/// The index inside data blocks, as rust-rocksdb's `DataBlockIndexType`.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum DataBlockIndexType {
    BinarySearch = 0,
    BinaryAndHash = 1,
}

/// Which index and filter blocks stay pinned in the cache, as rust-rocksdb's
/// `BlockBasedTablePinningTier`.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum BlockBasedTablePinningTier {
    Fallback,
    None,
    FlushAndSimilar,
    All,
}

/// The memtable representation, as rust-rocksdb's `MemtableFactory` (plus `SkipList`, the
/// one Shale builds, which is RocksDB's default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemtableFactory {
    Vector,
    HashSkipList { bucket_count: usize, height: i32, branching_factor: i32 },
    HashLinkList { bucket_count: usize },
    SkipList,
}

/// Block checksum algorithm, as rust-rocksdb's `ChecksumType`.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum ChecksumType {
    NoChecksum = 0,
    CRC32c = 1,
    XXHash = 2,
    XXHash64 = 3,
    XXH3 = 4,
}

/// Key encoding of plain tables, as rust-rocksdb's `KeyEncodingType`.
#[derive(Debug, Copy, Clone, PartialEq, Eq, Default)]
pub enum KeyEncodingType {
    #[default]
    Plain = 0,
    Prefix = 1,
}

/// Plain-table options, as rust-rocksdb's `PlainTableFactoryOptions` (`set_plain_table_factory`).
pub struct PlainTableFactoryOptions {
    pub user_key_length: u32,
    pub bloom_bits_per_key: i32,
    pub hash_table_ratio: f64,
    pub index_sparseness: usize,
    pub huge_page_tlb_size: usize,
    pub encoding_type: KeyEncodingType,
    pub full_scan_mode: bool,
    pub store_index_in_file: bool,
}

/// Compaction style, as rust-rocksdb's `DBCompactionStyle`.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum DBCompactionStyle {
    Level,
    Universal,
    Fifo,
}

/// When universal compaction stops adding files, as rust-rocksdb's.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum UniversalCompactionStopStyle {
    Similar,
    Total,
}

/// How a manual compaction treats the bottommost level, as rust-rocksdb's.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum BottommostLevelCompaction {
    Skip = 0,
    IfHaveCompactionFilter,
    Force,
    ForceOptimized,
}

/// Cuckoo-table options, as rust-rocksdb's `CuckooTableOptions` (`set_cuckoo_table_factory`).
#[derive(Default)]
pub struct CuckooTableOptions {
    hash_ratio: Option<f64>,
    max_search_depth: Option<u32>,
    cuckoo_block_size: Option<u32>,
    identity_as_first_hash: Option<bool>,
    use_module_hash: Option<bool>,
}

impl CuckooTableOptions {
    pub fn set_hash_ratio(&mut self, ratio: f64) {
        self.hash_ratio = Some(ratio);
    }

    pub fn set_max_search_depth(&mut self, depth: u32) {
        self.max_search_depth = Some(depth);
    }

    pub fn set_cuckoo_block_size(&mut self, size: u32) {
        self.cuckoo_block_size = Some(size);
    }

    pub fn set_identity_as_first_hash(&mut self, flag: bool) {
        self.identity_as_first_hash = Some(flag);
    }

    pub fn set_use_module_hash(&mut self, flag: bool) {
        self.use_module_hash = Some(flag);
    }
}

/// FIFO compaction options, as rust-rocksdb's `FifoCompactOptions` (RocksDB's
/// `compaction_options_fifo`, `compaction/fifo.rs`).
pub struct FifoCompactOptions {
    max_table_files_size: u64,
    allow_compaction: bool,
}

impl Default for FifoCompactOptions {
    fn default() -> Self {
        FifoCompactOptions { max_table_files_size: 1 << 30, allow_compaction: false }
    }
}

impl FifoCompactOptions {
    /// Once the tables of a family hold more than `nbytes`, the oldest are deleted.
    pub fn set_max_table_files_size(&mut self, nbytes: u64) {
        self.max_table_files_size = nbytes;
    }

    /// RocksDB's `allow_compaction` (default false): small level-0 tables are merged to keep
    /// their number down. Not in rust-rocksdb 0.25's API (a Shale addition; RocksDB's C++
    /// option of the same name).
    pub fn set_allow_compaction(&mut self, allow: bool) {
        self.allow_compaction = allow;
    }
}

/// Universal compaction options, as rust-rocksdb's (`compaction/universal.rs`).
pub struct UniversalCompactOptions {
    size_ratio: i32,
    min_merge_width: i32,
    max_merge_width: i32,
    max_size_amplification_percent: i32,
    compression_size_percent: i32,
    stop_style: UniversalCompactionStopStyle,
}

impl Default for UniversalCompactOptions {
    fn default() -> Self {
        UniversalCompactOptions {
            size_ratio: 1,
            min_merge_width: 2,
            max_merge_width: u32::MAX as i32,
            max_size_amplification_percent: 200,
            compression_size_percent: -1,
            stop_style: UniversalCompactionStopStyle::Total,
        }
    }
}

impl UniversalCompactOptions {
    pub fn set_size_ratio(&mut self, ratio: i32) {
        self.size_ratio = ratio;
    }

    pub fn set_min_merge_width(&mut self, num: i32) {
        self.min_merge_width = num;
    }

    pub fn set_max_merge_width(&mut self, num: i32) {
        self.max_merge_width = num;
    }

    pub fn set_max_size_amplification_percent(&mut self, v: i32) {
        self.max_size_amplification_percent = v;
    }

    pub fn set_compression_size_percent(&mut self, v: i32) {
        self.compression_size_percent = v;
    }

    pub fn set_stop_style(&mut self, style: UniversalCompactionStopStyle) {
        self.stop_style = style;
    }
}

/// Options of a manual compaction, as rust-rocksdb's `CompactOptions`.
pub struct CompactOptions {
    exclusive_manual_compaction: bool,
    bottommost_level_compaction: BottommostLevelCompaction,
    change_level: bool,
    target_level: i32,
    full_history_ts_low: Option<Vec<u8>>,
}

impl Default for CompactOptions {
    fn default() -> Self {
        CompactOptions {
            exclusive_manual_compaction: true,
            bottommost_level_compaction: BottommostLevelCompaction::IfHaveCompactionFilter,
            change_level: false,
            target_level: -1,
            full_history_ts_low: None,
        }
    }
}

impl CompactOptions {
    /// True (the default), as RocksDB 11.8.1's `exclusive_manual_compaction`: each step of
    /// the manual compaction first waits for every running compaction of the database (LOW
    /// and BOTTOM pools) to end, and while it is registered no automatic compaction of any
    /// column family starts. False: automatic compactions (of this family too, on the files
    /// it does not hold) are scheduled and run beside it; a step whose files or output range
    /// another compaction holds waits for it. See `db/compact.rs` of shale-engine.
    pub fn set_exclusive_manual_compaction(&mut self, v: bool) {
        self.exclusive_manual_compaction = v;
    }

    /// Whether the bottommost level the range reaches is compacted into itself after the
    /// range has been moved down, over the tables there that this compaction did not write,
    /// as RocksDB 11.8.1 does: `Skip` never; `IfHaveCompactionFilter`, the default, when the
    /// family has a compaction filter; `Force` and `ForceOptimized` always (RocksDB 11 runs
    /// the two alike). See `db/compact.rs`.
    pub fn set_bottommost_level_compaction(&mut self, lvl: BottommostLevelCompaction) {
        self.bottommost_level_compaction = lvl;
    }

    /// After the compaction, moves every table of the level it ended on to
    /// `set_target_level`'s level by a MANIFEST edit alone (RocksDB 11.8.1's `ReFitLevel`,
    /// see `db/compact.rs`); refused as RocksDB refuses it (levels in between not empty,
    /// down from level 0, several tables up to level 0, FIFO compaction).
    pub fn set_change_level(&mut self, v: bool) {
        self.change_level = v;
    }

    /// The level `set_change_level` moves the tables to; negative (the default -1): the
    /// smallest empty level above them whose target size holds them. Without
    /// `set_change_level` it has no effect, as in RocksDB.
    pub fn set_target_level(&mut self, lvl: i32) {
        self.target_level = lvl;
    }

    /// Raises the family's `full_history_ts_low` to `ts` before compacting (user-defined
    /// timestamps; `DB::increase_full_history_ts_low`).
    pub fn set_full_history_ts_low<S: Into<Vec<u8>>>(&mut self, ts: S) {
        self.full_history_ts_low = Some(ts.into());
    }

    pub(crate) fn full_history_ts_low(&self) -> Option<&[u8]> {
        self.full_history_ts_low.as_deref()
    }

    /// The level the tables are moved to after the compaction (negative: the smallest
    /// fitting one), when `set_change_level` asked for a move.
    pub(crate) fn change_level(&self) -> Option<i32> {
        self.change_level.then_some(self.target_level)
    }

    pub(crate) fn exclusive_manual_compaction(&self) -> bool {
        self.exclusive_manual_compaction
    }

    pub(crate) fn bottommost_level_compaction(&self) -> BottommostLevelCompaction {
        self.bottommost_level_compaction
    }
}

/// Options of `wait_for_compact`, as rust-rocksdb's `WaitForCompactOptions`.
#[derive(Default)]
pub struct WaitForCompactOptions {
    abort_on_pause: bool,
    flush: bool,
    timeout: u64,
}

impl WaitForCompactOptions {
    pub(crate) fn flush(&self) -> bool {
        self.flush
    }

    /// Microseconds to wait at most (0: no limit).
    pub(crate) fn timeout_micros(&self) -> u64 {
        self.timeout
    }

    /// RocksDB's WaitForCompact returns Aborted at once when background work is paused
    /// (PauseBackgroundWork); nothing in this API pauses it, in RocksDB through
    /// rust-rocksdb as in Shale, so the wait is the same either way.
    pub fn set_abort_on_pause(&mut self, v: bool) {
        self.abort_on_pause = v;
    }

    pub fn set_flush(&mut self, v: bool) {
        self.flush = v;
    }

    pub fn set_timeout(&mut self, microseconds: u64) {
        self.timeout = microseconds;
    }
}

/// Options of SST ingestion, as rust-rocksdb's (`db/ingest.rs` reads them).
#[derive(Default)]
pub struct IngestExternalFileOptions {
    flags: Vec<(&'static str, bool)>,
}

impl IngestExternalFileOptions {
    pub fn set_move_files(&mut self, v: bool) {
        self.flags.push(("move_files", v));
    }

    pub fn set_snapshot_consistency(&mut self, v: bool) {
        self.flags.push(("snapshot_consistency", v));
    }

    pub fn set_allow_global_seqno(&mut self, v: bool) {
        self.flags.push(("allow_global_seqno", v));
    }

    pub fn set_allow_blocking_flush(&mut self, v: bool) {
        self.flags.push(("allow_blocking_flush", v));
    }

    /// Ingests the files into the family's last level with sequence number 0, below every
    /// key already there (RocksDB's `ingest_behind`). Needs `allow_ingest_behind` (or
    /// `cf_allow_ingest_behind`), files that do not overlap each other nor the last level,
    /// and no file with sequence number 0 above the last level; each failing is
    /// InvalidArgument (overlapping files, or a family with timestamps: NotSupported), with
    /// RocksDB 11.8.1's messages.
    pub fn set_ingest_behind(&mut self, v: bool) {
        self.flags.push(("ingest_behind", v));
    }

    /// Writes the sequence number ingestion assigns into each file's
    /// "rocksdb.external_sst_file.global_seqno" property in place, and syncs the file
    /// (RocksDB's deprecated `IngestExternalFileOptions::write_global_seqno`, false by
    /// default; `ldb ingest_extern_sst` sets it). A Shale extension: rust-rocksdb 0.25 has
    /// no setter for it. With a linked file (`move_files`) the source is written too, as in
    /// RocksDB; a file system without random writes leaves the file as it is.
    pub fn set_write_global_seqno(&mut self, v: bool) {
        self.flags.push(("write_global_seqno", v));
    }

    /// The flag's last setting, or RocksDB's default.
    pub(crate) fn flag(&self, name: &str) -> bool {
        let default = matches!(name, "snapshot_consistency" | "allow_global_seqno" | "allow_blocking_flush");
        self.flags.iter().rev().find(|(n, _)| *n == name).map_or(default, |(_, v)| *v)
    }

    /// The engine's settings of these options.
    pub(crate) fn engine(&self) -> shale_engine::config::IngestSettings {
        shale_engine::config::IngestSettings {
            move_files: self.flag("move_files"),
            snapshot_consistency: self.flag("snapshot_consistency"),
            allow_global_seqno: self.flag("allow_global_seqno"),
            allow_blocking_flush: self.flag("allow_blocking_flush"),
            ingest_behind: self.flag("ingest_behind"),
            write_global_seqno: self.flag("write_global_seqno"),
        }
    }
}

/// A data path with a target size, as rust-rocksdb's `DBPath` (`set_db_paths`, `set_cf_paths`).
pub struct DBPath {
    pub(crate) path: PathBuf,
    pub(crate) target_size: u64,
}

impl DBPath {
    pub fn new<P: AsRef<Path>>(path: P, target_size: u64) -> Result<Self> {
        Ok(DBPath { path: path.as_ref().to_path_buf(), target_size })
    }
}

/// A custom info logger, as rust-rocksdb's `InfoLogger`: given to `set_info_logger`, it gets
/// the database's info-log lines instead of a LOG file (`db/info_log.rs`), those at its
/// level and above.
#[derive(Clone)]
pub struct InfoLogger {
    pub(crate) inner: Option<std::sync::Arc<UserLogger>>,
}

/// A user's logger and its sink are the engine's (`shale_engine::config::UserLogger`).
pub(crate) use shale_engine::config::{UserLogger, UserSink};

impl InfoLogger {
    /// RocksDB's stderr logger: each line printed to stderr after `prefix`.
    pub fn new_stderr_logger<S: AsRef<str>>(log_level: LogLevel, prefix: Option<S>) -> Self {
        let sink = UserSink::Stderr(prefix.map(|p| p.as_ref().to_string()));
        InfoLogger { inner: Some(std::sync::Arc::new(UserLogger { level: log_level, sink })) }
    }

    /// RocksDB's C-API callback logger: `cb` gets each line's level and text.
    pub fn new_callback_logger<F: Fn(LogLevel, &str) + Sync + Send + 'static>(
        level: LogLevel,
        cb: F,
    ) -> Self {
        let sink = UserSink::Callback(Box::new(cb));
        InfoLogger { inner: Some(std::sync::Arc::new(UserLogger { level, sink })) }
    }
}

/// Options of an LRU cache, as rust-rocksdb's `LruCacheOptions` (RocksDB's
/// `LRUCacheOptions`): capacity, shard bits (-1: RocksDB's default), and, as Shale
/// extensions of rust-rocksdb's setters, `strict_capacity_limit`, `high_pri_pool_ratio` and
/// `low_pri_pool_ratio`.
#[derive(Default)]
pub struct LruCacheOptions {
    pub(crate) opts: crate::cache::LruOptions,
}

impl LruCacheOptions {
    pub fn set_capacity(&mut self, cap: usize) {
        self.opts.capacity = cap;
    }

    /// 2^val shards, each with its own lock and an equal share of the capacity.
    pub fn set_num_shard_bits(&mut self, val: i32) {
        self.opts.num_shard_bits = val;
    }

    /// Inserts that do not fit because the entries left are in use fail (RocksDB's
    /// `strict_capacity_limit`, default false).
    pub fn set_strict_capacity_limit(&mut self, strict: bool) {
        self.opts.strict_capacity_limit = strict;
    }

    /// The share of the capacity reserved for high-priority entries (index and filter blocks
    /// with `cache_index_and_filter_blocks_with_high_priority`) and entries that were hit;
    /// RocksDB's default 0.5.
    pub fn set_high_pri_pool_ratio(&mut self, ratio: f64) {
        self.opts.high_pri_pool_ratio = ratio;
    }

    /// The share of the capacity reserved for low-priority entries (data blocks, rows) above
    /// the bottom pool (blobs of a blob cache, blocks a compaction warms); RocksDB's default
    /// 0 puts low and bottom entries in one pool. With `high_pri_pool_ratio` it may sum to 1
    /// at most; a cache is made of the ratios clamped to that (RocksDB makes none).
    pub fn set_low_pri_pool_ratio(&mut self, ratio: f64) {
        self.opts.low_pri_pool_ratio = ratio;
    }
}

impl Cache {
    /// An LRU cache of the given options (`cache/lru.rs`).
    pub fn new_lru_cache_opts(opts: &LruCacheOptions) -> Cache {
        Cache(std::sync::Arc::new(crate::cache::BlockCache::new_lru(&opts.opts)))
    }

    /// RocksDB's HyperClockCache: CLOCK eviction, lookups under a shared lock
    /// (`cache/clock.rs`). `estimated_entry_charge` 0 makes RocksDB's AutoHyperClockCache,
    /// whose table grows with its entries; above 0 a FixedHyperClockCache, whose shards' slot
    /// tables are sized from their capacity and the estimate (RocksDB's `CalcHashBits`) and
    /// hold at most 84% of their slots in entries: a large estimate bounds the number of
    /// entries below what the capacity would hold of small ones.
    pub fn new_hyper_clock_cache(capacity: usize, estimated_entry_charge: usize) -> Cache {
        Self::new_hyper_clock_cache_with_shard_bits(capacity, estimated_entry_charge, -1)
    }

    /// `new_hyper_clock_cache` with RocksDB's `HyperClockCacheOptions::num_shard_bits` (negative:
    /// RocksDB's default, shards of at least 32 MiB), as db_bench's `--cache_numshardbits`.
    pub fn new_hyper_clock_cache_with_shard_bits(
        capacity: usize,
        estimated_entry_charge: usize,
        num_shard_bits: i32,
    ) -> Cache {
        let opts = crate::cache::HyperClockOptions {
            capacity,
            estimated_entry_charge,
            num_shard_bits,
            strict_capacity_limit: false,
        };
        Cache(std::sync::Arc::new(crate::cache::BlockCache::new_hyper_clock_opts(&opts)))
    }

    /// Changes the capacity of this cache in place: every database and clone sharing it
    /// sees the new capacity, and shrinking evicts blocks until the usage fits.
    pub fn set_capacity(&mut self, capacity: usize) {
        self.0.set_capacity(capacity);
    }
}

/// A memory budget shared by memtables, as rust-rocksdb's `WriteBufferManager`: one
/// manager given to several databases (`Options::set_write_buffer_manager`) bounds the
/// memtables of all of them (`memtable/write_buffer_manager.rs`).
#[derive(Clone)]
pub struct WriteBufferManager {
    pub(crate) state: std::sync::Arc<crate::memtable::write_buffer_manager::WriteBufferManagerState>,
}

impl WriteBufferManager {
    pub fn new_write_buffer_manager(buffer_size: usize, allow_stall: bool) -> Self {
        WriteBufferManager {
            state: std::sync::Arc::new(crate::memtable::write_buffer_manager::WriteBufferManagerState::new(
                buffer_size,
                allow_stall,
            )),
        }
    }

    /// A manager whose memtables are also charged to `cache` in 256 KiB reservations (role
    /// write-buffer), so block-cache usage covers them and blocks make room for them
    /// (`memtable/write_buffer_manager.rs`).
    pub fn new_write_buffer_manager_with_cache(buffer_size: usize, allow_stall: bool, cache: Cache) -> Self {
        WriteBufferManager {
            state: std::sync::Arc::new(
                crate::memtable::write_buffer_manager::WriteBufferManagerState::with_cache(
                    buffer_size,
                    allow_stall,
                    cache.0,
                ),
            ),
        }
    }

    /// Bytes of memtable memory charged by every database using this manager.
    pub fn get_usage(&self) -> usize {
        self.state.memory_usage()
    }

    pub fn get_buffer_size(&self) -> usize {
        self.state.buffer_size()
    }

    pub fn set_buffer_size(&self, new_size: usize) {
        self.state.set_buffer_size(new_size)
    }

    pub fn enabled(&self) -> bool {
        self.state.enabled()
    }

    pub fn set_allow_stall(&self, allow_stall: bool) {
        self.state.set_allow_stall(allow_stall)
    }
}

impl BlockBasedOptions {
    /// The size at which a partitioned index's (and partitioned filter's) partitions are
    /// cut (RocksDB's default 4096; `table/partitioned_builder.rs`).
    pub fn set_metadata_block_size(&mut self, size: usize) {
        self.metadata_block_size = size;
    }

    /// Partitioned filters (decoupled from the index partitions, RocksDB 11's default),
    /// with a partitioned index only: without one RocksDB turns it off, and so does Shale.
    pub fn set_partition_filters(&mut self, size: bool) {
        self.partition_filters = size;
    }

    /// RocksDB's `NewRibbonFilterPolicy(bits, 0)`: Standard128Ribbon filters with the FP
    /// rate of a Bloom filter of `bloom_equivalent_bits_per_key` (about 30% smaller), Bloom
    /// filters for flushes (`table/filter/ribbon_builder.rs`).
    pub fn set_ribbon_filter(&mut self, bloom_equivalent_bits_per_key: f64) {
        self.set_hybrid_ribbon_filter(bloom_equivalent_bits_per_key, 0);
    }

    /// RocksDB's `NewRibbonFilterPolicy(bits, bloom_before_level)`: Bloom filters for tables
    /// written to levels below `bloom_before_level` (a flush counts as level -1; -1 = always
    /// Ribbon; `i32::MAX` = always Bloom), Ribbon for the others. FIFO compaction and
    /// `SstFileWriter` count as the last level.
    pub fn set_hybrid_ribbon_filter(&mut self, bloom_equivalent_bits_per_key: f64, bloom_before_level: i32) {
        self.set_bloom_filter(bloom_equivalent_bits_per_key, false);
        self.ribbon_bloom_before_level = Some(bloom_before_level);
    }

    /// Index and filter blocks kept in the block cache go to its high-priority pool.
    pub fn set_cache_index_and_filter_blocks_with_high_priority(&mut self, v: bool) {
        self.cache_index_and_filter_blocks_with_high_priority = v;
    }

    /// Binary search (the default), a partitioned index (`TwoLevelIndexSearch`,
    /// `table/partitioned_builder.rs`) or RocksDB's hash index (`HashSearch`,
    /// `table/hash_index.rs`): the binary index with restart interval 1 plus the table's
    /// key prefixes, so a prefix-mode seek or a point lookup whose prefix a table lacks
    /// reads no data block of it. It needs the family's prefix extractor (`open` fails
    /// with RocksDB's InvalidArgument without one).
    pub fn set_index_type(&mut self, index_type: BlockBasedIndexType) {
        self.partitioned_index = index_type == BlockBasedIndexType::TwoLevelIndexSearch;
        self.hash_index = index_type == BlockBasedIndexType::HashSearch;
        self.first_key_index = false;
    }

    /// `index_block_restart_interval` as RocksDB's table factory sanitizes it: at least
    /// 1, and 1 with a hash index.
    pub(crate) fn sanitized_index_block_restart_interval(&self) -> usize {
        if self.hash_index {
            1
        } else {
            self.index_block_restart_interval.max(1)
        }
    }

    /// With `cache_index_and_filter_blocks`, level-0 tables from flushes (no larger than
    /// 1.5 x write_buffer_size) keep their index and filter pinned in the cache.
    pub fn set_pin_l0_filter_and_index_blocks_in_cache(&mut self, v: bool) {
        self.pin_l0_filter_and_index_blocks_in_cache = v;
    }

    /// With `cache_index_and_filter_blocks`, the top level of a partitioned index or filter
    /// stays pinned in the cache (RocksDB's default true); unpartitioned tables ignore it.
    pub fn set_pin_top_level_index_and_filter(&mut self, v: bool) {
        self.pin_top_level_index_and_filter = v;
    }

    /// `BinaryAndHash`: data blocks also carry RocksDB's hash index, which point lookups
    /// probe instead of binary-searching the restart points (`table/data_block_hash.rs`).
    pub fn set_data_block_index_type(&mut self, index_type: DataBlockIndexType) {
        self.data_block_index_type = index_type;
    }

    /// The hash index's keys per bucket (RocksDB's `data_block_hash_table_util_ratio`;
    /// used with `DataBlockIndexType::BinaryAndHash`).
    pub fn set_data_block_hash_ratio(&mut self, ratio: f64) {
        self.data_block_hash_ratio = ratio;
    }

    /// The checksum of every block of new tables (`table/format.rs` computes all five;
    /// XXH3 by default, as RocksDB's).
    pub fn set_checksum_type(&mut self, checksum_type: ChecksumType) {
        use crate::table::format::ChecksumType as T;
        self.checksum = match checksum_type {
            ChecksumType::NoChecksum => T::None,
            ChecksumType::CRC32c => T::Crc32c,
            ChecksumType::XXHash => T::XxHash,
            ChecksumType::XXHash64 => T::XxHash64,
            ChecksumType::XXH3 => T::Xxh3,
        };
    }

    /// RocksDB's `optimize_filters_for_memory` (default true): Bloom filters (format_version
    /// 5+) are sized to what the allocator hands out, keeping the false-positive rate right
    /// on average over the policy's filters, and take their probe count from the density
    /// reached (`table/filter/rounding.rs`). Readers of any version read either kind.
    pub fn set_optimize_filters_for_memory(&mut self, v: bool) {
        self.optimize_filters_for_memory = v;
    }

    /// RocksDB's `MetadataCacheOptions::top_level_index_pinning`: the top level of a
    /// partitioned index or filter (Fallback: `pin_top_level_index_and_filter`).
    pub fn set_top_level_index_pinning_tier(&mut self, tier: BlockBasedTablePinningTier) {
        self.pinning_tiers[0] = tier;
    }

    /// `partition_pinning`: the partitions of a partitioned index or filter (Fallback:
    /// `pin_l0_filter_and_index_blocks_in_cache`).
    pub fn set_partition_pinning_tier(&mut self, tier: BlockBasedTablePinningTier) {
        self.pinning_tiers[1] = tier;
    }

    /// `unpartitioned_pinning`: which tables keep their index and filter pinned in the block
    /// cache with `cache_index_and_filter_blocks` (None, FlushAndSimilar: level-0 tables no
    /// larger than 1.5 x write_buffer_size, All; Fallback: `pin_l0_filter_and_index_blocks_in_cache`).
    pub fn set_unpartitioned_pinning_tier(&mut self, tier: BlockBasedTablePinningTier) {
        self.pinning_tiers[2] = tier;
    }
}

impl WriteOptions {
    /// RocksDB's `ignore_missing_column_families`: the records of a batch for a column family
    /// that no longer exists (dropped) are skipped, the others written; without it such a
    /// batch fails with InvalidArgument. A single `put_cf`/`delete_cf`/`merge_cf` on a dropped
    /// family's handle then succeeds and writes nothing.
    pub fn set_ignore_missing_column_families(&mut self, ignore: bool) {
        self.ignore_missing_column_families = ignore;
    }

    /// RocksDB's `low_pri`: while compaction is behind (some family's writes stopped or
    /// delayed, or under compaction pressure), the write is rate-limited to 1 MiB/s, or
    /// fails at once with Incomplete "Low priority write stall" under `no_slowdown`.
    pub fn set_low_pri(&mut self, v: bool) {
        self.low_pri = v;
    }

    /// RocksDB's `memtable_insert_hint_per_batch` (default false): while this write's batch
    /// is inserted into the memtables concurrently with other writers' (a parallel write
    /// group with `allow_concurrent_memtable_write`, `unordered_write`, a pipelined
    /// concurrent insert), each insert into a memtable starts from where the batch's last
    /// insert into it ended (one skip-list splice per memtable, kept for the batch only, so
    /// not in the memtable's usage), which speeds batches of sequential keys. Inserts by a
    /// lone writer ignore it, as RocksDB's. Contents are the same; the property
    /// `rocksdb.shale.mem-table-hinted-inserts` counts the hinted inserts.
    pub fn set_memtable_insert_hint_per_batch(&mut self, v: bool) {
        self.memtable_insert_hint_per_batch = v;
    }
}

impl ReadOptions {
    /// Both bounds at once, as rust-rocksdb's `set_iterate_range`.
    pub fn set_iterate_range(&mut self, range: impl crate::iter_range::IterateBounds) {
        let (lower, upper) = range.into_bounds();
        self.lower_bound = lower;
        self.upper_bound = upper;
    }

    /// RocksDB's `read_tier`. `BlockCache`: a read uses the memtables and the blocks already
    /// in the block cache (and tables already open); one that would read a file fails with
    /// Incomplete ("no blocking io"; an iterator's status). `Persisted`: after any write
    /// with the WAL disabled, point reads skip the memtables (their data may not be
    /// persisted); iterators refuse it with NotSupported, as RocksDB's. `Memtable`: only the
    /// memtables are read (point reads and iterators).
    pub fn set_read_tier(&mut self, tier: ReadTier) {
        self.read_tier = tier;
    }

    /// With a prefix extractor, an iterator positioned by a seek (or `seek_to_first` /
    /// `seek_to_last`) stops at the end of the first key's prefix, as RocksDB's. Without
    /// one, RocksDB ignores this too: iteration is in total order.
    pub fn set_prefix_same_as_start(&mut self, v: bool) {
        self.prefix_same_as_start = v;
    }

    /// An iterator step (a seek, next or prev) that passes over more than `num` internal
    /// entries it does not return (older versions, deletions, entries newer than the
    /// snapshot) stops: the iterator is invalid with status Incomplete, as RocksDB's.
    /// 0 (the default) means no limit.
    pub fn set_max_skippable_internal_keys(&mut self, num: u64) {
        self.max_skippable_internal_keys = num;
    }

    /// RocksDB's `background_purge_on_iterator_cleanup` (default false): the obsolete files
    /// an iterator was the last to hold (tables and blob files a compaction replaced, old
    /// WALs) are deleted by the thread dropping (or refreshing) it, without the DB mutex,
    /// before `drop` returns; true: a flush-pool thread deletes them soon after (RocksDB's
    /// high-priority pool). The DB option `avoid_unnecessary_blocking_io` makes every
    /// iterator's purge a background one, as RocksDB's.
    pub fn set_background_purge_on_iterator_cleanup(&mut self, v: bool) {
        self.settings.background_purge_on_iterator_cleanup = v;
    }

    /// RocksDB's `ignore_range_deletions`: reads do not apply range tombstones (keys a
    /// `delete_range` covers are returned), as RocksDB's, which leaves correctness to a
    /// caller that knows the database has none.
    pub fn set_ignore_range_deletions(&mut self, v: bool) {
        self.ignore_range_deletions = v;
    }

    /// RocksDB's `readahead_size` (default 0): an iterator reads this many bytes beyond
    /// each table block it reads from the file, from its first read on, and serves the
    /// following blocks from that buffer; 0 keeps RocksDB's implicit auto readahead (after
    /// two sequential block reads of a table, 8 KiB doubling up to 256 KiB). Point lookups
    /// never read ahead. The same bytes are returned either way.
    pub fn set_readahead_size(&mut self, v: usize) {
        self.readahead_size = v;
    }

    /// RocksDB's `auto_readahead_size` (default true): with `iterate_upper_bound` set, an
    /// iterator's reads ahead in a table (with a block cache) end with the data block that
    /// holds the bound, so no bytes past it are read; false: reads ahead go on regardless.
    pub fn set_auto_readahead_size(&mut self, v: bool) {
        self.auto_readahead_size = v;
    }

    /// RocksDB's `deadline` (microseconds since the epoch; 0: none): a read that would read
    /// a table file at or after it fails with TimedOut "Deadline exceeded" (checked before
    /// each file read, as RocksDB's `PrepareIOFromReadOptions`; reads served from memory
    /// complete).
    pub fn set_deadline(&mut self, microseconds: u64) {
        self.deadline_us = microseconds;
    }

    /// RocksDB's `io_timeout` (microseconds; 0: none): each table file read of this read must
    /// complete within it (and before the deadline): one that takes longer fails with
    /// TimedOut, as under a file system that honours RocksDB's `IOOptions::timeout`.
    pub fn set_io_timeout(&mut self, microseconds: u64) {
        self.io_timeout_us = microseconds;
    }

    /// A tailing iterator sees writes made after it was created: it reads the live
    /// memtable and follows the family's newer SuperVersions (`db/iterator.rs`). It reads
    /// the latest data, so it cannot be combined with a snapshot (InvalidArgument), and, as
    /// RocksDB's, it only moves forward (`prev`, `seek_for_prev`, `seek_to_last`: NotSupported).
    pub fn set_tailing(&mut self, v: bool) {
        self.tailing = v;
    }

    /// RocksDB's `auto_refresh_iterator_with_snapshot` (RocksDB 10.0; a Shale extension to
    /// rust-rocksdb's API): an iterator with an explicit snapshot moves itself onto the
    /// family's newest SuperVersion when one is installed (checked with one relaxed atomic
    /// load before each seek and after each next/prev), re-seeking at its current key, so
    /// flushed memtables and compacted-away tables are freed while a long scan runs. What
    /// it returns is what a plain iterator on the same snapshot returns. Without a
    /// snapshot the iterator fails with InvalidArgument.
    pub fn set_auto_refresh_iterator_with_snapshot(&mut self, v: bool) {
        self.auto_refresh_iterator_with_snapshot = v;
    }

    /// RocksDB's `pin_data`: an iterator keeps every data block it reads, and every file
    /// iterator it moves off, until it is dropped, so the bytes of a value it returned
    /// never move or go while it lives; it then never copies a value out of a
    /// block-based table (`iter/db_iter.rs`). In this API `key()`/`value()` borrow the iterator, so a slice
    /// still ends at the next step: what the option changes is the iterator's memory (it
    /// grows with what the scan reads) and the copies it saves.
    pub fn set_pin_data(&mut self, v: bool) {
        self.pin_data = v;
    }

    /// RocksDB's `async_io` (default false): an iterator's readahead in a table (fixed
    /// `readahead_size` or the implicit auto readahead) is split in two halves, as RocksDB's
    /// two prefetch buffers: the block and the first half are read, and the next half is read
    /// in the background through the file system while the scan consumes the first
    /// (`table/prefetch.rs`). Counted as RocksDB does: `rocksdb.async.read.bytes` for each
    /// background read, `rocksdb.prefetched.bytes.discarded` for what an iterator read ahead
    /// and never used, `rocksdb.async.prefetch.abort.micros` for the wait on a background read
    /// an iterator no longer needs. The same keys and values are returned either way.
    pub fn set_async_io(&mut self, v: bool) {
        self.async_io = v;
    }

    /// The read timestamp of a column family with user-defined timestamps: reads see, per
    /// key, the newest version whose timestamp is <= `ts` (docs/timestamps.md). Required
    /// there; reading a family without timestamps with one set is InvalidArgument.
    pub fn set_timestamp<S: Into<Vec<u8>>>(&mut self, ts: S) {
        self.timestamp = Some(ts.into());
    }

    /// With `set_timestamp`, iterators return every version (deletions included) whose
    /// timestamp is in `[ts, read timestamp]`, newest first per key, and `key()` is then
    /// the internal key (user key, timestamp, sequence and type), as RocksDB's.
    pub fn set_iter_start_ts<S: Into<Vec<u8>>>(&mut self, ts: S) {
        self.iter_start_ts = Some(ts.into());
    }
}

impl Options {
    /// The latest OPTIONS file of the database at `path`, as RocksDB's `LoadLatestOptions`:
    /// the returned options are the file's DB options with its default family's options,
    /// and one descriptor per family with that family's options (`options_load.rs`).
    /// `cache` becomes every family's block cache. An option Shale does not apply is
    /// accepted at RocksDB's default value and NotSupported otherwise; an option RocksDB
    /// 7.8.3 does not know is skipped with `ignore_unknown_options`, InvalidArgument
    /// without. Function-valued options (comparator, merge operator, compaction filter,
    /// prefix extractor...) are not rebuilt from the names in the file: the caller sets
    /// them on the descriptors' options, as RocksDB's LoadLatestOptions leaves them unset
    /// unless registered. NotFound when the database has no OPTIONS file.
    pub fn load_latest<P: AsRef<Path>>(
        path: P,
        env: Env,
        ignore_unknown_options: bool,
        cache: Cache,
    ) -> Result<(Options, Vec<ColumnFamilyDescriptor>)> {
        crate::options_load::load_latest(path.as_ref(), &env, ignore_unknown_options, &cache)
    }

    /// These options with the `name=value;...` settings applied, as RocksDB's
    /// GetOptionsFromString.
    pub fn get_options_from_string<S: AsRef<str>>(&mut self, opts_str: S) -> Result<Options> {
        let s = opts_str.as_ref();
        if s.contains('\0') {
            return Err(Error::invalid_argument("options string must not contain NUL (0x00) bytes"));
        }
        let mut out = self.clone();
        // A struct value (`name={a=1;b=2;}`) keeps its inner ';'s.
        let mut parts = Vec::new();
        let (mut depth, mut start) = (0usize, 0usize);
        for (i, c) in s.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth = depth.saturating_sub(1),
                ';' if depth == 0 => {
                    parts.push(&s[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&s[start..]);
        for part in parts.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| Error::invalid_argument("Mismatched key value pair, '=' expected"))?;
            out.apply_option(k.trim(), v.trim())?;
        }
        Ok(out)
    }

    /// Sets one DB or column-family option by RocksDB's name from its text form, through its
    /// row of the option table (`options_table.rs`).
    pub(crate) fn apply_option(&mut self, name: &str, value: &str) -> Result<()> {
        if crate::options_table::apply_named(self, name, value)? {
            return Ok(());
        }
        // RocksDB 11.8.1's GetOptionsFromString: an unknown field of a struct option is
        // `ParseStruct`'s refusal, an unknown option `ConfigureOptions`' (NotFound, turned
        // into InvalidArgument).
        if name.contains('.') {
            return Err(Error::invalid_argument(format!("Unrecognized option: {name}")));
        }
        Err(Error::invalid_argument(format!("Extra option not recognized: {name}")))
    }

    /// A user comparator, as rust-rocksdb's `set_comparator`.
    pub fn set_comparator(&mut self, name: impl CStrLike, compare_fn: Box<crate::comparator::CompareFn>) {
        match crate::ffi_util::name_of(name, "comparator name") {
            Ok(n) => self.set_comparator_object(std::sync::Arc::new(crate::comparator::FnComparator::new(
                n, compare_fn,
            ))),
            Err(_) => self.unsupported.push("comparator name with a NUL byte"),
        }
    }

    /// A comparator with user-defined timestamps of `timestamp_size` bytes, as rust-rocksdb's
    /// (docs/timestamps.md): `compare_fn` orders whole user keys (timestamp included, newest
    /// first), `compare_ts_fn` two timestamps, `compare_without_ts_fn` keys ignoring them.
    pub fn set_comparator_with_ts(
        &mut self,
        name: impl CStrLike,
        timestamp_size: usize,
        compare_fn: Box<crate::comparator::CompareFn>,
        compare_ts_fn: Box<crate::comparator::CompareTsFn>,
        compare_without_ts_fn: Box<crate::comparator::CompareWithoutTsFn>,
    ) {
        match crate::ffi_util::name_of(name, "comparator name") {
            Ok(n) if timestamp_size > 0 => {
                self.set_comparator_object(std::sync::Arc::new(crate::comparator::FnTsComparator::new(
                    n,
                    timestamp_size,
                    compare_fn,
                    compare_ts_fn,
                    compare_without_ts_fn,
                )))
            }
            Ok(n) => self.set_comparator_object(std::sync::Arc::new(crate::comparator::FnComparator::new(
                n, compare_fn,
            ))),
            Err(_) => self.unsupported.push("comparator name with a NUL byte"),
        }
    }

    /// A merge operator whose partial merge is its full merge (called with no existing
    /// value), as rust-rocksdb's.
    pub fn set_merge_operator_associative<F: MergeFn + Clone>(
        &mut self,
        name: impl CStrLike,
        full_merge_fn: F,
    ) {
        let partial = full_merge_fn.clone();
        self.set_merge_operator(name, full_merge_fn, partial);
    }

    /// A merge operator with separate full and partial merge functions (`merge_operator.rs`).
    pub fn set_merge_operator<F: MergeFn, PF: MergeFn>(
        &mut self,
        name: impl CStrLike,
        full_merge_fn: F,
        partial_merge_fn: PF,
    ) {
        match crate::ffi_util::name_of(name, "merge operator name") {
            Ok(n) => self.set_merge_operator_object(crate::merge_operator::MergeOperator::new(
                n,
                full_merge_fn,
                Some(Box::new(partial_merge_fn)),
            )),
            Err(_) => self.unsupported.push("merge operator name with a NUL byte"),
        }
    }

    #[deprecated(since = "0.5.0", note = "add_merge_operator has been renamed to set_merge_operator")]
    pub fn add_merge_operator<F: MergeFn + Clone>(&mut self, name: &str, merge_fn: F) {
        self.set_merge_operator_associative(name, merge_fn);
    }

    /// A compaction filter, asked about the newest version of each key a compaction reads
    /// that no snapshot sees (`compaction_filter.rs`).
    pub fn set_compaction_filter<F>(&mut self, name: impl CStrLike, filter_fn: F)
    where
        F: CompactionFilterFn + Send + 'static,
    {
        match name.into_c_string() {
            Ok(n) => {
                let cb = crate::compaction_filter::CompactionFilterCallback { name: n, filter_fn };
                self.compaction_filter =
                    Some(std::sync::Arc::new(crate::compaction_filter::FilterSlot::new(cb)));
            }
            Err(_) => self.unsupported.push("compaction filter name with a NUL byte"),
        }
    }

    /// A compaction filter factory: one filter per compaction (`compaction_filter.rs`).
    pub fn set_compaction_filter_factory<F>(&mut self, factory: F)
    where
        F: CompactionFilterFactory + 'static,
    {
        self.compaction_filter_factory =
            Some(std::sync::Arc::new(crate::compaction_filter::FactorySlot::new(factory)));
    }

    /// As RocksDB's `OptimizeUniversalStyleCompaction(memtable_memory_budget)`: universal
    /// style, write buffers of a quarter of the budget, up to 6 of them, two merged per flush,
    /// and `compression_size_percent` 80.
    pub fn optimize_universal_style_compaction(&mut self, memtable_memory_budget: usize) {
        self.write_buffer_size = memtable_memory_budget / 4;
        self.min_write_buffer_number_to_merge = 2;
        self.max_write_buffer_number = 6;
        self.set_compaction_style(DBCompactionStyle::Universal);
        self.universal.compression_size_percent = 80;
    }

    /// Table directories with target sizes, as RocksDB's `db_paths`: new tables go to the
    /// first path whose target size their level still fits (flushes to the first, the last
    /// path takes what fits nowhere), tables are found in any of them at open, and obsolete
    /// ones are deleted where they are (`db/paths.rs`). Empty: the database directory.
    pub fn set_db_paths(&mut self, paths: &[DBPath]) {
        self.db_paths = paths.iter().map(|p| (p.path.clone(), p.target_size)).collect();
    }

    /// A family's own table directories (RocksDB's `cf_paths`; empty: `db_paths`), placed as
    /// `set_db_paths` describes.
    pub fn set_cf_paths(&mut self, paths: &[DBPath]) {
        self.cf_paths = paths.iter().map(|p| (p.path.clone(), p.target_size)).collect();
    }

    pub fn set_env(&mut self, env: &Env) {
        if let Some(fs) = &env.fs {
            self.fs = Some(fs.clone());
        }
        self.unsupported.extend(env.unsupported.iter().copied());
        self.env_threads = (env.low_threads, env.high_threads);
        self.env_bottom_threads = env.bottom_threads.unwrap_or(0);
        self.env_lower_cpu = env.lower_cpu;
        self.env_lower_io = env.lower_io;
    }

    /// RocksDB's `compression_opts.parallel_threads`: above 1, each table's data blocks are
    /// compressed by that many threads while the table is built, and written in order (the
    /// same file bytes). As RocksDB 11.8.1, not for Snappy, LZ4's fast levels or ZSTD's
    /// negative levels, nor with partitioned filters coupled to the index
    /// (`table/parallel.rs`).
    pub fn set_compression_options_parallel_threads(&mut self, num: i32) {
        self.compression_opts.parallel_threads = num;
    }

    /// WAL compression, as RocksDB's `wal_compression`: each WAL starts with a
    /// SetCompressionType record and every record is one ZSTD frame (`wal/writer.rs`).
    /// Only None and Zstd exist; any other type panics, as rust-rocksdb's setter does.
    ///
    /// # Panics
    /// With a type other than `None` or `Zstd`.
    pub fn set_wal_compression_type(&mut self, t: DBCompressionType) {
        match t {
            DBCompressionType::None | DBCompressionType::Zstd => self.wal_compression = t.to_table(),
            // rust-rocksdb's setter panics here (its message, so callers' expectations hold).
            other => panic!("{other:?} is not supported for WAL compression"),
        }
    }

    /// RocksDB's `bottommost_compression`: the codec of tables compacted into the bottommost
    /// level (the last non-empty level, or deeper), whatever `compression` and
    /// `compression_per_level` say (`compaction/picker.rs::output_compression`).
    pub fn set_bottommost_compression_type(&mut self, t: DBCompressionType) {
        self.bottommost_compression = Some(t);
    }

    /// RocksDB's `compression_per_level`: the codec of the tables written to each level.
    /// Flushes use the first; a compaction into level L uses entry 0 for level 0, else
    /// `L - base_level + 1` (base level: where level 0 compacts to; 1 under universal
    /// compaction), the last entry for the levels past the end; `bottommost_compression`
    /// wins on the bottommost level. Empty: `compression` everywhere. Each table records its
    /// codec in `rocksdb.compression_name`.
    pub fn set_compression_per_level(&mut self, level_types: &[DBCompressionType]) {
        self.compression_per_level = level_types.to_vec();
    }

    /// RocksDB's `compression_opts`: the codec level (32767: its default; ZSTD and zlib),
    /// zlib's window bits and strategy, and `max_dict_bytes`, the size of the table's
    /// compression dictionary (0: none; `table/builder.rs`). zlib compresses as RocksDB's
    /// `deflateInit2(level, Z_DEFLATED, window_bits, 8, strategy)`: negative window bits
    /// write raw deflate (what RocksDB reads), positive ones a zlib or gzip header, as
    /// RocksDB writes them (and its reader refuses); settings zlib refuses store the
    /// blocks uncompressed, as RocksDB's "compression bypassed".
    pub fn set_compression_options(
        &mut self,
        window_bits: i32,
        level: i32,
        strategy: i32,
        max_dict_bytes: i32,
    ) {
        let co = &mut self.compression_opts;
        co.window_bits = window_bits;
        co.level = level;
        co.strategy = strategy;
        co.max_dict_bytes = max_dict_bytes.max(0) as u32;
    }

    /// RocksDB's `bottommost_compression_opts` (through its C API's setter): with `enabled`,
    /// tables compacted into the bottommost level (the last non-empty one, or deeper) take
    /// these options instead of `compression_opts`.
    pub fn set_bottommost_compression_options(
        &mut self,
        window_bits: i32,
        level: i32,
        strategy: i32,
        max_dict_bytes: i32,
        enabled: bool,
    ) {
        let b = &mut self.bottommost_compression_opts;
        b.window_bits = window_bits;
        b.level = level;
        b.strategy = strategy;
        b.max_dict_bytes = max_dict_bytes.max(0) as u32;
        self.bottommost_compression_opts_enabled = enabled;
    }

    /// With ZSTD and `max_dict_bytes > 0`: up to this many bytes of samples train the
    /// dictionary with ZSTD's trainer (0: the samples, `max_dict_bytes` of them, are the
    /// dictionary), as RocksDB's `compression_opts.zstd_max_train_bytes`.
    pub fn set_zstd_max_train_bytes(&mut self, value: i32) {
        self.compression_opts.zstd_max_train_bytes = value.max(0) as u32;
    }

    /// `bottommost_compression_opts.zstd_max_train_bytes` and its `enabled`, as RocksDB's C
    /// API sets them: ZSTD dictionary training for the bottommost level's tables.
    pub fn set_bottommost_zstd_max_train_bytes(&mut self, value: i32, enabled: bool) {
        self.bottommost_compression_opts.zstd_max_train_bytes = value.max(0) as u32;
        self.bottommost_compression_opts_enabled = enabled;
    }

    /// RocksDB's `compaction_readahead_size` (11.8.1's default 2 MiB): a compaction reads
    /// each input table through a buffer of this many bytes beyond the block it needs
    /// (RocksDB's `FilePrefetchBuffer` for compaction, `table/prefetch.rs`); 0 reads block by
    /// block. Everything written is the same either way.
    pub fn set_compaction_readahead_size(&mut self, compaction_readahead_size: usize) {
        self.compaction_readahead_size = compaction_readahead_size as u64;
    }

    /// Tables older than this (by the time they were written) are compacted again: into the
    /// next level, or into themselves on the last level (RocksDB's periodic compaction,
    /// `compaction/picker.rs`). 0 turns it off; the default (`u64::MAX - 1`) means 30 days
    /// for a family with a compaction filter (a TTL database's), off otherwise.
    pub fn set_periodic_compaction_seconds(&mut self, secs: u64) {
        self.periodic_compaction_seconds = secs;
    }

    /// Tables whose oldest data is older than this move down a level by compaction, above
    /// the last level (RocksDB's TTL compaction for leveled style, `compaction/picker.rs`;
    /// not a TTL database, which is `DB::open_with_ttl`). 0 turns it off; the default
    /// (`u64::MAX - 1`) means 30 days with a compaction filter, off otherwise.
    pub fn set_ttl(&mut self, ttl_secs: u64) {
        self.ttl = ttl_secs;
    }

    pub fn set_prefix_extractor(&mut self, prefix_extractor: SliceTransform) {
        self.prefix_extractor = Some(std::sync::Arc::new(prefix_extractor));
    }

    /// RocksDB's `ColumnFamilyOptions::OptimizeForPointLookup`: the table factory becomes a
    /// fresh block-based one (every earlier block-based setting is dropped, as RocksDB
    /// replaces `table_factory`) whose data blocks carry the hash index
    /// (kDataBlockBinaryAndHash, util ratio 0.75), with a 10 bits-per-key Bloom filter and an
    /// LRU block cache of `block_cache_size_mb` MiB; the memtable gets a Bloom of 2% of its
    /// size (`memtable_prefix_bloom_size_ratio` 0.02) that also holds whole keys.
    pub fn optimize_for_point_lookup(&mut self, block_cache_size_mb: u64) {
        let mut table = crate::BlockBasedOptions::default();
        table.set_data_block_index_type(DataBlockIndexType::BinaryAndHash);
        table.set_data_block_hash_ratio(0.75);
        table.set_bloom_filter(10.0, false);
        let bytes = block_cache_size_mb.saturating_mul(1024 * 1024);
        table.set_block_cache(&crate::Cache::new_lru_cache(usize::try_from(bytes).unwrap_or(usize::MAX)));
        self.set_block_based_table_factory(&table);
        self.set_memtable_prefix_bloom_ratio(0.02);
        self.set_memtable_whole_key_filtering(true);
    }

    /// RocksDB's `optimize_filters_for_hits`: tables a compaction writes to the bottommost
    /// level (no deeper level holds keys of its range) get no filter, as RocksDB's table
    /// builder with `is_bottommost` skips it: a lookup that reaches the last level is
    /// expected to find its key there. Flushes and other levels keep their filters.
    pub fn set_optimize_filters_for_hits(&mut self, optimize_for_hits: bool) {
        self.optimize_filters_for_hits = optimize_for_hits;
    }

    /// RocksDB's `delete_obsolete_files_period_micros` (default 6 hours): the period of the
    /// full scan of the database's directories for files nothing references (a crash's
    /// leftover table, blob file, WAL or MANIFEST): a purge after a flush, compaction or
    /// iterator cleanup scans when the period has passed since the last scan (0: every
    /// purge). Files a compaction replaces are deleted once unused whatever the period. A
    /// mutable DB option: `DB::set_db_options` changes it on an open database.
    pub fn set_delete_obsolete_files_period_micros(&mut self, micros: u64) {
        self.delete_obsolete_files_period_micros = micros;
    }

    /// RocksDB's `Options::PrepareForBulkLoad`, value for value: no level-0 trigger,
    /// slowdown or stop (1 << 30), no pending-compaction-bytes limits, automatic compactions
    /// off (the application compacts once loaded), `max_compaction_bytes` 1 << 60 (one manual
    /// compaction takes all of level 0), two levels, six write buffers merged one at a time,
    /// four flush threads, two compaction threads and 256 MiB target files. Each setter then
    /// acts as it does on its own.
    // RocksDB's PrepareForBulkLoad sets the two deprecated thread counts itself.
    #[allow(deprecated)]
    pub fn prepare_for_bulk_load(&mut self) {
        self.set_level_zero_file_num_compaction_trigger(1 << 30);
        self.set_level_zero_slowdown_writes_trigger(1 << 30);
        self.set_level_zero_stop_writes_trigger(1 << 30);
        self.set_soft_pending_compaction_bytes_limit(0);
        self.set_hard_pending_compaction_bytes_limit(0);
        self.set_disable_auto_compactions(true);
        self.set_max_compaction_bytes(1 << 60);
        self.set_num_levels(2);
        self.set_max_write_buffer_number(6);
        self.set_min_write_buffer_number_to_merge(1);
        self.set_max_background_flushes(4);
        self.set_max_background_compactions(2);
        self.set_target_file_size_base(256 * 1024 * 1024);
    }

    /// RocksDB's `max_file_opening_threads` (default 16): at open the live tables (all of
    /// them with `max_open_files = -1`) are opened on up to this many threads, as RocksDB's
    /// `LoadTableHandlers` (`db/open.rs`, `load_tables`); 1 or less: one by one.
    pub fn set_max_file_opening_threads(&mut self, nthreads: i32) {
        self.max_file_opening_threads = nthreads;
    }

    /// The info log goes to `path` (created at open) as `<database's absolute path with
    /// every character other than letters, digits, '-', '.', '_' turned to '_'>_LOG`, and
    /// old ones as `..._LOG.old.<micros>`, RocksDB's names for a separate log directory
    /// (`db/info_log.rs`). An empty path: the database's directory, as `LOG`.
    pub fn set_db_log_dir<P: AsRef<Path>>(&mut self, path: P) {
        self.db_log_dir = path.as_ref().to_path_buf();
    }

    /// RocksDB's `info_log_level` (default INFO): the LOG keeps only lines at this level and
    /// above, those above INFO with RocksDB's `[WARN] `/`[ERROR] ` prefix (`db/info_log.rs`).
    /// Shale's lines are at INFO but for background errors (ERROR) and failed deletions
    /// (WARN), so WARN and above keep only those. A logger given with `set_info_logger`
    /// filters by its own level instead, as in RocksDB.
    pub fn set_log_level(&mut self, level: LogLevel) {
        self.info_log_level = level;
    }

    /// Every `nbytes` written to a table, blob or MANIFEST file, the kernel is asked to
    /// start writing them back (`sync_file_range(SYNC_FILE_RANGE_WRITE)`, RocksDB's
    /// `RangeSync`), sparing the last MiB written, as RocksDB's `WritableFileWriter`
    /// (`db/buffered_fs.rs`). Smooths the I/O of flushes and compactions; no durability
    /// promise by itself. 0 (the default): never, or every 1 MiB when the database has a
    /// rate limiter (RocksDB's SanitizeOptions).
    pub fn set_bytes_per_sync(&mut self, nbytes: u64) {
        self.bytes_per_sync = nbytes;
    }

    /// Every `nbytes` written to the WAL, the kernel is asked to start writing them back
    /// (`sync_file_range(SYNC_FILE_RANGE_WRITE)`, as RocksDB's `RangeSync`), sparing the
    /// last MiB written, so later syncs find little dirty data. No durability promise by
    /// itself (that is `sync` in the write options). 0 (the default): never.
    pub fn set_wal_bytes_per_sync(&mut self, nbytes: u64) {
        self.wal_bytes_per_sync = nbytes;
    }

    /// The most bytes each file the database writes (tables, blob files, WALs, MANIFEST)
    /// holds in its buffer before its appends go to the file, as RocksDB's
    /// `WritableFileWriter` (default 1 MiB; 0: every append goes to the file). A file
    /// system given with `set_file_system` gets the size through
    /// `FileSystem::new_writable_file_with_buffer`.
    pub fn set_writable_file_max_buffer_size(&mut self, nbytes: u64) {
        self.writable_file_max_buffer_size = nbytes;
    }

    /// The writers of a write group insert their own batches into the memtables at once
    /// (default true, as RocksDB's); `false`: the group's leader inserts them all.
    /// `false` with `unordered_write` fails the open with InvalidArgument, as in RocksDB.
    pub fn set_allow_concurrent_memtable_write(&mut self, allow: bool) {
        self.allow_concurrent_memtable_write = allow;
    }

    /// RocksDB's `enable_write_thread_adaptive_yield` (default true): a writer waiting for
    /// its turn in the write queue, after a microsecond of spinning, yields the processor in
    /// a loop for up to `write_thread_max_yield_usec` before it blocks, while such loops
    /// mostly succeed (see `db/write.rs`, "Waiting"); false: it blocks after the spin.
    pub fn set_enable_write_thread_adaptive_yield(&mut self, enabled: bool) {
        self.enable_write_thread_adaptive_yield = enabled;
    }

    /// RocksDB's `write_thread_max_yield_usec` (default 100): the longest yield loop of a
    /// waiting writer with `enable_write_thread_adaptive_yield` (0: none).
    pub fn set_write_thread_max_yield_usec(&mut self, micros: u64) {
        self.write_thread_max_yield_usec = micros;
    }

    /// RocksDB's `write_thread_slow_yield_usec` (default 3): a yield of a waiting writer that
    /// took at least this long counts as slow (the processor went to another thread); after
    /// three slow yields the writer blocks.
    pub fn set_write_thread_slow_yield_usec(&mut self, micros: u64) {
        self.write_thread_slow_yield_usec = micros;
    }

    /// RocksDB's `max_sequential_skip_in_iterations` (default 8): an iterator that steps
    /// over more than `num` hidden entries of one user key (older versions, or versions
    /// newer than its snapshot) reseeks past the rest instead (`iter/db_iter.rs`), counted
    /// as ticker `rocksdb.number.reseeks.iteration`. The entries returned are the same;
    /// only the work done for a key with many versions changes.
    pub fn set_max_sequential_skip_in_iterations(&mut self, num: u64) {
        self.max_sequential_skip_in_iterations = num;
    }

    /// Table and blob files are read with O_DIRECT, bypassing the page cache, in aligned
    /// blocks (`shale_base::fs::ReadFileOptions`, `db/buffered_fs.rs`), as RocksDB's
    /// `use_direct_reads` (default false). A file system without direct I/O fails the open
    /// with RocksDB's InvalidArgument "Direct I/O is not supported by the specified DB.";
    /// with `allow_mmap_reads` too, RocksDB's NotSupported.
    pub fn set_use_direct_reads(&mut self, enabled: bool) {
        self.use_direct_reads = enabled;
    }

    /// RocksDB's `use_direct_io_for_flush_and_compaction` (default false): the table and blob
    /// files flushes and compactions write are opened with O_DIRECT and written through an
    /// aligned buffer of `writable_file_max_buffer_size` bytes, bypassing the page cache; a
    /// flush or sync writes the unaligned tail padded with zeros and truncates the file back
    /// to its size, as RocksDB's `PosixWritableFile` (`shale_base::fs::WriteFileOptions`). No
    /// `bytes_per_sync` write-back is asked for such files, as in RocksDB. WALs and the
    /// MANIFEST are written as before. RocksDB's checks hold at open: with `allow_mmap_writes`
    /// NotSupported, with `writable_file_max_buffer_size` 0 InvalidArgument, and a file system
    /// without direct I/O (tmpfs before Linux 6.6, an in-memory one) InvalidArgument "Direct
    /// I/O is not supported by the specified DB.".
    pub fn set_use_direct_io_for_flush_and_compaction(&mut self, enabled: bool) {
        self.use_direct_io_for_flush_and_compaction = enabled;
    }

    /// Whether the files the database opens get close-on-exec (O_CLOEXEC), as RocksDB's
    /// `is_fd_close_on_exec` (default true): false leaves their descriptors open in a
    /// program the process `exec`s (`shale_base::fs::OpenFlags`).
    pub fn set_is_fd_close_on_exec(&mut self, enabled: bool) {
        self.is_fd_close_on_exec = enabled;
    }

    /// rust-rocksdb 0.25's deprecated setter: it sets `use_direct_reads` and
    /// `use_direct_io_for_flush_and_compaction` to `!is_allow` (RocksDB has no
    /// `allow_os_buffer` since 4.x), and so does Shale: `false` reads and writes tables with
    /// O_DIRECT.
    pub fn set_allow_os_buffer(&mut self, is_allow: bool) {
        self.set_use_direct_reads(!is_allow);
        self.set_use_direct_io_for_flush_and_compaction(!is_allow);
    }

    /// RocksDB's `table_cache_numshardbits` (default 6), recorded in the OPTIONS file as
    /// set. It only shards RocksDB's table-cache LRU into `2^nbits` locks; Shale's table
    /// cache (`db/table_cache.rs`) is one map under one mutex, whose capacity comes from
    /// `max_open_files`, not from this value: the same tables are open and cached.
    pub fn set_table_cache_num_shard_bits(&mut self, nbits: i32) {
        self.table_cache_numshardbits = nbits;
    }

    /// RocksDB's `min_write_buffer_number_to_merge`, as rust-rocksdb maps this setter (see
    /// `set_min_write_buffer_number_to_merge`).
    pub fn set_min_write_buffer_number(&mut self, nbuf: i32) {
        self.set_min_write_buffer_number_to_merge(nbuf);
    }

    /// RocksDB's `compaction_pri`: the order in which a level compaction tries a level's
    /// files (`compaction/picker.rs::pick_level`): kMinOverlappingRatio (the default),
    /// kOldestLargestSeqFirst, kOldestSmallestSeqFirst (by the files' largest / smallest
    /// sequence numbers, oldest first), kByCompensatedSize (largest first, deletions weighed
    /// as RocksDB's `ComputeCompensatedSizes`), kRoundRobin (from the level's compact cursor
    /// in key order, expanded over the following files; the next cursor is recorded in the
    /// MANIFEST as RocksDB's `kCompactCursor`).
    pub fn set_compaction_pri(&mut self, pri: CompactionPri) {
        self.compaction_pri = pri;
    }

    /// Level (the default, `compaction/picker.rs`), universal (`compaction/universal.rs`) or
    /// FIFO (`compaction/fifo.rs`) compaction. A database may reopen with another style
    /// (see docs/compaction-styles.md).
    pub fn set_compaction_style(&mut self, style: DBCompactionStyle) {
        self.compaction_style = style;
        self.compaction_style_none = false;
    }

    /// The options of universal compaction (used when the style is universal). As RocksDB's
    /// C API (`rocksdb_options_set_universal_compaction_options` copies the whole struct),
    /// the fields `UniversalCompactOptions` cannot set go back to their defaults
    /// (`max_read_amp` -1, `allow_trivial_move` false, `reduce_file_locking` true).
    pub fn set_universal_compaction_options(&mut self, uco: &UniversalCompactOptions) {
        use shale_engine::config::StopStyle;
        let defaults = shale_engine::config::UniversalSettings::default();
        self.universal.max_read_amp = defaults.max_read_amp;
        self.universal.allow_trivial_move = defaults.allow_trivial_move;
        self.universal.reduce_file_locking = defaults.reduce_file_locking;
        // RocksDB's fields are unsigned: a negative value wraps as it does through the C API.
        self.universal.size_ratio = uco.size_ratio as u32;
        self.universal.min_merge_width = uco.min_merge_width as u32;
        self.universal.max_merge_width = uco.max_merge_width as u32;
        self.universal.max_size_amplification_percent = uco.max_size_amplification_percent as u32;
        self.universal.compression_size_percent = uco.compression_size_percent;
        self.universal.stop_style = match uco.stop_style {
            UniversalCompactionStopStyle::Similar => StopStyle::Similar,
            UniversalCompactionStopStyle::Total => StopStyle::Total,
        };
    }

    /// The options of FIFO compaction (used when the style is FIFO).
    pub fn set_fifo_compaction_options(&mut self, fco: &FifoCompactOptions) {
        self.fifo_max_table_files_size = fco.max_table_files_size;
        self.fifo_allow_compaction = fco.allow_compaction;
    }

    /// RocksDB's `unordered_write`: an option that only *weakens* RocksDB's guarantees
    /// (memtable inserts may land after the sequence number is published, so a snapshot may
    /// still change as writes with lower sequence numbers land; read-your-own-writes holds).
    /// Shale keeps its ordered write path with it set: a write's sequence number is
    /// published only once the whole group is in the memtables, so snapshots stay immutable,
    /// which is every promise `unordered_write` keeps and more. It is a valid
    /// implementation, not an ignored option: what changes is throughput only. As in
    /// RocksDB, it is refused with `enable_pipelined_write` or without
    /// `allow_concurrent_memtable_write` (InvalidArgument at open), and by
    /// `TransactionDB::open` (NotSupported: WRITE_COMMITTED is incompatible with it).
    pub fn set_unordered_write(&mut self, unordered: bool) {
        self.unordered_write = unordered;
    }

    /// RocksDB's `max_subcompactions` (default 1): a leveled compaction from level 0 or a
    /// manual one (`compact_range`), or a universal one, into a level below 0, is split into
    /// up to `num` key ranges cut at the input tables' index anchors (each range at least the
    /// output level's target file size), compacted on threads of their own and installed as
    /// one result (`db/compact.rs`, `compaction/job.rs`, RocksDB's
    /// `GenSubcompactionBoundaries`). The same entries are written; 0 acts as 1. Histogram
    /// `rocksdb.num.subcompactions.scheduled` counts the splits. Not for families with
    /// user-defined timestamps (one range) or plain tables (as RocksDB).
    pub fn set_max_subcompactions(&mut self, num: u32) {
        self.max_subcompactions = num;
    }

    /// RocksDB's `memtable_huge_page_size`: when not 0, the memtables' arena blocks are
    /// mappings of huge pages (`MAP_HUGETLB`) of that size (rounded up to hold a block), and
    /// ordinary memory when the system has no huge pages free, as RocksDB falls back
    /// (`memtable/arena.rs`). The size must be one the kernel supports (2 MiB on x86-64), as
    /// in RocksDB. Mutable: memtables made afterwards take the new value.
    pub fn set_memtable_huge_page_size(&mut self, size: usize) {
        self.memtable_huge_page_size = size;
    }

    /// RocksDB's `max_successive_merges`: when a merge finds `num` merge operands of its key
    /// on top of the active memtable, the write resolves them and stores the merged value
    /// instead of one more operand (0, the default: never). As RocksDB without
    /// `strict_max_successive_merges`, the write reads no file: when the merge would need a
    /// table's blocks the operand is stored (see `db/write.rs`, "max_successive_merges").
    pub fn set_max_successive_merges(&mut self, num: usize) {
        self.max_successive_merges = num;
    }

    /// RocksDB's `strict_max_successive_merges` (RocksDB's C API setter, not rust-rocksdb
    /// 0.25's; default false): with it, a merge that reaches `max_successive_merges` reads
    /// the key's value whole at its sequence, table files included (the write waits for
    /// that read), and stores the merged value; a key with no value keeps the operand.
    /// Changeable with `set_options`.
    pub fn set_strict_max_successive_merges(&mut self, val: bool) {
        self.strict_max_successive_merges = val;
    }

    /// RocksDB's `bloom_locality`: its header says it applies only to PlainTable's prefix
    /// Bloom filter, and RocksDB 11.8.1 reads it nowhere but its options (no table reader or
    /// builder, memtable or PlainTable code uses it): it is kept and written to the OPTIONS
    /// file, as RocksDB does, and changes nothing else there either.
    pub fn set_bloom_locality(&mut self, v: u32) {
        self.bloom_locality = v;
    }

    /// RocksDB's `inplace_update_support` (default false): a Put whose key's newest entry in
    /// the active memtable is a Put (same type) with a value at least as long overwrites
    /// that value in place, keeping the entry's sequence (so snapshots and iterators made
    /// before it see the new value, as RocksDB documents), and counts
    /// `rocksdb.number.keys.updated`; otherwise it adds an entry. Readers take the key's
    /// lock stripe and copy the value, so none sees a value half written. As in RocksDB,
    /// `open` refuses it with InvalidArgument while `allow_concurrent_memtable_write` is
    /// true (its default): set that to false too.
    pub fn set_inplace_update_support(&mut self, enabled: bool) {
        self.inplace_update_support = enabled;
    }

    /// RocksDB's `memtable_max_range_deletions` (default 0: no limit): a memtable made after
    /// this holds at most this many range deletions; the write that reaches the count makes
    /// it full, so it is switched and flushed however small it is (mutable through
    /// `set_options`; memtables made afterwards take the new count, as RocksDB's).
    pub fn set_memtable_max_range_deletions(&mut self, n: u32) {
        self.memtable_max_range_deletions = n.into();
    }

    /// RocksDB's `inplace_update_num_locks` (default 10000): how many striped locks each
    /// memtable made afterwards takes for in-place updates (mutable through `set_options`).
    pub fn set_inplace_update_locks(&mut self, num: usize) {
        self.inplace_update_num_locks = num;
    }

    /// RocksDB's `max_bytes_for_level_multiplier_additional`: without dynamic level bytes,
    /// level L's target (L >= 2) is level L-1's times `max_bytes_for_level_multiplier` times
    /// entry L-1 of this list (1 past its end), as RocksDB's `CalculateBaseBytes`; the
    /// picker's level scores follow (`Options::max_bytes_for_level`).
    pub fn set_max_bytes_for_level_multiplier_additional(&mut self, level_values: &[i32]) {
        self.max_bytes_for_level_multiplier_additional = level_values.to_vec();
    }

    /// RocksDB's `max_write_buffer_size_to_maintain` (default 0): flushed memtables are kept,
    /// read-only and unseen by reads, as the family's memtable history while the memory of
    /// the unflushed and kept ones stays below `size` bytes (RocksDB's `MemTableList`
    /// history, trimmed oldest first on each flush as its `TrimHistory`). Transaction
    /// conflict checks read the history, so an optimistic transaction fails with TryAgain
    /// only when a key's newest entry is older than the oldest memtable kept. Negative:
    /// `max_write_buffer_number * write_buffer_size`. The history counts in
    /// `rocksdb.size-all-mem-tables`, not in `rocksdb.cur-size-all-mem-tables`.
    /// `OptimisticTransactionDB::open` sets -1 in each family that leaves it at 0, as RocksDB's.
    pub fn set_max_write_buffer_size_to_maintain(&mut self, size: i64) {
        self.max_write_buffer_size_to_maintain = size;
    }

    /// RocksDB's pipelined write path (`db/write.rs`): a write group that wrote the WAL leaves
    /// the write queue before its memtable insert, so the next group's WAL write overlaps it;
    /// groups are published in WAL order. `true` with `unordered_write` or `atomic_flush`
    /// fails the open with InvalidArgument, as in RocksDB.
    pub fn set_enable_pipelined_write(&mut self, value: bool) {
        self.enable_pipelined_write = value;
    }

    /// The skip list (the default), a hash memtable (HashSkipList, HashLinkList), or the
    /// vector memtable. With a prefix extractor, Shale gives a hash memtable RocksDB's
    /// hash-memtable iteration (a prefix iterator stays in the seek target's prefix and finds
    /// nothing from `seek_to_first`; total-order iterators see everything), keeping one skip
    /// list inside, so `bucket_count`, `height` and `branching_factor` (sizing of RocksDB's
    /// hash table) change nothing else. Without a prefix extractor RocksDB uses the skip list
    /// instead, and so does Shale. The vector memtable is RocksDB's VectorRep: writes append
    /// to a vector (concurrent writers too, as RocksDB's VectorRepFactory allows), and reads
    /// sort it (a mutable memtable's reads sort a copy, an immutable one is sorted in place
    /// once); the OPTIONS file records `{id=VectorRepFactory;count=0;}` as RocksDB's.
    /// HashSkipList and HashLinkList cannot insert concurrently: as in RocksDB, opening with
    /// them needs `set_allow_concurrent_memtable_write(false)` (InvalidArgument otherwise).
    pub fn set_memtable_factory(&mut self, factory: MemtableFactory) {
        use crate::options::MemtableRep;
        match factory {
            MemtableFactory::SkipList => self.memtable_rep = MemtableRep::SkipList,
            MemtableFactory::HashSkipList { bucket_count, height, branching_factor } => {
                self.memtable_rep = MemtableRep::HashSkipList { bucket_count, height, branching_factor }
            }
            MemtableFactory::HashLinkList { bucket_count } => {
                self.memtable_rep = MemtableRep::hash_link_list(bucket_count)
            }
            MemtableFactory::Vector => self.memtable_rep = MemtableRep::Vector { count: 0 },
        }
    }

    /// New tables are cuckoo tables (`table/cuckoo/`, docs/cuckoo-table-format.md): fixed-size
    /// keys and values, one entry per user key, no merge operands or range deletions (a flush
    /// or compaction meeting them fails with RocksDB's NotSupported). RocksDB's reader also
    /// needs `allow_mmap_reads`; Shale reads the table into memory and does not.
    pub fn set_cuckoo_table_factory(&mut self, factory: &CuckooTableOptions) {
        let d = crate::table::cuckoo::CuckooOptions::default();
        self.table_format = crate::table::TableFormat::Cuckoo(crate::table::cuckoo::CuckooOptions {
            hash_table_ratio: factory.hash_ratio.unwrap_or(d.hash_table_ratio),
            max_search_depth: factory.max_search_depth.unwrap_or(d.max_search_depth),
            cuckoo_block_size: factory.cuckoo_block_size.unwrap_or(d.cuckoo_block_size),
            identity_as_first_hash: factory.identity_as_first_hash.unwrap_or(d.identity_as_first_hash),
            use_module_hash: factory.use_module_hash.unwrap_or(d.use_module_hash),
        });
    }

    /// New tables are plain tables (`table/plain/`, docs/plain-table-format.md). As in
    /// RocksDB, a plain table needs a prefix extractor unless `hash_table_ratio` is 0
    /// (total-order mode; open refuses it otherwise); kPrefix encoding without one writes
    /// kPlain records, as RocksDB's key encoder does.
    /// `store_index_in_file` writes RocksDB's hash index (sized by `hash_table_ratio`, one
    /// record every `index_sparseness` keys of a prefix) and Bloom filter (`bloom_bits_per_key`
    /// per key, laid out by `bloom_locality`) into each table as meta blocks; Shale's reader
    /// checks the stored index and asks the stored Bloom first on point lookups. Otherwise
    /// `bloom_bits_per_key`, `hash_table_ratio`, `huge_page_tlb_size` size RocksDB's
    /// in-memory hash index and Bloom filter, which Shale's reader replaces by a sorted
    /// record array (binary search): they change no result. `full_scan_mode` makes point
    /// lookups and seeks fail with InvalidArgument, as RocksDB's.
    pub fn set_plain_table_factory(&mut self, options: &PlainTableFactoryOptions) {
        self.table_format = crate::table::TableFormat::Plain(crate::table::plain::PlainTableOptions {
            user_key_len: options.user_key_length,
            bloom_bits_per_key: options.bloom_bits_per_key,
            hash_table_ratio: options.hash_table_ratio,
            index_sparseness: options.index_sparseness,
            huge_page_tlb_size: options.huge_page_tlb_size,
            encoding: match options.encoding_type {
                KeyEncodingType::Plain => crate::table::plain::PlainEncoding::Plain,
                KeyEncodingType::Prefix => crate::table::plain::PlainEncoding::Prefix,
            },
            full_scan_mode: options.full_scan_mode,
            store_index_in_file: options.store_index_in_file,
            bloom_locality: 0,
        });
    }

    /// As RocksDB's C API `rocksdb_options_set_min_level_to_compress`: for `lvl >= 0`,
    /// `compression_per_level` becomes `num_levels` entries, none below `lvl` and the current
    /// `compression` from `lvl` on (so set `compression` and `num_levels` first).
    pub fn set_min_level_to_compress(&mut self, lvl: i32) {
        if lvl >= 0 {
            let c = self.compression;
            self.compression_per_level = (0..self.num_levels.max(0))
                .map(|i| if i < lvl { DBCompressionType::None } else { c })
                .collect();
        }
    }

    /// Flush and compaction lines in LOG carry the time spent writing their tables.
    pub fn set_report_bg_io_stats(&mut self, enable: bool) {
        self.report_bg_io_stats = enable;
    }

    /// When the live WALs together grow past `size` bytes, the column families whose
    /// unflushed data holds the oldest WAL are flushed, so it can be deleted (RocksDB's
    /// `SwitchWAL`; `db/wal_limit.rs`). Acts only with more than one column family, as in
    /// RocksDB. 0 (the default): four times the memtable memory of all families
    /// (`write_buffer_size * max_write_buffer_number` summed).
    pub fn set_max_total_wal_size(&mut self, size: u64) {
        self.max_total_wal_size = size;
    }

    /// Makes a statistics object (RocksDB's `CreateDBStatistics`) that every database opened
    /// with these options (and their clones) counts into; see `statistics.rs`.
    pub fn enable_statistics(&mut self) {
        self.statistics = Some(std::sync::Arc::new(crate::statistics::Statistics::new()));
    }

    /// RocksDB's statistics text (`Statistics::ToString`), or None without `enable_statistics`.
    pub fn get_statistics(&self) -> Option<String> {
        self.statistics.as_ref().map(|s| s.to_text())
    }

    /// How much the statistics object collects (no effect without `enable_statistics`). As
    /// rust-rocksdb 0.25, whose discriminants RocksDB's C API takes as RocksDB's `StatsLevel`
    /// (clamped to kAll): `ExceptHistogramOrTimers` sets RocksDB's kExceptTimers (histograms
    /// but no timings), `ExceptTimers` kExceptDetailedTimers, `ExceptDetailedTimers`
    /// kExceptTimeForMutex, `ExceptTimeForMutex` and `All` kAll (`statistics.rs`).
    pub fn set_statistics_level(&self, level: StatsLevel) {
        if let Some(s) = &self.statistics {
            s.set_level(level);
        }
    }

    /// The ticker's count (0 without `enable_statistics`).
    pub fn get_ticker_count(&self, ticker: Ticker) -> u64 {
        self.statistics.as_ref().map_or(0, |s| s.ticker_count(ticker))
    }

    /// The histogram's summary (all zero without `enable_statistics`).
    pub fn get_histogram_data(&self, histogram: Histogram) -> HistogramData {
        self.statistics.as_ref().map_or_else(HistogramData::default, |s| s.histogram_data(histogram))
    }

    /// Every `period` seconds (0: never; default 600, as RocksDB) a thread writes
    /// `------- DUMPING STATS -------`, `rocksdb.dbstats` and each family's cfstats into the
    /// info LOG, then the statistics object's text if there is one (RocksDB's `DumpStats`).
    pub fn set_stats_dump_period_sec(&mut self, period: u32) {
        self.stats_dump_period_sec = period;
    }

    /// Every `period` seconds (0: never; default 600, as RocksDB) a thread (`shale:pst_st`)
    /// takes a snapshot of the statistics object's tickers, as RocksDB's `PersistStats`: the
    /// first run, at open, records the counts; each later run keeps, per ticker, the
    /// difference since the run before, under the run's time in seconds. Without
    /// `enable_statistics` nothing is taken. Where the snapshots go is
    /// [`set_persist_stats_to_disk`](Self::set_persist_stats_to_disk)'s choice; they are
    /// read with `DB::get_stats_history`.
    pub fn set_stats_persist_period_sec(&mut self, period: u32) {
        self.stats_persist_period_sec = period;
    }

    /// Where the stats snapshots of `stats_persist_period_sec` go (RocksDB's
    /// `persist_stats_to_disk`, default false; a Shale extension, rust-rocksdb 0.25 has no
    /// setter). False: in memory, the oldest dropped while the history's estimated size is
    /// above `stats_history_buffer_size`. True: written to the hidden column family
    /// `___rocksdb_stats_history___`, keys `<10-digit seconds>#<ticker name>`, values the
    /// delta in decimal, plus RocksDB's two format-version keys. The family is created at
    /// open when missing, opened without being named (it still appears in `DB::list_cf`, as
    /// in RocksDB), and never given a handle unless the caller names it.
    pub fn set_persist_stats_to_disk(&mut self, persist: bool) {
        self.persist_stats_to_disk = persist;
    }

    /// The in-memory stats history's budget in bytes (RocksDB's `stats_history_buffer_size`,
    /// default 1 MiB, estimated as RocksDB estimates it): after each snapshot the oldest
    /// snapshots are dropped while the history is larger. A Shale extension, as rust-rocksdb
    /// 0.25 has no setter.
    pub fn set_stats_history_buffer_size(&mut self, size: usize) {
        self.stats_history_buffer_size = size;
    }

    /// The clock the stats snapshots of `stats_persist_period_sec` read, for their times and
    /// their period, and the one `preserve_internal_time_seconds`' sequence-number-to-time
    /// samples read (a Shale extension, as RocksDB's `Env` clock; default the system clock).
    /// A [`MockSystemClock`](crate::MockSystemClock) lets a test move time forward.
    pub fn set_stats_history_clock(&mut self, clock: std::sync::Arc<dyn crate::env::SystemClock>) {
        self.stats_history_clock = Some(clock);
    }

    /// RocksDB's `advise_random_on_open` (default true): each table and blob file opened for
    /// reads is advised `posix_fadvise(RANDOM)`, turning off the kernel's readahead (a Get
    /// reads only its blocks' pages from disk), or with `allow_mmap_reads` its mapping
    /// `MADV_RANDOM` (a fault reads only its page), as RocksDB's. Compaction inputs and long
    /// scans are read through Shale's own readahead buffers either way (`table/prefetch.rs`,
    /// as RocksDB's `compaction_readahead_size` and auto readahead). Direct reads take no
    /// hint.
    pub fn set_advise_random_on_open(&mut self, advise: bool) {
        self.advise_random_on_open = advise;
    }

    /// RocksDB's `use_adaptive_mutex` (default false): true, a thread taking the DB mutex
    /// while another holds it first spins, trying it up to 100 times, before it blocks (as a
    /// glibc adaptive mutex); false, it blocks at once. The property
    /// `rocksdb.shale.db-mutex-spins` counts the tries that found it held. Results are the same.
    pub fn set_use_adaptive_mutex(&mut self, enabled: bool) {
        self.use_adaptive_mutex = enabled;
    }

    /// A Bloom filter in each memtable of `write_buffer_size * ratio` bytes (ratio capped at
    /// 0.25, as RocksDB's sanitizing; 0 or less: none) holding the prefixes of the prefix
    /// extractor, and whole keys with `set_memtable_whole_key_filtering(true)`. `get` and
    /// prefix seeks pass over a memtable whose Bloom excludes the key (`memtable/bloom.rs`).
    pub fn set_memtable_prefix_bloom_ratio(&mut self, ratio: f64) {
        self.memtable_prefix_bloom_ratio = if ratio.is_nan() { 0.0 } else { ratio.clamp(0.0, 0.25) };
    }

    /// The directory of the WALs, as RocksDB's `wal_dir` (default empty: the database
    /// directory). WALs are created, replayed at open, archived (`archive/` under it) and
    /// deleted there; `DB::destroy` empties and removes it, checkpoints and backups copy the
    /// WALs from it. A directory equal to the database's (`db_paths` unset or naming it too)
    /// is the database directory, as RocksDB's SanitizeOptions says.
    pub fn set_wal_dir<P: AsRef<Path>>(&mut self, path: P) {
        self.wal_dir = path.as_ref().to_path_buf();
    }

    /// RocksDB's `WAL_ttl_seconds` (default 0): with it or `WAL_size_limit_MB` above 0,
    /// WALs no family needs are moved to `archive/` in the WAL directory instead of deleted
    /// (and WAL recycling is off), where `get_updates_since` still reads them; an archived
    /// WAL older than this many seconds is deleted, checked at most every
    /// `min(600, max(1, ttl / 2))` seconds after a file purge, as RocksDB's
    /// `WalManager::PurgeObsoleteWALFiles` (`db/wal_archive.rs`).
    pub fn set_wal_ttl_seconds(&mut self, secs: u64) {
        self.wal_ttl_seconds = secs;
    }

    /// RocksDB's `WAL_size_limit_MB` (default 0): the archive (see `set_wal_ttl_seconds`)
    /// is cut, oldest first, to `limit / largest archived WAL` files, checked at most every
    /// 600 seconds (with a TTL, as that says); empty archived WALs are deleted.
    pub fn set_wal_size_limit_mb(&mut self, size: u64) {
        self.wal_size_limit_mb = size;
    }

    /// RocksDB's `manifest_preallocation_size` (default 4 MiB): with `allow_fallocate` (the
    /// default), each MANIFEST reserves disk space in blocks of this size as it grows
    /// (`fallocate(FALLOC_FL_KEEP_SIZE)`, as RocksDB's `VersionSet`); what is left past its
    /// data is released when it is closed. Its content and size are the same either way.
    pub fn set_manifest_preallocation_size(&mut self, size: usize) {
        self.manifest_preallocation_size = size as u64;
    }

    /// RocksDB's `skip_stats_update_on_db_open` (default false): Shale loads no table stats at
    /// open either way (its picker reads each table's counts when it needs them); what the
    /// value decides is whether `open_files_async` may be set, as RocksDB's check.
    pub fn set_skip_stats_update_on_db_open(&mut self, skip: bool) {
        self.dbmisc.skip_stats_update_on_db_open = skip;
    }

    /// RocksDB's `allow_mmap_writes` (default false): the table and blob files the database
    /// writes are grown a window at a time and written through a shared read-write mapping
    /// (RocksDB's `PosixMmapFile`; `shale_base::fs::WriteFileOptions`); a flush or sync unmaps
    /// the window and cuts the file back to its size (RocksDB does that at close). WALs and
    /// the MANIFEST are written as before (RocksDB's posix `OptimizeForLogWrite` and
    /// `OptimizeForManifestWrite` turn mmap writes off for them). With
    /// `use_direct_io_for_flush_and_compaction` too, `open` fails with RocksDB's NotSupported.
    /// On a file system without mappings (in memory) the files are written plainly.
    pub fn set_allow_mmap_writes(&mut self, is_enabled: bool) {
        self.allow_mmap_writes = is_enabled;
    }

    /// Table and blob files are read through a read-only mapping of the whole file, as
    /// RocksDB's `allow_mmap_reads` (default false; `shale_base::fs::ReadFileOptions`).
    pub fn set_allow_mmap_reads(&mut self, is_enabled: bool) {
        self.allow_mmap_reads = is_enabled;
    }

    /// As RocksDB's `manual_wal_flush`: writes without sync leave their WAL records in the
    /// WAL writer's buffer (written out when it fills) until `flush_wal` is called; a sync
    /// write, a WAL roll and close write it out too. A process crash loses what the buffer
    /// holds.
    pub fn set_manual_wal_flush(&mut self, is_enabled: bool) {
        self.manual_wal_flush = is_enabled;
    }

    /// RocksDB's `avoid_flush_during_recovery` (rust-rocksdb 0.25 has no setter; RocksDB's
    /// C API and OPTIONS files do): an open keeps what it replays from the WALs in the
    /// memtables and keeps those WALs, instead of writing level-0 tables; a memtable that
    /// fills during replay is still flushed, and then every family is, as RocksDB's
    /// `MaybeFlushFinalMemtableOrRestoreActiveLogFiles`. Ignored with `allow_2pc` (a
    /// TransactionDB), as RocksDB's SanitizeOptions.
    pub fn set_avoid_flush_during_recovery(&mut self, val: bool) {
        self.avoid_flush_during_recovery = val;
    }

    /// RocksDB's `avoid_flush_during_shutdown` (no rust-rocksdb setter): close leaves the
    /// writes made with `disable_wal` unflushed (they are lost) instead of flushing them.
    pub fn set_avoid_flush_during_shutdown(&mut self, val: bool) {
        self.avoid_flush_during_shutdown = val;
    }

    /// RocksDB's `write_identity_file` (no rust-rocksdb setter; default true): false keeps
    /// the database id in the MANIFEST only (no IDENTITY file; an open deletes an old one).
    /// With `write_dbid_to_manifest` false too, open fails with RocksDB's InvalidArgument.
    pub fn set_write_identity_file(&mut self, val: bool) {
        self.write_identity_file = val;
    }

    /// RocksDB's `allow_fallocate` (default true; RocksDB's C API setter, not rust-rocksdb
    /// 0.25's): WALs, compaction outputs and the MANIFEST reserve disk space ahead of their
    /// writes with `fallocate(FALLOC_FL_KEEP_SIZE)`, in blocks of RocksDB's sizes (a WAL:
    /// 1.1 x the write buffer size, capped by `max_total_wal_size` and `db_write_buffer_size`;
    /// a compaction output: 1.1 x its inputs' size, capped by the output file size limit and
    /// 1 GiB; the MANIFEST: `manifest_preallocation_size`); what is left past the data is
    /// released when the file is closed. False: no space is reserved.
    pub fn set_allow_fallocate(&mut self, val: bool) {
        self.allow_fallocate = val;
    }

    /// RocksDB's `enable_thread_tracking` (default false; RocksDB's C API setter, not
    /// rust-rocksdb 0.25's). In RocksDB it makes the background and user threads publish
    /// their current operation to the thread-status registry that `DB::GetThreadList` reads;
    /// that is its only effect, and neither rust-rocksdb 0.25 nor RocksDB's C API has a
    /// call that reads the registry. Shale has no such registry either, so the value is
    /// kept, written to the OPTIONS file and the LOG, and changes nothing else, as in a
    /// RocksDB whose threads nobody lists.
    pub fn set_enable_thread_tracking(&mut self, val: bool) {
        self.enable_thread_tracking = val;
    }

    /// RocksDB's `force_consistency_checks` (a family option, default true; RocksDB's C
    /// API setter, not rust-rocksdb 0.25's): an open checks the family's level layout the
    /// MANIFEST describes (level-1+ files sorted and disjoint, each file's smallest key
    /// not after its largest) and fails with RocksDB's Corruption
    /// (`force_consistency_checks: VersionBuilder: ...`) when it is broken. False: the
    /// layout is taken as it is, as RocksDB's release builds do.
    pub fn set_force_consistency_checks(&mut self, val: bool) {
        self.force_consistency_checks = val;
    }

    /// RocksDB's `max_write_batch_group_size_bytes` (default 1 MiB; RocksDB's C API setter,
    /// not rust-rocksdb 0.25's): a write group's leader takes the writers queued behind it
    /// into its WAL record up to this many bytes, or up to its own size plus an eighth of
    /// this when it is itself at most that eighth, as RocksDB's write thread.
    pub fn set_max_write_batch_group_size_bytes(&mut self, val: u64) {
        self.max_write_batch_group_size_bytes = val;
    }

    /// RocksDB's `disallow_memtable_writes` (a family option; RocksDB's C API setter, not
    /// rust-rocksdb 0.25's): the family takes data only by `ingest_external_file*`; a write
    /// naming it fails with InvalidArgument "This column family has
    /// disallow_memtable_writes=true" (the whole write, nothing applied), an open whose WALs
    /// hold writes to it fails the same way, and the default family cannot have it (open:
    /// InvalidArgument). Not changeable by `set_options`.
    pub fn set_disallow_memtable_writes(&mut self, val: bool) {
        self.disallow_memtable_writes = val;
    }

    /// RocksDB's `db_host_id` (RocksDB's C API setter, not rust-rocksdb 0.25's): what every
    /// table the database writes records as `rocksdb.creating.host.identity`; the default
    /// "__hostname__" stands for the machine's host name, an empty text records none.
    pub fn set_db_host_id(&mut self, id: &str) {
        self.db_host_id = id.to_string();
    }

    /// RocksDB's `log_readahead_size` (RocksDB's C API setter, not rust-rocksdb 0.25's;
    /// default 0, off): an open reads the WALs it replays and the MANIFEST that many bytes
    /// per read call, as RocksDB's `ReadaheadSequentialFile` (fewer round trips on a remote
    /// file system).
    pub fn set_log_readahead_size(&mut self, size: usize) {
        self.log_readahead_size = size;
    }

    /// Families flushed together are installed together: one MANIFEST write (an atomic
    /// group), so a crash keeps all of their new tables or none (`db/flush.rs`). A full
    /// memtable then switches every non-empty family's.
    pub fn set_atomic_flush(&mut self, atomic_flush: bool) {
        self.atomic_flush = atomic_flush;
    }

    /// Point lookups (`get`, `multi_get`) cache the entry they find in a table file, keyed by
    /// the file, the key and (when the read's snapshot is older than the file's newest entry)
    /// the snapshot, and answer from it before the file's index and blocks, as RocksDB's
    /// `row_cache`. The cache may be shared with other databases or be a block cache.
    pub fn set_row_cache(&mut self, cache: &Cache) {
        self.row_cache = Some(cache.clone());
    }

    /// Flush and compaction table writes go through RocksDB's GenericRateLimiter
    /// (`rate_limiter.rs`): `rate_bytes_per_sec`, refilled every `refill_period_us`, flushes
    /// before compactions except one refill in `fairness`.
    pub fn set_ratelimiter(&mut self, rate_bytes_per_sec: i64, refill_period_us: i64, fairness: i32) {
        self.set_rate_limiter_of(rate_bytes_per_sec, refill_period_us, fairness, false);
    }

    fn set_rate_limiter_of(&mut self, rate: i64, refill_period_us: i64, fairness: i32, auto_tuned: bool) {
        if rate <= 0 || refill_period_us <= 0 || fairness <= 0 {
            self.unsupported.push("rate_limiter with a rate, refill period or fairness <= 0");
            return;
        }
        self.rate_limiter = Some(std::sync::Arc::new(crate::rate_limiter::RateLimiter::new(
            rate,
            refill_period_us,
            fairness,
            auto_tuned,
        )));
    }

    pub fn set_auto_tuned_ratelimiter(
        &mut self,
        rate_bytes_per_sec: i64,
        refill_period_us: i64,
        fairness: i32,
    ) {
        // The rate moves within [rate / 20, rate] with how often the limiter runs dry.
        self.set_rate_limiter_of(rate_bytes_per_sec, refill_period_us, fairness, true);
    }

    /// The info LOG rolls to `LOG.old.<micros>` once it holds `size` bytes (0, the default:
    /// never by size), as RocksDB's `AutoRollLogger` (`db/info_log.rs`).
    pub fn set_max_log_file_size(&mut self, size: usize) {
        self.max_log_file_size = size;
    }

    /// The info LOG rolls to `LOG.old.<micros>` once it is `secs` seconds old (0, the
    /// default: never by time), as RocksDB's `AutoRollLogger` (`db/info_log.rs`).
    pub fn set_log_file_time_to_roll(&mut self, secs: usize) {
        self.log_file_time_to_roll = secs;
    }

    /// RocksDB's `recycle_log_file_num` (default 0: off): up to `num` obsolete WALs are kept
    /// and reused for new WALs instead of being deleted. A reused file is renamed to the new
    /// WAL's name and overwritten from its start, its blocks already allocated; every WAL is
    /// then written in RocksDB's recyclable record format (each header carries the log
    /// number), so recovery stops at the first record left from the file's earlier life.
    /// Only WALs made since the database opened are reused, and none while file deletions
    /// are disabled. As RocksDB 11.8.1 sanitizes it, recycling is off with the WAL archive
    /// (`WAL_ttl_seconds` / `WAL_size_limit_MB`) and with the TolerateCorruptedTailRecords
    /// and AbsoluteConsistency recovery modes (the OPTIONS file then says 0). While it is on,
    /// a write with `WriteOptions::disable_wal` fails with InvalidArgument, as RocksDB's.
    pub fn set_recycle_log_file_num(&mut self, num: usize) {
        self.recycle_log_file_num = num;
    }

    /// The block size of memtable arenas (RocksDB's `arena_block_size`): 0, the default,
    /// means an eighth of `write_buffer_size`, at most 1 MiB; any size is rounded up to a
    /// multiple of 4 KiB within 4 KiB..2 GiB. Blocks of 64 KiB or more are faulted in only
    /// where entries reach them (see `memtable/arena.rs`).
    pub fn set_arena_block_size(&mut self, size: usize) {
        self.arena_block_size = size;
    }

    /// With `stats_dump_period_sec`, each stats dump into the info LOG is followed by
    /// `------- Malloc STATS -------` and the allocator's figures, as RocksDB's `DumpStats`.
    /// Shale uses the system allocator: on Linux with glibc the figures are `mallinfo2`'s;
    /// elsewhere nothing is logged, as RocksDB built without jemalloc.
    pub fn set_dump_malloc_stats(&mut self, enabled: bool) {
        self.dump_malloc_stats = enabled;
    }

    /// RocksDB's experimental MemPurge: a flush of full write buffers may instead keep one
    /// garbage-collected immutable memtable (`db/mempurge.rs`); 0 turns it off.
    pub fn set_experimental_mempurge_threshold(&mut self, threshold: f64) {
        self.experimental_mempurge_threshold = threshold;
    }

    /// Whole keys go into the memtable Bloom (which `set_memtable_prefix_bloom_ratio` sizes),
    /// and `get` checks them there, as RocksDB's.
    pub fn set_memtable_whole_key_filtering(&mut self, whole_key_filter: bool) {
        self.memtable_whole_key_filtering = whole_key_filter;
    }

    /// Integrated BlobDB: flushes and compactions write values of at least `min_blob_size`
    /// to blob files, and the SSTs hold blob indexes (`blob/`, docs/blob-format.md).
    pub fn set_enable_blob_files(&mut self, val: bool) {
        self.blob.enable_blob_files = val;
    }

    /// Values at least this long go to blob files (with `enable_blob_files`).
    pub fn set_min_blob_size(&mut self, val: u64) {
        self.blob.min_blob_size = val;
    }

    /// A blob file is closed once it reaches this size.
    /// RocksDB's `blob_file_starting_level` (default 0): with blob files enabled, values go to
    /// blob files only in flushes (level 0) and compactions whose output level is at least
    /// this; below it they stay in the tables, and existing blob references pass through.
    /// Mutable through `set_options`: the next flush or compaction uses it.
    pub fn set_blob_file_starting_level(&mut self, level: i32) {
        self.blob.file_starting_level = level;
    }

    pub fn set_blob_file_size(&mut self, val: u64) {
        self.blob.blob_file_size = val;
    }

    /// RocksDB 11.8.1's `enable_blob_direct_write` (its C API's
    /// `rocksdb_options_set_enable_blob_direct_write`): with `enable_blob_files`, values of at
    /// least `min_blob_size` are written to blob files by the write itself, and the WAL and
    /// memtable hold blob indexes. Needs `allow_concurrent_memtable_write` off and no
    /// pipelined, unordered or two-queue writes (NotSupported at open otherwise); without
    /// `enable_blob_files` it is turned off at open, as RocksDB's sanitizing does.
    pub fn set_enable_blob_direct_write(&mut self, val: bool) {
        self.blob.direct_write = val;
    }

    /// RocksDB 11.8.1's `blob_direct_write_partitions` (default 1; 0 counts as 1): how many
    /// blob files direct writes keep open at once, each write going to the next (RocksDB's
    /// default round-robin strategy).
    pub fn set_blob_direct_write_partitions(&mut self, val: u32) {
        self.blob.direct_write_partitions = val;
    }

    /// The compression of blob values.
    pub fn set_blob_compression_type(&mut self, val: DBCompressionType) {
        self.blob.compression = val;
    }

    /// Garbage collection of blob files during compaction: blobs in the oldest
    /// `blob_garbage_collection_age_cutoff` of the blob files are rewritten.
    pub fn set_enable_blob_gc(&mut self, val: bool) {
        self.blob.enable_gc = val;
    }

    /// The fraction (0 to 1) of the oldest blob files garbage collection relocates from.
    pub fn set_blob_gc_age_cutoff(&mut self, val: f64) {
        self.blob.gc_age_cutoff = val;
    }

    /// RocksDB's `blob_garbage_collection_force_threshold` (default 1.0): with blob garbage
    /// collection on, when the blob files in the oldest `blob_garbage_collection_age_cutoff`
    /// share hold at least this fraction of garbage bytes, the tables linked to the oldest
    /// blob file are compacted (reason ForcedBlobGC, into their own level), which relocates
    /// their live blobs and lets the old blob files go (`compaction/picker.rs::pick_forced_blob_gc`,
    /// RocksDB's `ComputeFilesMarkedForForcedBlobGC`). 1.0 or more: never forced.
    pub fn set_blob_gc_force_threshold(&mut self, val: f64) {
        self.blob.gc_force_threshold = val;
    }

    /// Readahead for blob reads in compactions: before reading a blob record, a compaction
    /// asks the file system to prefetch this many bytes from it (0: no prefetch).
    pub fn set_blob_compaction_readahead_size(&mut self, val: u64) {
        self.blob.compaction_readahead_size = val;
    }

    /// A cache for blob values (BlobDB): gets and iterators look values up there before
    /// reading the blob file, and add what they read. It may be the block cache.
    pub fn set_blob_cache(&mut self, cache: &Cache) {
        self.blob_cache = Some(cache.0.clone());
    }

    /// RocksDB's `allow_ingest_behind` (default false; deprecated there for the family
    /// option `cf_allow_ingest_behind`, which [`set_cf_allow_ingest_behind`](Self::set_cf_allow_ingest_behind)
    /// sets): every family keeps its last level for files ingested with
    /// `IngestExternalFileOptions::set_ingest_behind`. Universal compaction then writes no
    /// deeper than the level above it (num_levels raised to 3 if lower), compactions keep
    /// the tombstones and sequence numbers the ingested files may need, and a universal
    /// `compact_range` ends there. Files ingested behind go to the last level with sequence
    /// number 0, below every write. As in RocksDB, the level style's compactions still write
    /// the last level (only universal compaction honours the reservation there).
    pub fn set_allow_ingest_behind(&mut self, val: bool) {
        self.allow_ingest_behind = val;
    }

    /// RocksDB's `cf_allow_ingest_behind` (default false): `set_allow_ingest_behind` for this
    /// family alone. A Shale extension, as rust-rocksdb 0.25 has no setter.
    pub fn set_cf_allow_ingest_behind(&mut self, val: bool) {
        self.cf_allow_ingest_behind = val;
    }

    pub fn add_compact_on_deletion_collector_factory(
        &mut self,
        window_size: usize,
        num_dels_trigger: usize,
        deletion_ratio: f64,
    ) {
        use crate::table::deletion_collector::{CollectorFactory, CompactOnDeletionCollectorFactory};
        self.deletion_collectors.push(CollectorFactory::CompactOnDeletion(
            CompactOnDeletionCollectorFactory {
                window_size,
                deletion_trigger: num_dels_trigger,
                deletion_ratio,
                min_file_size: 0,
            },
        ));
    }

    /// RocksDB's `sst_partitioner_factory` (default none; a Shale extension, as rust-rocksdb
    /// 0.25 has no setter; options strings and OPTIONS files name it as RocksDB's,
    /// `sst_partitioner_factory={id=SstPartitionerFixedPrefixFactory;length=4}`): a
    /// compaction into a level below 0 ends an output table before the first key the
    /// partitioner puts past a boundary, and a file spanning a boundary is not moved down
    /// unchanged (unless into the last level), as RocksDB's `CompactionOutputs` and
    /// `Compaction::IsTrivialMove`. Immutable while the family is open.
    pub fn set_sst_partitioner_factory(&mut self, factory: crate::SstPartitionerFactory) {
        self.sst_partitioner_factory = Some(factory);
    }

    /// The memtables of this database charge `write_buffer_manager` (shared with every other
    /// database given the same manager); it replaces `db_write_buffer_size`, as in RocksDB.
    pub fn set_write_buffer_manager(&mut self, write_buffer_manager: &WriteBufferManager) {
        self.write_buffer_manager = Some(write_buffer_manager.state.clone());
    }

    /// With `true`, obsolete tables and WALs are deleted by a background thread, never by
    /// the user thread that let go of them (a manual compaction, ingestion, family drop,
    /// `resume`, the end of a checkpoint's hold), as RocksDB's (`db/obsolete.rs`).
    pub fn set_avoid_unnecessary_blocking_io(&mut self, val: bool) {
        self.avoid_unnecessary_blocking_io = val;
    }

    /// The MANIFEST records each closed WAL with its synced size (WalAddition) and the WALs
    /// no longer needed (WalDeletion); an open finds a tracked WAL missing or shorter than
    /// its synced size and fails with Corruption, as RocksDB's (`db/wal_tracking.rs`).
    pub fn set_track_and_verify_wals_in_manifest(&mut self, val: bool) {
        self.track_and_verify_wals_in_manifest = val;
    }

    pub fn get_track_and_verify_wals_in_manifest(&self) -> bool {
        self.track_and_verify_wals_in_manifest
    }

    /// With true (the default, as in RocksDB 11), every MANIFEST starts with the DB id, so a
    /// checkpoint or a copy without the IDENTITY file keeps the database's id; with false only
    /// the IDENTITY file holds it. On open the MANIFEST's id wins over IDENTITY's, as in
    /// RocksDB's `SetupDBId` (`db/open.rs`).
    pub fn set_write_dbid_to_manifest(&mut self, val: bool) {
        self.write_dbid_to_manifest = val;
    }

    pub fn get_write_dbid_to_manifest(&self) -> bool {
        self.write_dbid_to_manifest
    }

    /// The database's info-log lines go to `logger` instead of a LOG file, as RocksDB's
    /// `info_log` option.
    pub fn set_info_logger(&mut self, logger: InfoLogger) {
        self.info_logger = logger.inner;
    }

    /// The logger given with `set_info_logger` (one that logs nothing when none was).
    pub fn get_info_logger(&self) -> InfoLogger {
        InfoLogger { inner: self.info_logger.clone() }
    }
}
