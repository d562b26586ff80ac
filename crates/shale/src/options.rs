//! Options, with rust-rocksdb's names, setters and RocksDB's defaults.
//!
//! As in rust-rocksdb, one `Options` carries both database-wide and column-family options.
//! Setters return nothing (as rust-rocksdb's do), so a setting Shale does not support is
//! recorded and `DB::open` refuses it with NotSupported naming the option: nothing is
//! accepted and silently ignored.

use std::sync::Arc;

use crate::cache::BlockCache;
use crate::comparator::{BytewiseComparator, ComparatorRef};
use crate::error::{Error, Result};
use crate::fs::FileSystemRef;
use crate::table::compression::CompressionType;
pub use crate::wal::WalRecoveryMode as DBRecoveryMode;
/// RocksDB's `SstPartitionerFactory` (its built-in `SstPartitionerFixedPrefixFactory`).
pub use shale_engine::compaction::partitioner::SstPartitionerFactory;

/// Block compression, as rust-rocksdb's `DBCompressionType`.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum DBCompressionType {
    None,
    Snappy,
    Zlib,
    Bz2,
    Lz4,
    Lz4hc,
    Zstd,
}

/// RocksDB 11.8's `GetDefaultCompressionType`: LZ4 when built in, else Snappy when built in,
/// else none. The codecs "built in" are the crate's features, as rust-rocksdb's build of
/// RocksDB has them (`rocksdb = { default-features = false, features = ["snappy"] }` makes a
/// Snappy default, as kvdb-rocksdb relies on).
fn default_compression() -> DBCompressionType {
    if cfg!(feature = "lz4") {
        DBCompressionType::Lz4
    } else if cfg!(feature = "snappy") {
        DBCompressionType::Snappy
    } else {
        DBCompressionType::None
    }
}

impl DBCompressionType {
    pub(crate) fn to_table(self) -> CompressionType {
        match self {
            DBCompressionType::None => CompressionType::None,
            DBCompressionType::Snappy => CompressionType::Snappy,
            DBCompressionType::Zlib => CompressionType::Zlib,
            DBCompressionType::Bz2 => CompressionType::BZip2,
            DBCompressionType::Lz4 => CompressionType::Lz4,
            DBCompressionType::Lz4hc => CompressionType::Lz4hc,
            DBCompressionType::Zstd => CompressionType::Zstd,
        }
    }
}

/// A block cache shared by tables, as rust-rocksdb's `Cache`.
#[derive(Clone)]
pub struct Cache(pub(crate) Arc<BlockCache>);

impl Cache {
    /// An LRU cache of `capacity` bytes with RocksDB's defaults (shards of at least 512 KiB,
    /// no strict limit, half the capacity for the high-priority pool).
    pub fn new_lru_cache(capacity: usize) -> Cache {
        Cache(Arc::new(BlockCache::new(capacity)))
    }

    /// With true, an insert that does not fit because the entries left are in use fails
    /// (reads needing it fail with "Memory limit reached"), as RocksDB's
    /// `SetStrictCapacityLimit`.
    pub fn set_strict_capacity_limit(&self, strict: bool) {
        self.0.set_strict_capacity_limit(strict);
    }

    pub fn get_capacity(&self) -> usize {
        self.0.capacity()
    }

    pub fn get_usage(&self) -> usize {
        self.0.usage()
    }

    /// Bytes of cached blocks held by readers right now (walks the cache).
    pub fn get_pinned_usage(&self) -> usize {
        self.0.pinned_usage()
    }

    /// Runs `hook` in the middle of every block-cache entry-statistics walk (Shale's test
    /// hook: tests make walks slow, or check that no database lock is held during one).
    #[doc(hidden)]
    pub fn set_entry_scan_hook(&self, hook: Option<std::sync::Arc<dyn Fn() + Send + Sync>>) {
        self.0.set_entry_scan_hook(hook);
    }
}

/// Options of the block-based table format, as rust-rocksdb's `BlockBasedOptions`.
#[derive(Clone)]
pub struct BlockBasedOptions {
    pub(crate) block_size: usize,
    pub(crate) block_restart_interval: usize,
    pub(crate) index_block_restart_interval: usize,
    /// RocksDB's `index_shortening` (`set_index_shortening`).
    pub(crate) index_shortening: crate::table::builder::IndexShorteningMode,
    pub(crate) bloom_bits_per_key: Option<f64>,
    /// With a filter: Some(bloom_before_level) for RocksDB's Ribbon policy
    /// (`set_ribbon_filter`, `set_hybrid_ribbon_filter`), None for its Bloom policy.
    pub(crate) ribbon_bloom_before_level: Option<i32>,
    /// A filter policy set by one of RocksDB's internal ids (`filter_policy=` in an options
    /// string or OPTIONS file): it picks the filter with `bloom_bits_per_key` (None for
    /// the read-only policy, which builds none).
    pub(crate) filter_internal: Option<crate::table::filter::InternalFilterPolicy>,
    /// The filter policy's `optimize_filters_for_memory` balance: one per `set_bloom_filter`
    /// call, shared by clones (`table/filter/rounding.rs`).
    pub(crate) filter_rounding: crate::table::filter::FilterRounding,
    /// RocksDB's `optimize_filters_for_memory` (default true since RocksDB 9).
    pub(crate) optimize_filters_for_memory: bool,
    pub(crate) whole_key_filtering: bool,
    pub(crate) format_version: u32,
    /// The last `set_format_version` asked for one above 7 (or a negative one, which
    /// RocksDB's `uint32_t` field takes as a huge one): open fails as RocksDB's
    /// `BlockBasedTableFactory::ValidateOptions` does.
    pub(crate) format_version_unsupported: bool,
    pub(crate) block_cache: Option<Cache>,
    pub(crate) no_block_cache: bool,
    /// Binary search only, or also the data-block hash index (`table/data_block_hash.rs`).
    pub(crate) data_block_index_type: crate::DataBlockIndexType,
    /// Keys per hash-index bucket wanted (RocksDB's `data_block_hash_table_util_ratio`).
    pub(crate) data_block_hash_ratio: f64,
    /// Index and filter blocks in the block cache (`table/reader.rs`, `MetaCachePolicy`).
    pub(crate) cache_index_and_filter_blocks: bool,
    pub(crate) cache_index_and_filter_blocks_with_high_priority: bool,
    pub(crate) pin_l0_filter_and_index_blocks_in_cache: bool,
    pub(crate) pin_top_level_index_and_filter: bool,
    /// RocksDB's `MetadataCacheOptions`: top-level index, partition, unpartitioned.
    pub(crate) pinning_tiers: [crate::BlockBasedTablePinningTier; 3],
    /// `set_checksum_type`: the block checksum new tables get (RocksDB's `checksum`).
    pub(crate) checksum: crate::table::format::ChecksumType,
    /// `set_index_type(TwoLevelIndexSearch)`: a partitioned index (`table/partitioned_builder.rs`).
    pub(crate) partitioned_index: bool,
    /// `set_index_type(HashSearch)`: RocksDB's hash index (`table/hash_index.rs`).
    pub(crate) hash_index: bool,
    /// RocksDB's `index_type=kBinarySearchWithFirstKey` (no value of rust-rocksdb's
    /// `BlockBasedIndexType`; options strings and OPTIONS files only): the binary-search
    /// index whose values carry each data block's first internal key.
    pub(crate) first_key_index: bool,
    /// `set_partition_filters`: partitioned filters (taken only with a partitioned index,
    /// as RocksDB's sanitizing).
    pub(crate) partition_filters: bool,
    /// `set_metadata_block_size`: where index and filter partitions are cut (RocksDB's 4096).
    pub(crate) metadata_block_size: usize,
    /// RocksDB's `decouple_partitioned_filters` (default true; no rust-rocksdb setter, an
    /// OPTIONS file may set it).
    pub(crate) decouple_partitioned_filters: bool,
    /// RocksDB's `block_size_deviation` (default 10; as RocksDB's factory, a value outside
    /// 0..=100 is taken as 0): `table/builder.rs` `should_flush`.
    pub(crate) block_size_deviation: i32,
    /// RocksDB's `use_delta_encoding` (default true): data-block keys share prefixes.
    pub(crate) use_delta_encoding: bool,
    /// RocksDB 11's `separate_key_value_in_data_block` (`options_tbl.rs`; default false).
    pub(crate) separate_key_value_in_data_block: bool,
    /// RocksDB's `enable_index_compression` (default true): index blocks compressed.
    pub(crate) enable_index_compression: bool,
    /// RocksDB's `verify_compression`: each compressed block is decompressed and compared.
    pub(crate) verify_compression: bool,
    /// RocksDB's `block_align`: data blocks padded to min(block_size, 4096) (compression
    /// must be off and block_size a power of two: `Options::check_supported`).
    pub(crate) block_align: bool,
    /// RocksDB's `super_block_alignment_size` (0: off) and its space overhead ratio (128).
    pub(crate) super_block_alignment_size: usize,
    pub(crate) super_block_alignment_space_overhead_ratio: usize,
    /// RocksDB's `max_auto_readahead_size`, `initial_auto_readahead_size`,
    /// `num_file_reads_for_auto_readahead`: iterators' implicit readahead (`table/prefetch.rs`).
    pub(crate) auto_readahead: crate::table::AutoReadahead,
    /// RocksDB's UDI flags, kept and written (no Shale API sets a UDI factory, without
    /// which RocksDB reads neither; `use_udi_as_primary_index` then fails validation).
    pub(crate) fail_if_no_udi_on_open: bool,
    pub(crate) use_udi_as_primary_index: bool,
    /// RocksDB's `prepopulate_block_cache` (`options_tbl.rs`): which new tables put their
    /// data blocks into the block cache as they are written.
    pub(crate) prepopulate_block_cache: crate::options_tbl::PrepopulateBlockCache,
    /// RocksDB's `detect_filter_construct_corruption` (`options_tbl.rs`).
    pub(crate) detect_filter_construct_corruption: bool,
    /// RocksDB's `uniform_cv_threshold` (`options_tbl.rs`; -1: off).
    pub(crate) uniform_cv_threshold: f64,
    /// RocksDB's `index_block_search_type` (`options_tbl.rs`).
    pub(crate) index_block_search_type: crate::options_tbl::BlockSearchType,
    /// RocksDB's `read_amp_bytes_per_bit` (`options_tbl.rs`; 0: off).
    pub(crate) read_amp_bytes_per_bit: u32,
}

impl Default for BlockBasedOptions {
    fn default() -> Self {
        BlockBasedOptions {
            block_size: 4096,
            block_restart_interval: 16,
            index_block_restart_interval: 1,
            index_shortening: crate::table::builder::IndexShorteningMode::ShortenSeparators,
            bloom_bits_per_key: None,
            ribbon_bloom_before_level: None,
            filter_internal: None,
            filter_rounding: crate::table::filter::FilterRounding::new(),
            optimize_filters_for_memory: true,
            whole_key_filtering: true,
            // RocksDB 11's default (what rust-rocksdb 0.25 bundles); RocksDB before 8.6
            // cannot read it: `set_format_version(5)` keeps tables readable by RocksDB 6.6+.
            format_version: 7,
            format_version_unsupported: false,
            block_cache: None,
            no_block_cache: false,
            data_block_index_type: crate::DataBlockIndexType::BinarySearch,
            data_block_hash_ratio: 0.75,
            cache_index_and_filter_blocks: false,
            cache_index_and_filter_blocks_with_high_priority: true,
            pin_l0_filter_and_index_blocks_in_cache: false,
            pin_top_level_index_and_filter: true,
            pinning_tiers: [crate::BlockBasedTablePinningTier::Fallback; 3],
            // RocksDB's default (kXXH3, `BlockBasedTableOptions::checksum`).
            checksum: crate::table::format::ChecksumType::Xxh3,
            partitioned_index: false,
            first_key_index: false,
            hash_index: false,
            partition_filters: false,
            metadata_block_size: 4096,
            decouple_partitioned_filters: true,
            block_size_deviation: 10,
            use_delta_encoding: true,
            separate_key_value_in_data_block: false,
            enable_index_compression: true,
            verify_compression: false,
            block_align: false,
            super_block_alignment_size: 0,
            super_block_alignment_space_overhead_ratio: 128,
            auto_readahead: crate::table::AutoReadahead::default(),
            fail_if_no_udi_on_open: false,
            use_udi_as_primary_index: false,
            prepopulate_block_cache: crate::options_tbl::PrepopulateBlockCache::Disable,
            detect_filter_construct_corruption: false,
            uniform_cv_threshold: -1.0,
            index_block_search_type: crate::options_tbl::BlockSearchType::Binary,
            read_amp_bytes_per_bit: 0,
        }
    }
}

impl BlockBasedOptions {
    /// Puts the layout options without a builder field of their own elsewhere
    /// (`db/flush.rs`, `sst_file_writer.rs`) on a table builder's options.
    pub(crate) fn apply_layout(&self, b: &mut crate::table::TableBuilderOptions) {
        // RocksDB's factory sanitizes a deviation outside 0..=100 to 0.
        b.block_size_deviation =
            u32::try_from(self.block_size_deviation).ok().filter(|d| *d <= 100).unwrap_or(0);
        b.use_delta_encoding = self.use_delta_encoding;
        b.separate_key_value_in_data_block = self.separate_key_value_in_data_block;
        b.enable_index_compression = self.enable_index_compression;
        b.verify_compression = self.verify_compression;
        b.block_align = self.block_align;
        b.super_block_alignment_size = self.super_block_alignment_size;
        b.super_block_alignment_space_overhead_ratio = self.super_block_alignment_space_overhead_ratio;
        b.detect_filter_construct_corruption = self.detect_filter_construct_corruption;
        b.uniform_cv_threshold = self.uniform_cv_threshold;
    }
}

impl BlockBasedOptions {
    pub fn set_block_size(&mut self, size: usize) {
        self.block_size = size;
    }

    pub fn set_block_restart_interval(&mut self, interval: i32) {
        self.block_restart_interval = interval.max(1) as usize;
    }

    /// Which index keys are shortened (RocksDB's `index_shortening`, default
    /// kShortenSeparators; db_bench's `--index_shortening_mode`). A Shale extension:
    /// rust-rocksdb 0.25 has no setter, but RocksDB's OPTIONS files carry it.
    pub fn set_index_shortening(&mut self, mode: crate::IndexShorteningMode) {
        self.index_shortening = mode;
    }

    pub fn set_index_block_restart_interval(&mut self, interval: i32) {
        self.index_block_restart_interval = interval.max(1) as usize;
    }

    /// A full-key Bloom filter of `bits_per_key`. `block_based` is ignored, as by RocksDB
    /// since 7.0 (`NewBloomFilterPolicy`'s `use_block_based_builder`): the deprecated
    /// block-based filter is no longer written, a full filter is built either way.
    pub fn set_bloom_filter(&mut self, bits_per_key: f64, block_based: bool) {
        let _ = block_based;
        self.bloom_bits_per_key = Some(bits_per_key);
        self.ribbon_bloom_before_level = None;
        self.filter_internal = None;
        self.filter_rounding = crate::table::filter::FilterRounding::new();
    }

    /// Whether table filters hold whole keys (RocksDB's default, true). With false they
    /// hold only the prefixes of the column family's prefix extractor, if it has one.
    pub fn set_whole_key_filtering(&mut self, v: bool) {
        self.whole_key_filtering = v;
    }

    /// The table format_version written: 2 to 7. Shale's default is 7, RocksDB 11's default
    /// (RocksDB 10.4+ reads it): 6 (RocksDB 8.6+) adds context checksums, 7 the
    /// compression-manager name. 5 is what every RocksDB since 6.6 reads (set it for tables
    /// RocksDB 7.x must read). As RocksDB 11.8.1's: 0 and 1 are raised to 2 (its oldest
    /// written version), and one above 7 (or negative) fails the open with InvalidArgument.
    pub fn set_format_version(&mut self, version: i32) {
        self.format_version_unsupported = !(0..=7).contains(&version);
        self.format_version = version.clamp(2, 7) as u32;
    }

    pub fn set_block_cache(&mut self, cache: &Cache) {
        self.block_cache = Some(cache.clone());
        self.no_block_cache = false;
    }

    pub fn disable_cache(&mut self) {
        self.no_block_cache = true;
        self.block_cache = None;
    }

    /// With true, index and filter blocks live in the block cache (charged to it, evictable
    /// unless pinned) instead of with the open table (RocksDB's default, false).
    pub fn set_cache_index_and_filter_blocks(&mut self, v: bool) {
        self.cache_index_and_filter_blocks = v;
    }
}

/// The identities a database open records in every table it writes; set at open
/// (`db/open.rs`, the engine's type).
pub(crate) use shale_engine::config::TableIds;

/// The identities of an open of the database `db_id`: a new session id, and the host
/// `db_host_id` names: RocksDB's `kHostnameForDbHostId` ("__hostname__") stands for the
/// machine's host name (its `ReifyDbHostIdProperty`); any other text is recorded as given
/// (empty: no host property).
pub(crate) fn table_ids(db_id: String, db_host_id: &str) -> TableIds {
    let host_id =
        if db_host_id == HOSTNAME_FOR_DB_HOST_ID { crate::env::host_name() } else { db_host_id.to_string() };
    TableIds { db_id, session_id: crate::env::new_session_id(), host_id }
}

/// RocksDB's `kHostnameForDbHostId`, the default `db_host_id`.
pub(crate) const HOSTNAME_FOR_DB_HOST_ID: &str = "__hostname__";

/// The memtable factory `set_memtable_factory` (or an OPTIONS file) chose, with the settings
/// RocksDB's factory records. Shale keeps one skip list inside every memtable: a hash
/// factory changes only how prefix iterators see the memtable (`memtable/mod.rs`), and its
/// sizing settings (bucket counts, heights, thresholds) are kept only to be written back.
/// The vector factory gives the same reads as RocksDB's VectorRep (which sorts its vector
/// for each read of a mutable memtable), from the skip list; its `count` (the vector's
/// initial reservation) is kept to be written back.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)] // RocksDB's factory names
pub(crate) enum MemtableRep {
    SkipList,
    /// RocksDB's HashSkipListRepFactory (NewHashSkipListRepFactory).
    HashSkipList {
        bucket_count: usize,
        height: i32,
        branching_factor: i32,
    },
    /// RocksDB's HashLinkListRepFactory (NewHashLinkListRepFactory).
    HashLinkList {
        bucket_count: usize,
        threshold: u32,
        huge_page_size: usize,
        logging_threshold: i32,
        log_when_flash: bool,
    },
    /// RocksDB's VectorRepFactory (`MemtableFactory::Vector`: count 0).
    Vector {
        count: usize,
    },
}

impl MemtableRep {
    /// rust-rocksdb's `set_hash_link_list_rep(bucket_count)`: NewHashLinkListRepFactory's
    /// defaults for the rest.
    pub(crate) fn hash_link_list(bucket_count: usize) -> MemtableRep {
        MemtableRep::HashLinkList {
            bucket_count,
            threshold: 256,
            huge_page_size: 0,
            logging_threshold: 4096,
            log_when_flash: true,
        }
    }

    /// The factory a family of `o` runs, as RocksDB 11.8.1's `SanitizeCfOptions` leaves it:
    /// a family with `disallow_memtable_writes` gets a VectorRepFactory (count 0), whatever
    /// was set ("a simple memtable that enforces MarkReadOnly").
    pub(crate) fn sanitized(o: &Options) -> MemtableRep {
        if o.disallow_memtable_writes {
            MemtableRep::Vector { count: 0 }
        } else {
            o.memtable_rep.clone()
        }
    }

    pub(crate) fn is_hash(&self) -> bool {
        matches!(self, MemtableRep::HashSkipList { .. } | MemtableRep::HashLinkList { .. })
    }

    /// The `memtable_factory` value RocksDB 11.8.1 writes to the OPTIONS file (its fields
    /// in the order its build serializes them, as its db_bench's OPTIONS files show). A
    /// family without a prefix extractor gets the skip list (RocksDB's SanitizeCfOptions
    /// replaces a hash factory then).
    pub(crate) fn options_value(&self, has_prefix_extractor: bool) -> String {
        match self {
            MemtableRep::HashSkipList { bucket_count, height, branching_factor } if has_prefix_extractor => {
                format!(
                    "{{id=HashSkipListRepFactory;branching_factor={branching_factor};\
                     skiplist_height={height};bucket_count={bucket_count};}}"
                )
            }
            MemtableRep::HashLinkList {
                bucket_count,
                threshold,
                huge_page_size,
                logging_threshold,
                log_when_flash,
            } if has_prefix_extractor => {
                format!(
                    "{{id=HashLinkListRepFactory;log_when_flash={log_when_flash};\
                     logging_threshold={logging_threshold};huge_page_size={huge_page_size};\
                     threshold={threshold};bucket_count={bucket_count};}}"
                )
            }
            // RocksDB writes the vector factory with or without a prefix extractor.
            MemtableRep::Vector { count } => format!("{{id=VectorRepFactory;count={count};}}"),
            _ => "SkipListFactory".to_string(),
        }
    }

    /// A `memtable_factory` value as RocksDB's MemTableRepFactory::CreateFromString reads
    /// the four factories Shale has: by id alone (the factory's defaults), `id:<integer>` or
    /// with fields. None for a value RocksDB's object registry cannot build (an empty value,
    /// no id, another factory's id: NotSupported there), InvalidArgument for a bad field.
    pub(crate) fn parse(name: &str, v: &str) -> crate::Result<Option<MemtableRep>> {
        let v = v.trim();
        let fields =
            if v.starts_with('{') { crate::options_table::struct_fields(name, v)? } else { vec![("id", v)] };
        let bad = || crate::Error::invalid_argument(format!("Error parsing option {name}: {v}"));
        fn num<T: std::str::FromStr>(x: &str, bad: &dyn Fn() -> crate::Error) -> crate::Result<T> {
            x.parse().map_err(|_| bad())
        }
        // No id: RocksDB's "Cannot reset object" (NotSupported), a factory it cannot build.
        let Some(id) = fields.iter().find(|(k, _)| *k == "id").map(|(_, x)| *x) else {
            return Ok(None);
        };
        // RocksDB's registry takes each built-in factory's names with an optional
        // ":<integer>" (`RegisterBuiltinMemTableRepFactory`): the skip list's lookahead (the
        // linear steps before a search, a speed hint with no effect on results; Shale's skip
        // list searches alone), the hash memtables' bucket count, the vector's count.
        let (base, arg) = match id.split_once(':') {
            Some((b, n)) => match n.parse::<usize>() {
                Ok(n) => (b, Some(n)),
                // Not the registry's pattern: a factory it cannot build.
                Err(_) => return Ok(None),
            },
            None => (id, None),
        };
        let mut rep = match base {
            "SkipListFactory" | "skip_list" => MemtableRep::SkipList,
            "HashSkipListRepFactory" | "prefix_hash" => MemtableRep::HashSkipList {
                bucket_count: arg.unwrap_or(1_000_000),
                height: 4,
                branching_factor: 4,
            },
            "HashLinkListRepFactory" | "hash_linkedlist" => {
                MemtableRep::hash_link_list(arg.unwrap_or(50_000))
            }
            "VectorRepFactory" | "vector" => MemtableRep::Vector { count: arg.unwrap_or(0) },
            _ => return Ok(None),
        };
        for (k, x) in fields.into_iter().filter(|(k, _)| *k != "id") {
            match (&mut rep, k) {
                (MemtableRep::HashSkipList { bucket_count, .. }, "bucket_count")
                | (MemtableRep::HashLinkList { bucket_count, .. }, "bucket_count") => {
                    *bucket_count = num(x, &bad)?
                }
                (MemtableRep::HashSkipList { height, .. }, "skiplist_height") => *height = num(x, &bad)?,
                (MemtableRep::Vector { count }, "count") => *count = num(x, &bad)?,
                (MemtableRep::HashSkipList { branching_factor, .. }, "branching_factor") => {
                    *branching_factor = num(x, &bad)?
                }
                (MemtableRep::HashLinkList { threshold, .. }, "threshold") => *threshold = num(x, &bad)?,
                (MemtableRep::HashLinkList { huge_page_size, .. }, "huge_page_size") => {
                    *huge_page_size = num(x, &bad)?
                }
                (MemtableRep::HashLinkList { logging_threshold, .. }, "logging_threshold") => {
                    *logging_threshold = num(x, &bad)?
                }
                (MemtableRep::HashLinkList { log_when_flash, .. }, "log_when_flash") => {
                    *log_when_flash = match x {
                        "true" | "1" => true,
                        "false" | "0" => false,
                        _ => return Err(bad()),
                    }
                }
                _ => return Err(bad()),
            }
        }
        Ok(Some(rep))
    }
}

/// RocksDB's default `ttl` and `periodic_compaction_seconds` (`kDefaultTtl`,
/// `kDefaultPeriodicCompSecs`): sanitized when the family opens.
pub(crate) const AGE_DEFAULT: u64 = u64::MAX - 1;

/// Database and column-family options, as rust-rocksdb's `Options`.
#[derive(Clone)]
pub struct Options {
    // Database-wide.
    pub(crate) create_if_missing: bool,
    pub(crate) create_missing_column_families: bool,
    pub(crate) error_if_exists: bool,
    pub(crate) paranoid_checks: bool,
    pub(crate) max_open_files: i32,
    pub(crate) max_background_jobs: i32,
    pub(crate) max_background_compactions: i32,
    pub(crate) max_background_flushes: i32,
    pub(crate) use_fsync: bool,
    pub(crate) wal_recovery_mode: DBRecoveryMode,
    pub(crate) max_manifest_file_size: u64,
    pub(crate) keep_log_file_num: usize,
    /// `max_log_file_size` (bytes; 0: the LOG never rolls by size) and
    /// `log_file_time_to_roll` (seconds; 0: never by time): `db/info_log.rs`.
    pub(crate) max_log_file_size: usize,
    pub(crate) log_file_time_to_roll: usize,
    pub(crate) max_bgerror_resume_count: i32,
    pub(crate) bgerror_resume_retry_interval: u64,
    /// Seconds between dumps of `rocksdb.dbstats` and every family's cfstats into the info
    /// LOG (0: none; RocksDB's default 600).
    pub(crate) stats_dump_period_sec: u32,
    /// Seconds between snapshots of the statistics' tickers (RocksDB's `PersistStats`,
    /// `db/stats_history.rs`; 0: none; default 600), kept in memory up to
    /// `stats_history_buffer_size` bytes or, with `persist_stats_to_disk`, written to the
    /// hidden family `___rocksdb_stats_history___`.
    pub(crate) stats_persist_period_sec: u32,
    /// RocksDB's `allow_ingest_behind` (DB; at open copied into every family's options) and
    /// `cf_allow_ingest_behind` (the family's): the last level is kept for files ingested
    /// with `ingest_behind` (`db/ingest.rs`, `compaction/universal.rs`).
    pub(crate) allow_ingest_behind: bool,
    pub(crate) cf_allow_ingest_behind: bool,
    pub(crate) persist_stats_to_disk: bool,
    pub(crate) stats_history_buffer_size: usize,
    /// The clock the stats snapshots read (the system clock when None).
    pub(crate) stats_history_clock: Option<std::sync::Arc<dyn crate::env::SystemClock>>,
    pub(crate) delayed_write_rate: u64,
    pub(crate) db_write_buffer_size: usize,
    /// The memtable budget (`set_write_buffer_manager`; at open, one of the database's own
    /// when only `db_write_buffer_size` is set).
    pub(crate) write_buffer_manager:
        Option<std::sync::Arc<crate::memtable::write_buffer_manager::WriteBufferManagerState>>,
    /// Thread-pool sizes from `set_env` (LOW, HIGH).
    pub(crate) env_threads: (Option<usize>, Option<usize>),
    /// The Env's BOTTOM pool size: compactions into the last level run there
    /// (`db/scheduler.rs`); 0: in the LOW pool.
    pub(crate) env_bottom_threads: usize,
    /// `Env::lower_*_priority` calls: (LOW pool, HIGH pool) threads run at the lowest CPU
    /// priority (nice 19) / idle I/O priority (`db/scheduler.rs`).
    pub(crate) env_lower_cpu: (bool, bool),
    pub(crate) env_lower_io: (bool, bool),
    pub(crate) fs: Option<FileSystemRef>,
    /// `set_wal_compression_type`: None or ZSTD (streaming, one frame per record; `wal/`).
    pub(crate) wal_compression: CompressionType,
    /// `set_db_paths`: table directories with target sizes (empty: the database directory).
    pub(crate) db_paths: Vec<(std::path::PathBuf, u64)>,
    // Per column family.
    /// `set_cf_paths`: this family's table directories (empty: `db_paths`).
    pub(crate) cf_paths: Vec<(std::path::PathBuf, u64)>,
    pub(crate) comparator: ComparatorRef,
    pub(crate) write_buffer_size: usize,
    /// `set_arena_block_size` as set (0: from the write buffer size); see
    /// [`Options::sanitized_arena_block_size`].
    pub(crate) arena_block_size: usize,
    pub(crate) max_write_buffer_number: i32,
    pub(crate) num_levels: i32,
    pub(crate) level0_file_num_compaction_trigger: i32,
    pub(crate) level0_slowdown_writes_trigger: i32,
    pub(crate) level0_stop_writes_trigger: i32,
    pub(crate) target_file_size_base: u64,
    pub(crate) target_file_size_multiplier: i32,
    pub(crate) max_bytes_for_level_base: u64,
    pub(crate) max_bytes_for_level_multiplier: f64,
    pub(crate) level_compaction_dynamic_level_bytes: bool,
    pub(crate) max_compaction_bytes: u64,
    pub(crate) soft_pending_compaction_bytes_limit: u64,
    pub(crate) hard_pending_compaction_bytes_limit: u64,
    pub(crate) disable_auto_compactions: bool,
    /// Level (the default), universal (`compaction/universal.rs`) or FIFO
    /// (`compaction/fifo.rs`).
    pub(crate) compaction_style: crate::DBCompactionStyle,
    /// RocksDB's `kCompactionStyleNone` (no value of rust-rocksdb's `DBCompactionStyle`;
    /// reached through options strings and OPTIONS files): no compaction is picked, the
    /// family otherwise counts as leveled (`compaction_style` then holds Level).
    pub(crate) compaction_style_none: bool,
    /// FIFO: the total table bytes above which the oldest tables are deleted.
    pub(crate) fifo_max_table_files_size: u64,
    /// FIFO: level-0 tables may be merged (intra-L0) to keep their count down.
    pub(crate) fifo_allow_compaction: bool,
    /// helper cfblob (issue 33): `compaction_options_fifo.age_for_warm`, DEPRECATED in
    /// RocksDB 11.8.1 (its header says so and no code of it reads the field, yet its parser
    /// keeps the value and its OPTIONS file writes it): kept and written the same, no effect.
    pub(crate) fifo_age_for_warm: u64,
    /// issue 33 (fifo): `compaction_options_fifo.max_data_files_size` (0: off): FIFO's size
    /// limit counting table and blob file bytes (`compaction/fifo.rs`).
    pub(crate) fifo_max_data_files_size: u64,
    /// `compaction_options_fifo.use_kv_ratio_compaction`: intra-L0 merges in size tiers
    /// derived from the data limit and the table/blob ratio (`compaction/fifo.rs`).
    pub(crate) fifo_use_kv_ratio_compaction: bool,
    /// `compaction_options_fifo.file_temperature_age_thresholds`: (age seconds, temperature
    /// byte) pairs; tables older than an age are moved to its temperature.
    pub(crate) fifo_temperature_ages: Vec<(u64, u8)>,
    /// `compaction_options_fifo.allow_trivial_copy_when_change_temperature`.
    pub(crate) fifo_trivial_copy: bool,
    /// `compaction_options_fifo.trivial_copy_buffer_size` (default 4096).
    pub(crate) fifo_trivial_copy_buffer_size: u64,
    /// `max_compaction_bytes` holds the value RocksDB's SanitizeCfOptions chose when the
    /// family opened (`dyn_options::sanitized_at_open`); `set_options` does not sanitize again.
    pub(crate) max_compaction_bytes_sanitized: bool,
    /// helper cfblob (issue 33): RocksDB's mutable `blob_compression_opts` (RocksDB's
    /// `CompressionOptions` defaults): the codec settings flushes and compactions from then
    /// on compress blobs with (`BlobSettings::compression_opts`); `enabled` is only kept.
    pub(crate) blob_compression_opts: crate::table::builder::CompressionOpts,
    pub(crate) blob_compression_opts_enabled: bool,
    /// helper cfblob (issue 33): RocksDB 11's mutable `compression_manager` is the built-in
    /// V2 manager (set by its id "BuiltinV2"; false: nullptr, the same codecs). Tables
    /// written from then on record it in their compression options property.
    pub(crate) builtin_compression_manager: bool,
    /// Universal compaction's options (RocksDB's `compaction_options_universal`).
    pub(crate) universal: shale_engine::config::UniversalSettings,
    pub(crate) compression: DBCompressionType,
    /// `set_compression_options` / `set_zstd_max_train_bytes` (RocksDB's `compression_opts`:
    /// level, zlib's window and strategy, the compression dictionary; `table/builder.rs`).
    pub(crate) compression_opts: crate::table::builder::CompressionOpts,
    /// RocksDB's `compression_per_level` (empty: `compression` everywhere); indexed as
    /// RocksDB's `GetCompressionType` does (`compaction/picker.rs::output_compression`).
    pub(crate) compression_per_level: Vec<DBCompressionType>,
    /// RocksDB's `bottommost_compression` (None: kDisableCompressionOption).
    pub(crate) bottommost_compression: Option<DBCompressionType>,
    /// RocksDB's `bottommost_compression_opts`, used for the bottommost level when enabled.
    pub(crate) bottommost_compression_opts: crate::table::builder::CompressionOpts,
    pub(crate) bottommost_compression_opts_enabled: bool,
    /// `set_max_bytes_for_level_multiplier_additional` (RocksDB's default: 1 per level).
    pub(crate) max_bytes_for_level_multiplier_additional: Vec<i32>,
    /// `set_bloom_locality` (recorded, as RocksDB 11.8.1 records it).
    pub(crate) bloom_locality: u32,
    /// `set_compaction_pri`: the order a level compaction tries a level's files in.
    pub(crate) compaction_pri: crate::options_api::CompactionPri,
    /// `set_memtable_huge_page_size` (0: ordinary memory).
    pub(crate) memtable_huge_page_size: usize,
    /// `set_inplace_update_support` (RocksDB's immutable CF option, default false).
    pub(crate) inplace_update_support: bool,
    /// `set_inplace_update_locks` (RocksDB's mutable `inplace_update_num_locks`, default
    /// 10000): taken by the memtables made afterwards.
    pub(crate) inplace_update_num_locks: usize,
    /// RocksDB's `memtable_max_range_deletions` (mutable, default 0: no limit): memtables
    /// made afterwards are full once they hold this many range deletions.
    pub(crate) memtable_max_range_deletions: u64,
    /// helper cfopt (issue 33), RocksDB's mutable `memtable_protection_bytes_per_key`
    /// (0, 1, 2, 4 or 8; default 0): memtables made from then on keep that many checksum
    /// bytes per entry, verified by reads and flushes.
    pub(crate) memtable_protection_bytes_per_key: u32,
    /// RocksDB's mutable `paranoid_memory_checks` (default false): memtable reads check the
    /// order of the entries they land on and step over.
    pub(crate) paranoid_memory_checks: bool,
    /// helper cfblob (issue 33): RocksDB's mutable `memtable_verify_per_key_checksum_on_seek`
    /// (default false): with `memtable_protection_bytes_per_key` above 0, memtables made from
    /// then on check every entry a search compares against on its way.
    pub(crate) memtable_verify_per_key_checksum_on_seek: bool,
    /// helper prot (issue 33): RocksDB's mutable `block_protection_bytes_per_key` (0, 1, 2, 4
    /// or 8; default 0): table readers opened from then on keep that many checksum bytes per
    /// entry of each data, index and metaindex block they parse, checked at every cursor
    /// step, and charged to the block's memory.
    pub(crate) block_protection_bytes_per_key: u8,
    /// RocksDB's mutable `bottommost_file_compaction_delay` (seconds, default 0): how old a
    /// bottommost file must be before a "BottommostFiles" compaction takes it.
    pub(crate) bottommost_file_compaction_delay: u32,
    /// RocksDB's mutable `target_file_size_is_upper_bound` (default false): compaction
    /// outputs are cut counting their estimated tail (index, filter, meta blocks).
    pub(crate) target_file_size_is_upper_bound: bool,
    /// RocksDB's immutable `default_temperature` (default kUnknown): table files recorded
    /// with no temperature are counted at this one when read.
    pub(crate) default_temperature: u8,
    /// RocksDB's `sample_for_compression` (mutable, default 0: off): one data block in this
    /// many is also compressed with LZ4 and ZSTD to estimate their sizes (table properties).
    pub(crate) sample_for_compression: u64,
    /// `set_optimize_filters_for_hits`: no filters in tables compacted to the bottommost level.
    pub(crate) optimize_filters_for_hits: bool,
    /// `set_max_write_buffer_size_to_maintain`: bytes of flushed memtables kept as history
    /// for transaction conflict checks (0: none; negative: `max_write_buffer_number` times
    /// `write_buffer_size`, as RocksDB's SanitizeCfOptions).
    pub(crate) max_write_buffer_size_to_maintain: i64,
    /// Integrated BlobDB (`blob/`).
    pub(crate) blob: BlobOptions,
    /// BlobDB's blob cache (`set_blob_cache`).
    pub(crate) blob_cache: Option<Arc<crate::cache::BlockCache>>,
    pub(crate) table: BlockBasedOptions,
    /// The table factory new tables are written with (`set_plain_table_factory`,
    /// `set_cuckoo_table_factory`; block-based by default). Any format is read.
    pub(crate) table_format: crate::table::TableFormat,
    pub(crate) track_and_verify_wals_in_manifest: bool,
    pub(crate) write_dbid_to_manifest: bool,
    /// A column family's TTL (from its descriptor); only `Disabled`/`SameAsDb` open.
    pub(crate) cf_ttl: crate::cf_descriptor::ColumnFamilyTtl,
    pub(crate) unsupported: Vec<&'static str>,
    /// The statistics object `enable_statistics` made, shared by the databases opened with
    /// these options (RocksDB's `shared_ptr<Statistics>`); issue 14.
    pub(crate) statistics: Option<Arc<crate::statistics::Statistics>>,
    /// Tables written by flushes and compactions are read back whole before they are
    /// installed (`db/dyn_options.rs`; set with `set_options`).
    pub(crate) paranoid_file_checks: bool,
    // ---- helper cfmisc (issue 33): column-family options, rows in `options_table.rs` ----
    /// RocksDB's mutable `memtable_op_scan_flush_trigger` (default 0: off): an iterator step
    /// passing this many hidden entries of the active memtable marks it for flush.
    pub(crate) memtable_op_scan_flush_trigger: u32,
    /// RocksDB's mutable `memtable_avg_op_scan_flush_trigger` (default 0: off): the same for
    /// the average per step between two seeks (only with the option above).
    pub(crate) memtable_avg_op_scan_flush_trigger: u32,
    /// RocksDB's mutable `min_tombstones_for_range_conversion` (default 0: off): a forward
    /// step passing this many point tombstones in a row adds a range tombstone over them to
    /// the active memtable.
    pub(crate) min_tombstones_for_range_conversion: u32,
    /// RocksDB's immutable `persist_user_defined_timestamps` (default true). False: tables
    /// hold user keys without their timestamps (flush replaces each by the minimum one and
    /// the table builder drops it; reads of such a table see the minimum timestamp), the
    /// table property and the MANIFEST say so; only with a `.u64ts` comparator, without
    /// atomic flush or concurrent memtable writes (RocksDB's `ValidateOptions`).
    pub(crate) persist_user_defined_timestamps: bool,
    /// RocksDB's mutable `verify_output_flags` (default 0, kVerifyNone): the checks a
    /// compaction makes of its output tables (`db/compact.rs`).
    pub(crate) verify_output_flags: u32,
    /// RocksDB's immutable `memtable_batch_lookup_optimization` (default false): multi_get
    /// looks a family's keys up in its memtables as one sorted batch (`db/read.rs`).
    pub(crate) memtable_batch_lookup_optimization: bool,
    /// RocksDB's immutable `memtable_insert_with_hint_prefix_extractor` (default nullptr):
    /// memtable inserts start from a splice kept per prefix of this extractor.
    pub(crate) memtable_insert_with_hint_prefix_extractor: Option<crate::slice_transform::SliceTransformRef>,
    // ---- end of helper cfmisc ----
    /// Flush and compaction LOG lines carry the time spent writing.
    pub(crate) report_bg_io_stats: bool,
    /// Flushes of several families are installed together, one MANIFEST atomic group
    /// (`db/flush.rs`).
    pub(crate) atomic_flush: bool,
    /// In a TTL database (`db/ttl.rs`): the family's TTL in seconds (<= 0: never expires).
    /// Set on the database's options too, which makes every write carry the write time.
    pub(crate) ttl_db: Option<i32>,
    /// Immutable memtables a background flush merges (`flush_merge_min`).
    pub(crate) min_write_buffer_number_to_merge: i32,
    /// RocksDB's `max_successive_merges`: a merge that finds this many merge operands of its
    /// key on top of the active memtable is written as the merged value (`db/write.rs`).
    /// Captured by each memtable at its creation, as RocksDB's `ImmutableMemTableOptions`.
    pub(crate) max_successive_merges: usize,
    /// RocksDB's `strict_max_successive_merges` (mutable, default false): a
    /// `max_successive_merges` merge reads the key's value from table files too
    /// (`db/write.rs::merge_on_write`).
    pub(crate) strict_max_successive_merges: bool,
    /// RocksDB's `ttl` and `periodic_compaction_seconds` (age-based compaction,
    /// `compaction/picker.rs`); `u64::MAX - 1` is RocksDB's "default" value.
    pub(crate) ttl: u64,
    pub(crate) periodic_compaction_seconds: u64,
    /// RocksDB's `read_triggered_compaction_threshold` (mutable, default 0.0: off): a table
    /// whose sampled collapsible reads per byte exceed it is compacted (reason
    /// ReadTriggered, `CfConfig::read_triggered_compaction_threshold`).
    pub(crate) read_triggered_compaction_threshold: f64,
    /// RocksDB's `preserve_internal_time_seconds` (mutable, default 0): the engine's
    /// sequence-number-to-time mapping (`CfConfig::preserve_internal_time_seconds`).
    pub(crate) preserve_internal_time_seconds: u64,
    /// RocksDB's `preclude_last_level_data_seconds` (mutable, default 0): per-key placement
    /// of recent data above the last level (`CfConfig::preclude_last_level_data_seconds`).
    pub(crate) preclude_last_level_data_seconds: u64,
    /// `set_prefix_extractor` (issue 15): prefix Bloom filters and prefix seeks.
    pub(crate) prefix_extractor: Option<crate::slice_transform::SliceTransformRef>,
    /// `set_memtable_prefix_bloom_ratio`: the memtable Bloom's share of the write buffer
    /// (0: none; RocksDB caps it at 0.25), `memtable/bloom.rs`.
    pub(crate) memtable_prefix_bloom_ratio: f64,
    /// `set_memtable_whole_key_filtering`: whole keys in the memtable Bloom too.
    pub(crate) memtable_whole_key_filtering: bool,
    /// `set_memtable_factory`: with HashSkipList or HashLinkList, prefix iterators over the
    /// memtable behave as RocksDB's hash memtables (`memtable/mod.rs`); the OPTIONS file
    /// records the factory with its settings.
    pub(crate) memtable_rep: MemtableRep,
    /// RocksDB's `allow_2pc`: the WAL may hold two-phase-commit sections (prepare, commit,
    /// rollback markers). Set by `TransactionDB::open`; a plain open of a WAL holding a
    /// prepared section fails with NotSupported, as RocksDB's.
    pub(crate) allow_2pc: bool,
    /// RocksDB's `manual_wal_flush`: a write without sync leaves its WAL record in the
    /// writer's buffer; `flush_wal` (or a full buffer, a sync write, a WAL roll, close)
    /// writes it out (`db/write.rs`, `db/wal_sync.rs`).
    pub(crate) manual_wal_flush: bool,
    /// RocksDB's `avoid_flush_during_recovery` (immutable, default false): an open leaves
    /// what it replays from the WALs in the memtables, and the WALs alive, instead of
    /// writing level-0 tables (`db/open.rs`); off with `allow_2pc`, as RocksDB's
    /// SanitizeOptions says.
    pub(crate) avoid_flush_during_recovery: bool,
    /// RocksDB's `avoid_flush_during_shutdown` (mutable, default false): close does not
    /// flush the memtables that hold writes made without the WAL (`db/open.rs::close`).
    pub(crate) avoid_flush_during_shutdown: bool,
    /// RocksDB's `write_identity_file` (immutable, default true): false writes no IDENTITY
    /// file and an open deletes one left over; the id lives in the MANIFEST only, so it
    /// cannot be false together with `write_dbid_to_manifest` (InvalidArgument at open).
    pub(crate) write_identity_file: bool,
    /// RocksDB's `allow_fallocate` (immutable, default true): WALs, compaction outputs and
    /// the MANIFEST reserve disk space ahead of their writes in preallocation blocks
    /// (`fallocate(FALLOC_FL_KEEP_SIZE)`, `shale_base::fs::Preallocating`); false: none.
    pub(crate) allow_fallocate: bool,
    /// RocksDB's `enable_thread_tracking` (immutable, default false). Kept, written and
    /// logged; see `Options::set_enable_thread_tracking` for what it changes.
    pub(crate) enable_thread_tracking: bool,
    /// RocksDB's `force_consistency_checks` (family, immutable, default true): the level
    /// layout a MANIFEST describes is checked at open (`Version::check_level_order`).
    pub(crate) force_consistency_checks: bool,
    /// RocksDB's `max_write_batch_group_size_bytes` (immutable, default 1 MiB): the most
    /// bytes a write group's leader gathers into one WAL record (`db/write.rs::build_group`).
    pub(crate) max_write_batch_group_size_bytes: u64,
    /// RocksDB's `disallow_memtable_writes` (family, immutable, default false): the family is
    /// filled by ingestion and import only; writes to it are InvalidArgument, and so is an
    /// open whose WALs hold writes to it, or that sets it on the default family.
    pub(crate) disallow_memtable_writes: bool,
    /// RocksDB's `db_host_id` (immutable, default "__hostname__"): the tables' creating
    /// host property ([`TableIds::new`]).
    pub(crate) db_host_id: String,
    /// RocksDB's `log_readahead_size` (immutable, default 0): WALs and the MANIFEST are read
    /// at open that many bytes at a time (`fs::ReadaheadSequentialFile`).
    pub(crate) log_readahead_size: usize,
    /// RocksDB's DB-wide options rust-rocksdb has no setter for (`options_dbopt.rs`).
    pub(crate) dbopt: crate::options_dbopt::DbOptExtra,
    /// RocksDB's WAL-chain, MANIFEST and recovery options rust-rocksdb has no setter for
    /// (`options_dbwal.rs`).
    pub(crate) dbwal: crate::options_dbwal::DbWalExtra,
    /// RocksDB 11.8.1's MANIFEST-at-open/close and WAL-creation options rust-rocksdb has no
    /// setter for (`options_mfst.rs`).
    pub(crate) mfst: crate::options_mfst::MfstExtra,
    /// More of them (`options_dbmisc.rs`).
    pub(crate) dbmisc: crate::options_dbmisc::DbMiscExtra,
    /// RocksDB's whole-file checksum and file I/O options rust-rocksdb has no setter for
    /// (`options_dbfile.rs`).
    pub(crate) dbfile: crate::options_dbfile::DbFileExtra,
    /// The family's merge operator (`set_merge_operator*`, issue 15; `merge_operator.rs`).
    pub(crate) merge_operator: Option<Arc<crate::merge_operator::MergeOperator>>,
    /// The family's compaction filter and filter factory (`compaction_filter.rs`).
    pub(crate) compaction_filter: Option<Arc<crate::compaction_filter::FilterSlot>>,
    pub(crate) compaction_filter_factory: Option<Arc<crate::compaction_filter::FactorySlot>>,
    /// `set_ratelimiter` / `set_auto_tuned_ratelimiter` (database-wide; `rate_limiter.rs`).
    /// `set_avoid_unnecessary_blocking_io`: obsolete files are deleted by a background
    /// thread, never by a user thread (`db/obsolete.rs`).
    pub(crate) avoid_unnecessary_blocking_io: bool,
    /// `set_delete_obsolete_files_period_micros` (RocksDB's default 6 hours).
    pub(crate) delete_obsolete_files_period_micros: u64,
    /// `set_use_adaptive_mutex` (default false).
    pub(crate) use_adaptive_mutex: bool,
    pub(crate) rate_limiter: Option<Arc<crate::rate_limiter::RateLimiter>>,
    /// `set_row_cache`: point lookups cache the entry they find in each table
    /// (`db/table_cache.rs`, RocksDB's row cache).
    pub(crate) row_cache: Option<Cache>,
    /// RocksDB's `table_properties_collectors`: `add_compact_on_deletion_collector_factory`,
    /// or the option by name (`table/deletion_collector.rs`).
    pub(crate) deletion_collectors: Vec<crate::table::deletion_collector::CollectorFactory>,
    /// RocksDB's `sst_partitioner_factory` (`set_sst_partitioner_factory`, or the option by
    /// name): compaction outputs are cut at its boundaries (`shale_engine::compaction::partitioner`).
    pub(crate) sst_partitioner_factory: Option<SstPartitionerFactory>,
    /// `set_experimental_mempurge_threshold` (0: off; `db/mempurge.rs`).
    pub(crate) experimental_mempurge_threshold: f64,
    /// Set at open: the identities the tables of this open record.
    pub(crate) table_ids: Option<Arc<TableIds>>,
    /// `set_wal_bytes_per_sync`: the WAL's write-back is started every that many bytes, as
    /// RocksDB's `WritableFileWriter` (`wal/writer.rs`); 0: never.
    pub(crate) wal_bytes_per_sync: u64,
    /// `set_bytes_per_sync`: write-back of table, blob and MANIFEST files is started every
    /// that many bytes (`db/buffered_fs.rs`); 0: never (1 MiB with a rate limiter, as
    /// RocksDB's SanitizeOptions).
    pub(crate) bytes_per_sync: u64,
    /// `set_max_total_wal_size` (`db/wal_limit.rs`); 0: four times the memtable memory.
    pub(crate) max_total_wal_size: u64,
    /// `set_use_direct_reads`, `set_allow_mmap_reads`: how table and blob files are read
    /// (`db/buffered_fs.rs`).
    pub(crate) use_direct_reads: bool,
    pub(crate) allow_mmap_reads: bool,
    /// `set_wal_dir`: where the WALs (and their `archive/`) are; empty: the database
    /// directory (`db/open.rs::wal_dir_of`).
    pub(crate) wal_dir: std::path::PathBuf,
    /// `set_wal_ttl_seconds`, `set_wal_size_limit_mb`: obsolete WALs are moved to
    /// `archive/` and purged from it by age and total size (`db/wal_archive.rs`).
    pub(crate) wal_ttl_seconds: u64,
    pub(crate) wal_size_limit_mb: u64,
    /// `set_recycle_log_file_num`: how many obsolete WALs are kept to be reused as new ones
    /// (as sanitized: [`Options::sanitized_recycle_log_file_num`]; `db/write.rs::roll_wal`).
    pub(crate) recycle_log_file_num: usize,
    /// `set_use_direct_io_for_flush_and_compaction`, `set_allow_mmap_writes`: how table and
    /// blob files are written (`db/buffered_fs.rs`).
    pub(crate) use_direct_io_for_flush_and_compaction: bool,
    pub(crate) allow_mmap_writes: bool,
    /// `set_is_fd_close_on_exec` (RocksDB's default true): files are opened with O_CLOEXEC.
    pub(crate) is_fd_close_on_exec: bool,
    /// `set_writable_file_max_buffer_size`: the most bytes a file the database writes holds
    /// before its appends go to the file (`db/buffered_fs.rs`); RocksDB's default 1 MiB.
    pub(crate) writable_file_max_buffer_size: u64,
    /// `set_dump_malloc_stats`: the periodic stats dump also logs the allocator's figures
    /// (`DbInner::dump_stats`).
    pub(crate) dump_malloc_stats: bool,
    /// `set_unordered_write`: RocksDB's relaxed write ordering, which Shale's ordered write
    /// path satisfies (`db/write.rs`, "unordered_write").
    pub(crate) unordered_write: bool,
    /// `set_allow_concurrent_memtable_write` (default true): the writers of a write group
    /// insert their own batches into the memtables at once (`db/write.rs`); false: the
    /// group's leader inserts them all. Also checked with `unordered_write` at open.
    pub(crate) allow_concurrent_memtable_write: bool,
    pub(crate) enable_pipelined_write: bool,
    /// RocksDB's `two_write_queues` (default false; no rust-rocksdb setter, set from an
    /// OPTIONS file or an options string): WAL-only writes (two-phase commit's prepare,
    /// rollback and empty commit markers) take a second queue instead of the write queue,
    /// so they do not wait for other writers' memtable inserts (`db/twopc.rs`).
    pub(crate) two_write_queues: bool,
    /// `set_enable_write_thread_adaptive_yield` (default true): a writer waiting in the write
    /// queue yields the processor in a loop for up to `write_thread_max_yield_usec` before
    /// it blocks (`db/write.rs`, "Waiting").
    pub(crate) enable_write_thread_adaptive_yield: bool,
    /// `set_write_thread_max_yield_usec` (default 100): the longest such yield loop.
    pub(crate) write_thread_max_yield_usec: u64,
    /// `set_write_thread_slow_yield_usec` (default 3): a yield that took this long counts as
    /// slow (another thread ran); three slow yields end the loop.
    pub(crate) write_thread_slow_yield_usec: u64,
    /// `set_db_log_dir`: the directory of the info log (empty: the database's own), where it
    /// is named after the database's absolute path (`db/info_log.rs`).
    pub(crate) db_log_dir: std::path::PathBuf,
    /// `set_log_level`: the info log keeps lines at this level and above (RocksDB's
    /// `info_log_level`, default INFO).
    pub(crate) info_log_level: crate::LogLevel,
    /// `set_info_logger`: the user's logger gets the lines instead of a LOG file.
    pub(crate) info_logger: Option<Arc<crate::options_api::UserLogger>>,
    /// `set_max_subcompactions` (default 1): a compaction from level 0 (or a manual or
    /// universal one) is split into up to this many key ranges compacted in parallel
    /// (`db/subcompaction.rs`).
    pub(crate) max_subcompactions: u32,
    /// `set_compaction_readahead_size` (RocksDB 11.8.1's default 2 MiB).
    pub(crate) compaction_readahead_size: u64,
    /// `set_advise_random_on_open` (default true).
    pub(crate) advise_random_on_open: bool,
    /// `set_manifest_preallocation_size` (default 4 MiB).
    pub(crate) manifest_preallocation_size: u64,
    /// `set_max_file_opening_threads` (default 16).
    pub(crate) max_file_opening_threads: i32,
    /// `set_table_cache_num_shard_bits` (default 6).
    pub(crate) table_cache_numshardbits: i32,
    /// `set_max_sequential_skip_in_iterations` (default 8): a family option.
    pub(crate) max_sequential_skip_in_iterations: u64,
    /// RocksDB's `uncache_aggressiveness` (mutable, default 0): the readers of tables that
    /// leave the database erase their blocks from the block cache (`table/reader.rs`).
    pub(crate) uncache_aggressiveness: u32,
    /// RocksDB's `default_write_temperature` and `last_level_temperature` (mutable, default
    /// kUnknown = 0): the temperature byte recorded in the MANIFEST for new tables.
    pub(crate) default_write_temperature: u8,
    pub(crate) last_level_temperature: u8,
}

/// Integrated BlobDB's column-family options, RocksDB's defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BlobOptions {
    pub enable_blob_files: bool,
    pub min_blob_size: u64,
    pub blob_file_size: u64,
    pub compression: DBCompressionType,
    pub enable_gc: bool,
    pub gc_age_cutoff: f64,
    /// `blob_garbage_collection_force_threshold` (1.0: never forced).
    pub gc_force_threshold: f64,
    pub compaction_readahead_size: u64,
    /// RocksDB's `blob_file_starting_level` (mutable, default 0): values go to blob files
    /// only in flushes and compactions whose output level is at least this.
    pub file_starting_level: i32,
    /// RocksDB's `prepopulate_blob_cache` (mutable, default kDisable): kFlushOnly puts each
    /// blob a flush writes into the family's blob cache (`set_blob_cache`).
    pub prepopulate_cache: bool,
    /// RocksDB 11.8.1's `enable_blob_direct_write` (immutable, default false): with blob
    /// files on, values of at least `min_blob_size` go to blob files as they are written,
    /// and the WAL and memtables hold blob indexes (`shale_engine::db::blob_direct`).
    pub direct_write: bool,
    /// `blob_direct_write_partitions` (immutable, default 1; 0 counts as 1): how many blob
    /// files direct writes keep open, filled round robin.
    pub direct_write_partitions: u32,
}

impl Default for BlobOptions {
    fn default() -> Self {
        BlobOptions {
            enable_blob_files: false,
            min_blob_size: 0,
            blob_file_size: 256 << 20,
            compression: DBCompressionType::None,
            enable_gc: false,
            gc_age_cutoff: 0.25,
            gc_force_threshold: 1.0,
            compaction_readahead_size: 0,
            file_starting_level: 0,
            prepopulate_cache: false,
            direct_write: false,
            direct_write_partitions: 1,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            blob: BlobOptions::default(),
            blob_cache: None,
            create_if_missing: false,
            create_missing_column_families: false,
            error_if_exists: false,
            paranoid_checks: true,
            max_open_files: -1,
            max_background_jobs: 2,
            max_background_compactions: -1,
            max_background_flushes: -1,
            use_fsync: false,
            wal_recovery_mode: DBRecoveryMode::PointInTime,
            max_manifest_file_size: 1024 * 1024 * 1024,
            keep_log_file_num: 1000,
            max_log_file_size: 0,
            log_file_time_to_roll: 0,
            max_bgerror_resume_count: i32::MAX,
            bgerror_resume_retry_interval: 1_000_000,
            stats_dump_period_sec: 600,
            stats_persist_period_sec: 600,
            allow_ingest_behind: false,
            cf_allow_ingest_behind: false,
            persist_stats_to_disk: false,
            stats_history_buffer_size: 1024 * 1024,
            stats_history_clock: None,
            delayed_write_rate: 0,
            db_write_buffer_size: 0,
            write_buffer_manager: None,
            env_threads: (None, None),
            env_bottom_threads: 0,
            env_lower_cpu: (false, false),
            env_lower_io: (false, false),
            fs: None,
            wal_compression: CompressionType::None,
            db_paths: Vec::new(),
            cf_paths: Vec::new(),
            comparator: Arc::new(BytewiseComparator),
            write_buffer_size: 64 << 20,
            arena_block_size: 0,
            max_write_buffer_number: 2,
            num_levels: 7,
            level0_file_num_compaction_trigger: 4,
            level0_slowdown_writes_trigger: 20,
            level0_stop_writes_trigger: 36,
            target_file_size_base: 64 << 20,
            target_file_size_multiplier: 1,
            max_bytes_for_level_base: 256 << 20,
            max_bytes_for_level_multiplier: 10.0,
            // RocksDB's default since 8.4 (rust-rocksdb 0.25 bundles 11.x).
            level_compaction_dynamic_level_bytes: true,
            max_compaction_bytes: 0,
            soft_pending_compaction_bytes_limit: 64 << 30,
            hard_pending_compaction_bytes_limit: 256 << 30,
            disable_auto_compactions: false,
            compaction_style: crate::DBCompactionStyle::Level,
            compaction_style_none: false,
            fifo_max_table_files_size: 1 << 30,
            fifo_allow_compaction: false,
            fifo_age_for_warm: 0,
            fifo_max_data_files_size: 0,
            fifo_use_kv_ratio_compaction: false,
            fifo_temperature_ages: Vec::new(),
            fifo_trivial_copy: false,
            fifo_trivial_copy_buffer_size: 4096,
            max_compaction_bytes_sanitized: false,
            blob_compression_opts: crate::table::builder::CompressionOpts::default(),
            blob_compression_opts_enabled: false,
            builtin_compression_manager: false,
            universal: shale_engine::config::UniversalSettings::default(),
            compression: default_compression(),
            compression_opts: Default::default(),
            compression_per_level: Vec::new(),
            bottommost_compression: None,
            bottommost_compression_opts: Default::default(),
            bottommost_compression_opts_enabled: false,
            optimize_filters_for_hits: false,
            max_write_buffer_size_to_maintain: 0,
            bloom_locality: 0,
            compaction_pri: crate::options_api::CompactionPri::MinOverlappingRatio,
            memtable_huge_page_size: 0,
            inplace_update_support: false,
            inplace_update_num_locks: 10000,
            memtable_max_range_deletions: 0,
            memtable_protection_bytes_per_key: 0,
            paranoid_memory_checks: false,
            memtable_verify_per_key_checksum_on_seek: false,
            block_protection_bytes_per_key: 0,
            bottommost_file_compaction_delay: 0,
            target_file_size_is_upper_bound: false,
            default_temperature: 0,
            sample_for_compression: 0,
            max_bytes_for_level_multiplier_additional: vec![1; 7],
            table: BlockBasedOptions::default(),
            table_format: crate::table::TableFormat::BlockBased,
            track_and_verify_wals_in_manifest: false,
            write_dbid_to_manifest: true,
            cf_ttl: crate::cf_descriptor::ColumnFamilyTtl::SameAsDb,
            unsupported: Vec::new(),
            statistics: None,
            paranoid_file_checks: false,
            memtable_op_scan_flush_trigger: 0,
            memtable_avg_op_scan_flush_trigger: 0,
            min_tombstones_for_range_conversion: 0,
            persist_user_defined_timestamps: true,
            verify_output_flags: 0,
            memtable_batch_lookup_optimization: false,
            memtable_insert_with_hint_prefix_extractor: None,
            report_bg_io_stats: false,
            atomic_flush: false,
            ttl_db: None,
            min_write_buffer_number_to_merge: 1,
            max_successive_merges: 0,
            strict_max_successive_merges: false,
            ttl: u64::MAX - 1,
            periodic_compaction_seconds: u64::MAX - 1,
            read_triggered_compaction_threshold: 0.0,
            preserve_internal_time_seconds: 0,
            preclude_last_level_data_seconds: 0,
            prefix_extractor: None,
            memtable_prefix_bloom_ratio: 0.0,
            memtable_whole_key_filtering: false,
            memtable_rep: MemtableRep::SkipList,
            allow_2pc: false,
            manual_wal_flush: false,
            avoid_flush_during_recovery: false,
            avoid_flush_during_shutdown: false,
            write_identity_file: true,
            max_write_batch_group_size_bytes: 1 << 20,
            allow_fallocate: true,
            enable_thread_tracking: false,
            force_consistency_checks: true,
            disallow_memtable_writes: false,
            db_host_id: HOSTNAME_FOR_DB_HOST_ID.to_string(),
            log_readahead_size: 0,
            dbopt: crate::options_dbopt::DbOptExtra::default(),
            dbwal: crate::options_dbwal::DbWalExtra::default(),
            mfst: crate::options_mfst::MfstExtra::default(),
            dbmisc: crate::options_dbmisc::DbMiscExtra::default(),
            dbfile: crate::options_dbfile::DbFileExtra::default(),
            merge_operator: None,
            compaction_filter: None,
            compaction_filter_factory: None,
            deletion_collectors: Vec::new(),
            sst_partitioner_factory: None,
            rate_limiter: None,
            row_cache: None,
            avoid_unnecessary_blocking_io: false,
            delete_obsolete_files_period_micros: 6 * 60 * 60 * 1_000_000,
            use_adaptive_mutex: false,
            table_ids: None,
            experimental_mempurge_threshold: 0.0,
            wal_bytes_per_sync: 0,
            bytes_per_sync: 0,
            max_total_wal_size: 0,
            use_direct_reads: false,
            allow_mmap_reads: false,
            wal_dir: std::path::PathBuf::new(),
            wal_ttl_seconds: 0,
            wal_size_limit_mb: 0,
            recycle_log_file_num: 0,
            use_direct_io_for_flush_and_compaction: false,
            allow_mmap_writes: false,
            is_fd_close_on_exec: true,
            writable_file_max_buffer_size: 1024 * 1024,
            dump_malloc_stats: false,
            unordered_write: false,
            allow_concurrent_memtable_write: true,
            enable_pipelined_write: false,
            two_write_queues: false,
            enable_write_thread_adaptive_yield: true,
            write_thread_max_yield_usec: 100,
            write_thread_slow_yield_usec: 3,
            db_log_dir: std::path::PathBuf::new(),
            info_log_level: crate::LogLevel::Info,
            info_logger: None,
            max_subcompactions: 1,
            compaction_readahead_size: 2 << 20,
            advise_random_on_open: true,
            manifest_preallocation_size: 4 << 20,
            max_file_opening_threads: 16,
            table_cache_numshardbits: 6,
            max_sequential_skip_in_iterations: 8,
            uncache_aggressiveness: 0,
            default_write_temperature: 0,
            last_level_temperature: 0,
        }
    }
}

impl Options {
    pub fn create_if_missing(&mut self, v: bool) {
        self.create_if_missing = v;
    }

    pub fn create_missing_column_families(&mut self, v: bool) {
        self.create_missing_column_families = v;
    }

    pub fn set_error_if_exists(&mut self, v: bool) {
        self.error_if_exists = v;
    }

    pub fn set_paranoid_checks(&mut self, v: bool) {
        self.paranoid_checks = v;
    }

    /// -1 keeps every table open; otherwise at most this many table readers stay cached.
    pub fn set_max_open_files(&mut self, n: i32) {
        self.max_open_files = n;
    }

    pub fn set_max_background_jobs(&mut self, n: i32) {
        self.max_background_jobs = n.max(1);
    }

    /// Deprecated in RocksDB in favour of `set_max_background_jobs`. As in RocksDB, setting
    /// it (or `set_max_background_flushes`) splits the pools by these numbers instead of
    /// by `max_background_jobs` (see `db/scheduler.rs`).
    #[deprecated(note = "RocksDB automatically decides this based on the value of max_background_jobs")]
    pub fn set_max_background_compactions(&mut self, n: i32) {
        self.max_background_compactions = n;
    }

    /// Deprecated in RocksDB in favour of `set_max_background_jobs`; see
    /// `set_max_background_compactions`.
    #[deprecated(note = "RocksDB automatically decides this based on the value of max_background_jobs")]
    pub fn set_max_background_flushes(&mut self, n: i32) {
        self.max_background_flushes = n;
    }

    /// As RocksDB: sets the background jobs to `parallelism`.
    pub fn increase_parallelism(&mut self, parallelism: i32) {
        self.max_background_jobs = parallelism.max(1);
    }

    /// Syncs files with fsync instead of fdatasync (RocksDB's `use_fsync`).
    pub fn set_use_fsync(&mut self, v: bool) {
        self.use_fsync = v;
    }

    pub fn get_use_fsync(&self) -> bool {
        self.use_fsync
    }

    pub fn set_wal_recovery_mode(&mut self, mode: DBRecoveryMode) {
        self.wal_recovery_mode = mode;
    }

    pub fn set_max_manifest_file_size(&mut self, size: usize) {
        self.max_manifest_file_size = size as u64;
    }

    /// How many info logs (LOG and old ones) are kept. 0 is taken here and refused at open,
    /// as RocksDB 11.8.1's `DBImpl::ValidateOptions` does.
    pub fn set_keep_log_file_num(&mut self, n: usize) {
        self.keep_log_file_num = n;
    }

    /// How many times a hard background error is retried automatically before writes stay
    /// stopped until `DB::resume` (RocksDB's `max_bgerror_resume_count`, default `i32::MAX`;
    /// 0 or less turns automatic recovery off). See `db/error_handler.rs` for which errors
    /// recover on their own.
    pub fn set_max_bgerror_resume_count(&mut self, n: i32) {
        self.max_bgerror_resume_count = n;
    }

    /// Microseconds between automatic recovery attempts (RocksDB's
    /// `bgerror_resume_retry_interval`, default 1 000 000).
    pub fn set_bgerror_resume_retry_interval(&mut self, micros: u64) {
        self.bgerror_resume_retry_interval = micros;
    }

    /// The file system the database uses (Shale's counterpart of `set_env`).
    pub fn set_file_system(&mut self, fs: FileSystemRef) {
        self.fs = Some(fs);
    }

    /// A comparator object (Shale extension; also used for the reverse bytewise comparator).
    pub fn set_comparator_object(&mut self, cmp: ComparatorRef) {
        self.comparator = cmp;
    }

    /// A merge operator object (Shale extension): one of RocksDB's built-in operators from
    /// [`crate::merge_operators`], or one made with [`crate::merge_operator::MergeOperator::new`].
    pub fn set_merge_operator_object(&mut self, op: crate::merge_operator::MergeOperator) {
        self.merge_operator = Some(Arc::new(op));
    }

    pub fn set_write_buffer_size(&mut self, size: usize) {
        self.write_buffer_size = size;
    }

    pub fn set_max_write_buffer_number(&mut self, n: i32) {
        self.max_write_buffer_number = n.max(2);
    }

    /// A background flush waits until this many immutable memtables exist, then writes them
    /// as one level-0 table (at most `max_write_buffer_number - 1`, as RocksDB sanitizes
    /// it). A manual flush flushes whatever there is.
    pub fn set_min_write_buffer_number_to_merge(&mut self, n: i32) {
        self.min_write_buffer_number_to_merge = n;
    }

    /// The memtable arena's block size as RocksDB's SanitizeCfOptions and `Arena` make it:
    /// 0 means an eighth of the write buffer size (itself clamped to 64 KiB..64 GiB), at
    /// most 1 MiB; then rounded up to a multiple of 4 KiB and kept within 4 KiB..2 GiB
    /// (what the OPTIONS file records and the memtables use).
    pub(crate) fn sanitized_arena_block_size(&self) -> usize {
        let size = match self.arena_block_size {
            0 => (self.write_buffer_size.clamp(64 << 10, 64 << 30) / 8).min(1 << 20),
            n => n,
        };
        size.clamp(4096, 2 << 30).next_multiple_of(4096)
    }

    /// `max_write_buffer_size_to_maintain` as RocksDB 11.8.1's SanitizeCfOptions makes it: a
    /// negative value means `max_write_buffer_number * write_buffer_size` (what the OPTIONS
    /// file records and the memtable history keeps).
    pub(crate) fn sanitized_max_write_buffer_size_to_maintain(&self) -> i64 {
        if self.max_write_buffer_size_to_maintain < 0 {
            i64::from(self.max_write_buffer_number).saturating_mul(self.write_buffer_size as i64)
        } else {
            self.max_write_buffer_size_to_maintain
        }
    }

    /// `ttl` as RocksDB 11.8.1's SanitizeCfOptions sets it, whatever the style: the default
    /// is 30 days for block-based tables, else 0 (what the OPTIONS file records).
    pub(crate) fn sanitized_ttl(&self) -> u64 {
        match self.ttl {
            v if v == u64::MAX - 1 => {
                if matches!(self.table_format, crate::table::TableFormat::BlockBased) {
                    30 * 24 * 60 * 60
                } else {
                    0
                }
            }
            v => v,
        }
    }

    /// The `ttl` and `periodic_compaction_seconds` in force, as RocksDB 11.8.1 sanitizes them
    /// (`SanitizeCfOptions`); the defaults mean 30 days only for block-based tables:
    /// - level style: `ttl` defaults to 30 days; periodic compaction to 30 days with a
    ///   compaction filter or filter factory (a TTL database's too), else off;
    /// - FIFO: `ttl` (tables older are deleted) defaults to 30 days; no periodic compaction;
    /// - universal: `ttl` and periodic compaction mean the same (the stricter wins), and the
    ///   periodic default is 30 days (returned as `(0, periodic)`).
    pub(crate) fn age_compaction_seconds(&self) -> (u64, u64) {
        const DEFAULT: u64 = u64::MAX - 1;
        const THIRTY_DAYS: u64 = 30 * 24 * 60 * 60;
        // RocksDB 11.8.1's SanitizeCfOptions: both defaults become 30 days only for
        // block-based tables.
        let block_based = matches!(self.table_format, crate::table::TableFormat::BlockBased);
        let ttl = self.sanitized_ttl();
        let periodic_default = match self.compaction_style {
            // kCompactionStyleNone: none of RocksDB's three adjustments; the default is off.
            _ if self.compaction_style_none => false,
            crate::DBCompactionStyle::Fifo => return (ttl, 0),
            crate::DBCompactionStyle::Universal => block_based,
            crate::DBCompactionStyle::Level => {
                let filter = self.ttl_db.is_some()
                    || self.compaction_filter.is_some()
                    || self.compaction_filter_factory.is_some();
                filter && block_based
            }
        };
        let mut periodic = match self.periodic_compaction_seconds {
            DEFAULT if periodic_default => THIRTY_DAYS,
            DEFAULT => 0,
            v => v,
        };
        if self.compaction_style == crate::DBCompactionStyle::Universal {
            if periodic == 0 {
                periodic = ttl;
            } else if ttl != 0 {
                periodic = periodic.min(ttl);
            }
            return (0, periodic);
        }
        (ttl, periodic)
    }

    /// The number of immutable memtables a background flush waits for (see
    /// `set_min_write_buffer_number_to_merge`).
    pub(crate) fn flush_merge_min(&self) -> usize {
        self.min_write_buffer_number_to_merge.clamp(1, (self.max_write_buffer_number - 1).max(1)) as usize
    }

    pub fn set_num_levels(&mut self, n: i32) {
        self.num_levels = n;
    }

    pub fn set_level_zero_file_num_compaction_trigger(&mut self, n: i32) {
        self.level0_file_num_compaction_trigger = n;
    }

    pub fn set_level_zero_slowdown_writes_trigger(&mut self, n: i32) {
        self.level0_slowdown_writes_trigger = n;
    }

    pub fn set_level_zero_stop_writes_trigger(&mut self, n: i32) {
        self.level0_stop_writes_trigger = n;
    }

    pub fn set_target_file_size_base(&mut self, size: u64) {
        self.target_file_size_base = size;
    }

    pub fn set_target_file_size_multiplier(&mut self, m: i32) {
        self.target_file_size_multiplier = m.max(1);
    }

    pub fn set_max_bytes_for_level_base(&mut self, size: u64) {
        self.max_bytes_for_level_base = size;
    }

    pub fn set_max_bytes_for_level_multiplier(&mut self, m: f64) {
        self.max_bytes_for_level_multiplier = m;
    }

    /// The most a level-0 compaction reads, its level-1 overlaps included (0: 25 times
    /// `target_file_size_base`, RocksDB's default).
    pub fn set_max_compaction_bytes(&mut self, n: u64) {
        self.max_compaction_bytes = n;
    }

    /// Pending compaction bytes (`rocksdb.estimate-pending-compaction-bytes`) at which writes
    /// slow down (0: never). Default 64 GiB.
    pub fn set_soft_pending_compaction_bytes_limit(&mut self, limit: usize) {
        self.soft_pending_compaction_bytes_limit = limit as u64;
    }

    /// Pending compaction bytes at which writes stop (0: never). Default 256 GiB.
    pub fn set_hard_pending_compaction_bytes_limit(&mut self, limit: usize) {
        self.hard_pending_compaction_bytes_limit = limit as u64;
    }

    /// Bytes per second writes are held to while a write-stall condition says "delay"
    /// (0: 16 MiB/s, RocksDB's default).
    pub fn set_delayed_write_rate(&mut self, rate: u64) {
        self.delayed_write_rate = rate;
    }

    /// The memtable memory of all column families together at which the largest one is
    /// flushed (0: no limit), RocksDB's `db_write_buffer_size`.
    pub fn set_db_write_buffer_size(&mut self, size: usize) {
        self.db_write_buffer_size = size;
    }

    pub fn set_disable_auto_compactions(&mut self, v: bool) {
        self.disable_auto_compactions = v;
    }

    /// Level targets sized from the last level up (RocksDB's dynamic level bytes, the default
    /// of RocksDB 8.4 and later; Shale's default stays RocksDB 7.8.3's static targets). Level 0
    /// then compacts into the "base level", the highest level that needs data; see
    /// `compaction::picker::level_targets`.
    pub fn set_level_compaction_dynamic_level_bytes(&mut self, v: bool) {
        self.level_compaction_dynamic_level_bytes = v;
    }

    pub fn set_compression_type(&mut self, t: DBCompressionType) {
        self.compression = t;
    }

    pub fn set_block_based_table_factory(&mut self, factory: &BlockBasedOptions) {
        self.table = factory.clone();
        self.table_format = crate::table::TableFormat::BlockBased;
    }

    /// `bytes_per_sync` as RocksDB's SanitizeOptions leaves it: 1 MiB when unset and the
    /// database has a rate limiter.
    /// The directory of the WALs of the database at `db`: `wal_dir` without a trailing
    /// slash, or `db` when it is empty (RocksDB's SanitizeOptions and `GetWalDir`).
    pub(crate) fn wal_dir_of(&self, db: &std::path::Path) -> std::path::PathBuf {
        let s = self.wal_dir.to_string_lossy();
        let trimmed = s.trim_end_matches('/');
        if self.wal_dir.as_os_str().is_empty() {
            db.to_path_buf()
        } else if trimmed.is_empty() {
            std::path::PathBuf::from("/")
        } else if std::path::Path::new(trimmed) == db {
            db.to_path_buf()
        } else {
            std::path::PathBuf::from(trimmed)
        }
    }

    /// Whether obsolete WALs go to the archive (`WAL_ttl_seconds` or `WAL_size_limit_MB`).
    pub(crate) fn wal_archive_on(&self) -> bool {
        self.wal_ttl_seconds > 0 || self.wal_size_limit_mb > 0
    }

    /// `recycle_log_file_num` as RocksDB 11.8.1's `SanitizeOptions` leaves it: 0 with the WAL
    /// archive (`WAL_ttl_seconds` or `WAL_size_limit_MB`), and 0 with the
    /// TolerateCorruptedTailRecords and AbsoluteConsistency recovery modes (a reused file's
    /// stale tail cannot be told from damage under them). What the database acts on and
    /// what its OPTIONS file says.
    pub(crate) fn sanitized_recycle_log_file_num(&self) -> usize {
        let strict = matches!(
            self.wal_recovery_mode,
            DBRecoveryMode::TolerateCorruptedTailRecords | DBRecoveryMode::AbsoluteConsistency
        );
        if self.wal_archive_on() || strict {
            0
        } else {
            self.recycle_log_file_num
        }
    }

    pub(crate) fn sanitized_bytes_per_sync(&self) -> u64 {
        if self.bytes_per_sync == 0 && self.rate_limiter.is_some() {
            1024 * 1024
        } else {
            self.bytes_per_sync
        }
    }

    /// As RocksDB 11.8.1's `ColumnFamilyOptions::OptimizeLevelStyleCompaction`: a quarter of
    /// the budget per memtable, two memtables merged per flush, up to six, level 0 compacted
    /// at two files, level 1 as large as the budget, the level style, and
    /// `compression_per_level` of `num_levels` entries: none for levels 0 and 1, LZ4 below
    /// (RocksDB's choice when LZ4 is built in, as it always is in Shale).
    pub fn optimize_level_style_compaction(&mut self, memtable_memory_budget: usize) {
        self.write_buffer_size = memtable_memory_budget / 4;
        self.min_write_buffer_number_to_merge = 2;
        self.max_write_buffer_number = 6;
        self.level0_file_num_compaction_trigger = 2;
        self.target_file_size_base = memtable_memory_budget as u64 / 8;
        self.max_bytes_for_level_base = memtable_memory_budget as u64;
        self.set_compaction_style(crate::DBCompactionStyle::Level);
        self.compression_per_level = (0..self.num_levels.max(0))
            .map(|i| if i < 2 { DBCompressionType::None } else { DBCompressionType::Lz4 })
            .collect();
    }

    /// RocksDB's `GetCompressionFlush`: what a flush writes with. Universal compaction with
    /// `compression_size_percent` >= 0 flushes uncompressed; else `compression_per_level[0]`
    /// when per-level codecs are set, `compression` otherwise.
    pub(crate) fn flush_compression(&self) -> DBCompressionType {
        if self.compaction_style == crate::DBCompactionStyle::Universal
            && self.universal.compression_size_percent >= 0
        {
            return DBCompressionType::None;
        }
        self.compression_per_level.first().copied().unwrap_or(self.compression)
    }

    /// Whether the family keeps its last level for files ingested behind (RocksDB's
    /// `ColumnFamilyData::AllowIngestBehind`: the DB's or the family's option).
    pub(crate) fn ingest_behind_allowed(&self) -> bool {
        self.allow_ingest_behind || self.cf_allow_ingest_behind
    }

    /// The deepest level a compaction may write (RocksDB's `MaxOutputLevel`): the last one,
    /// or the one above it when the last is kept for files ingested behind.
    pub(crate) fn max_output_level(&self) -> usize {
        let last = (self.num_levels.max(1) - 1) as usize;
        if self.ingest_behind_allowed() {
            last.saturating_sub(1)
        } else {
            last
        }
    }

    /// A family's options as RocksDB 11.8.1's `SanitizeCfOptions` leaves them when the family
    /// opens or is created: `write_buffer_size` 0 becomes 64 KiB (the low end of its clamp;
    /// a nonzero size is kept, see docs/refusals.md); `num_levels` is at least 1, and at
    /// least 2 with level compaction; `max_bytes_for_level_multiplier` of 0 or less becomes
    /// 1; the DB's `allow_ingest_behind` applies to the family, and universal compaction then
    /// has at least 3 levels.
    pub(crate) fn sanitize_cf(&mut self, db_allow_ingest_behind: bool) {
        if self.write_buffer_size == 0 {
            self.write_buffer_size = 64 << 10;
        }
        if self.max_bytes_for_level_multiplier <= 0.0 {
            self.max_bytes_for_level_multiplier = 1.0;
        }
        self.num_levels = self.num_levels.max(1);
        // Not under kCompactionStyleNone (RocksDB's check is for kCompactionStyleLevel).
        if self.compaction_style == crate::DBCompactionStyle::Level && !self.compaction_style_none {
            self.num_levels = self.num_levels.max(2);
        }
        self.allow_ingest_behind |= db_allow_ingest_behind;
        if self.compaction_style == crate::DBCompactionStyle::Universal
            && self.ingest_behind_allowed()
            && self.num_levels < 3
        {
            self.num_levels = 3;
        }
    }

    /// `level_compaction_dynamic_level_bytes` as RocksDB sanitizes it: only the level style
    /// has level targets.
    pub(crate) fn dynamic_level_bytes_in_force(&self) -> bool {
        self.level_compaction_dynamic_level_bytes && self.compaction_style == crate::DBCompactionStyle::Level
    }

    /// RocksDB 11.8.1's `BlockBasedTableFactory::ValidateOptions` checks of the layout
    /// options (its messages).
    fn check_table_layout(&self) -> Result<()> {
        let t = &self.table;
        if t.block_align {
            let codecs = std::iter::once(("compression", self.compression))
                .chain(self.bottommost_compression.map(|c| ("bottommost_compression", c)))
                .chain(self.compression_per_level.iter().map(|c| ("compression_per_level", *c)));
            for (context, c) in codecs {
                if c != DBCompressionType::None {
                    return Err(Error::invalid_argument(format!(
                        "Enable block_align, but {context} enabled"
                    )));
                }
            }
            if !t.block_size.is_power_of_two() {
                return Err(Error::invalid_argument(
                    "Block alignment requested but block size is not a power of 2",
                ));
            }
        }
        if t.block_size > u32::MAX as usize {
            return Err(Error::invalid_argument("block size exceeds maximum number (4GiB) allowed"));
        }
        let sb = t.super_block_alignment_size;
        if sb & sb.wrapping_sub(1) != 0 {
            return Err(Error::invalid_argument(
                "Super Block alignment requested but super block alignment size is not a power of 2",
            ));
        }
        if sb > u32::MAX as usize {
            return Err(Error::invalid_argument(
                "Super block alignment size exceeds maximum number (4GiB) allowed",
            ));
        }
        let ratio = t.super_block_alignment_space_overhead_ratio;
        if ratio > 0 && ratio < 4 {
            return Err(Error::invalid_argument("Super block alignment space overhead is too high"));
        }
        // RocksDB 11.8.1's `ColumnFamilyData::ValidateOptions` of universal's `max_read_amp`.
        if self.compaction_style == crate::DBCompactionStyle::Universal {
            let m = self.universal.max_read_amp;
            if m < -1 {
                return Err(Error::not_supported(
                    "CompactionOptionsUniversal::max_read_amp should be at least -1.",
                ));
            }
            if 0 < m && m < self.level0_file_num_compaction_trigger {
                return Err(Error::not_supported(
                    "CompactionOptionsUniversal::max_read_amp limits the number of sorted runs but is smaller than the compaction trigger level0_file_num_compaction_trigger.",
                ));
            }
        }
        if t.use_udi_as_primary_index {
            return Err(Error::invalid_argument(
                "use_udi_as_primary_index requires user_defined_index_factory",
            ));
        }
        Ok(())
    }

    /// The checks of RocksDB 11.8.1's `ColumnFamilyData::ValidateOptions` (and the
    /// `BlockBasedTableFactory::ValidateOptions` it calls) that read-write opens, `create_cf`
    /// and `set_options` run and read-only and secondary opens do not (RocksDB's
    /// `DBImplReadOnly` and `DBImplSecondary` do not validate): added in session 26 (issue 33).
    pub(crate) fn check_validate_options(&self) -> Result<()> {
        // RocksDB 11.8.1's `CheckCompressionSupported`, the first check of
        // ColumnFamilyData::ValidateOptions (of `compression_opts` only).
        let co = &self.compression_opts;
        if co.zstd_max_train_bytes > 0 && co.max_dict_bytes == 0 {
            return Err(Error::invalid_argument(
                "The dictionary size limit (`CompressionOptions::max_dict_bytes`) should be nonzero if we're using zstd's dictionary generator.",
            ));
        }
        // RocksDB 11.8.1's ColumnFamilyData::ValidateOptions of blob garbage collection.
        if self.blob.enable_gc {
            let b = &self.blob;
            if b.gc_age_cutoff < 0.0 || b.gc_age_cutoff > 1.0 {
                return Err(Error::invalid_argument(
                    "The age cutoff for blob garbage collection should be in the range [0.0, 1.0].",
                ));
            }
            if b.gc_force_threshold < 0.0 || b.gc_force_threshold > 1.0 {
                return Err(Error::invalid_argument(
                    "The garbage ratio threshold for forcing blob garbage collection should be in the range [0.0, 1.0].",
                ));
            }
        }
        // RocksDB's BlockBasedTableFactory::ValidateOptions.
        if self.table_format == crate::table::TableFormat::BlockBased {
            let t = &self.table;
            if t.cache_index_and_filter_blocks && t.no_block_cache {
                return Err(Error::invalid_argument(
                    "Enable cache_index_and_filter_blocks, , but block cache is disabled",
                ));
            }
            if t.pin_l0_filter_and_index_blocks_in_cache && t.no_block_cache {
                return Err(Error::invalid_argument(
                    "Enable pin_l0_filter_and_index_blocks_in_cache, , but block cache is disabled",
                ));
            }
        }
        // (RocksDB's test is `ratio <= 0`, which a NaN passes.)
        if self.table_format == crate::table::TableFormat::BlockBased
            && self.table.data_block_index_type == crate::DataBlockIndexType::BinaryAndHash
            && self.table.data_block_hash_ratio <= 0.0
        {
            return Err(Error::invalid_argument(
                "data_block_hash_table_util_ratio should be greater than 0 when data_block_index_type is set to kDataBlockBinaryAndHash",
            ));
        }
        // ColumnFamilyData::ValidateOptions: `ttl` and `periodic_compaction_seconds` (other
        // than 0 and the default) need block-based tables.
        if self.table_format != crate::table::TableFormat::BlockBased {
            if self.ttl > 0 && self.ttl != AGE_DEFAULT {
                return Err(Error::not_supported("TTL is only supported in Block-Based Table format. "));
            }
            let p = self.periodic_compaction_seconds;
            if p > 0 && p != AGE_DEFAULT {
                return Err(Error::not_supported(
                    "Periodic Compaction is only supported in Block-Based Table format. ",
                ));
            }
        }
        Ok(())
    }

    /// Every supported option has been checked; the first unsupported one is refused.
    pub(crate) fn check_supported(&self) -> Result<()> {
        if let Some(name) = self.unsupported.first() {
            return Err(Error::not_supported(format!("option {name} is not supported by Shale")));
        }
        // RocksDB's ColumnFamilyData::ValidateOptions (at open and at each SetOptions).
        let rt = self.read_triggered_compaction_threshold;
        if rt < 0.0 || !rt.is_finite() {
            return Err(Error::invalid_argument(
                "read_triggered_compaction_threshold must be >= 0.0 and finite. Use 0.0 to disable.",
            ));
        }
        if ![0, 1, 2, 4, 8].contains(&self.memtable_protection_bytes_per_key) {
            return Err(Error::not_supported(
                "Memtable per key-value checksum protection only supports 0, 1, 2, 4 or 8 bytes per key.",
            ));
        }
        if ![0, 1, 2, 4, 8].contains(&self.block_protection_bytes_per_key) {
            return Err(Error::not_supported(
                "Block per key-value checksum protection only supports 0, 1, 2, 4 or 8 bytes per key.",
            ));
        }
        // RocksDB's BlockBasedTableFactory::ValidateOptions.
        if self.table.format_version_unsupported {
            return Err(Error::invalid_argument(
                "Unsupported BlockBasedTable format_version. Please check include/rocksdb/table.h for more info",
            ));
        }
        self.check_table_layout()?;
        if self.table.hash_index && self.prefix_extractor.is_none() {
            return Err(Error::invalid_argument(
                "Hash index is specified for block-based table, but prefix_extractor is not given",
            ));
        }
        // RocksDB 11.8.1's `BlockBasedTableFactory::ValidateOptions`.
        if self.table_format == crate::table::TableFormat::BlockBased
            && self.table.index_block_search_type == crate::options_tbl::BlockSearchType::Interpolation
            && self.comparator.name() != "leveldb.BytewiseComparator"
        {
            return Err(Error::invalid_argument("Interpolation search requires BytewiseComparator"));
        }
        // RocksDB's ValidateOptions.
        if self.allow_mmap_reads && self.use_direct_reads {
            return Err(Error::not_supported(
                "If memory mapped reads (allow_mmap_reads) are enabled then direct I/O reads (use_direct_reads) must be disabled. ",
            ));
        }
        if self.allow_mmap_reads && self.dbfile.use_direct_io_for_compaction_reads {
            return Err(Error::not_supported(
                "If memory mapped reads (allow_mmap_reads) are enabled then compaction-only direct I/O reads (use_direct_io_for_compaction_reads) must be disabled. ",
            ));
        }
        if self.allow_mmap_writes && self.use_direct_io_for_flush_and_compaction {
            return Err(Error::not_supported(
                "If memory mapped writes (allow_mmap_writes) are enabled then direct I/O writes (use_direct_io_for_flush_and_compaction) must be disabled. ",
            ));
        }
        if self.use_direct_io_for_flush_and_compaction && self.writable_file_max_buffer_size == 0 {
            return Err(Error::invalid_argument(
                "writes in direct IO require writable_file_max_buffer_size > 0",
            ));
        }
        // RocksDB's ColumnFamilyData::ValidateOptions.
        if !self.fifo_temperature_ages.is_empty() {
            if self.compaction_style != crate::DBCompactionStyle::Fifo {
                return Err(Error::not_supported(
                    "Option file_temperature_age_thresholds only supports FIFO compaction.",
                ));
            }
            if self.num_levels > 1 {
                return Err(Error::not_supported(
                    "Option file_temperature_age_thresholds is only supported when num_levels = 1.",
                ));
            }
            if self.fifo_temperature_ages.windows(2).any(|w| w[0].0 >= w[1].0) {
                return Err(Error::not_supported(
                    "Option file_temperature_age_thresholds requires elements to be sorted in increasing order with respect to `age` field.",
                ));
            }
        }
        if self.compaction_style == crate::DBCompactionStyle::Fifo
            && self.max_open_files != -1
            && self.age_compaction_seconds().0 > 0
        {
            return Err(Error::not_supported("FIFO compaction only supported with max_open_files = -1."));
        }
        if let crate::table::TableFormat::Plain(p) = &self.table_format {
            // RocksDB's PlainTableReader refuses these when it opens a table; Shale refuses
            // them at open, before a table is written.
            if self.prefix_extractor.is_none() && p.hash_table_ratio != 0.0 {
                return Err(Error::not_supported(
                    "PlainTable requires a prefix extractor enable prefix hash mode \
                     (set a prefix extractor, or hash_table_ratio 0 for total-order mode)",
                ));
            }
        }
        // RocksDB's ValidateOptions.
        if self.unordered_write && !self.allow_concurrent_memtable_write {
            return Err(Error::invalid_argument(
                "unordered_write is incompatible with !allow_concurrent_memtable_write",
            ));
        }
        if self.unordered_write && self.enable_pipelined_write {
            return Err(Error::invalid_argument(
                "unordered_write is incompatible with enable_pipelined_write",
            ));
        }
        if self.atomic_flush && self.enable_pipelined_write {
            return Err(Error::invalid_argument("atomic_flush is incompatible with enable_pipelined_write"));
        }
        Ok(())
    }

    /// A family's options against the database's (RocksDB's `ColumnFamilyData::ValidateOptions`).
    /// RocksDB 11.8.1's ColumnFamilyData::ValidateOptions for blob direct write (judged as
    /// given, before sanitizing turns it off without blob files, and before the DB options'
    /// own checks): it needs the ordered, single-memtable-writer write path.
    pub(crate) fn check_blob_direct_write(
        &self,
        pipelined: bool,
        concurrent: bool,
        unordered: bool,
        two_queues: bool,
    ) -> Result<()> {
        if !self.blob.direct_write {
            return Ok(());
        }
        let refused = if pipelined {
            "Blob direct write v1 does not support pipelined writes."
        } else if concurrent {
            "Blob direct write v1 does not support concurrent memtable writes."
        } else if unordered {
            "Blob direct write v1 does not support unordered writes."
        } else if two_queues {
            "Blob direct write v1 does not support two write queues."
        } else if self.experimental_mempurge_threshold > 0.0 {
            "Blob direct write does not support MemPurge."
        } else if self.comparator.timestamp_size() > 0 {
            "Blob direct write does not support user-defined timestamps."
        } else {
            return Ok(());
        };
        Err(Error::not_supported(refused))
    }

    /// RocksDB 11.8.1's ColumnFamilyData::ValidateOptions for
    /// `persist_user_defined_timestamps = false` on a family with timestamps: no atomic
    /// flush, no concurrent memtable writes, and a comparator whose name ends in `.u64ts`
    /// (the texts are RocksDB's, missing spaces included).
    pub(crate) fn check_udt_not_persisted(&self, atomic_flush: bool, concurrent: bool) -> Result<()> {
        if self.comparator.timestamp_size() == 0 || self.persist_user_defined_timestamps {
            return Ok(());
        }
        let refused = if atomic_flush {
            "Not persisting user-defined timestamps feature is not supported\
             in combination with atomic flush."
        } else if concurrent {
            "Not persisting user-defined timestamps feature is not supported \
             in combination with concurrent memtable write."
        } else {
            let name = self.comparator.name();
            if name.len() > ".u64ts".len() && name.ends_with(".u64ts") {
                return Ok(());
            }
            "Not persisting user-defined timestamps\
             feature only support user-defined timestamps formatted as uint64_t."
        };
        Err(Error::not_supported(refused))
    }

    pub(crate) fn check_with_db(db: &shale_engine::config::DbConfig, cf: &Options) -> Result<()> {
        cf.check_blob_direct_write(
            db.enable_pipelined_write,
            db.allow_concurrent_memtable_write,
            db.unordered_write,
            db.two_write_queues,
        )?;
        cf.check_udt_not_persisted(db.atomic_flush, db.allow_concurrent_memtable_write)?;
        // RocksDB's CheckConcurrentWritesSupported.
        if db.allow_concurrent_memtable_write && cf.inplace_update_support {
            return Err(Error::invalid_argument(
                "In-place memtable updates (inplace_update_support) is not compatible \
                 with concurrent writes (allow_concurrent_memtable_write)",
            ));
        }
        // The hash memtables cannot insert concurrently (their factories leave
        // `IsInsertConcurrentlySupported` false); RocksDB judges the factory as given, before
        // SanitizeCfOptions would swap a hash factory without a prefix extractor for the
        // skip list.
        if db.allow_concurrent_memtable_write && cf.memtable_rep.is_hash() {
            return Err(Error::invalid_argument(
                "Memtable doesn't allow concurrent writes (allow_concurrent_memtable_write)",
            ));
        }
        if db.unordered_write && cf.max_successive_merges != 0 {
            return Err(Error::invalid_argument(
                "max_successive_merges > 0 is incompatible with unordered_write",
            ));
        }
        // RocksDB's ColumnFamilyData::ValidateOptions with `open_files_async`.
        if db.open_files_async {
            if cf.compaction_style == crate::DBCompactionStyle::Fifo {
                return Err(Error::not_supported(
                    "FIFO compaction is not supported with open_files_async = true.",
                ));
            }
            if !db.skip_stats_update_on_db_open {
                return Err(Error::invalid_argument(
                    "open_files_async requires skip_stats_update_on_db_open = true.",
                ));
            }
        }
        // RocksDB's CheckCFPathsSupported: several paths work with level and universal
        // compaction only.
        let several = cf.cf_paths.len() > 1 || (cf.cf_paths.is_empty() && db.db_paths.len() > 1);
        if several && (cf.compaction_style == crate::DBCompactionStyle::Fifo || cf.compaction_style_none) {
            return Err(Error::not_supported(
                "More than one CF paths are only supported in universal and level compaction styles.",
            ));
        }
        Ok(())
    }

    /// `max_compaction_bytes`, with RocksDB's default for 0.
    /// RocksDB's SanitizeCfOptions: 0 means 25 target files, except under FIFO with
    /// `use_kv_ratio_compaction`, where 0 stays (the kv-ratio pick then derives its target).
    pub(crate) fn max_compaction_bytes(&self) -> u64 {
        if self.max_compaction_bytes == 0
            && !self.max_compaction_bytes_sanitized
            && !(self.compaction_style == crate::DBCompactionStyle::Fifo && self.fifo_use_kv_ratio_compaction)
        {
            self.target_file_size_base.saturating_mul(25)
        } else {
            self.max_compaction_bytes
        }
    }

    /// The rate of delayed writes, bytes per second.
    pub(crate) fn delayed_write_rate(&self) -> u64 {
        if self.delayed_write_rate == 0 {
            16 << 20
        } else {
            self.delayed_write_rate
        }
    }

    /// How many flushes and compactions may run at once (RocksDB's `GetBGJobLimits`).
    pub(crate) fn background_job_limits(&self) -> (usize, usize) {
        let (mut flushes, mut compactions) = (self.max_background_flushes, self.max_background_compactions);
        if flushes == -1 && compactions == -1 {
            flushes = (self.max_background_jobs / 4).max(1);
            compactions = (self.max_background_jobs - flushes).max(1);
        }
        (flushes.max(1) as usize, compactions.max(1) as usize)
    }
}

/// Options of one write, as rust-rocksdb's `WriteOptions`.
#[derive(Clone, Default)]
pub struct WriteOptions {
    pub(crate) sync: bool,
    pub(crate) disable_wal: bool,
    pub(crate) no_slowdown: bool,
    /// `set_ignore_missing_column_families`: records of dropped families are skipped.
    pub(crate) ignore_missing_column_families: bool,
    /// `set_low_pri`: the write is throttled while compaction is behind (`write.rs`).
    pub(crate) low_pri: bool,
    /// `set_memtable_insert_hint_per_batch` (`write.rs::insert_batch`).
    pub(crate) memtable_insert_hint_per_batch: bool,
}

impl WriteOptions {
    pub fn new() -> WriteOptions {
        WriteOptions::default()
    }

    /// The write is durable (WAL fsynced) before it is acknowledged.
    pub fn set_sync(&mut self, sync: bool) {
        self.sync = sync;
    }

    pub fn disable_wal(&mut self, disable: bool) {
        self.disable_wal = disable;
    }

    /// Fail with Incomplete instead of waiting when writes are stalled.
    pub fn set_no_slowdown(&mut self, v: bool) {
        self.no_slowdown = v;
    }

    /// The engine's settings of these options (a copy of five flags, made per write).
    #[inline]
    pub(crate) fn engine(&self) -> shale_engine::config::WriteSettings {
        shale_engine::config::WriteSettings {
            sync: self.sync,
            disable_wal: self.disable_wal,
            no_slowdown: self.no_slowdown,
            ignore_missing_column_families: self.ignore_missing_column_families,
            low_pri: self.low_pri,
            memtable_insert_hint_per_batch: self.memtable_insert_hint_per_batch,
        }
    }
}

/// Options of one read or iterator, as rust-rocksdb's `ReadOptions`: the engine's
/// `ReadSettings`, which the engine's reads take by reference (no conversion per call).
#[derive(Clone, Default)]
pub struct ReadOptions {
    pub(crate) settings: shale_engine::config::ReadSettings,
}

impl std::ops::Deref for ReadOptions {
    type Target = shale_engine::config::ReadSettings;
    fn deref(&self) -> &Self::Target {
        &self.settings
    }
}

impl std::borrow::Borrow<shale_engine::config::ReadSettings> for ReadOptions {
    fn borrow(&self) -> &shale_engine::config::ReadSettings {
        &self.settings
    }
}

impl std::borrow::BorrowMut<shale_engine::config::ReadSettings> for ReadOptions {
    fn borrow_mut(&mut self) -> &mut shale_engine::config::ReadSettings {
        &mut self.settings
    }
}

impl std::ops::DerefMut for ReadOptions {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.settings
    }
}

impl ReadOptions {
    pub fn set_iterate_lower_bound<K: Into<Vec<u8>>>(&mut self, key: K) {
        self.lower_bound = Some(key.into());
    }

    pub fn set_iterate_upper_bound<K: Into<Vec<u8>>>(&mut self, key: K) {
        self.upper_bound = Some(key.into());
    }

    pub fn fill_cache(&mut self, v: bool) {
        self.fill_cache = v;
    }

    /// RocksDB's `verify_checksums` (default true): with `false`, data blocks this read
    /// loads from table files are not checked against their block checksums (a block
    /// whose bytes no longer decode still fails with Corruption).
    pub fn set_verify_checksums(&mut self, v: bool) {
        self.verify_checksums = v;
    }

    /// With a prefix extractor, a seek is a prefix seek unless this is true: tables (and
    /// memtables with a prefix Bloom) whose filter excludes the target's prefix are passed
    /// over, so keys of other prefixes may be missing, as in RocksDB. `get` with a table
    /// filter of prefixes only is not affected. Without a prefix extractor every seek is in
    /// total order either way.
    pub fn set_total_order_seek(&mut self, v: bool) {
        self.total_order_seek = v;
    }

    /// RocksDB's `auto_prefix_mode` (a Shale extension to rust-rocksdb's API): seeks give
    /// total-order results, and a table's prefix filter is used only when the seek target
    /// and `iterate_upper_bound` prove the range lies within one prefix.
    pub fn set_auto_prefix_mode(&mut self, v: bool) {
        self.auto_prefix_mode = v;
    }
}

/// Options of a manual flush, as rust-rocksdb's `FlushOptions`.
#[derive(Clone)]
pub struct FlushOptions {
    pub(crate) wait: bool,
}

impl Default for FlushOptions {
    fn default() -> Self {
        FlushOptions { wait: true }
    }
}

impl FlushOptions {
    pub fn new() -> FlushOptions {
        FlushOptions::default()
    }

    pub fn set_wait(&mut self, wait: bool) {
        self.wait = wait;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_rocksdbs() {
        let o = Options::default();
        assert_eq!(o.write_buffer_size, 64 << 20);
        assert_eq!(o.level0_file_num_compaction_trigger, 4);
        assert_eq!(o.engine_cf_config().max_bytes_for_level(1), 256 << 20);
        assert_eq!(o.engine_cf_config().max_bytes_for_level(3), 25600 << 20);
        assert_eq!(o.comparator.name(), "leveldb.BytewiseComparator");
        assert!(o.check_supported().is_ok());
    }

    /// RocksDB's static level targets with `max_bytes_for_level_multiplier_additional`: level
    /// L >= 2 multiplies level L-1's by the multiplier and entry L-1 (1 past the end).
    #[test]
    fn multiplier_additional_scales_level_targets() {
        let mut o = Options::default();
        o.set_level_compaction_dynamic_level_bytes(false);
        o.set_max_bytes_for_level_base(1000);
        o.set_max_bytes_for_level_multiplier(10.0);
        o.set_max_bytes_for_level_multiplier_additional(&[1, 1, 3, 2]);
        assert_eq!(o.engine_cf_config().max_bytes_for_level(1), 1000);
        assert_eq!(o.engine_cf_config().max_bytes_for_level(2), 10_000);
        assert_eq!(o.engine_cf_config().max_bytes_for_level(3), 300_000);
        assert_eq!(o.engine_cf_config().max_bytes_for_level(4), 6_000_000);
        assert_eq!(o.engine_cf_config().max_bytes_for_level(5), 60_000_000, "past the list: 1");
        assert!(o.check_supported().is_ok());
        // The picker's targets are these.
        let v =
            crate::version::Version::empty(crate::key::bytewise_internal_comparator(), o.num_levels as usize);
        let t = crate::compaction::picker::level_targets(&v, &o.engine_cf_config());
        assert_eq!(&t.max_bytes[1..5], &[1000, 10_000, 300_000, 6_000_000]);
    }

    #[test]
    fn optimize_level_style_compaction_is_rocksdbs() {
        let mut o = Options::default();
        o.optimize_level_style_compaction(512 << 20);
        assert_eq!(o.write_buffer_size, 128 << 20);
        assert_eq!(o.min_write_buffer_number_to_merge, 2);
        assert_eq!(o.max_write_buffer_number, 6);
        assert_eq!(o.level0_file_num_compaction_trigger, 2);
        assert_eq!((o.target_file_size_base, o.max_bytes_for_level_base), (64 << 20, 512 << 20));
        use DBCompressionType::{Lz4, None as No};
        assert_eq!(o.compression_per_level, [No, No, Lz4, Lz4, Lz4, Lz4, Lz4]);
        assert_eq!(o.flush_compression(), No);
        assert!(o.check_supported().is_ok());
    }

    #[test]
    fn arena_block_size_is_sanitized_as_rocksdbs() {
        let mut o = Options::default();
        assert_eq!(o.sanitized_arena_block_size(), 1 << 20, "64 MiB / 8, at most 1 MiB");
        o.set_write_buffer_size(1 << 20);
        assert_eq!(o.sanitized_arena_block_size(), 128 << 10);
        o.set_write_buffer_size(100_000);
        assert_eq!(o.sanitized_arena_block_size(), 16 << 10, "12500 rounded up to 4 KiB");
        o.set_write_buffer_size(4096);
        assert_eq!(o.sanitized_arena_block_size(), 8 << 10, "the write buffer counts as 64 KiB");
        o.set_arena_block_size(1);
        assert_eq!(o.sanitized_arena_block_size(), 4096);
        o.set_arena_block_size(3 << 20);
        assert_eq!(o.sanitized_arena_block_size(), 3 << 20, "a set size is not capped at 1 MiB");
        o.set_arena_block_size(usize::MAX / 2);
        assert_eq!(o.sanitized_arena_block_size(), 2 << 30);
    }

    #[test]
    fn unsupported_settings_are_refused_by_name() {
        let mut o = Options::default();
        o.set_level_compaction_dynamic_level_bytes(true);
        assert!(o.check_supported().is_ok());
        let mut o = Options::default();
        let mut t = BlockBasedOptions::default();
        t.set_format_version(8);
        o.set_block_based_table_factory(&t);
        let e = o.check_supported().unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{e}");
        assert!(e.to_string().contains("Unsupported BlockBasedTable format_version"), "{e}");
        // 0 and 1 are raised to 2, as RocksDB's; a negative value is a huge uint32_t there.
        for (v, ok) in [(0, true), (1, true), (-1, false)] {
            let mut t = BlockBasedOptions::default();
            t.set_format_version(v);
            assert_eq!(t.format_version, 2);
            o.set_block_based_table_factory(&t);
            assert_eq!(o.check_supported().is_ok(), ok, "format_version {v}");
        }
    }
}
