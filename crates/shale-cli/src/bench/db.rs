//! Opening the benchmark database with db_bench's option mapping, and the column
//! family names db_bench uses (`default`, `column_family_name_000001`, ...).

use shale::{BlockBasedOptions, Cache, DBCompressionType, Options, WriteOptions, DB};

use super::args::BenchArgs;

/// db_bench's `--compression_type` names (case-insensitive).
pub fn compression_from_name(name: &str) -> Result<DBCompressionType, String> {
    Ok(match name.to_ascii_lowercase().as_str() {
        "none" => DBCompressionType::None,
        "snappy" => DBCompressionType::Snappy,
        "zlib" => DBCompressionType::Zlib,
        "bzip2" => DBCompressionType::Bz2,
        "lz4" => DBCompressionType::Lz4,
        "lz4hc" => DBCompressionType::Lz4hc,
        "zstd" => DBCompressionType::Zstd,
        "xpress" => return Err("compression type 'xpress' is not supported by Shale".into()),
        _ => return Err(format!("Cannot parse compression type '{name}'")),
    })
}

/// RocksDB's CompressionTypeToString, as db_bench prints it.
pub fn compression_display(t: DBCompressionType) -> &'static str {
    match t {
        DBCompressionType::None => "NoCompression",
        DBCompressionType::Snappy => "Snappy",
        DBCompressionType::Zlib => "Zlib",
        DBCompressionType::Bz2 => "BZip2",
        DBCompressionType::Lz4 => "LZ4",
        DBCompressionType::Lz4hc => "LZ4HC",
        DBCompressionType::Zstd => "ZSTD",
    }
}

pub fn cf_name(i: usize) -> String {
    if i == 0 {
        "default".to_string()
    } else {
        format!("column_family_name_{i:06}")
    }
}

/// The options db_bench builds from the flags Shale supports.
pub fn options(a: &BenchArgs) -> Result<Options, String> {
    let mut o = Options::default();
    o.create_if_missing(!a.use_existing_db);
    o.create_missing_column_families(true);
    o.set_compression_type(compression_from_name(&a.compression_type)?);
    o.set_compression_options_parallel_threads(a.compression_parallel_threads);
    if !a.merge_operator.is_empty() {
        let op = shale::merge_operators::by_name(&a.merge_operator)
            .ok_or_else(|| format!("unknown --merge_operator '{}'", a.merge_operator))?;
        o.set_merge_operator_object(op);
    }
    o.set_max_successive_merges(a.max_successive_merges);
    o.set_write_buffer_size(a.write_buffer_size.max(0) as usize);
    o.set_max_write_buffer_number(a.max_write_buffer_number);
    o.set_max_background_jobs(a.max_background_jobs);
    o.set_max_subcompactions(a.subcompactions);
    o.set_allow_concurrent_memtable_write(a.allow_concurrent_memtable_write);
    o.set_enable_write_thread_adaptive_yield(a.enable_write_thread_adaptive_yield);
    o.set_enable_pipelined_write(a.enable_pipelined_write);
    o.set_unordered_write(a.unordered_write);
    o.set_write_thread_max_yield_usec(a.write_thread_max_yield_usec);
    o.set_write_thread_slow_yield_usec(a.write_thread_slow_yield_usec);
    #[allow(deprecated)]
    {
        o.set_max_background_flushes(a.max_background_flushes);
        o.set_max_background_compactions(a.max_background_compactions);
    }
    o.set_level_zero_file_num_compaction_trigger(a.level0_file_num_compaction_trigger);
    o.set_level_zero_slowdown_writes_trigger(a.level0_slowdown_writes_trigger);
    o.set_level_zero_stop_writes_trigger(a.level0_stop_writes_trigger);
    o.set_soft_pending_compaction_bytes_limit(a.soft_pending_compaction_bytes_limit as usize);
    o.set_hard_pending_compaction_bytes_limit(a.hard_pending_compaction_bytes_limit as usize);
    o.set_delayed_write_rate(a.delayed_write_rate);
    o.set_db_write_buffer_size(a.db_write_buffer_size as usize);
    o.set_max_compaction_bytes(a.max_compaction_bytes);
    o.set_use_fsync(a.use_fsync);
    // db_bench's I/O flags, as its InitializeOptionsFromFlags sets them.
    o.set_use_direct_reads(a.use_direct_reads);
    o.set_use_direct_io_for_flush_and_compaction(a.use_direct_io_for_flush_and_compaction);
    o.set_allow_mmap_reads(a.mmap_read);
    o.set_allow_mmap_writes(a.mmap_write);
    o.set_advise_random_on_open(a.advise_random_on_open);
    o.set_bytes_per_sync(a.bytes_per_sync);
    o.set_max_total_wal_size(a.max_total_wal_size);
    o.set_target_file_size_base(a.target_file_size_base.max(0) as u64);
    o.set_max_bytes_for_level_base(a.max_bytes_for_level_base);
    o.set_level_compaction_dynamic_level_bytes(a.level_compaction_dynamic_level_bytes);
    match a.compaction_style {
        1 => o.set_compaction_style(shale::DBCompactionStyle::Universal),
        2 => {
            o.set_compaction_style(shale::DBCompactionStyle::Fifo);
            let mut f = shale::FifoCompactOptions::default();
            f.set_max_table_files_size(a.fifo_compaction_max_table_files_size_mb << 20);
            f.set_allow_compaction(a.fifo_compaction_allow_compaction);
            o.set_fifo_compaction_options(&f);
        }
        _ => o.set_compaction_style(shale::DBCompactionStyle::Level),
    }
    // db_bench's universal flags, set whatever the style (its InitializeOptionsFromFlags):
    // the first five only when given another value than their flag's default, the others
    // always. RocksDB's fields are unsigned: a negative value wraps as db_bench's cast does.
    let mut u = Vec::new();
    for (name, v) in [
        ("size_ratio", a.universal_size_ratio),
        ("min_merge_width", a.universal_min_merge_width),
        ("max_merge_width", a.universal_max_merge_width),
        ("max_size_amplification_percent", a.universal_max_size_amplification_percent),
    ] {
        if v != 0 {
            u.push(format!("{name}={}", v as u32));
        }
    }
    if a.universal_compression_size_percent != -1 {
        u.push(format!("compression_size_percent={}", a.universal_compression_size_percent));
    }
    u.push(format!("max_read_amp={}", a.universal_max_read_amp));
    u.push(format!("allow_trivial_move={}", a.universal_allow_trivial_move));
    u.push(format!("incremental={}", a.universal_incremental));
    let stop = if a.universal_stop_style == 0 {
        "kCompactionStopStyleSimilarSize"
    } else {
        "kCompactionStopStyleTotalSize"
    };
    u.push(format!("stop_style={stop}"));
    u.push(format!("reduce_file_locking={}", a.universal_reduce_file_locking));
    let mut o = o
        .get_options_from_string(format!("compaction_options_universal={{{}}}", u.join(";")))
        .map_err(|e| format!("universal compaction flags: {e}"))?;
    // Integrated BlobDB, as db_bench's InitializeOptionsFromFlags sets it.
    o.set_enable_blob_files(a.enable_blob_files);
    o.set_min_blob_size(a.min_blob_size);
    o.set_blob_file_size(a.blob_file_size);
    o.set_blob_compression_type(compression_from_name(&a.blob_compression_type)?);
    o.set_enable_blob_gc(a.enable_blob_garbage_collection);
    o.set_blob_gc_age_cutoff(a.blob_garbage_collection_age_cutoff);
    // Shale accepts only 1.0: another value makes the open fail, naming the option.
    o.set_blob_gc_force_threshold(a.blob_garbage_collection_force_threshold);
    o.set_blob_compaction_readahead_size(a.blob_compaction_readahead_size);
    let mut block_cache: Option<Cache> = None;
    let mut t = BlockBasedOptions::default();
    t.set_block_size(a.block_size.max(1) as usize);
    t.set_index_shortening(match a.index_shortening_mode {
        0 => shale::IndexShorteningMode::NoShortening,
        1 => shale::IndexShorteningMode::ShortenSeparators,
        2 => shale::IndexShorteningMode::ShortenSeparatorsAndSuccessor,
        m => return Err(format!("--index_shortening_mode={m}: 0, 1 or 2")),
    });
    t.set_checksum_type(match a.checksum_type {
        0 => shale::ChecksumType::NoChecksum,
        1 => shale::ChecksumType::CRC32c,
        2 => shale::ChecksumType::XXHash,
        3 => shale::ChecksumType::XXHash64,
        4 => shale::ChecksumType::XXH3,
        c => return Err(format!("--checksum_type={c}: 0 to 4")),
    });
    t.set_block_restart_interval(a.block_restart_interval);
    t.set_index_block_restart_interval(a.index_block_restart_interval);
    // db_bench: either flag makes the index partitioned (kTwoLevelIndexSearch) with
    // --metadata_block_size; only --partition_index_and_filters partitions the filters.
    if a.partition_index_and_filters || a.partition_index {
        t.set_index_type(shale::BlockBasedIndexType::TwoLevelIndexSearch);
        t.set_metadata_block_size(a.metadata_block_size.max(1) as usize);
        if a.partition_index_and_filters {
            t.set_partition_filters(true);
        }
    }
    // db_bench sets it whatever the cache: its default false, not RocksDB's true.
    t.set_pin_top_level_index_and_filter(a.pin_top_level_index_and_filter);
    if a.cache_size > 0 {
        let cap = a.cache_size as usize;
        // db_bench's NewCache: the same types and options.
        let cache = match a.cache_type.as_str() {
            "lru_cache" => {
                let mut lo = shale::LruCacheOptions::default();
                lo.set_capacity(cap);
                lo.set_num_shard_bits(a.cache_numshardbits);
                lo.set_high_pri_pool_ratio(a.cache_high_pri_pool_ratio);
                lo.set_low_pri_pool_ratio(a.cache_low_pri_pool_ratio);
                Cache::new_lru_cache_opts(&lo)
            }
            "hyper_clock_cache" | "auto_hyper_clock_cache" => {
                Cache::new_hyper_clock_cache_with_shard_bits(cap, 0, a.cache_numshardbits)
            }
            // db_bench: the block size is the estimated entry charge.
            "fixed_hyper_clock_cache" => Cache::new_hyper_clock_cache_with_shard_bits(
                cap,
                usize::try_from(a.block_size).unwrap_or(0),
                a.cache_numshardbits,
            ),
            other => return Err(format!("cache_type {other}: not built (lru_cache, hyper_clock_cache)")),
        };
        t.set_block_cache(&cache);
        block_cache = Some(cache.clone());
        t.set_cache_index_and_filter_blocks(a.cache_index_and_filter_blocks);
        t.set_pin_l0_filter_and_index_blocks_in_cache(a.pin_l0_filter_and_index_blocks_in_cache);
        // db_bench sets it only for a ratio above 0 and otherwise leaves RocksDB's default
        // (true), which the clock cache acts on (a longer first countdown).
        if a.cache_high_pri_pool_ratio > 1e-6 {
            t.set_cache_index_and_filter_blocks_with_high_priority(true);
        }
        // db_bench only warns. (Its `NewLRUCache` then makes no cache, so the table factory's
        // default one serves; here the LRU cache keeps the low ratio cut to what the high one
        // leaves.)
        if a.cache_high_pri_pool_ratio + a.cache_low_pri_pool_ratio > 1.0 {
            eprintln!("Sum of high_pri_pool_ratio and low_pri_pool_ratio cannot exceed 1.0.");
        }
    }
    if a.use_blob_cache {
        if a.use_shared_block_and_blob_cache {
            let c = block_cache
                .as_ref()
                .ok_or("Unable to use a shared block and blob cache when --cache_size <= 0")?;
            o.set_blob_cache(c);
        } else if a.blob_cache_size > 0 {
            let mut lo = shale::LruCacheOptions::default();
            lo.set_capacity(a.blob_cache_size as usize);
            lo.set_num_shard_bits(a.blob_cache_numshardbits);
            o.set_blob_cache(&Cache::new_lru_cache_opts(&lo));
        } else {
            return Err("Unable to create a standalone blob cache if blob_cache_size <= 0".into());
        }
    }
    if a.row_cache_size > 0 {
        o.set_row_cache(&Cache::new_lru_cache(a.row_cache_size as usize));
    }
    if a.bloom_bits > 0 {
        t.set_bloom_filter(f64::from(a.bloom_bits), false);
    }
    o.set_block_based_table_factory(&t);
    if a.statistics {
        // db_bench's `dbstats` at its default level (kExceptDetailedTimers).
        o.enable_statistics();
    }
    o.set_stats_dump_period_sec(a.stats_dump_period_sec);
    Ok(o)
}

pub fn write_options(a: &BenchArgs, sync: bool) -> WriteOptions {
    let mut w = WriteOptions::default();
    w.set_sync(sync || a.sync);
    w.disable_wal(a.disable_wal);
    w
}

/// Opens (creating unless `--use_existing_db`) the database with its column families.
/// Opens the benchmark database with `o` (from `options`, built once per run so that every
/// reopen counts into the same `--statistics` object, as db_bench's `dbstats`).
pub fn open(o: &Options, a: &BenchArgs, path: &str) -> Result<DB, String> {
    let names: Vec<String> = (0..a.num_column_families as usize).map(cf_name).collect();
    DB::open_cf_descriptors(o, path, crate::families::descriptors(o, names))
        .map_err(|e| format!("open error: {e}"))
}

/// Opens the benchmark database as an OptimisticTransactionDB (`--optimistic_transaction_db`,
/// which wins as in db_bench) or a TransactionDB (`--transaction_db`), default family only.
pub fn open_transactional(o: &Options, a: &BenchArgs, path: &str) -> Result<super::txn::TxnDb, String> {
    if a.num_column_families != 1 {
        return Err("randomtransaction in shale bench uses the default column family only".into());
    }
    let r = if a.optimistic_transaction_db {
        shale::OptimisticTransactionDB::open(o, path).map(super::txn::TxnDb::Optimistic)
    } else {
        shale::TransactionDB::open(o, &shale::TransactionDBOptions::default(), path)
            .map(super::txn::TxnDb::Pessimistic)
    };
    r.map_err(|e| format!("open error: {e}"))
}

/// db_bench's DestroyDB before a fresh benchmark: removes the database's files (and the
/// directory when nothing else is left in it).
pub fn destroy(path: &str) -> Result<(), String> {
    DB::destroy(&Options::default(), path).map_err(|e| format!("cannot destroy {path}: {e}"))
}
