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
    "readwhilewriting",
    "deleterandom",
    "compact",
    "flush",
    "stats",
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
pub struct BenchArgs {
    /// Comma-separated list of benchmarks to run, in order. Known: fillseq, fillrandom,
    /// overwrite, fillsync, readrandom, readmissing, readseq, readreverse, seekrandom,
    /// readwhilewriting, deleterandom, compact, flush, stats.
    #[arg(long, default_value = DEFAULT_BENCHMARKS)]
    pub benchmarks: String,
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
    /// Block cache size in bytes.
    #[arg(long, default_value_t = 8 << 20, allow_negative_numbers = true)]
    pub cache_size: i64,
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
    /// Target file size at level 1.
    #[arg(long, default_value_t = 64 << 20)]
    pub target_file_size_base: i64,
    /// Max bytes for level 1.
    #[arg(long, default_value_t = 256 << 20)]
    pub max_bytes_for_level_base: u64,
    /// Bytes in a block.
    #[arg(long, default_value_t = 4096)]
    pub block_size: i32,
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
    /// Sync all writes to disk.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub sync: bool,
    /// Seconds for the random-ops tests to run; 0: --num/--reads decide.
    #[arg(long, default_value_t = 0)]
    pub duration: i32,
    /// Print database statistics at the end.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = parse_bool)]
    pub statistics: bool,
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
        crate::bench::db::compression_from_name(&self.compression_type)?;
        self.benchmark_list().map(|_| ())
    }
}
