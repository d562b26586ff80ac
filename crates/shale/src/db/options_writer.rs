//! Writes the OPTIONS-NNNNNN file (RocksDB's INI format) describing the open database, as
//! RocksDB does at open and after each column-family change; keeps the newest two.

use std::sync::Arc;

use super::cf::CfHandle;
use super::filename::{self, FileType};
use super::DbInner;
use crate::error::Result;
use crate::options_file::{self, CfSection, OptionsFile};

/// RocksDB's name of a compaction style in OPTIONS files and LOG.
pub(crate) fn compaction_style_name(s: crate::DBCompactionStyle) -> &'static str {
    match s {
        crate::DBCompactionStyle::Fifo => "kCompactionStyleFIFO",
        crate::DBCompactionStyle::Universal => "kCompactionStyleUniversal",
        crate::DBCompactionStyle::Level => "kCompactionStyleLevel",
    }
}

/// RocksDB's name of a universal stop style.
pub(crate) fn stop_style_name(s: crate::compaction::universal::StopStyle) -> &'static str {
    match s {
        crate::compaction::universal::StopStyle::Similar => "kCompactionStopStyleSimilarSize",
        crate::compaction::universal::StopStyle::Total => "kCompactionStopStyleTotalSize",
    }
}

/// Writes an OPTIONS file describing the open families (as RocksDB does after each change).
pub(crate) fn write_options_file(inner: &DbInner) -> Result<()> {
    let number = inner.versions.new_file_number();
    let cfs: Vec<Arc<CfHandle>> = inner.lock_state().cfs.values().map(|c| c.handle.clone()).collect();
    let o = &inner.opts;
    let kv = |k: &str, v: String| (k.to_string(), v);
    let db_options = vec![
        kv("create_if_missing", o.create_if_missing.to_string()),
        kv("create_missing_column_families", o.create_missing_column_families.to_string()),
        kv("error_if_exists", o.error_if_exists.to_string()),
        kv("paranoid_checks", o.paranoid_checks.to_string()),
        kv("max_open_files", o.max_open_files.to_string()),
        kv("max_background_jobs", o.max_background_jobs.to_string()),
        kv("max_background_compactions", o.max_background_compactions.to_string()),
        kv("max_background_flushes", o.max_background_flushes.to_string()),
        kv("use_fsync", o.use_fsync.to_string()),
        kv("wal_recovery_mode", wal_mode_name(o.wal_recovery_mode).to_string()),
        kv("max_manifest_file_size", o.max_manifest_file_size.to_string()),
        kv("keep_log_file_num", o.keep_log_file_num.to_string()),
        kv("max_bgerror_resume_count", o.max_bgerror_resume_count.to_string()),
        kv("bgerror_resume_retry_interval", o.bgerror_resume_retry_interval.to_string()),
        kv("stats_dump_period_sec", o.stats_dump_period_sec.to_string()),
        // A TransactionDB's WAL holds two-phase-commit records; RocksDB's tools (ldb) read
        // this to recover it.
        kv("allow_2pc", o.allow_2pc.to_string()),
        kv("manual_wal_flush", o.manual_wal_flush.to_string()),
        kv(
            "wal_compression",
            if o.wal_compression == crate::table::compression::CompressionType::Zstd {
                "kZSTD"
            } else {
                "kNoCompression"
            }
            .to_string(),
        ),
        kv("wal_bytes_per_sync", o.wal_bytes_per_sync.to_string()),
        kv("writable_file_max_buffer_size", o.writable_file_max_buffer_size.to_string()),
        kv("dump_malloc_stats", o.dump_malloc_stats.to_string()),
        kv("unordered_write", o.unordered_write.to_string()),
        kv("allow_concurrent_memtable_write", o.allow_concurrent_memtable_write.to_string()),
        kv("enable_pipelined_write", o.enable_pipelined_write.to_string()),
    ];
    let sections = cfs
        .iter()
        .map(|h| {
            let c = &h.opts;
            CfSection {
                name: h.name.clone(),
                options: vec![
                    kv("comparator", c.comparator.name().to_string()),
                    kv(
                        "merge_operator",
                        c.merge_operator
                            .as_ref()
                            .map_or("nullptr".to_string(), |m| m.options_value().to_string()),
                    ),
                    kv(
                        "compaction_filter",
                        c.compaction_filter.as_ref().map_or("nullptr".to_string(), |f| f.name().to_string()),
                    ),
                    kv(
                        "compaction_filter_factory",
                        c.compaction_filter_factory
                            .as_ref()
                            .map_or("nullptr".to_string(), |f| f.name().to_string()),
                    ),
                    kv("write_buffer_size", c.write_buffer_size.to_string()),
                    kv("max_write_buffer_number", c.max_write_buffer_number.to_string()),
                    kv("max_successive_merges", c.max_successive_merges.to_string()),
                    kv("num_levels", c.num_levels.to_string()),
                    kv(
                        "level0_file_num_compaction_trigger",
                        c.level0_file_num_compaction_trigger.to_string(),
                    ),
                    kv("level0_slowdown_writes_trigger", c.level0_slowdown_writes_trigger.to_string()),
                    kv("level0_stop_writes_trigger", c.level0_stop_writes_trigger.to_string()),
                    kv("target_file_size_base", c.target_file_size_base.to_string()),
                    kv("target_file_size_multiplier", c.target_file_size_multiplier.to_string()),
                    kv("max_bytes_for_level_base", c.max_bytes_for_level_base.to_string()),
                    kv("max_bytes_for_level_multiplier", format!("{:.6}", c.max_bytes_for_level_multiplier)),
                    kv("disable_auto_compactions", c.disable_auto_compactions.to_string()),
                    kv("max_compaction_bytes", c.max_compaction_bytes.to_string()),
                    kv(
                        "soft_pending_compaction_bytes_limit",
                        c.soft_pending_compaction_bytes_limit.to_string(),
                    ),
                    kv(
                        "hard_pending_compaction_bytes_limit",
                        c.hard_pending_compaction_bytes_limit.to_string(),
                    ),
                    kv("paranoid_file_checks", c.paranoid_file_checks.to_string()),
                    kv("report_bg_io_stats", c.report_bg_io_stats.to_string()),
                    kv("compression", compression_option_name(c.compression).to_string()),
                    kv(
                        "compression_opts",
                        format!(
                            "{{window_bits={};level={};strategy={};max_dict_bytes={};zstd_max_train_bytes={};\
                             parallel_threads=1;enabled=false;max_dict_buffer_bytes={};use_zstd_dict_trainer={};}}",
                            c.compression_opts.window_bits,
                            c.compression_opts.level,
                            c.compression_opts.strategy,
                            c.compression_opts.max_dict_bytes,
                            c.compression_opts.zstd_max_train_bytes,
                            c.compression_opts.max_dict_buffer_bytes,
                            c.compression_opts.use_zstd_dict_trainer
                        ),
                    ),
                    kv(
                        "experimental_mempurge_threshold",
                        format!("{:.6}", c.experimental_mempurge_threshold),
                    ),
                    kv("compaction_style", compaction_style_name(c.compaction_style).to_string()),
                    kv(
                        "compaction_options_fifo",
                        format!(
                            "{{allow_compaction={};max_table_files_size={};}}",
                            c.fifo_allow_compaction, c.fifo_max_table_files_size
                        ),
                    ),
                    kv(
                        "compaction_options_universal",
                        format!(
                            // RocksDB 7.8.3's fields only (its ldb refuses an OPTIONS file with
                            // unknown ones, e.g. max_read_amp, which Shale keeps at -1).
                            "{{incremental=false;compression_size_percent={};allow_trivial_move=false;\
                             max_size_amplification_percent={};max_merge_width={};stop_style={};\
                             min_merge_width={};size_ratio={};}}",
                            c.universal.compression_size_percent,
                            c.universal.max_size_amplification_percent,
                            c.universal.max_merge_width,
                            stop_style_name(c.universal.stop_style),
                            c.universal.min_merge_width,
                            c.universal.size_ratio
                        ),
                    ),
                    kv("level_compaction_dynamic_level_bytes", c.dynamic_level_bytes_in_force().to_string()),
                    kv(
                        "prefix_extractor",
                        c.prefix_extractor.as_ref().map_or("nullptr".to_string(), |t| t.name().to_string()),
                    ),
                    kv("memtable_prefix_bloom_size_ratio", format!("{:.6}", c.memtable_prefix_bloom_ratio)),
                    kv("memtable_whole_key_filtering", c.memtable_whole_key_filtering.to_string()),
                    kv("table_factory", c.table_format.factory_name().to_string()),
                    kv("enable_blob_files", c.blob.enable_blob_files.to_string()),
                    kv("min_blob_size", c.blob.min_blob_size.to_string()),
                    kv("blob_file_size", c.blob.blob_file_size.to_string()),
                    kv("blob_compression_type", compression_option_name(c.blob.compression).to_string()),
                    kv("enable_blob_garbage_collection", c.blob.enable_gc.to_string()),
                    kv("blob_garbage_collection_age_cutoff", format!("{:.6}", c.blob.gc_age_cutoff)),
                    kv("blob_garbage_collection_force_threshold", "1.000000".to_string()),
                    kv("blob_compaction_readahead_size", c.blob.compaction_readahead_size.to_string()),
                ],
                table_factory: c.table_format.factory_name().to_string(),
                table_options: match &c.table_format {
                    crate::table::TableFormat::Plain(p) => vec![
                        kv("user_key_len", p.user_key_len.to_string()),
                        kv("bloom_bits_per_key", p.bloom_bits_per_key.to_string()),
                        kv("hash_table_ratio", format!("{:.6}", p.hash_table_ratio)),
                        kv("index_sparseness", p.index_sparseness.to_string()),
                        kv("huge_page_tlb_size", p.huge_page_tlb_size.to_string()),
                        kv(
                            "encoding_type",
                            match p.encoding {
                                crate::table::plain::PlainEncoding::Plain => "kPlain",
                                crate::table::plain::PlainEncoding::Prefix => "kPrefix",
                            }
                            .to_string(),
                        ),
                        kv("full_scan_mode", p.full_scan_mode.to_string()),
                        kv("store_index_in_file", p.store_index_in_file.to_string()),
                    ],
                    crate::table::TableFormat::Cuckoo(k) => vec![
                        kv("hash_table_ratio", format!("{:.6}", k.hash_table_ratio)),
                        kv("max_search_depth", k.max_search_depth.to_string()),
                        kv("cuckoo_block_size", k.cuckoo_block_size.to_string()),
                        kv("identity_as_first_hash", k.identity_as_first_hash.to_string()),
                        kv("use_module_hash", k.use_module_hash.to_string()),
                    ],
                    crate::table::TableFormat::BlockBased => vec![
                        kv("block_size", c.table.block_size.to_string()),
                        kv("block_restart_interval", c.table.block_restart_interval.to_string()),
                        kv("index_block_restart_interval", c.table.index_block_restart_interval.to_string()),
                        kv("format_version", c.table.format_version.to_string()),
                        kv("whole_key_filtering", c.table.whole_key_filtering.to_string()),
                        kv("no_block_cache", c.table.no_block_cache.to_string()),
                        kv("cache_index_and_filter_blocks", c.table.cache_index_and_filter_blocks.to_string()),
                        kv(
                            "cache_index_and_filter_blocks_with_high_priority",
                            c.table.cache_index_and_filter_blocks_with_high_priority.to_string(),
                        ),
                        kv(
                            "pin_l0_filter_and_index_blocks_in_cache",
                            c.table.pin_l0_filter_and_index_blocks_in_cache.to_string(),
                        ),
                        kv("pin_top_level_index_and_filter", c.table.pin_top_level_index_and_filter.to_string()),
                        kv("metadata_cache_options", {
                            let tier = |t: crate::BlockBasedTablePinningTier| match t {
                                crate::BlockBasedTablePinningTier::Fallback => "kFallback",
                                crate::BlockBasedTablePinningTier::None => "kNone",
                                crate::BlockBasedTablePinningTier::FlushAndSimilar => "kFlushedAndSimilar",
                                crate::BlockBasedTablePinningTier::All => "kAll",
                            };
                            let [top, part, unpart] = c.table.pinning_tiers;
                            format!(
                                "{{unpartitioned_pinning={};partition_pinning={};top_level_index_pinning={};}}",
                                tier(unpart),
                                tier(part),
                                tier(top)
                            )
                        }),
                        kv(
                            "filter_policy",
                            match c.table.bloom_bits_per_key {
                                Some(b) => format!("bloomfilter:{b}:false"),
                                None => "nullptr".to_string(),
                            },
                        ),
                        kv(
                            "checksum",
                            {
                                use crate::table::format::ChecksumType as T;
                                match c.table.checksum {
                                    T::None => "kNoChecksum",
                                    T::Crc32c => "kCRC32c",
                                    T::XxHash => "kxxHash",
                                    T::XxHash64 => "kxxHash64",
                                    T::Xxh3 => "kXXH3",
                                }
                            }
                            .to_string(),
                        ),
                        kv("index_type", "kBinarySearch".to_string()),
                    ],
                },
            }
        })
        .collect();
    let file = OptionsFile {
        rocksdb_version: "7.8.3".to_string(),
        options_file_version: "1.1".to_string(),
        db_options,
        cfs: sections,
    };
    report_unknown_options(inner);
    options_file::write_options_file(&*inner.fs, &inner.path, number, &file)?;
    // Keep only the newest two OPTIONS files, as RocksDB does.
    let mut olds: Vec<u64> = inner
        .fs
        .children(&inner.path)?
        .iter()
        .filter_map(|n| match filename::parse_file_name(n) {
            Some(FileType::Options(k)) if !n.ends_with(".dbtmp") => Some(k),
            _ => None,
        })
        .collect();
    olds.sort_unstable();
    if olds.len() > 2 {
        for k in &olds[..olds.len() - 2] {
            let _ = inner.fs.remove_file(&inner.path.join(options_file::options_file_name(*k)));
        }
    }
    Ok(())
}

/// Notes in the info log the options of the database's previous OPTIONS file that Shale does
/// not know (a newer RocksDB's; RocksDB itself skips them with `ignore_unknown_options`).
/// A missing or unreadable file is not an error here: DB::Open never depended on it.
fn report_unknown_options(inner: &DbInner) {
    let Ok(Some((number, previous))) = options_file::latest_options_file(&*inner.fs, &inner.path) else {
        return;
    };
    let unknown = previous.unknown_options();
    if !unknown.is_empty() {
        inner.info_log.log(format_args!(
            "{} (RocksDB {}) has {} options Shale does not know, ignored: {}",
            options_file::options_file_name(number),
            previous.rocksdb_version,
            unknown.len(),
            unknown.join(", ")
        ));
    }
}

fn wal_mode_name(m: crate::wal::WalRecoveryMode) -> &'static str {
    use crate::wal::WalRecoveryMode::*;
    match m {
        TolerateCorruptedTailRecords => "kTolerateCorruptedTailRecords",
        AbsoluteConsistency => "kAbsoluteConsistency",
        PointInTime => "kPointInTimeRecovery",
        SkipAnyCorruptedRecord => "kSkipAnyCorruptedRecords",
    }
}

fn compression_option_name(c: crate::options::DBCompressionType) -> &'static str {
    use crate::options::DBCompressionType::*;
    match c {
        None => "kNoCompression",
        Snappy => "kSnappyCompression",
        Zlib => "kZlibCompression",
        Bz2 => "kBZip2Compression",
        Lz4 => "kLZ4Compression",
        Lz4hc => "kLZ4HCCompression",
        Zstd => "kZSTD",
    }
}
