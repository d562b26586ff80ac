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

use crate::slice_transform::SliceTransformRef;
use crate::table::builder::CompressionOpts;
use shale_base::compression::CompressionType;

mod db;
pub use db::{DbConfig, LogLevel, SystemClock, TableIds};

/// How a family compacts (RocksDB's `CompactionStyle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionStyle {
    Level,
    Universal,
    Fifo,
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

/// What the pickers and the compaction's output codec depend on.
#[derive(Debug, Clone, PartialEq)]
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
    pub fifo_max_table_files_size: u64,
    pub fifo_allow_compaction: bool,
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
            fifo_max_table_files_size: 1 << 30,
            fifo_allow_compaction: false,
            universal: UniversalSettings::default(),
            compression: CompressionType::Lz4,
            compression_opts: CompressionOpts::default(),
            compression_per_level: Vec::new(),
            bottommost_compression: None,
            bottommost_compression_opts: None,
            blob_gc: BlobGc { enable: false, age_cutoff: 0.25, force_threshold: 1.0 },
            uncache_aggressiveness: 0,
        }
    }
}

impl CfConfig {
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
}
