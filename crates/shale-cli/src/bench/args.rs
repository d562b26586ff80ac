//! The `shale bench` flags: db_bench's names and defaults (RocksDB 7.8.3,
//! tools/db_bench_tool.cc). Both `--flag=value` and `--flag value` are accepted; a boolean
//! flag alone (`--histogram`) means true, and takes `--histogram=0|1|true|false` as
//! db_bench (gflags) does. A flag db_bench has but Shale's bench does not support is
//! rejected by clap as an unknown argument, naming it.

use clap::Args;

/// The benchmarks run when `--benchmarks` is not given: db_bench's own default list, in
/// its order, restricted to the workloads `shale bench` implements and without
/// `fillsync` (db_bench 7.8.3's fillsync does `--num` fsynced writes, which takes tens of
/// minutes at the default 1M keys).
pub const DEFAULT_BENCHMARKS: &str =
    "fillseq,fillrandom,overwrite,readrandom,seekrandom,readseq,readreverse,compact,flush,readseq,readreverse,readwhilewriting";

/// Every benchmark name `shale bench` knows.
pub const KNOWN_BENCHMARKS: &[&str] = &[
    "fillseq",
    "fillrandom",
    "overwrite",
    "fillsync",
    "readrandom",
    "readmissing",
    "readseq",
    "readreverse",
    "seekrandom",
    "seekrandomwhilewriting",
    "readwhilewriting",
    "deleterandom",
    "compact",
    "waitforcompaction",
    "mergerandom",
    "readrandommergerandom",
    "randomtransaction",
    "flush",
    "stats",
    "levelstats",
    "sstables",
];

/// gflags' spellings of a boolean.
pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "1" | "true" | "t" | "yes" | "y" => Ok(true),
        "0" | "false" | "f" | "no" | "n" => Ok(false),
        _ => Err(format!("invalid boolean '{s}' (use true/false/1/0)")),
    }
}

#[derive(Args, Debug, Clone)]
#[command(rename_all = "snake_case")]
pub struct BenchArgs {
    /// Comma-separated list of benchmarks to run, in order. Known: fillseq, fillrandom,
    /// overwrite, fillsync, readrandom, readmissing, readseq, readreverse, seekrandom,
    /// seekrandomwhilewriting, readwhilewriting, deleterandom, mergerandom,
    /// readrandommergerandom, randomtransaction, compact, waitforcompaction, flush, stats.
    #[arg(long, default_value = DEFAULT_BENCHMARKS)]
    pub benchmarks: String,
    /// The merge operator, by RocksDB's registered name (put, uint64add, max, bytesxor,
    /// sortlist, stringappend, stringappendtest); needed by mergerandom and
    /// readrandommergerandom.
    #[arg(long, default_value = "")]
    pub merge_operator: String,
    /// Keys merged into by mergerandom / readrandommergerandom are drawn from
    /// `[0, merge_keys)`; negative: --num.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub merge_keys: i64,
    /// readrandommergerandom: the percentage of operations that are merges.
    #[arg(long, default_value_t = 70)]
    pub mergereadpercent: i32,
    /// A merge that finds this many operands of its key in the memtable is written as the
    /// merged value (RocksDB's `max_successive_merges`; 0: never).
    #[arg(long, default_value_t = 0)]
    pub max_successive_merges: usize,
    /// Number of key/values to place in database.
    #[arg(long, default_value_t = 1_000_000)]
    pub num: i64,
    /// Number of read operations to do; negative: --num.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub reads: i64,
    /// Size of each key.
    #[arg(long, default_value_t = 16)]
    pub key_size: i32,
    /// Size of each value.
    #[arg(long, default_value_t = 100)]
    pub value_size: i32,
    /// Number of concurrent threads to run.
    #[arg(long, default_value_t = 1)]
    pub threads: i32,
    /// The database directory (default: a fresh temporary directory removed at exit).
    #[arg(long, default_value = "")]
    pub db: String,
    /// Do not destroy the existing database; benchmarks that want a fresh one are skipped.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub use_existing_db: bool,
    /// Compression: none, snappy, zlib, bzip2, lz4, lz4hc, zstd.
    #[arg(long, default_value = "snappy")]
    pub compression_type: String,
    /// Threads compressing each table's data blocks (db_bench's
    /// `--compression_parallel_threads`, RocksDB's `compression_opts.parallel_threads`).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    pub compression_parallel_threads: i32,
    /// Block cache size in bytes (db_bench 11.8.1's default: 32 MiB; 7.x had 8 MiB).
    #[arg(long, default_value_t = 32 << 20, allow_negative_numbers = true)]
    pub cache_size: i64,
    /// Type of block cache: hyper_clock_cache (db_bench 11.8.1's default) or
    /// auto_hyper_clock_cache (both an AutoHyperClockCache), fixed_hyper_clock_cache (a
    /// FixedHyperClockCache, `--block_size` its estimated entry charge), or lru_cache.
    #[arg(long, default_value = "hyper_clock_cache")]
    pub cache_type: String,
    /// The block cache has 2^cache_numshardbits shards; negative: RocksDB's default.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub cache_numshardbits: i32,
    /// LRU cache: the share of the capacity for high-priority blocks; above 0 also puts index
    /// and filter blocks there (cache_index_and_filter_blocks_with_high_priority).
    #[arg(long, default_value_t = 0.0)]
    pub cache_high_pri_pool_ratio: f64,
    /// LRU cache: the share of the capacity for low-priority blocks (data blocks) above the
    /// bottom pool (blobs of a shared blob cache).
    #[arg(long, default_value_t = 0.0)]
    pub cache_low_pri_pool_ratio: f64,
    /// Keep index and filter blocks in the block cache.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub cache_index_and_filter_blocks: bool,
    /// With cache_index_and_filter_blocks: pin those of level-0 tables.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub pin_l0_filter_and_index_blocks_in_cache: bool,
    /// With cache_index_and_filter_blocks: pin the top level of a partitioned index or
    /// filter in the block cache (db_bench's default false, unlike RocksDB's own true).
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub pin_top_level_index_and_filter: bool,
    /// Partition index and filter blocks: index_type kTwoLevelIndexSearch and
    /// partition_filters (table/partitioned_builder.rs).
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub partition_index_and_filters: bool,
    /// Partition index blocks (index_type kTwoLevelIndexSearch; filters stay whole unless
    /// --partition_index_and_filters).
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub partition_index: bool,
    /// Max partition size when partitioning index/filters (used only when partitioning).
    #[arg(long, default_value_t = 4096, allow_negative_numbers = true)]
    pub metadata_block_size: i64,
    /// Number of keys between restart points for delta encoding of keys in data block.
    #[arg(long, default_value_t = 16, allow_negative_numbers = true)]
    pub block_restart_interval: i32,
    /// Number of keys between restart points for delta encoding of keys in index block.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    pub index_block_restart_interval: i32,
    /// Bytes of row cache (0: none).
    #[arg(long, default_value_t = 0)]
    pub row_cache_size: i64,
    /// Bloom filter bits per key; negative: default (none); 0: none.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub bloom_bits: i32,
    /// Bytes to buffer in a memtable before flushing.
    #[arg(long, default_value_t = 64 << 20)]
    pub write_buffer_size: i64,
    /// Number of memtables.
    #[arg(long, default_value_t = 2)]
    pub max_write_buffer_number: i32,
    /// Maximum number of concurrent background jobs.
    #[arg(long, default_value_t = 2)]
    pub max_background_jobs: i32,
    /// Maximum number of concurrent flushes (-1: from max_background_jobs).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub max_background_flushes: i32,
    /// Maximum number of concurrent compactions (-1: from max_background_jobs).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub max_background_compactions: i32,
    /// Maximum number of subcompactions one compaction is split into (db_bench's
    /// --subcompactions, RocksDB's max_subcompactions).
    #[arg(long, default_value_t = 1)]
    pub subcompactions: u32,
    /// Number of level-0 files that triggers a compaction.
    #[arg(long, default_value_t = 4, allow_negative_numbers = true)]
    pub level0_file_num_compaction_trigger: i32,
    /// Number of level-0 files at which writes slow down.
    #[arg(long, default_value_t = 20, allow_negative_numbers = true)]
    pub level0_slowdown_writes_trigger: i32,
    /// Number of level-0 files at which writes stop.
    #[arg(long, default_value_t = 36, allow_negative_numbers = true)]
    pub level0_stop_writes_trigger: i32,
    /// Pending compaction bytes at which writes slow down.
    #[arg(long, default_value_t = 64 << 30)]
    pub soft_pending_compaction_bytes_limit: u64,
    /// Pending compaction bytes at which writes stop.
    #[arg(long, default_value_t = 256 << 30)]
    pub hard_pending_compaction_bytes_limit: u64,
    /// Delayed write rate in bytes per second (0: 16 MiB/s).
    #[arg(long, default_value_t = 8388608)]
    pub delayed_write_rate: u64,
    /// Memtable memory of all column families at which the largest is flushed (0: none).
    #[arg(long, default_value_t = 0)]
    pub db_write_buffer_size: u64,
    /// Most bytes a compaction reads (0: 25 target files).
    #[arg(long, default_value_t = 0)]
    pub max_compaction_bytes: u64,
    /// Sync with fsync instead of fdatasync.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub use_fsync: bool,
    /// Target file size at level 1.
    #[arg(long, default_value_t = 64 << 20)]
    pub target_file_size_base: i64,
    /// Max bytes for level 1.
    #[arg(long, default_value_t = 256 << 20)]
    pub max_bytes_for_level_base: u64,
    /// Level targets sized from the last level up (db_bench's default is false, unlike
    /// RocksDB's Options).
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub level_compaction_dynamic_level_bytes: bool,
    /// Compaction style: 0 level, 1 universal, 2 FIFO.
    #[arg(long, default_value_t = 0)]
    pub compaction_style: i32,
    /// FIFO: total table bytes (MiB) above which the oldest tables are deleted.
    #[arg(long, default_value_t = 0)]
    pub fifo_compaction_max_table_files_size_mb: u64,
    /// FIFO: small level-0 tables may be merged.
    #[arg(long, default_value_t = true, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub fifo_compaction_allow_compaction: bool,
    /// Universal: percentage flexibility while comparing file sizes (0: RocksDB's default).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub universal_size_ratio: i32,
    /// Universal: the fewest files in one compaction run (0: RocksDB's default).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub universal_min_merge_width: i32,
    /// Universal: the most files in one compaction run (0: RocksDB's default).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub universal_max_merge_width: i32,
    /// Universal: the largest size amplification (0: RocksDB's default).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub universal_max_size_amplification_percent: i32,
    /// Universal: the percentage of the data to compress (-1: all; RocksDB's default).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub universal_compression_size_percent: i32,
    /// Universal: the limit on the number of sorted runs (-1: none).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub universal_max_read_amp: i32,
    /// Universal: disjoint inputs may move unchanged.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub universal_allow_trivial_move: bool,
    /// Universal: incremental size-amplification compactions.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub universal_incremental: bool,
    /// Universal: the stop style (0 similar size, 1 total size; RocksDB's default 1).
    #[arg(long, default_value_t = 1)]
    pub universal_stop_style: i32,
    /// Universal: a compaction handed to the BOTTOM pool holds its files only once it runs.
    #[arg(long, default_value_t = true, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub universal_reduce_file_locking: bool,
    /// [Integrated BlobDB] Flushes and compactions write values of at least
    /// `--min_blob_size` bytes to blob files.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub enable_blob_files: bool,
    /// [Integrated BlobDB] The size of the smallest value stored in a blob file.
    #[arg(long, default_value_t = 0)]
    pub min_blob_size: u64,
    /// [Integrated BlobDB] The size limit of blob files.
    #[arg(long, default_value_t = 256 << 20)]
    pub blob_file_size: u64,
    /// [Integrated BlobDB] The compression of values in blob files (names as
    /// --compression_type).
    #[arg(long, default_value = "none")]
    pub blob_compression_type: String,
    /// [Integrated BlobDB] Garbage collection of blob files during compaction.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub enable_blob_garbage_collection: bool,
    /// [Integrated BlobDB] The fraction of the oldest blob files garbage collection
    /// relocates from.
    #[arg(long, default_value_t = 0.25)]
    pub blob_garbage_collection_age_cutoff: f64,
    /// [Integrated BlobDB] Garbage ratio of the eligible blob files that forces a
    /// compaction; Shale supports only the default 1.0 (others are refused at open).
    #[arg(long, default_value_t = 1.0)]
    pub blob_garbage_collection_force_threshold: f64,
    /// [Integrated BlobDB] Compaction readahead for blob files.
    #[arg(long, default_value_t = 0)]
    pub blob_compaction_readahead_size: u64,
    /// [Integrated BlobDB] Use a blob cache.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub use_blob_cache: bool,
    /// [Integrated BlobDB] With --use_blob_cache: the block cache is the blob cache too.
    #[arg(long, default_value_t = true, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub use_shared_block_and_blob_cache: bool,
    /// [Integrated BlobDB] Bytes of the blob cache, when it is not the block cache.
    #[arg(long, default_value_t = 8 << 20)]
    pub blob_cache_size: u64,
    /// [Integrated BlobDB] The blob cache (when not shared) has 2^n shards; negative:
    /// the default.
    #[arg(long, default_value_t = 6, allow_negative_numbers = true)]
    pub blob_cache_numshardbits: i32,
    /// Bytes in a block.
    #[arg(long, default_value_t = 4096)]
    pub block_size: i32,
    /// Mode to shorten index: 0 for no shortening; 1 for only shortening separators; 2 for
    /// shortening separators and successor (db_bench's default, unlike RocksDB's own).
    #[arg(long, default_value_t = 2)]
    pub index_shortening_mode: i64,
    /// ChecksumType as an int: the block checksum of new tables (0 none, 1 CRC32c, 2 xxHash,
    /// 3 xxHash64, 4 XXH3).
    #[arg(long, default_value_t = 4)]
    pub checksum_type: i32,
    /// Number of column families to use.
    #[arg(long, default_value_t = 1)]
    pub num_column_families: i32,
    /// How many times to call Next() after Seek() in seekrandom.
    #[arg(long, default_value_t = 0)]
    pub seek_nexts: i32,
    /// Use Prev rather than Next after Seek.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub reverse_iterator: bool,
    /// Do not write the WAL.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub disable_wal: bool,
    /// The writers of a write group insert their own batches into the memtables at once.
    #[arg(long, default_value_t = true, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub allow_concurrent_memtable_write: bool,
    /// A write group's WAL write overlaps the memtable inserts of the group before it
    /// (db_bench's `--enable_pipelined_write`; on by default, as db_bench 11.8.1's).
    #[arg(long, default_value_t = true, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub enable_pipelined_write: bool,
    /// Each writer inserts its batch after its group's WAL write, outside the group's
    /// order (db_bench's `--unordered_write`).
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub unordered_write: bool,
    /// A writer waiting in the write queue yields the processor in a loop before blocking.
    #[arg(long, default_value_t = true, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub enable_write_thread_adaptive_yield: bool,
    /// The longest yield loop of a waiting writer, in microseconds.
    #[arg(long, default_value_t = 100)]
    pub write_thread_max_yield_usec: u64,
    /// A waiting writer's yield this long (microseconds) counts as slow.
    #[arg(long, default_value_t = 3)]
    pub write_thread_slow_yield_usec: u64,
    /// Sync all writes to disk.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub sync: bool,
    /// Table reads bypass the page cache (O_DIRECT), as RocksDB's `use_direct_reads`.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub use_direct_reads: bool,
    /// Flushes and compactions write (and compactions read) with O_DIRECT.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub use_direct_io_for_flush_and_compaction: bool,
    /// Tables are read through mmap (`allow_mmap_reads`).
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub mmap_read: bool,
    /// Table files are opened with random-access advice (`advise_random_on_open`, RocksDB's
    /// default true): `MADV_RANDOM` on a mapped table, `POSIX_FADV_RANDOM` otherwise.
    #[arg(long, default_value_t = true, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub advise_random_on_open: bool,
    /// Files are written through mmap (`allow_mmap_writes`).
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub mmap_write: bool,
    /// Write-back of table files is asked for every that many bytes (0: never).
    #[arg(long, default_value_t = 0)]
    pub bytes_per_sync: u64,
    /// The live WALs' size past which the families holding the oldest are flushed (0:
    /// four times the memtable memory).
    #[arg(long, default_value_t = 0)]
    pub max_total_wal_size: u64,
    /// Seconds for the random-ops tests to run; 0: --num/--reads decide.
    #[arg(long, default_value_t = 0)]
    pub duration: i32,
    /// Bytes per second the writers may write (db_bench's `--benchmark_write_rate_limit`):
    /// the background writer of readwhilewriting / seekrandomwhilewriting, and the threads
    /// of fillseq / fillrandom / overwrite together; 0: no limit.
    #[arg(long, default_value_t = 0)]
    pub benchmark_write_rate_limit: u64,
    /// The background writer of readwhilewriting / seekrandomwhilewriting writes keys
    /// `writer_key_offset + rand % num` instead of `rand % num` (Shale's own flag, not
    /// db_bench's). With `--writer_key_offset=NUM` its keys sort after every key the
    /// readers look for, so how far the writer got does not change how many entries a
    /// reader meets (under an explicit snapshot it steps over every newer one), while its
    /// flushes still replace the SuperVersion.
    #[arg(long, default_value_t = 0)]
    pub writer_key_offset: u64,
    /// After each result line, a line with the CPU time its counted threads spent (in all
    /// and per operation; Shale's own flag, not db_bench's). The background writer of the
    /// `*whilewriting` benchmarks is not counted, as it is not in the result line.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub report_cpu_time: bool,
    /// Print database statistics at the end.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub statistics: bool,
    /// Report progress every this many operations per thread, as a line on stderr
    /// (db_bench's `--stats_interval`; 0: the "... finished N ops" steps).
    #[arg(long, default_value_t = 0)]
    pub stats_interval: i64,
    /// Report progress at most every this many seconds (db_bench's
    /// `--stats_interval_seconds`; checked every 1000 operations when `--stats_interval` is 0).
    #[arg(long, default_value_t = 0)]
    pub stats_interval_seconds: i64,
    /// Seconds between dumps of the statistics texts into the database's LOG
    /// (`Options::set_stats_dump_period_sec`; db_bench's default 600).
    #[arg(long, default_value_t = 600)]
    pub stats_dump_period_sec: u32,
    /// Print a histogram of operation timings.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub histogram: bool,
    /// Seed base for random number generators; 0: derived from the current time.
    #[arg(long, default_value_t = 0)]
    pub seed: i64,
    /// Values shrink to this fraction of their size when compressed.
    #[arg(long, default_value_t = 0.5)]
    pub compression_ratio: f64,
    /// seekrandom: each thread takes one snapshot when it starts and reads every iterator
    /// at it (db_bench's flag since RocksDB 10.0).
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub explicit_snapshot: bool,
    /// seekrandom: iterators set `auto_refresh_iterator_with_snapshot` (implies
    /// --explicit_snapshot, which the option needs; db_bench's flag since RocksDB 10.0).
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub auto_refresh_iterator_with_snapshot: bool,
    /// seekrandom: each thread reuses one tailing iterator for all its seeks.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub use_tailing_iterator: bool,
    /// Open a TransactionDB (randomtransaction runs pessimistic transactions).
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub transaction_db: bool,
    /// Open an OptimisticTransactionDB (takes precedence over --transaction_db, as in db_bench).
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub optimistic_transaction_db: bool,
    /// randomtransaction: keys each transaction modifies, one per set (1 to 9999).
    #[arg(long, default_value_t = 2)]
    pub transaction_sets: u64,
    /// randomtransaction: each transaction gets its snapshot when it starts (reads then
    /// use it half the time).
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub transaction_set_snapshot: bool,
    /// randomtransaction with --transaction_db: lock wait timeout in milliseconds.
    #[arg(long, default_value_t = 100)]
    pub transaction_lock_timeout: u64,
}

impl BenchArgs {
    /// The benchmark names, checked: an unknown one is an error naming it.
    pub fn benchmark_list(&self) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        for name in self.benchmarks.split(',') {
            if name.is_empty() {
                continue; // db_bench ignores empty names
            }
            if !KNOWN_BENCHMARKS.contains(&name) {
                return Err(format!("unknown benchmark '{name}'"));
            }
            out.push(name.to_string());
        }
        Ok(out)
    }

    /// Checks values db_bench would also refuse.
    pub fn validate(&self) -> Result<(), String> {
        if self.key_size < 1 {
            return Err("--key_size must be at least 1".into());
        }
        if self.value_size < 0 {
            return Err("--value_size must not be negative".into());
        }
        if self.threads < 1 {
            return Err("--threads must be at least 1".into());
        }
        if self.num_column_families < 1 {
            return Err("--num_column_families must be at least 1".into());
        }
        if self.num < 0 {
            return Err("--num must not be negative".into());
        }
        if self.metadata_block_size < 1 {
            // RocksDB's metadata_block_size is unsigned: db_bench would wrap a negative one.
            return Err("--metadata_block_size must be at least 1".into());
        }
        if !(0..=2).contains(&self.compaction_style) {
            return Err("--compaction_style must be 0 (level), 1 (universal) or 2 (FIFO)".into());
        }
        if !(0..=1).contains(&self.universal_stop_style) {
            // RocksDB's CompactionStopStyle has these two values only.
            return Err("--universal_stop_style must be 0 (similar size) or 1 (total size)".into());
        }
        crate::bench::db::compression_from_name(&self.compression_type)?;
        crate::bench::db::compression_from_name(&self.blob_compression_type)?;
        if !(0.0..=1.0).contains(&self.blob_garbage_collection_age_cutoff) {
            return Err("--blob_garbage_collection_age_cutoff must be in [0, 1]".into());
        }
        let list = self.benchmark_list()?;
        if list.iter().any(|b| b == "randomtransaction") && !(1..=9999).contains(&self.transaction_sets) {
            return Err("invalid value for transaction_sets".into());
        }
        if self.transaction_db || self.optimistic_transaction_db {
            if let Some(b) = list.iter().find(|b| *b != "randomtransaction") {
                return Err(format!(
                    "benchmark '{b}': shale bench runs only randomtransaction on a transaction database \
                     (--transaction_db / --optimistic_transaction_db)"
                ));
            }
        }
        Ok(())
    }

    /// True when the benchmarks run on a TransactionDB or OptimisticTransactionDB.
    pub fn transactional(&self) -> bool {
        self.transaction_db || self.optimistic_transaction_db
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        a: BenchArgs,
    }

    fn parse(args: &[&str]) -> Result<BenchArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("bench").chain(args.iter().copied())).map(|c| c.a)
    }

    /// Our defaults, as db_bench --help prints them.
    fn ours() -> Vec<(&'static str, String)> {
        let a = parse(&[]).unwrap();
        vec![
            ("num", a.num.to_string()),
            ("reads", a.reads.to_string()),
            ("key_size", a.key_size.to_string()),
            ("value_size", a.value_size.to_string()),
            ("threads", a.threads.to_string()),
            ("use_existing_db", a.use_existing_db.to_string()),
            ("use_direct_reads", a.use_direct_reads.to_string()),
            ("use_direct_io_for_flush_and_compaction", a.use_direct_io_for_flush_and_compaction.to_string()),
            ("mmap_read", a.mmap_read.to_string()),
            ("mmap_write", a.mmap_write.to_string()),
            ("advise_random_on_open", a.advise_random_on_open.to_string()),
            ("bytes_per_sync", a.bytes_per_sync.to_string()),
            ("max_total_wal_size", a.max_total_wal_size.to_string()),
            ("compression_type", format!("\"{}\"", a.compression_type)),
            ("compression_parallel_threads", a.compression_parallel_threads.to_string()),
            ("cache_size", a.cache_size.to_string()),
            ("cache_type", format!("\"{}\"", a.cache_type)),
            ("cache_numshardbits", a.cache_numshardbits.to_string()),
            ("cache_high_pri_pool_ratio", a.cache_high_pri_pool_ratio.to_string()),
            ("cache_low_pri_pool_ratio", a.cache_low_pri_pool_ratio.to_string()),
            ("cache_index_and_filter_blocks", a.cache_index_and_filter_blocks.to_string()),
            (
                "pin_l0_filter_and_index_blocks_in_cache",
                a.pin_l0_filter_and_index_blocks_in_cache.to_string(),
            ),
            ("pin_top_level_index_and_filter", a.pin_top_level_index_and_filter.to_string()),
            ("partition_index_and_filters", a.partition_index_and_filters.to_string()),
            ("partition_index", a.partition_index.to_string()),
            ("metadata_block_size", a.metadata_block_size.to_string()),
            ("block_restart_interval", a.block_restart_interval.to_string()),
            ("index_block_restart_interval", a.index_block_restart_interval.to_string()),
            ("bloom_bits", a.bloom_bits.to_string()),
            ("write_buffer_size", a.write_buffer_size.to_string()),
            ("max_write_buffer_number", a.max_write_buffer_number.to_string()),
            ("max_background_jobs", a.max_background_jobs.to_string()),
            ("target_file_size_base", a.target_file_size_base.to_string()),
            ("max_bytes_for_level_base", a.max_bytes_for_level_base.to_string()),
            ("block_size", a.block_size.to_string()),
            ("index_shortening_mode", a.index_shortening_mode.to_string()),
            ("checksum_type", a.checksum_type.to_string()),
            ("num_column_families", a.num_column_families.to_string()),
            ("seek_nexts", a.seek_nexts.to_string()),
            ("reverse_iterator", a.reverse_iterator.to_string()),
            ("disable_wal", a.disable_wal.to_string()),
            ("allow_concurrent_memtable_write", a.allow_concurrent_memtable_write.to_string()),
            ("unordered_write", a.unordered_write.to_string()),
            ("enable_pipelined_write", a.enable_pipelined_write.to_string()),
            ("enable_write_thread_adaptive_yield", a.enable_write_thread_adaptive_yield.to_string()),
            ("write_thread_max_yield_usec", a.write_thread_max_yield_usec.to_string()),
            ("write_thread_slow_yield_usec", a.write_thread_slow_yield_usec.to_string()),
            ("sync", a.sync.to_string()),
            ("duration", a.duration.to_string()),
            ("benchmark_write_rate_limit", a.benchmark_write_rate_limit.to_string()),
            ("statistics", a.statistics.to_string()),
            ("histogram", a.histogram.to_string()),
            ("seed", a.seed.to_string()),
            ("compression_ratio", format!("{:.1}", a.compression_ratio)),
            ("transaction_db", a.transaction_db.to_string()),
            ("optimistic_transaction_db", a.optimistic_transaction_db.to_string()),
            ("transaction_sets", a.transaction_sets.to_string()),
            ("transaction_set_snapshot", a.transaction_set_snapshot.to_string()),
            ("transaction_lock_timeout", a.transaction_lock_timeout.to_string()),
            ("db", "\"\"".to_string()),
            ("enable_blob_files", a.enable_blob_files.to_string()),
            ("min_blob_size", a.min_blob_size.to_string()),
            ("blob_file_size", a.blob_file_size.to_string()),
            ("blob_compression_type", format!("\"{}\"", a.blob_compression_type)),
            ("enable_blob_garbage_collection", a.enable_blob_garbage_collection.to_string()),
            ("blob_garbage_collection_age_cutoff", a.blob_garbage_collection_age_cutoff.to_string()),
            (
                "blob_garbage_collection_force_threshold",
                a.blob_garbage_collection_force_threshold.to_string(),
            ),
            ("blob_compaction_readahead_size", a.blob_compaction_readahead_size.to_string()),
            ("use_blob_cache", a.use_blob_cache.to_string()),
            ("use_shared_block_and_blob_cache", a.use_shared_block_and_blob_cache.to_string()),
            ("blob_cache_size", a.blob_cache_size.to_string()),
            ("blob_cache_numshardbits", a.blob_cache_numshardbits.to_string()),
        ]
    }

    #[test]
    fn defaults_are_db_benchs() {
        let d: std::collections::HashMap<_, _> = ours().into_iter().collect();
        assert_eq!(d["num"], "1000000");
        assert_eq!(d["cache_size"], "33554432");
        assert_eq!(d["write_buffer_size"], "67108864");
        assert_eq!(d["max_bytes_for_level_base"], "268435456");
        assert_eq!(d["compression_type"], "\"snappy\"");
        assert_eq!(d["compression_ratio"], "0.5");
        let a = parse(&[]).unwrap();
        assert_eq!(a.benchmarks, DEFAULT_BENCHMARKS);
        assert!(a.benchmark_list().is_ok());
    }

    /// Checks every default against the installed db_bench's `--help`: RocksDB 11.8.1's (the
    /// specification) and Debian's 7.8.3, where installed; 11.8.1 changed the defaults of
    /// `cache_type` (lru_cache to hyper_clock_cache) and `cache_size` (8 MiB to 32 MiB), so
    /// 7.8.3's are not compared.
    #[test]
    fn defaults_match_installed_db_bench() {
        for bin in ["/work/shared/tools/rocksdb-11.8.1/bin/db_bench", "/usr/bin/db_bench"] {
            check_defaults_against(
                bin,
                if bin.starts_with("/usr") { &["cache_type", "cache_size"] } else { &[] },
            );
        }
    }

    fn check_defaults_against(bin: &str, changed_since: &[&str]) {
        let out = match std::process::Command::new(bin).arg("--help").output() {
            Ok(out) if out.status.success() || !out.stdout.is_empty() => out,
            _ => {
                // Under CI a missing 7.8.3 oracle fails (`shale_base::oracle`); the 11.8.1
                // one where `.ci/run` found it runs (SHALE_REQUIRE_ROCKSDB_11).
                if bin.starts_with("/usr") {
                    assert!(
                        !shale_base::oracle::required(),
                        "{}",
                        shale_base::oracle::missing_message(
                            "defaults_match_installed_db_bench",
                            &[bin.to_string()]
                        )
                    );
                } else {
                    assert!(
                        std::env::var_os("SHALE_REQUIRE_ROCKSDB_11").is_none(),
                        "SHALE_REQUIRE_ROCKSDB_11 is set but {bin} does not run"
                    );
                }
                println!("skipped: {bin} is not installed or does not run");
                return;
            }
        };
        let help = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        // Entries look like "    -num (text...) type: int64 default: 1000000", over lines.
        let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut wrong = Vec::new();
        for (flag, value) in ours().into_iter().filter(|(f, _)| !changed_since.contains(f)) {
            let start =
                flat.find(&format!(" -{flag} (")).unwrap_or_else(|| panic!("db_bench has no -{flag}"));
            let rest = &flat[start..];
            let d = rest.find(" default: ").expect("default") + " default: ".len();
            let got = rest[d..].split(' ').next().unwrap_or("");
            let value =
                if flag == "compression_ratio" { value.trim_end_matches(".0").to_string() } else { value };
            if got != value {
                wrong.push(format!("--{flag}: ours {value}, {bin}'s {got}"));
            }
        }
        assert!(wrong.is_empty(), "defaults differ from db_bench's:\n{}", wrong.join("\n"));
    }

    /// The partitioning flags' defaults against RocksDB 11.8.1's db_bench, where present.
    #[test]
    fn partition_defaults_match_db_bench_11() {
        let bin = "/work/shared/tools/rocksdb-11.8.1/bin/db_bench";
        let Ok(out) = std::process::Command::new(bin).arg("--help").output() else {
            // `.ci/run` sets SHALE_REQUIRE_ROCKSDB_11 where the 11.8.1 build runs.
            assert!(
                std::env::var_os("SHALE_REQUIRE_ROCKSDB_11").is_none(),
                "SHALE_REQUIRE_ROCKSDB_11 is set but {bin} does not run"
            );
            println!("skipped: {bin} is not installed");
            return;
        };
        let help = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
        let d: std::collections::HashMap<_, _> = ours().into_iter().collect();
        for flag in [
            "partition_index_and_filters",
            "partition_index",
            "metadata_block_size",
            "pin_top_level_index_and_filter",
            "pin_l0_filter_and_index_blocks_in_cache",
            "cache_index_and_filter_blocks",
            "block_restart_interval",
            "index_block_restart_interval",
        ] {
            let start = flat.find(&format!(" -{flag} (")).unwrap_or_else(|| panic!("no -{flag}"));
            let rest = &flat[start..];
            let at = rest.find(" default: ").expect("default") + " default: ".len();
            assert_eq!(rest[at..].split(' ').next().unwrap_or(""), d[flag], "default of --{flag}");
        }
    }

    #[test]
    fn flag_forms() {
        let a =
            parse(&["--num=5", "--reads", "7", "--histogram", "--sync=1", "--disable_wal=false"]).unwrap();
        assert_eq!((a.num, a.reads, a.histogram, a.sync, a.disable_wal), (5, 7, true, true, false));
        let a = parse(&["--use_existing_db=true", "--bloom_bits=-1", "--compression_type=none"]).unwrap();
        assert!(a.use_existing_db);
        assert_eq!(a.compression_type, "none");
        assert!(parse(&["--histogram=maybe"]).is_err());
    }

    #[test]
    fn unknown_flags_and_benchmarks_are_rejected() {
        let e = parse(&["--num=5", "--no_such_flag=1"]).expect_err("rejected").to_string();
        assert!(e.contains("--no_such_flag"), "{e}");
        // A db_bench flag Shale does not support is rejected too, by name.
        let e = parse(&["--use_plain_table=1"]).expect_err("rejected").to_string();
        assert!(e.contains("--use_plain_table"), "{e}");
        // The I/O flags are db_bench's.
        let a = parse(&[
            "--use_direct_reads=1",
            "--use_direct_io_for_flush_and_compaction=true",
            "--mmap_read=0",
            "--mmap_write=false",
            "--bytes_per_sync=1048576",
            "--max_total_wal_size=4096",
        ])
        .unwrap();
        assert!(
            a.use_direct_reads && a.use_direct_io_for_flush_and_compaction && !a.mmap_read && !a.mmap_write
        );
        assert_eq!((a.bytes_per_sync, a.max_total_wal_size), (1 << 20, 4096));
        let a = parse(&["--benchmarks=fillseq,mixgraph"]).unwrap();
        assert_eq!(a.benchmark_list().unwrap_err(), "unknown benchmark 'mixgraph'");
        let a = parse(&["--compression_type=lzma"]).unwrap();
        assert!(a.validate().is_err());
        let a = parse(&["--benchmarks=randomtransaction", "--transaction_sets=0"]).unwrap();
        assert_eq!(a.validate().unwrap_err(), "invalid value for transaction_sets");
        let a = parse(&["--benchmarks=fillseq,randomtransaction", "--transaction_db"]).unwrap();
        assert!(a.validate().unwrap_err().contains("'fillseq'"));
        let a = parse(&["--benchmarks=randomtransaction", "--optimistic_transaction_db=1"]).unwrap();
        assert!(a.validate().is_ok() && a.transactional());
    }
}
