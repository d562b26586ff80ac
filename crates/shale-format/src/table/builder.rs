//! Writes a block-based table (SST) the way RocksDB does with format_version 2 to 7
//! (5 by default, RocksDB 7.8.3's default; 6 and 7 as RocksDB 8.6+ and 10.4+ write them).
//!
//! ```text
//! file : data block* | filter block? | index block | range-del block? | properties block
//!        | metaindex block | footer (53 bytes)
//! each block is followed by its 5-byte trailer (compression type, checksum; from
//! format_version 6 the checksum has the footer's base context and the block's offset mixed in)
//! metaindex : "fullfilter.rocksdb.BuiltinBloomFilter" -> handle, "rocksdb.properties" ->
//!             handle, "rocksdb.range_del" -> handle, and from format_version 6
//!             "rocksdb.index" -> handle   (sorted, restart interval 1)
//! "rocksdb.compression" property: the codec's name (format_version <= 6), or
//!             "BuiltinV2;" + two hex digits per codec used in the file + ";" (7;
//!             ";;" when compression is off)
//! index     : one entry per data block, key = a separator >= every key of the block and
//!             < every key of the next (user keys only, if no two adjacent blocks share a
//!             user key), value = the block's handle (delta-encoded, format_version >= 4)
//! partitioned (`partitioned_index`, `partition_filters`; partitioned_builder.rs):
//!   filter block -> filter partition* | top-level filter index
//!                   (metaindex "partitionedfilter.rocksdb.BuiltinBloomFilter")
//!   index block  -> index partition* | top-level index (footer / "rocksdb.index")
//! ```
//! The full filter holds, for each distinct user key, the key and (with a prefix extractor,
//! when the key is in its domain) its prefix; only the prefix with whole_key_filtering off
//! (docs/sst.md). The extractor's name goes in "rocksdb.prefix.extractor.name" and
//! "rocksdb.block.based.table.prefix.filtering" is "1" when there is one.
//! With user-defined timestamps (docs/timestamps.md) every user key ends with its timestamp;
//! the filter holds keys (and prefixes) without it, and the properties block gains
//! "rocksdb.timestamp_min" / "rocksdb.timestamp_max" (raw bytes, empty for no entries).
//! Data and index blocks are compressed; filter, range-del, properties and metaindex
//! blocks never are.
//!
//! With a compression dictionary (`compression_opts.max_dict_bytes > 0`, RocksDB's
//! `BlockBasedTableBuilder` kBuffered state) the data blocks are held uncompressed until
//! `max_dict_buffer_bytes` (or the target file size, or the whole file) is buffered; then
//! samples are taken from them (RocksDB's order: from the middle block, stepping by a large
//! prime modulo the block count) up to `zstd_max_train_bytes` (ZSTD, dictionary trained
//! with ZSTD's trainer) or `max_dict_bytes` (the samples are the dictionary), every data
//! block is compressed with the dictionary, and it is stored raw in the
//! "rocksdb.compression_dict" meta block. Snappy and BZip2 store it but compress without
//! it, as RocksDB does; index blocks never use it.
//!
//! With `compression_opts.parallel_threads > 1` (and a codec RocksDB parallelizes,
//! `parallel.rs`) the data blocks are compressed by worker threads while the table goes on
//! being built, and written in order: the same bytes as a single-threaded build.

use std::cmp::Ordering;

use crate::coding::{put_fixed32, put_varint64};
use crate::error::{Error, Result};
use crate::fs::WritableFile;
use crate::key::{
    pack_seq_and_type, trailer, user_key, InternalKeyComparator, ValueType, MAX_SEQUENCE_NUMBER,
    VALUE_TYPE_FOR_SEEK,
};

use super::block::BlockBuilder;
use super::compression::{CodecOpts, CompressionType};
use super::filter::{FilterBuilder, BLOOM_POLICY_NAME};
use super::format::{
    uses_context_checksum, BlockChecksum, BlockHandle, ChecksumType, Footer, BLOCK_TRAILER_SIZE,
    MAX_FORMAT_VERSION,
};
use super::parallel::compress_verified;
use super::partitioned_builder::{top_level_block, PartitionedFilterBuilder, PartitionedIndexBuilder};
use super::properties::{
    names, TableProperties, BUILTIN_COMPRESSION_MANAGER, COMPRESSION_DICT_BLOCK, FULL_FILTER_PREFIX,
    INDEX_BLOCK, PARTITIONED_FILTER_PREFIX, PROPERTIES_BLOCK, RANGE_DEL_BLOCK,
};

/// The oldest format_version Shale writes (RocksDB 11 no longer reads 0 and 1).
pub const MIN_WRITE_FORMAT_VERSION: u32 = 2;

/// A random, non-zero base context checksum for a new format_version >= 6 table (RocksDB
/// draws it from its thread-local random generator; std's per-process random hash keys,
/// mixed with the file's number and the clock, serve the same purpose).
fn new_base_context_checksum(file_number: u64) -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(file_number);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    h.write_u64(nanos);
    let v = h.finish();
    match (v as u32) ^ ((v >> 32) as u32) {
        0 => 1,
        x => x,
    }
}

/// The smallest and largest user-defined timestamp of a table's entries (raw bytes).
pub const TIMESTAMP_MIN_PROPERTY: &str = "rocksdb.timestamp_min";
pub const TIMESTAMP_MAX_PROPERTY: &str = "rocksdb.timestamp_max";

/// The filter policy name RocksDB records for its Bloom filter.
pub const BLOOM_FILTER_PROPERTY_NAME: &str = "bloomfilter";

/// RocksDB's `kDefaultPageSize`: `block_align` aligns data blocks to the lesser of it and
/// the block size.
const DEFAULT_PAGE_SIZE: usize = 4096;

/// Options for one table file.
#[derive(Clone, Debug)]
pub struct TableBuilderOptions {
    pub icmp: InternalKeyComparator,
    /// Which index keys are shortened (RocksDB's `index_shortening`).
    pub index_shortening: IndexShorteningMode,
    /// RocksDB's `persist_user_defined_timestamps = false` (with a comparator with
    /// timestamps): keys are written without their timestamps (every block, the filter, the
    /// range tombstones' both ends), the table is built in the comparator's order without
    /// them ([`crate::comparator::TsStrippedComparator`]), no timestamp range is collected,
    /// and "rocksdb.user.defined.timestamps.persisted" is written as 0. Without timestamps
    /// only that property is written.
    pub strip_timestamps: bool,
    pub block_size: usize,
    pub block_restart_interval: usize,
    pub index_block_restart_interval: usize,
    pub compression: CompressionType,
    /// None = no filter.
    pub filter_bits_per_key: Option<f64>,
    /// `optimize_filters_for_memory`: the filter policy's rounding balance (format_version 5+).
    pub filter_rounding: Option<crate::table::filter::FilterRounding>,
    /// RocksDB's Ribbon policy: Some(bloom_before_level); None = its Bloom policy.
    pub filter_ribbon_before_level: Option<i32>,
    /// One of RocksDB's internal policies built by id (`filter.rs`); it picks the filter
    /// with `filter_bits_per_key`, whatever the format_version. The read-only one builds
    /// none and still names itself in "rocksdb.filter.policy".
    pub filter_internal: Option<crate::table::filter::InternalFilterPolicy>,
    /// The level the Ribbon policy goes by: -1 for a flush, the output level for a
    /// compaction, `i32::MAX - 1` ("last level") when unknown, for FIFO and SstFileWriter.
    pub filter_level: i32,
    pub whole_key_filtering: bool,
    pub format_version: u32,
    pub column_family_id: u32,
    pub column_family_name: String,
    pub creation_time: u64,
    pub oldest_key_time: u64,
    pub file_creation_time: u64,
    pub db_id: String,
    pub db_session_id: String,
    pub orig_file_number: u64,
    /// Block checksum kind (RocksDB 7.8.3's own default is XXH3; Shale writes CRC32C).
    pub checksum: ChecksumType,
    /// "rocksdb.merge.operator" ("nullptr" when there is none).
    pub merge_operator_name: String,
    /// "rocksdb.prefix.extractor.name" ("nullptr" when there is none); the name of
    /// `prefix_extractor` when that is set.
    pub prefix_extractor_name: String,
    /// The column family's prefix extractor: the filter holds each key's prefix (and the
    /// key itself unless `whole_key_filtering` is false), as RocksDB's FullFilterBlockBuilder.
    pub prefix_extractor: Option<crate::slice_transform::SliceTransformRef>,
    /// "rocksdb.creating.host.identity" (not written when empty).
    pub db_host_id: String,
    /// Data blocks also carry RocksDB's hash index (kDataBlockBinaryAndHash) with this
    /// util ratio; None: binary search only. Taken only with a bytewise or reverse-bytewise
    /// comparator, as RocksDB.
    pub data_block_hash_ratio: Option<f64>,
    /// `table_properties_collectors` (`add_compact_on_deletion_collector_factory`): the
    /// collectors they make watch the entries added; any that fires marks the table for
    /// compaction (`TableBuildResult::marked_for_compaction`). Their names are the table's
    /// `rocksdb.property.collectors`.
    pub collectors: Vec<super::deletion_collector::CollectorFactory>,
    /// The format `AnyTableBuilder` writes (this builder writes block-based tables only).
    pub table_format: super::any::TableFormat,
    /// Appends ask this rate limiter first, at this priority (flushes high, compactions low).
    pub rate_limiter:
        Option<(std::sync::Arc<crate::rate_limiter::RateLimiter>, crate::rate_limiter::IoPriority)>,
    /// The database's statistics, which count the rate limiter's requests (RocksDB's
    /// `WritableFileWriter::stats_`).
    pub rate_limiter_stats: Option<std::sync::Arc<crate::statistics::Statistics>>,
    /// RocksDB's `compression_opts` (dictionary sizes, and the values recorded in the
    /// "rocksdb.compression_options" property).
    pub compression_opts: CompressionOpts,
    /// RocksDB 11's `compression_manager` set to its built-in manager by the one id RocksDB
    /// 11.8.1 registers, "BuiltinV2" (helper cfblob, issue 33): blocks are compressed as
    /// without one (the built-in manager is the default), and, as RocksDB's builder does for
    /// an explicit manager, "rocksdb.compression_options" ends with the pseudo-options
    /// `_compression_manager=BuiltinCompressionManagerV2; ` (after `_type`) and
    /// `_compressor=<the data blocks' compressor>; `.
    pub builtin_compression_manager: bool,
    /// The output's target size (compactions), 0 for a flush: bounds the dictionary
    /// buffering with `max_dict_buffer_bytes`, as RocksDB's.
    pub target_file_size: u64,
    /// "rocksdb.newest.key.time": a flush's time, the newest of a compaction's inputs', 0
    /// (unknown) for an external file.
    pub newest_key_time: u64,
    /// RocksDB's `index_type = kTwoLevelIndexSearch`: a partitioned index
    /// (`partitioned_builder.rs`).
    pub partitioned_index: bool,
    /// RocksDB's `partition_filters` (with a partitioned index only; decoupled from the
    /// index partitions, RocksDB's `decouple_partitioned_filters` default).
    pub partition_filters: bool,
    /// RocksDB's `metadata_block_size`: the size index and filter partitions are cut at.
    pub metadata_block_size: usize,
    /// RocksDB's `decouple_partitioned_filters` (default true): filter partitions cut by
    /// their own size, else at the index partitions' cuts.
    pub decouple_partitioned_filters: bool,
    /// RocksDB's `index_type = kHashSearch`: with a prefix extractor, the binary-search
    /// index (restart interval 1) plus the hash index's two meta blocks (`hash_index.rs`);
    /// without one, a binary-search index (RocksDB's DB refuses that combination at open).
    pub hash_index: bool,
    /// RocksDB's `index_type = kBinarySearchWithFirstKey`: the binary-search index whose
    /// values carry each data block's first internal key after its handle
    /// (`IndexValue::EncodeTo` with `have_first_key`; index type 3 in the properties).
    pub first_key_index: bool,
    /// RocksDB's `block_size_deviation` (percent; the factory makes values outside 0..=100
    /// 0): a data block (and an index partition) is cut before an entry that would take it
    /// over its size once it holds more than `100 - deviation` percent of it.
    pub block_size_deviation: u32,
    /// RocksDB's `use_delta_encoding`: data-block keys share a prefix with the key before
    /// (off: every key is stored whole).
    pub use_delta_encoding: bool,
    /// RocksDB 11's `separate_key_value_in_data_block`: data blocks hold their keys first,
    /// then their values (`block.rs`), and the table's properties say so.
    pub separate_key_value_in_data_block: bool,
    /// RocksDB's `enable_index_compression`: index blocks and partitions are compressed
    /// with the table's codec (off: stored uncompressed).
    pub enable_index_compression: bool,
    /// RocksDB's `verify_compression`: every compressed block is decompressed and compared
    /// with its input before it is written (a mismatch fails the build with Corruption).
    pub verify_compression: bool,
    /// RocksDB's `block_align`: each data block (with its trailer) is padded with zeros to a
    /// multiple of min(block_size, 4096), and blocks are cut so that one fits; index values
    /// are then not delta-encoded. Needs compression off (the factory refuses it otherwise).
    pub block_align: bool,
    /// RocksDB's `super_block_alignment_size` (0: off; a power of two): a data block that
    /// would straddle a multiple of it starts at that multiple instead, when the padding
    /// is under `size / super_block_alignment_space_overhead_ratio` (ratio 0: off).
    pub super_block_alignment_size: usize,
    pub super_block_alignment_space_overhead_ratio: usize,
    /// RocksDB's `sample_for_compression` (0: off): one data block in this many, drawn at
    /// random, is also compressed with LZ4 (fast) and ZSTD (slow), and the table records
    /// the data sizes each would give ("rocksdb.sample_for_compression.fast/slow.data.size").
    pub sample_for_compression: u64,
    /// RocksDB's `prepopulate_block_cache` when it applies to this table (kFlushOnly and a
    /// flush, kFlushAndCompaction and a flush or compaction): each data block, uncompressed,
    /// goes into this cache under the key the table's reader will look it up by.
    pub warm_cache: Option<WarmCache>,
    /// RocksDB's `detect_filter_construct_corruption`: each filter (partition) built is
    /// checked against its hash entries; a mismatch fails the table with Corruption.
    pub detect_filter_construct_corruption: bool,
    /// RocksDB's `uniform_cv_threshold` (< 0: off, RocksDB's default -1): index blocks whose
    /// restart keys are evenly spread get the footer's uniform-keys flag (`block.rs`).
    pub uniform_cv_threshold: f64,
}

/// Where a table's data blocks are put as they are written (`prepopulate_block_cache`).
#[derive(Clone)]
pub struct WarmCache {
    pub cache: std::sync::Arc<crate::cache::BlockCache>,
    /// The table's key base, as its reader will have it (`TableReaderOptions::cache_key`).
    pub key: crate::cache::OffsetableCacheKey,
    /// Counts each block added, as RocksDB's `UpdateCacheInsertionMetrics`.
    pub statistics: Option<std::sync::Arc<crate::statistics::Statistics>>,
    /// RocksDB's `read_amp_bytes_per_bit`: a block put in the cache gets the bitmap a block
    /// read from the file would (`Block::with_read_amp`), as RocksDB's warming goes through
    /// the table's block-creation context.
    pub read_amp_bytes_per_bit: u32,
    /// RocksDB's `block_protection_bytes_per_key`: a block put in the cache gets the
    /// per-entry checksums a block read from the file would (`Block::protected`).
    pub block_protection_bytes_per_key: u8,
    /// RocksDB's `WarmCacheConfig::Compute`: a flush warms with low priority, a compaction
    /// with bottom priority.
    pub priority: crate::cache::Priority,
}

impl std::fmt::Debug for WarmCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WarmCache").field("key", &self.key).finish_non_exhaustive()
    }
}

/// RocksDB's `CompressionOptions` as far as a table's writing depends on them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompressionOpts {
    pub window_bits: i32,
    /// 32767: the codec's default.
    pub level: i32,
    pub strategy: i32,
    pub max_dict_bytes: u32,
    pub zstd_max_train_bytes: u32,
    pub max_dict_buffer_bytes: u64,
    pub use_zstd_dict_trainer: bool,
    /// RocksDB's `parallel_threads`: threads compressing data blocks (`parallel.rs`);
    /// not in the table's properties, as RocksDB (it does not change the bytes).
    pub parallel_threads: i32,
    /// RocksDB's `max_compressed_bytes_per_kb` (default 896): a block is kept compressed
    /// only when its compressed size is at most this many bytes per KiB of raw data
    /// (capped at 1023); 0 or less turns compression off, as RocksDB's built-in
    /// compression manager gives no compressor then.
    pub max_compressed_bytes_per_kb: i32,
    /// RocksDB's `checksum` (ZSTD only): each compressed block's ZSTD frame carries its
    /// content checksum, verified when it is decompressed.
    pub checksum: bool,
}

impl Default for CompressionOpts {
    fn default() -> Self {
        CompressionOpts {
            window_bits: -14,
            level: 32767,
            strategy: 0,
            max_dict_bytes: 0,
            zstd_max_train_bytes: 0,
            max_dict_buffer_bytes: 0,
            use_zstd_dict_trainer: true,
            parallel_threads: 1,
            max_compressed_bytes_per_kb: 896,
            checksum: false,
        }
    }
}

impl CompressionOpts {
    /// The "rocksdb.compression_options" property as RocksDB 11.8.1's block-based table
    /// builder writes it: `CompressionOptionsToString` (the configured values, before the
    /// builder caps `max_compressed_bytes_per_kb`), then the configured compression type's
    /// number as the pseudo-option `_type`.
    pub fn to_property(&self, compression: CompressionType) -> String {
        format!(
            "window_bits={}; level={}; strategy={}; max_dict_bytes={}; zstd_max_train_bytes={}; enabled=0; \
             max_dict_buffer_bytes={}; use_zstd_dict_trainer={}; max_compressed_bytes_per_kb={}; checksum={}; \
             _type={}; ",
            self.window_bits,
            self.level,
            self.strategy,
            self.max_dict_bytes,
            self.zstd_max_train_bytes,
            self.max_dict_buffer_bytes,
            u8::from(self.use_zstd_dict_trainer),
            self.max_compressed_bytes_per_kb,
            u8::from(self.checksum),
            compression as u8
        )
    }

    /// Whether these options compress at all: RocksDB's `GetCompressor` gives no
    /// compressor when `max_compressed_bytes_per_kb` is 0 or less.
    pub fn compresses(&self) -> bool {
        self.max_compressed_bytes_per_kb > 0
    }

    /// The level to compress with (None: the codec's default).
    pub fn level(&self) -> Option<i32> {
        (self.level != 32767).then_some(self.level)
    }

    /// The codec settings blocks are compressed with (level, zlib's window bits and strategy).
    pub fn codec(&self) -> CodecOpts {
        CodecOpts {
            level: self.level(),
            window_bits: self.window_bits,
            strategy: self.strategy,
            // RocksDB's table builder: "only allowing compression when it saves space".
            max_compressed_bytes_per_kb: self.max_compressed_bytes_per_kb.clamp(0, 1023) as u32,
            checksum: self.checksum,
        }
    }
}

/// The name (`GetId()`) of RocksDB 11.8.1's built-in compressor of codec `t`
/// (`util/compression.cc`'s `Builtin<Codec>CompressorV2`).
pub fn builtin_compressor_name(t: CompressionType) -> &'static str {
    match t {
        CompressionType::None => "",
        CompressionType::Snappy => "BuiltinSnappyCompressorV2",
        CompressionType::Zlib => "BuiltinZlibCompressorV2",
        CompressionType::BZip2 => "BuiltinBZip2CompressorV2",
        CompressionType::Lz4 => "BuiltinLZ4CompressorV2",
        CompressionType::Lz4hc => "BuiltinLZ4HCCompressorV2",
        CompressionType::Xpress => "BuiltinXpressCompressorV2",
        CompressionType::Zstd => "BuiltinZSTDCompressorV2",
    }
}

impl TableBuilderOptions {
    /// RocksDB's block-based table defaults.
    pub fn new(icmp: InternalKeyComparator) -> Self {
        TableBuilderOptions {
            icmp,
            index_shortening: IndexShorteningMode::ShortenSeparators,
            strip_timestamps: false,
            block_size: 4096,
            block_restart_interval: 16,
            index_block_restart_interval: 1,
            compression: CompressionType::None,
            filter_bits_per_key: None,
            filter_rounding: None,
            filter_ribbon_before_level: None,
            filter_internal: None,
            filter_level: i32::MAX - 1,
            whole_key_filtering: true,
            format_version: 5,
            column_family_id: 0,
            column_family_name: "default".to_string(),
            creation_time: 0,
            oldest_key_time: 0,
            file_creation_time: 0,
            db_id: String::new(),
            db_session_id: String::new(),
            orig_file_number: 0,
            checksum: ChecksumType::Crc32c,
            merge_operator_name: "nullptr".to_string(),
            prefix_extractor_name: "nullptr".to_string(),
            prefix_extractor: None,
            db_host_id: String::new(),
            data_block_hash_ratio: None,
            rate_limiter: None,
            rate_limiter_stats: None,
            collectors: Vec::new(),
            table_format: super::any::TableFormat::BlockBased,
            compression_opts: CompressionOpts::default(),
            builtin_compression_manager: false,
            target_file_size: 0,
            newest_key_time: 0,
            partitioned_index: false,
            partition_filters: false,
            metadata_block_size: 4096,
            decouple_partitioned_filters: true,
            hash_index: false,
            first_key_index: false,
            block_size_deviation: 10,
            use_delta_encoding: true,
            separate_key_value_in_data_block: false,
            enable_index_compression: true,
            verify_compression: false,
            block_align: false,
            super_block_alignment_size: 0,
            super_block_alignment_space_overhead_ratio: 128,
            sample_for_compression: 0,
            warm_cache: None,
            detect_filter_construct_corruption: false,
            uniform_cv_threshold: -1.0,
        }
    }

    /// The codec index blocks are written with (`enable_index_compression`).
    fn index_compression(&self) -> CompressionType {
        if self.enable_index_compression {
            self.compression
        } else {
            CompressionType::None
        }
    }
}

/// RocksDB's `BlockBasedTableOptions::IndexShorteningMode` (same numbering): which keys the
/// index stores for its data blocks. Readers need not know it: any key between a block's last
/// key and the next block's first is a valid index key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IndexShorteningMode {
    /// Each block's last key.
    NoShortening = 0,
    /// The shortest separator between a block's last key and the next block's first
    /// (`FindShortestSeparator`); the last block keeps its last key. RocksDB's default.
    #[default]
    ShortenSeparators = 1,
    /// As `ShortenSeparators`, and the last block's key is its short successor
    /// (`FindShortSuccessor`).
    ShortenSeparatorsAndSuccessor = 2,
}

/// What `finish` reports.
#[derive(Debug, Clone)]
pub struct TableBuildResult {
    pub file_size: u64,
    pub properties: TableProperties,
    /// A table-properties collector asked for this table to be compacted (RocksDB's
    /// `NeedCompact`); recorded in the MANIFEST as `marked_for_compaction`.
    pub marked_for_compaction: bool,
}

/// RocksDB's `CanKeysWithDifferentByteContentsBeEqual() == false`: the comparators for which
/// RocksDB writes a data-block hash index.
fn hash_index_allowed(c: &dyn crate::comparator::Comparator) -> bool {
    c.is_bytewise() || c.name() == crate::comparator::REVERSE_BYTEWISE_NAME
}

/// Builds one table file.
pub struct TableBuilder {
    opts: TableBuilderOptions,
    /// The timestamp size `add` strips from each key (`TableBuilderOptions::strip_timestamps`).
    strip_ts: usize,
    file: Box<dyn WritableFile>,
    offset: u64,
    data_block: BlockBuilder,
    index_with_seq: BlockBuilder,
    index_user_keys: BlockBuilder,
    separator_is_key_plus_seq: bool,
    last_index_handle: Option<BlockHandle>,
    /// Handle of the last data block written whose index entry is still pending.
    pending_handle: Option<BlockHandle>,
    last_key: Vec<u8>,
    filter: Option<FilterBuilder>,
    last_filter_key: Option<Vec<u8>>,
    range_dels: Vec<(Vec<u8>, Vec<u8>)>,
    props: TableProperties,
    block_size_deviation_limit: usize,
    /// `block_align`'s unit (0: off).
    alignment: usize,
    /// `sample_for_compression`'s counts (RocksDB's names): bytes of the sampled blocks and
    /// their sizes under the slow and fast codecs; bytes of every data block below the
    /// compression size limit, and of the trailers (and larger blocks).
    sampled: Sampled,
    /// The last data block written was moved by super-block padding: its index entry
    /// stores its handle whole (RocksDB's `skip_delta_encoding`).
    padded_before_block: bool,
    /// Block checksum kind and (format_version >= 6) base context.
    checksum: BlockChecksum,
    /// Bitmap of the compression types of the blocks written (bit = type byte).
    compression_types_used: u32,
    /// With user-defined timestamps: the smallest and largest timestamp of the point
    /// entries (RocksDB's `TimestampTablePropertiesCollector`).
    ts_min_max: Option<(Vec<u8>, Vec<u8>)>,
    collectors: Vec<super::deletion_collector::CompactOnDeletionCollector>,
    /// While a compression dictionary is being gathered: the data blocks held back.
    dict_buffer: Option<DictBuffer>,
    /// The table's compression dictionary (empty: none).
    dict: Vec<u8>,
    /// The first key of the data block being built (kept while buffering).
    block_first_key: Vec<u8>,
    /// `first_key_index`: the first keys of the data blocks not yet in the index, oldest
    /// first (every block gets its index entry in the order blocks were cut).
    index_first_keys: std::collections::VecDeque<Vec<u8>>,
    /// The smallest and largest sequence number of the entries added (range tombstones
    /// included), for "rocksdb.key.smallest.seqno" / "rocksdb.key.largest.seqno".
    seqno_range: Option<(u64, u64)>,
    /// Data blocks stored uncompressed although a codec was set (it did not pay: RocksDB's
    /// "compression rejected"), and with no codec set ("compression bypassed").
    blocks_compression_rejected: u64,
    blocks_compression_bypassed: u64,
    /// The partitioned index being built (`partitioned_index`); the flat index builders
    /// above then stay empty.
    p_index: Option<PartitionedIndexBuilder>,
    /// The partitioned filter being built (`partition_filters`); `filter` is None then.
    p_filter: Option<PartitionedFilterBuilder>,
    /// kHashSearch's prefixes (`hash_index.rs`).
    hash_index: Option<super::hash_index::HashIndexBuilder>,
    /// Data blocks cut so far: the block the next key goes into.
    data_blocks_cut: u32,
    /// Parallel compression of the data blocks (`parallel.rs`), when RocksDB would use it.
    parallel: Option<super::parallel::Pipeline>,
    /// The data blocks' codec as the compression threads share it (made at the first
    /// block handed over, after any dictionary).
    parallel_codec: Option<std::sync::Arc<super::parallel::Codec>>,
    /// The compression type the options name (the `_type` of "rocksdb.compression_options"),
    /// kept when `max_compressed_bytes_per_kb` turns compression off.
    configured_compression: CompressionType,
}

/// RocksDB's compression sampling (`sample_for_compression`), per table.
#[derive(Default)]
struct Sampled {
    /// xorshift64 state for the draws (seeded at random on first use; never 0).
    rng: u64,
    input: u64,
    slow: u64,
    fast: u64,
    compressible: u64,
    uncompressible: u64,
}

/// RocksDB's `kCompressionSizeLimit`: larger blocks are never compressed.
const COMPRESSION_SIZE_LIMIT: usize = i32::MAX as usize;

impl Sampled {
    /// A data block of `raw` bytes was cut: counted, and sampled with probability
    /// `1 / one_in` (RocksDB's `Random::OneIn`).
    fn block(&mut self, raw: &[u8], one_in: u64) -> Result<()> {
        if raw.len() < COMPRESSION_SIZE_LIMIT {
            self.compressible += raw.len() as u64;
            self.uncompressible += BLOCK_TRAILER_SIZE as u64;
        } else {
            self.uncompressible += (raw.len() + BLOCK_TRAILER_SIZE) as u64;
        }
        if !self.next_random().is_multiple_of(one_in) {
            return Ok(());
        }
        // The block's size under a codec at its default level, or its own size when the
        // codec does not pay (RocksDB's sampling compressors keep a block only under 7/8).
        let size = |t: CompressionType| -> Result<u64> {
            let c = super::compression::compress(t, None, raw)?;
            Ok(if super::compression::good_compression_ratio(c.len(), raw.len()) {
                c.len()
            } else {
                raw.len()
            } as u64)
        };
        self.input += raw.len() as u64;
        self.fast += size(CompressionType::Lz4)?;
        self.slow += size(CompressionType::Zstd)?;
        Ok(())
    }

    /// A pseudo-random draw (xorshift64), seeded from the standard library's random hash
    /// keys: which blocks are sampled only needs to be unpredictable, as RocksDB's
    /// thread-local `Random`.
    fn next_random(&mut self) -> u64 {
        if self.rng == 0 {
            use std::hash::{BuildHasher, Hasher};
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(self.compressible);
            self.rng = h.finish() | 1;
        }
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        x
    }

    /// RocksDB's estimates (slow, fast): the sampled ratio applied to the compressible
    /// bytes, plus the rest; with no block sampled, the data's own size.
    fn estimates(&self) -> (u64, u64) {
        if self.input == 0 {
            let all = self.compressible + self.uncompressible;
            return (all, all);
        }
        let est = |out: u64| {
            (out as f64 / self.input as f64 * self.compressible as f64 + self.uncompressible as f64 + 0.5)
                as u64
        };
        (est(self.slow), est(self.fast))
    }
}

/// Data blocks held uncompressed until the dictionary is made (RocksDB's kBuffered state).
struct DictBuffer {
    /// (raw block, its first key, its last key)
    blocks: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)>,
    bytes: u64,
    /// 0: no limit (the whole file).
    limit: u64,
}

/// The samples a dictionary is made from (RocksDB's `MaybeEnterUnbuffered`): starting at
/// the middle block and stepping by a large prime modulo the block count, up to
/// `max_sample_bytes`. Returns the samples' lengths with their concatenation.
fn dictionary_samples(blocks: &[&[u8]], max_sample_bytes: usize) -> (Vec<u8>, Vec<usize>) {
    const PRIME_GENERATOR: u64 = 545_055_921_143;
    let n = blocks.len();
    let mut data = Vec::new();
    let mut lens = Vec::new();
    if n == 0 {
        return (data, lens);
    }
    let step = (PRIME_GENERATOR % n as u64) as usize;
    let mut idx = n / 2;
    for _ in 0..n {
        if data.len() >= max_sample_bytes {
            break;
        }
        let take = (max_sample_bytes - data.len()).min(blocks[idx].len());
        data.extend_from_slice(&blocks[idx][..take]);
        lens.push(take);
        idx += step;
        if idx >= n {
            idx -= n;
        }
    }
    (data, lens)
}

impl TableBuilder {
    pub fn new(mut opts: TableBuilderOptions, file: Box<dyn WritableFile>) -> Self {
        let strip_ts = if opts.strip_timestamps { opts.icmp.timestamp_size() } else { 0 };
        if strip_ts > 0 {
            let view = crate::comparator::TsStrippedComparator::new(opts.icmp.user_comparator().clone());
            opts.icmp = InternalKeyComparator::new(std::sync::Arc::new(view));
        }
        // No compressor (`max_compressed_bytes_per_kb` <= 0): the table is written as one
        // without compression, its properties still naming the configured options.
        let configured_compression = opts.compression;
        if !opts.compression_opts.compresses() {
            opts.compression = CompressionType::None;
        }
        let hash_index = (opts.hash_index && !opts.partitioned_index && opts.prefix_extractor.is_some())
            .then(super::hash_index::HashIndexBuilder::default);
        if hash_index.is_some() {
            // RocksDB's table factory sanitizes it so: one index entry per restart point.
            opts.index_block_restart_interval = 1;
        }
        let file: Box<dyn WritableFile> = match &opts.rate_limiter {
            Some((limiter, pri)) => Box::new(crate::rate_limiter::RateLimitedFile {
                inner: file,
                limiter: limiter.clone(),
                pri: *pri,
                stats: opts.rate_limiter_stats.clone(),
            }),
            None => file,
        };
        // RocksDB's `use_delta_encoding_for_index_values`: padded blocks do not follow each
        // other, so `block_align` turns it off.
        let delta = opts.format_version >= 4 && !opts.block_align;
        // RocksDB writes its legacy Bloom filter below format_version 5.
        let filter = opts.filter_bits_per_key.and_then(|b| {
            if let Some(p) = opts.filter_internal {
                return p.builder(b, opts.filter_rounding.clone());
            }
            Some(if let Some(before) = opts.filter_ribbon_before_level {
                FilterBuilder::for_ribbon_policy(b, before, opts.filter_level, opts.filter_rounding.clone())
            } else if opts.format_version >= 5 {
                match &opts.filter_rounding {
                    Some(r) => FilterBuilder::new_optimized_for_memory(b, r.clone()),
                    None => FilterBuilder::new(b),
                }
            } else {
                FilterBuilder::new_legacy(b)
            })
        });
        let filter =
            filter.map(|f| f.with_construct_corruption_detection(opts.detect_filter_construct_corruption));
        let (filter, p_filter) = match filter {
            Some(f) if opts.partitioned_index && opts.partition_filters => {
                let p = PartitionedFilterBuilder::new(
                    f,
                    opts.metadata_block_size,
                    opts.prefix_extractor.clone(),
                    opts.whole_key_filtering,
                    opts.icmp.timestamp_size(),
                    opts.decouple_partitioned_filters,
                    opts.block_size_deviation as usize,
                );
                (None, Some(p))
            }
            f => (f, None),
        };
        let p_index = opts.partitioned_index.then(|| {
            PartitionedIndexBuilder::new(
                opts.index_block_restart_interval,
                delta,
                opts.metadata_block_size,
                opts.block_size_deviation as usize,
            )
            .with_uniform_cv_threshold(opts.uniform_cv_threshold)
        });
        let props = TableProperties {
            column_family_id: opts.column_family_id as u64,
            column_family_name: opts.column_family_name.clone(),
            creation_time: opts.creation_time,
            oldest_key_time: opts.oldest_key_time,
            file_creation_time: opts.file_creation_time,
            orig_file_number: opts.orig_file_number,
            db_id: opts.db_id.clone(),
            db_session_id: opts.db_session_id.clone(),
            db_host_id: opts.db_host_id.clone(),
            ..Default::default()
        };
        let data_block = match opts.data_block_hash_ratio {
            Some(ratio) if hash_index_allowed(opts.icmp.user_comparator().as_ref()) => {
                BlockBuilder::new_with_hash_index(opts.block_restart_interval, ratio)
            }
            _ => BlockBuilder::new(opts.block_restart_interval),
        };
        let data_block = if opts.use_delta_encoding { data_block } else { data_block.without_key_delta() };
        TableBuilder {
            strip_ts,
            data_block: if opts.separate_key_value_in_data_block {
                data_block.with_separated_values()
            } else {
                data_block
            },
            index_with_seq: BlockBuilder::new_index(opts.index_block_restart_interval, delta)
                .with_uniform_cv_threshold(opts.uniform_cv_threshold, false),
            index_user_keys: BlockBuilder::new_index(opts.index_block_restart_interval, delta)
                .with_uniform_cv_threshold(opts.uniform_cv_threshold, true),
            separator_is_key_plus_seq: opts.format_version <= 2,
            last_index_handle: None,
            pending_handle: None,
            last_key: Vec::new(),
            filter,
            last_filter_key: None,
            range_dels: Vec::new(),
            props,
            block_size_deviation_limit: super::partitioned_builder::deviation_limit(
                opts.block_size,
                opts.block_size_deviation as usize,
            ),
            alignment: if opts.block_align { opts.block_size.min(DEFAULT_PAGE_SIZE) } else { 0 },
            sampled: Sampled::default(),
            padded_before_block: false,
            checksum: BlockChecksum {
                kind: opts.checksum,
                base_context: if uses_context_checksum(opts.format_version) {
                    new_base_context_checksum(opts.orig_file_number)
                } else {
                    0
                },
            },
            compression_types_used: 0,
            ts_min_max: None,
            seqno_range: None,
            blocks_compression_rejected: 0,
            blocks_compression_bypassed: 0,
            collectors: opts.collectors.iter().filter_map(|f| f.new_collector()).collect(),
            dict_buffer: (opts.compression_opts.max_dict_bytes > 0
                && opts.compression != CompressionType::None)
                .then(|| DictBuffer {
                    blocks: Vec::new(),
                    bytes: 0,
                    limit: match (opts.target_file_size, opts.compression_opts.max_dict_buffer_bytes) {
                        (0, b) => b,
                        (t, 0) => t,
                        (t, b) => t.min(b),
                    },
                }),
            dict: Vec::new(),
            block_first_key: Vec::new(),
            index_first_keys: std::collections::VecDeque::new(),
            p_index,
            p_filter,
            hash_index,
            data_blocks_cut: 0,
            parallel: {
                let threads = super::parallel::effective_threads(
                    opts.compression,
                    opts.compression_opts.level(),
                    opts.compression_opts.parallel_threads,
                    opts.partitioned_index && opts.partition_filters && !opts.decouple_partitioned_filters,
                );
                (threads > 1).then(|| super::parallel::Pipeline::new(threads))
            },
            parallel_codec: None,
            offset: 0,
            file,
            configured_compression,
            opts,
        }
    }

    /// Tracks the smallest and largest timestamp (`rocksdb.timestamp_min` / `_max`).
    fn collect_timestamp(&mut self, uk: &[u8], ts_sz: usize) -> Result<()> {
        if uk.len() < ts_sz {
            return Err(Error::invalid_argument(format!(
                "user key of {} bytes is shorter than the {ts_sz}-byte timestamp",
                uk.len()
            )));
        }
        let ts = &uk[uk.len() - ts_sz..];
        let ucmp = self.opts.icmp.user_comparator().clone();
        match &mut self.ts_min_max {
            None => self.ts_min_max = Some((ts.to_vec(), ts.to_vec())),
            Some((lo, hi)) => {
                if ucmp.compare_timestamp(ts, lo) == Ordering::Less {
                    *lo = ts.to_vec();
                }
                if ucmp.compare_timestamp(ts, hi) == Ordering::Greater {
                    *hi = ts.to_vec();
                }
            }
        }
        Ok(())
    }

    /// Adds an entry; internal keys must arrive in increasing order. A RangeDeletion key
    /// is taken as a range tombstone whose value is the end user key.
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        if self.strip_ts > 0 {
            return self.add_stripped(ikey, value);
        }
        self.add_entry(ikey, value)
    }

    /// `add` of a table without timestamps: the key's timestamp is left out, and a range
    /// tombstone's end key's (RocksDB counts the end key whole in the raw value size).
    fn add_stripped(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        let ts = self.strip_ts;
        if ikey.len() < 8 + ts {
            return Err(Error::invalid_argument(format!(
                "internal key too short for a {ts}-byte timestamp: {} bytes",
                ikey.len()
            )));
        }
        let key = crate::key::strip_ikey_ts(ikey, ts);
        if (trailer(ikey) & 0xff) as u8 == ValueType::RangeDeletion as u8 {
            if value.len() < ts {
                return Err(Error::invalid_argument(format!(
                    "range tombstone end key too short for a {ts}-byte timestamp: {} bytes",
                    value.len()
                )));
            }
            self.note_seqno(trailer(ikey) >> 8);
            self.add_range_tombstone_parts(key, &value[..value.len() - ts])?;
            self.props.raw_value_size += ts as u64;
            return Ok(());
        }
        self.add_entry(&key, value)
    }

    fn add_entry(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        if ikey.len() < 8 {
            return Err(Error::invalid_argument(format!("internal key too short: {} bytes", ikey.len())));
        }
        let vtype = (trailer(ikey) & 0xff) as u8;
        self.note_seqno(trailer(ikey) >> 8);
        if vtype == ValueType::RangeDeletion as u8 {
            return self.add_range_tombstone_parts(ikey.to_vec(), value);
        }
        if self.props.num_entries > self.props.num_range_deletions
            && self.opts.icmp.compare(ikey, &self.last_key) != Ordering::Greater
        {
            return Err(Error::invalid_argument("table keys must be added in increasing internal-key order"));
        }
        if self.should_flush(ikey, value) {
            self.flush_data_block(Some(ikey))?;
        }
        if self.first_key_written() && self.data_block.is_empty() {
            self.index_first_keys.push_back(ikey.to_vec());
        }
        if self.dict_buffer.is_some() && self.data_block.is_empty() {
            self.block_first_key.clear();
            self.block_first_key.extend_from_slice(ikey);
        }
        if let Some(h) = self.pending_handle.take() {
            let last = std::mem::take(&mut self.last_key);
            self.add_index_entry(&last, Some(ikey), h);
        }
        if let Some(p) = self.parallel.as_mut() {
            p.resolve_next_key(Some(ikey));
        }
        let ts_sz = self.opts.icmp.timestamp_size();
        if ts_sz > 0 {
            self.collect_timestamp(user_key(ikey), ts_sz)?;
        }
        // Coupled filter partitions are cut where the index partitions are, so while the
        // data blocks are buffered for a compression dictionary (their index entries not
        // made yet) their keys wait, to be replayed block by block when the blocks are
        // written (`enter_unbuffered`), as RocksDB's `MaybeEnterUnbuffered` does.
        let defer_filter = self.dict_buffer.is_some() && !self.opts.decouple_partitioned_filters;
        if let (Some(pf), Some(pi), false) = (self.p_filter.as_mut(), self.p_index.as_mut(), defer_filter) {
            // Every entry, repeats included (RocksDB's AddWithPrevKey), after the index
            // entry of the block before (coupled filters cut where the index did).
            let uk = self.opts.icmp.strip_ts(user_key(ikey));
            pf.add(uk, self.last_filter_key.as_deref().unwrap_or(&[]), pi);
            if self.last_filter_key.as_deref() != Some(uk) {
                self.last_filter_key = Some(uk.to_vec());
            }
        }
        if let Some(f) = self.filter.as_mut() {
            // The filter holds keys without their timestamps, as RocksDB's.
            let uk = self.opts.icmp.strip_ts(user_key(ikey));
            if self.last_filter_key.as_deref() != Some(uk) {
                // RocksDB's FullFilterBlockBuilder::Add.
                let wkf = self.opts.whole_key_filtering;
                match self.opts.prefix_extractor.as_deref().and_then(|t| t.transform(uk)) {
                    Some(prefix) if wkf => f.add_key_and_alt(uk, prefix),
                    Some(prefix) => f.add_key(prefix),
                    None if wkf => f.add_key(uk),
                    None => {}
                }
                self.last_filter_key = Some(uk.to_vec());
            }
        }
        if let (Some(h), Some(t)) = (self.hash_index.as_mut(), self.opts.prefix_extractor.as_deref()) {
            // The prefix of the user key with its timestamp, as RocksDB's.
            if let Some(prefix) = t.transform(user_key(ikey)) {
                h.add_key(prefix, self.data_blocks_cut);
            }
        }
        self.data_block.add(ikey, value);
        if !self.collectors.is_empty() {
            let del = vtype == ValueType::Deletion as u8 || vtype == ValueType::SingleDeletion as u8;
            for c in &mut self.collectors {
                c.add(del, self.offset);
            }
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(ikey);
        self.props.num_entries += 1;
        self.props.raw_key_size += ikey.len() as u64;
        self.props.raw_value_size += value.len() as u64;
        if vtype == ValueType::Deletion as u8
            || vtype == ValueType::SingleDeletion as u8
            || vtype == crate::key::DELETION_WITH_TIMESTAMP
        {
            self.props.num_deletions += 1;
        } else if vtype == ValueType::Merge as u8 {
            self.props.num_merge_operands += 1;
        }
        Ok(())
    }

    /// Adds a range tombstone `[start, end)`; `start_ikey` is the start user key tagged
    /// with the tombstone's sequence number and type RangeDeletion.
    pub fn add_range_tombstone(&mut self, start_ikey: &[u8], end_user_key: &[u8]) -> Result<()> {
        if start_ikey.len() < 8 {
            return Err(Error::invalid_argument("range tombstone start key too short"));
        }
        if self.strip_ts > 0 {
            return self.add_stripped(start_ikey, end_user_key);
        }
        self.note_seqno(trailer(start_ikey) >> 8);
        self.add_range_tombstone_parts(start_ikey.to_vec(), end_user_key)
    }

    /// Widens the sequence-number range of the entries added (RocksDB's `Add`).
    fn note_seqno(&mut self, seq: u64) {
        self.seqno_range = Some(match self.seqno_range {
            None => (seq, seq),
            Some((lo, hi)) => (lo.min(seq), hi.max(seq)),
        });
    }

    fn add_range_tombstone_parts(&mut self, key: Vec<u8>, end: &[u8]) -> Result<()> {
        self.props.num_entries += 1;
        self.props.num_deletions += 1;
        self.props.num_range_deletions += 1;
        self.props.raw_key_size += key.len() as u64;
        self.props.raw_value_size += end.len() as u64;
        self.range_dels.push((key, end.to_vec()));
        Ok(())
    }

    /// Records a property of RocksDB's "user collected" kind (written as given; the
    /// properties the builder computes take precedence).
    pub fn set_user_property(&mut self, name: &str, value: Vec<u8>) {
        self.props.user_collected.insert(name.to_string(), value);
    }

    /// RocksDB's `SetSeqnoTimeTableProperties`: the table's part of the database's
    /// sequence-number-to-time mapping, encoded (`seqno_time.rs`; empty: no property).
    pub fn set_seqno_time_mapping(&mut self, encoded: Vec<u8>) {
        self.props.seqno_to_time_mapping = encoded;
    }

    /// Entries added so far (range tombstones included).
    pub fn num_entries(&self) -> u64 {
        self.props.num_entries
    }

    /// Bytes written to the file so far.
    pub fn file_size(&self) -> u64 {
        self.offset
    }

    /// RocksDB's `EstimatedFileSize`: the bytes written plus, with parallel compression,
    /// the data blocks handed to the compression threads and not yet written (their
    /// uncompressed size: an upper bound). What compaction cuts its outputs by.
    pub fn estimated_file_size(&self) -> u64 {
        self.offset + self.parallel.as_ref().map_or(0, |p| p.inflight_bytes())
    }

    /// RocksDB's `EstimatedTailSize` (what compaction adds to an output's size with
    /// `target_file_size_is_upper_bound`): an upper bound on the bytes still to come after
    /// the data blocks: the index (the larger of its two forms, with an entry for the block
    /// being filled), the filter, the compression dictionary, the range deletion block, and
    /// RocksDB's allowances of 2 KiB for the properties, 1 KiB for the metaindex and a
    /// footer. The data block being filled is not counted, as RocksDB's.
    pub fn estimated_tail_size(&self) -> u64 {
        use super::format::{BLOCK_TRAILER_SIZE, FOOTER_LEN, MAX_HANDLE_LEN};
        let index = match &self.p_index {
            Some(p) => p.size_estimate(),
            None => {
                self.index_with_seq.current_size_estimate().max(self.index_user_keys.current_size_estimate())
                    + self.last_key.len()
                    + 2 * MAX_HANDLE_LEN
                    + BLOCK_TRAILER_SIZE
            }
        };
        let filter = match (&self.p_filter, &self.filter) {
            (Some(p), _) => p.size_estimate() + BLOCK_TRAILER_SIZE,
            (None, Some(f)) => f.size_estimate() + BLOCK_TRAILER_SIZE,
            (None, None) => 0,
        };
        let dict = if self.dict.is_empty() { 0 } else { self.dict.len() + BLOCK_TRAILER_SIZE };
        let range_dels = if self.range_dels.is_empty() {
            0
        } else {
            // Each entry: the two keys, three varint32 lengths, a restart point.
            self.range_dels.iter().map(|(k, v)| k.len() + v.len() + 3 * 5 + 4).sum::<usize>()
                + 4
                + BLOCK_TRAILER_SIZE
        };
        (index + filter + dict + range_dels + 2048 + 1024 + FOOTER_LEN) as u64
    }

    /// RocksDB's FlushBlockBySizePolicy.
    fn should_flush(&self, key: &[u8], value: &[u8]) -> bool {
        if self.data_block.is_empty() {
            return false;
        }
        let cur = self.data_block.current_size_estimate();
        if cur >= self.opts.block_size {
            return true;
        }
        // RocksDB's BlockAlmostFull.
        if self.block_size_deviation_limit == 0 {
            return false;
        }
        let after = self.data_block.estimate_size_after(key, value);
        if self.alignment > 0 {
            return after + BLOCK_TRAILER_SIZE > self.opts.block_size;
        }
        after > self.opts.block_size && cur > self.block_size_deviation_limit
    }

    /// Shortens `start` toward `limit` as RocksDB's ShortenedIndexBuilder does.
    fn shorten_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        if self.opts.index_shortening == IndexShorteningMode::NoShortening {
            return;
        }
        let ucmp = self.opts.icmp.user_comparator();
        let us = user_key(start);
        let mut tmp = us.to_vec();
        ucmp.find_shortest_separator(&mut tmp, user_key(limit));
        if tmp.len() <= us.len() && ucmp.compare(us, &tmp) == Ordering::Less {
            crate::coding::put_fixed64(&mut tmp, pack_seq_and_type(MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK));
            *start = tmp;
        }
    }

    /// The last block's index key under kShortenSeparatorsAndSuccessor, as RocksDB's
    /// `FindShortInternalKeySuccessor`: a physically shorter, logically larger user key with
    /// the earliest possible trailer, else the key itself.
    fn shorten_successor(&self, key: &mut Vec<u8>) {
        if self.opts.index_shortening != IndexShorteningMode::ShortenSeparatorsAndSuccessor {
            return;
        }
        let ucmp = self.opts.icmp.user_comparator();
        let uk = user_key(key);
        let mut tmp = uk.to_vec();
        ucmp.find_short_successor(&mut tmp);
        if tmp.len() <= uk.len() && ucmp.compare(uk, &tmp) == Ordering::Less {
            crate::coding::put_fixed64(&mut tmp, pack_seq_and_type(MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK));
            *key = tmp;
        }
    }

    /// Whether the index carries first keys: kBinarySearchWithFirstKey, which is neither the
    /// partitioned nor the hash index.
    fn first_key_written(&self) -> bool {
        self.opts.first_key_index && !self.opts.partitioned_index && !self.opts.hash_index
    }

    /// Adds the index entry of the data block whose last key is `last` (`next_key`: the
    /// next block's first key, None for the table's last block): the separator shortened
    /// as `index_shortening` says, to the flat or the partitioned index.
    fn add_index_entry(&mut self, last: &[u8], next_key: Option<&[u8]>, handle: BlockHandle) {
        let mut sep = last.to_vec();
        match next_key {
            Some(next) => self.shorten_separator(&mut sep, next),
            None => self.shorten_successor(&mut sep),
        }
        let seq_before = self.separator_is_key_plus_seq;
        if let Some(next) = next_key {
            if !self.separator_is_key_plus_seq
                && self.opts.icmp.compare_user(user_key(&sep), user_key(next)) == Ordering::Equal
            {
                self.separator_is_key_plus_seq = true;
            }
        }
        let skip_delta = std::mem::take(&mut self.padded_before_block);
        if let Some(p) = self.p_index.as_mut() {
            if skip_delta {
                p.forget_last_handle();
            }
            p.add(last, &sep, next_key.is_some(), seq_before, self.separator_is_key_plus_seq, handle);
            return;
        }
        let sep = sep.as_slice();
        let prev = if skip_delta { None } else { self.last_index_handle };
        let first = if self.first_key_written() { self.index_first_keys.pop_front() } else { None };
        self.index_with_seq.add_index_with_first_key(sep, handle, prev, first.as_deref());
        if !self.separator_is_key_plus_seq {
            self.index_user_keys.add_index_with_first_key(user_key(sep), handle, prev, first.as_deref());
        }
        self.last_index_handle = Some(handle);
    }

    /// Ends the data block being built; `next_key` is the first key of the next one (None at
    /// the end of the table).
    fn flush_data_block(&mut self, next_key: Option<&[u8]>) -> Result<()> {
        if self.data_block.is_empty() {
            return Ok(());
        }
        let raw = self.data_block.finish().to_vec();
        if self.opts.sample_for_compression > 0 {
            self.sampled.block(&raw, self.opts.sample_for_compression)?;
        }
        self.data_block.reset();
        self.data_blocks_cut += 1;
        if let Some(buf) = self.dict_buffer.as_mut() {
            buf.bytes += raw.len() as u64;
            buf.blocks.push((raw, std::mem::take(&mut self.block_first_key), self.last_key.clone()));
            if next_key.is_some() && buf.limit != 0 && buf.bytes > buf.limit {
                self.enter_unbuffered()?;
            }
            return Ok(());
        }
        if self.parallel.is_some() {
            let last = self.last_key.clone();
            return self.submit_parallel(raw, last, Some(next_key.map(<[u8]>::to_vec)));
        }
        let handle = self.write_data_block(&raw)?;
        self.pending_handle = Some(handle);
        Ok(())
    }

    /// The codec data blocks are compressed with (the dictionary once it is made).
    fn data_codec(&self) -> super::parallel::Codec {
        super::parallel::Codec {
            t: self.opts.compression,
            opts: self.opts.compression_opts.codec(),
            dict: self.dict.clone(),
            verify: self.opts.verify_compression,
        }
    }

    /// Hands a data block to the compression threads, then writes the blocks that are done.
    /// `next_key` None: the next block's first key is not known yet.
    fn submit_parallel(
        &mut self,
        raw: Vec<u8>,
        last: Vec<u8>,
        next_key: Option<Option<Vec<u8>>>,
    ) -> Result<()> {
        let codec = match &self.parallel_codec {
            Some(c) => c.clone(),
            None => self.parallel_codec.insert(std::sync::Arc::new(self.data_codec())).clone(),
        };
        let Some(p) = self.parallel.as_mut() else { return Ok(()) };
        let ready = p.submit(raw, &codec, last, next_key)?;
        self.write_ready(ready)
    }

    /// Writes data blocks compressed by the threads, in order, with their index entries.
    fn write_ready(&mut self, ready: Vec<super::parallel::Ready>) -> Result<()> {
        for r in ready {
            self.count_data_block(r.t);
            let handle = self.write_data_raw(&r.stored, r.t)?;
            if self.opts.warm_cache.is_some() {
                let raw = match r.t {
                    CompressionType::None => r.stored,
                    t => super::compression::uncompress_with_dict(t, &r.stored, &self.dict)?,
                };
                self.warm(handle, raw)?;
            }
            self.props.data_size = self.offset;
            self.props.num_data_blocks += 1;
            self.add_index_entry(&r.last_key, r.next_key.as_deref(), handle);
        }
        Ok(())
    }

    fn count_data_block(&mut self, t: CompressionType) {
        if self.opts.compression == CompressionType::None {
            self.blocks_compression_bypassed += 1;
        } else if t == CompressionType::None {
            self.blocks_compression_rejected += 1;
        }
    }

    /// Compresses (with the dictionary, if any) and writes one data block.
    fn write_data_block(&mut self, raw: &[u8]) -> Result<BlockHandle> {
        let (stored, t) = compress_verified(
            self.opts.compression,
            &self.opts.compression_opts.codec(),
            raw,
            &self.dict,
            self.opts.verify_compression,
        )?;
        self.count_data_block(t);
        let handle = self.write_data_raw(&stored, t)?;
        self.props.data_size = self.offset;
        self.props.num_data_blocks += 1;
        if self.opts.warm_cache.is_some() {
            self.warm(handle, raw.to_vec())?;
        }
        Ok(handle)
    }

    /// `prepopulate_block_cache`: the data block just written at `handle`, uncompressed,
    /// into the block cache (RocksDB's `InsertBlockInCacheHelper`); a failed insert (a full
    /// cache with `strict_capacity_limit`) fails the table, as RocksDB's.
    fn warm(&mut self, handle: BlockHandle, raw: Vec<u8>) -> Result<()> {
        use crate::statistics::Ticker;
        let Some(w) = &self.opts.warm_cache else { return Ok(()) };
        let block = std::sync::Arc::new(
            super::block::Block::new(raw)?
                .protected(w.block_protection_bytes_per_key)?
                .with_read_amp(w.read_amp_bytes_per_bit, w.statistics.as_ref()),
        );
        let n = block.size() as u64;
        let stats = w.statistics.as_deref();
        if let Err(e) = w.cache.insert_block(w.key.with_offset(handle.offset), block, w.priority) {
            crate::statistics::record_tick(stats, Ticker::BlockCacheAddFailures, 1);
            return Err(e);
        }
        if let Some(s) = stats {
            s.record_ticks(&[
                (Ticker::BlockCacheAdd, 1),
                (Ticker::BlockCacheDataAdd, 1),
                (Ticker::BlockCacheDataBytesInsert, n),
                (Ticker::BlockCacheBytesWrite, n),
            ]);
        }
        Ok(())
    }

    /// Makes the dictionary from the buffered blocks, then writes them (RocksDB's
    /// `MaybeEnterUnbuffered`). The last one's index entry waits for the next key, as any
    /// data block's does.
    fn enter_unbuffered(&mut self) -> Result<()> {
        let Some(buf) = self.dict_buffer.take() else { return Ok(()) };
        if buf.blocks.is_empty() {
            return Ok(());
        }
        let co = &self.opts.compression_opts;
        let train = self.opts.compression == CompressionType::Zstd && co.zstd_max_train_bytes > 0;
        let max_sample = if train { co.zstd_max_train_bytes } else { co.max_dict_bytes } as usize;
        let raws: Vec<&[u8]> = buf.blocks.iter().map(|(r, _, _)| r.as_slice()).collect();
        let (data, lens) = dictionary_samples(&raws, max_sample);
        self.dict = if train {
            let mut samples = Vec::with_capacity(lens.len());
            let mut at = 0;
            for l in &lens {
                samples.push(&data[at..at + l]);
                at += l;
            }
            // RocksDB's ZSTD_TrainDictionary: a failed training means no dictionary.
            super::compression::zstd_train_dictionary(&samples, co.max_dict_bytes as usize)
                .unwrap_or_default()
        } else {
            data
        };
        let n = buf.blocks.len();
        if self.parallel.is_some() {
            let mut blocks = buf.blocks.into_iter().peekable();
            while let Some((raw, _, last)) = blocks.next() {
                let next = blocks.peek().map(|b| Some(b.1.clone()));
                self.submit_parallel(raw, last, next)?;
            }
            return Ok(());
        }
        let replay = self.p_filter.is_some() && !self.opts.decouple_partitioned_filters;
        for i in 0..n {
            if replay {
                self.replay_filter_keys(&buf.blocks[i].0)?;
            }
            let handle = self.write_data_block(&buf.blocks[i].0)?;
            if i + 1 < n {
                self.add_index_entry(&buf.blocks[i].2, Some(&buf.blocks[i + 1].1), handle);
            } else {
                self.pending_handle = Some(handle);
            }
        }
        Ok(())
    }

    /// Adds the keys of a buffered data block to the coupled partitioned filter, after the
    /// index entry of the block before it (RocksDB's replay in `MaybeEnterUnbuffered`).
    fn replay_filter_keys(&mut self, raw: &[u8]) -> Result<()> {
        use crate::iter::InternalIterator as _;
        let block = super::block::Block::new(raw.to_vec())?;
        let mut it = block.iter_ref(&self.opts.icmp);
        it.seek_to_first();
        while it.valid() {
            let uk = self.opts.icmp.strip_ts(user_key(it.key()));
            if let (Some(pf), Some(pi)) = (self.p_filter.as_mut(), self.p_index.as_mut()) {
                pf.add(uk, self.last_filter_key.as_deref().unwrap_or(&[]), pi);
            }
            if self.last_filter_key.as_deref() != Some(uk) {
                self.last_filter_key = Some(uk.to_vec());
            }
            it.next();
        }
        it.status()
    }

    /// Compresses (when `ctype` is not None and it pays) and writes a block with trailer.
    fn write_block(&mut self, raw: &[u8], ctype: CompressionType) -> Result<BlockHandle> {
        let (stored, t) = compress_verified(
            ctype,
            &self.opts.compression_opts.codec(),
            raw,
            &[],
            self.opts.verify_compression,
        )?;
        self.write_raw_block(&stored, t)
    }

    /// Writes a data block with its trailer (`write_raw_block`), with RocksDB's padding:
    /// before it, to the next super block when it would straddle one
    /// (`super_block_alignment_size`); after it, to the next multiple of the alignment
    /// (`block_align`).
    fn write_data_raw(&mut self, contents: &[u8], t: CompressionType) -> Result<BlockHandle> {
        let sb = self.opts.super_block_alignment_size;
        let ratio = self.opts.super_block_alignment_space_overhead_ratio;
        if sb != 0 && ratio != 0 {
            let mask = sb as u64 - 1;
            // RocksDB compares the block without its trailer.
            if self.offset & !mask != (self.offset + contents.len() as u64) & !mask {
                let pad = sb as u64 - (self.offset & mask);
                if pad < (sb / ratio) as u64 {
                    self.pad(pad as usize)?;
                    self.padded_before_block = true;
                }
            }
        }
        let handle = self.write_raw_block(contents, t)?;
        if self.alignment > 0 {
            let a = self.alignment;
            let pad = (a - ((contents.len() + BLOCK_TRAILER_SIZE) & (a - 1))) & (a - 1);
            self.pad(pad)?;
        }
        Ok(handle)
    }

    /// Appends `n` zero bytes.
    fn pad(&mut self, n: usize) -> Result<()> {
        if n > 0 {
            self.file.append(&vec![0u8; n])?;
            self.offset += n as u64;
        }
        Ok(())
    }

    fn write_raw_block(&mut self, contents: &[u8], t: CompressionType) -> Result<BlockHandle> {
        let handle = BlockHandle::new(self.offset, contents.len() as u64);
        let mut trailer_bytes = Vec::with_capacity(BLOCK_TRAILER_SIZE);
        trailer_bytes.push(t as u8);
        put_fixed32(&mut trailer_bytes, self.checksum.compute(self.offset, contents, t as u8));
        self.compression_types_used |= 1 << (t as u8 as u32 & 31);
        self.file.append(contents)?;
        self.file.append(&trailer_bytes)?;
        self.offset += (contents.len() + BLOCK_TRAILER_SIZE) as u64;
        Ok(handle)
    }

    /// Writes the remaining blocks and the footer, then syncs the file.
    pub fn finish(mut self) -> Result<TableBuildResult> {
        if self.opts.format_version < MIN_WRITE_FORMAT_VERSION
            || self.opts.format_version > MAX_FORMAT_VERSION
        {
            return Err(Error::not_supported(format!(
                "format_version {} cannot be written",
                self.opts.format_version
            )));
        }
        self.flush_data_block(None)?;
        self.enter_unbuffered()?;
        if let Some(mut p) = self.parallel.take() {
            p.resolve_next_key(None);
            let ready = p.drain()?;
            drop(p);
            self.write_ready(ready)?;
        }
        if let Some(h) = self.pending_handle.take() {
            let last = self.last_key.clone();
            self.add_index_entry(&last, None, h);
        }
        // Where the table's tail (everything after the data blocks) starts, as RocksDB 8+
        // records it, whatever the format_version.
        let mut tail_start = Vec::new();
        put_varint64(&mut tail_start, self.offset);
        self.props.user_collected.insert(names::TAIL_START_OFFSET.to_string(), tail_start);
        let mut meta: Vec<(String, BlockHandle)> = Vec::new();

        // Filter. RocksDB names any policy set, also one that built no filter.
        if let Some(p) = self.opts.filter_internal {
            self.props.filter_policy_name = p.name().to_string();
        }
        if let Some(mut f) = self.filter.take() {
            self.props.filter_policy_name = f.policy_name().to_string();
            if f.num_added() > 0 {
                self.props.num_filter_entries = f.num_added() as u64;
                let data = f.finish_checked()?;
                self.props.filter_size = data.len() as u64;
                let h = self.write_raw_block(&data, CompressionType::None)?;
                meta.push((format!("{FULL_FILTER_PREFIX}{BLOOM_POLICY_NAME}"), h));
            }
        }
        if let (Some(pf), Some(pi)) = (self.p_filter.take(), self.p_index.as_ref()) {
            self.props.filter_policy_name = pf.policy_name().to_string();
            if !pf.is_empty() {
                let last = self.last_filter_key.take().unwrap_or_default();
                let (parts, entries) = pf.finish(&last, pi)?;
                self.props.num_filter_entries = entries;
                let mut top = Vec::with_capacity(parts.len());
                for (key, data) in parts {
                    self.props.filter_size += data.len() as u64;
                    top.push((key, self.write_raw_block(&data, CompressionType::None)?));
                }
                let top_raw = top_level_block(
                    &top,
                    self.separator_is_key_plus_seq,
                    self.opts.index_block_restart_interval,
                    self.opts.format_version >= 4,
                );
                self.props.filter_size += top_raw.len() as u64;
                let h = self.write_raw_block(&top_raw, CompressionType::None)?;
                meta.push((format!("{PARTITIONED_FILTER_PREFIX}{BLOOM_POLICY_NAME}"), h));
            }
        }

        // The hash index's meta blocks (RocksDB writes them in name order, compressed as
        // index blocks, just before the index).
        let mut index_size = 0;
        let hash_written = self.hash_index.is_some();
        if let Some(h) = self.hash_index.take() {
            let (prefixes, metadata) = h.finish();
            index_size += prefixes.len() + metadata.len();
            let mh = self.write_block(&metadata, self.opts.compression)?;
            meta.push((super::hash_index::METADATA_BLOCK.to_string(), mh));
            let ph = self.write_block(&prefixes, self.opts.compression)?;
            meta.push((super::hash_index::PREFIXES_BLOCK.to_string(), ph));
        }

        // Index: the partitions first, then the top level (the footer's index handle).
        let index_raw = match self.p_index.take() {
            Some(p) => {
                let parts = p.finish(self.separator_is_key_plus_seq);
                self.props.index_partitions = parts.len() as u64;
                let mut top = Vec::with_capacity(parts.len());
                for part in parts {
                    index_size += part.raw.len();
                    top.push((part.key, self.write_block(&part.raw, self.opts.index_compression())?));
                }
                let raw = top_level_block(
                    &top,
                    self.separator_is_key_plus_seq,
                    self.opts.index_block_restart_interval,
                    self.opts.format_version >= 4,
                );
                self.props.top_level_index_size = raw.len() as u64;
                raw
            }
            None if self.separator_is_key_plus_seq => self.index_with_seq.finish().to_vec(),
            None => self.index_user_keys.finish().to_vec(),
        };
        index_size += index_raw.len();
        // RocksDB counts one trailer, whatever the number of partitions.
        self.props.index_size = (index_size + BLOCK_TRAILER_SIZE) as u64;
        let index_handle = self.write_block(&index_raw, self.opts.index_compression())?;
        if uses_context_checksum(self.opts.format_version) {
            meta.push((INDEX_BLOCK.to_string(), index_handle));
        }

        // Compression dictionary (never an empty one, as RocksDB).
        if !self.dict.is_empty() {
            let dict = std::mem::take(&mut self.dict);
            let h = self.write_raw_block(&dict, CompressionType::None)?;
            meta.push((COMPRESSION_DICT_BLOCK.to_string(), h));
        }

        // Range tombstones.
        if !self.range_dels.is_empty() {
            let icmp = self.opts.icmp.clone();
            let mut dels = std::mem::take(&mut self.range_dels);
            dels.sort_by(|a, b| icmp.compare(&a.0, &b.0));
            let mut b = BlockBuilder::new(1);
            for (k, v) in &dels {
                b.add(k, v);
            }
            let h = self.write_raw_block(b.finish(), CompressionType::None)?;
            meta.push((RANGE_DEL_BLOCK.to_string(), h));
        }

        // Properties.
        let first_key_written = self.first_key_written();
        let p = &mut self.props;
        p.comparator_name = self.opts.icmp.user_comparator().name().to_string();
        p.merge_operator_name = self.opts.merge_operator_name.clone();
        p.prefix_extractor_name = match &self.opts.prefix_extractor {
            Some(t) => t.name().to_string(),
            None => self.opts.prefix_extractor_name.clone(),
        };
        p.property_collectors_names =
            super::deletion_collector::property_collectors_names(&self.opts.collectors);
        if self.opts.icmp.timestamp_size() > 0 {
            // RocksDB records both, empty for a table without point entries.
            let (lo, hi) = self.ts_min_max.clone().unwrap_or_default();
            p.user_collected.insert(TIMESTAMP_MIN_PROPERTY.to_string(), lo);
            p.user_collected.insert(TIMESTAMP_MAX_PROPERTY.to_string(), hi);
        }
        p.compression_name = if self.opts.format_version >= 7 {
            compression_name_v7(self.opts.compression, self.compression_types_used)
        } else {
            self.opts.compression.name().to_string()
        };
        p.compression_options = self.opts.compression_opts.to_property(self.configured_compression);
        if self.opts.builtin_compression_manager {
            // RocksDB's data block compressor: none without compression (or with
            // max_compressed_bytes_per_kb at 0 or less), else the built-in one of the codec.
            let compressor = if self.opts.compression == CompressionType::None
                || !self.opts.compression_opts.compresses()
            {
                ""
            } else {
                builtin_compressor_name(self.opts.compression)
            };
            p.compression_options.push_str(&format!(
                "_compression_manager=BuiltinCompressionManagerV2; _compressor={compressor}; "
            ));
        }
        p.index_key_is_user_key = u64::from(!self.separator_is_key_plus_seq);
        p.index_value_is_delta_encoded = u64::from(self.opts.format_version >= 4 && !self.opts.block_align);
        if self.opts.sample_for_compression > 0 {
            let (slow, fast) = self.sampled.estimates();
            p.slow_compression_estimated_data_size = slow;
            p.fast_compression_estimated_data_size = fast;
        }
        let mut index_type = Vec::new();
        // kBinarySearchWithFirstKey (3), kTwoLevelIndexSearch (2), kHashSearch (1) or
        // kBinarySearch (0).
        let t = match (self.opts.partitioned_index, hash_written) {
            _ if first_key_written => 3,
            (true, _) => 2,
            (false, true) => 1,
            (false, false) => 0,
        };
        put_fixed32(&mut index_type, t);
        p.user_collected.insert(names::INDEX_TYPE.to_string(), index_type);
        // The properties RocksDB 11.8.1 writes beyond 7.8.3's (PropertyBlockBuilder::
        // AddTableProperty): RocksDB 7.8.3 keeps them as user-collected ones and reads on.
        p.format_version = u64::from(self.opts.format_version);
        let (smallest_seqno, largest_seqno) = match self.seqno_range {
            Some((lo, hi)) => (Some(lo), hi),
            None => (None, 0),
        };
        let mut more: Vec<(&str, u64)> = Vec::new();
        if self.blocks_compression_rejected > 0 {
            more.push((names::NUM_DATA_BLOCKS_COMPRESSION_REJECTED, self.blocks_compression_rejected));
        }
        if self.blocks_compression_bypassed > 0 {
            more.push((names::NUM_DATA_BLOCKS_COMPRESSION_BYPASSED, self.blocks_compression_bypassed));
        }
        // Shale's index blocks are never "uniform" (RocksDB's uniform_cv_threshold is off).
        more.push((names::NUM_UNIFORM_BLOCKS, 0));
        more.push((names::NEWEST_KEY_TIME, self.opts.newest_key_time));
        // RocksDB's PropertyBlockBuilder writes it only when false.
        if self.opts.strip_timestamps {
            more.push((names::USER_DEFINED_TIMESTAMPS_PERSISTED, 0));
        }
        more.push((names::KEY_LARGEST_SEQNO, largest_seqno));
        if let Some(lo) = smallest_seqno {
            more.push((names::KEY_SMALLEST_SEQNO, lo));
        }
        if self.opts.block_restart_interval > 0 {
            more.push((names::DATA_BLOCK_RESTART_INTERVAL, self.opts.block_restart_interval as u64));
        }
        if self.opts.index_block_restart_interval > 0 {
            more.push((names::INDEX_BLOCK_RESTART_INTERVAL, self.opts.index_block_restart_interval as u64));
        }
        // Written only when set, as RocksDB 11.8.1's PropertyBlockBuilder (its readers take
        // the layout of every data block from it).
        if self.opts.separate_key_value_in_data_block {
            more.push((names::SEPARATE_KEY_VALUE_IN_DATA_BLOCK, 1));
        }
        for (name, v) in more {
            let mut enc = Vec::new();
            put_varint64(&mut enc, v);
            p.user_collected.insert(name.to_string(), enc);
        }
        let wkf = if self.opts.whole_key_filtering { b"1" } else { b"0" };
        p.user_collected.insert(names::WHOLE_KEY_FILTERING.to_string(), wkf.to_vec());
        let prefix_filtering = if self.opts.prefix_extractor.is_some() { b"1" } else { b"0" };
        p.user_collected.insert(names::PREFIX_FILTERING.to_string(), prefix_filtering.to_vec());
        // RocksDB 11.8.1's BlockBasedTablePropertiesCollector writes it whenever
        // `decouple_partitioned_filters` is on (its default), partitioned or not.
        if self.opts.decouple_partitioned_filters {
            p.user_collected.insert(names::DECOUPLED_PARTITIONED_FILTERS.to_string(), b"1".to_vec());
        }
        let props_block = self.props.encode();
        let h = self.write_raw_block(&props_block, CompressionType::None)?;
        meta.push((PROPERTIES_BLOCK.to_string(), h));

        // Metaindex and footer.
        meta.sort_by(|a, b| a.0.cmp(&b.0));
        let mut mb = BlockBuilder::new(1);
        for (k, h) in &meta {
            mb.add(k.as_bytes(), &h.encoded());
        }
        let metaindex_handle = self.write_raw_block(mb.finish(), CompressionType::None)?;
        let footer = Footer {
            checksum: self.opts.checksum,
            metaindex_handle,
            index_handle,
            format_version: self.opts.format_version,
            base_context_checksum: self.checksum.base_context,
        };
        let enc = footer.encode(self.offset);
        self.file.append(&enc)?;
        self.offset += enc.len() as u64;
        self.file.flush()?;
        self.file.sync()?;
        // Every collector finishes (no short circuit), then any one may mark the table.
        let mut marked_for_compaction = false;
        for c in &mut self.collectors {
            marked_for_compaction |= c.finish();
        }
        Ok(TableBuildResult { file_size: self.offset, properties: self.props, marked_for_compaction })
    }
}

/// format_version 7's "rocksdb.compression" property: the built-in manager's name when
/// compression is configured (empty when not), then the codecs actually used (type bytes
/// other than "none", sorted, two upper-case hex digits each).
fn compression_name_v7(configured: CompressionType, used: u32) -> String {
    let mut s = String::new();
    if configured != CompressionType::None {
        s.push_str(BUILTIN_COMPRESSION_MANAGER);
    }
    s.push(';');
    for t in 1..32u32 {
        if used & (1 << t) != 0 {
            s.push_str(&format!("{t:02X}"));
        }
    }
    s.push(';');
    s
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "layout_tests.rs"]
mod layout_tests;

#[cfg(test)]
#[path = "tail_estimate_tests.rs"]
mod tail_estimate_tests;
