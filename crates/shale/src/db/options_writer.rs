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

/// RocksDB 11.8.1's PlainTable options, in the order it writes them.
const PLAIN_TABLE_ORDER: &[&str] = &[
    "store_index_in_file",
    "encoding_type",
    "huge_page_tlb_size",
    "hash_table_ratio",
    "full_scan_mode",
    "bloom_bits_per_key",
    "index_sparseness",
    "user_key_len",
];

/// RocksDB 11.8.1's CuckooTable options, in the order it writes them.
const CUCKOO_TABLE_ORDER: &[&str] = &[
    "use_module_hash",
    "identity_as_first_hash",
    "max_search_depth",
    "cuckoo_block_size",
    "hash_table_ratio",
];

/// RocksDB 11.8.1's default family section.
fn defaults_cf() -> &'static CfSection {
    match OptionsFile::rocksdb_11_defaults_ref().cfs.first() {
        Some(c) => c,
        // The parser requires a "default" section; the embedded text has one (tested).
        None => unreachable!("RocksDB 11.8.1 defaults without a default family"),
    }
}

/// Sets `name` to `value` in a list taken from RocksDB 11.8.1's defaults. Every name Shale
/// sets is one 11.8.1 writes (`options_file_lists_what_rocksdb_11_writes` checks it), so this
/// replaces a value in place and never changes the order.
fn put(list: &mut Vec<(String, String)>, name: &str, value: impl ToString) {
    options_file::set_option(list, name, &value.to_string());
}

/// The `[DBOptions]` list: RocksDB 11.8.1's options in its order, with Shale's value for each
/// option Shale has; the others keep RocksDB's default, which is what Shale behaves as (a
/// setter that is given another value makes `open` refuse it, or, for the speed hints
/// `options_api.rs` lists as "Accepted", changes nothing Shale does). The hints Shale
/// keeps (max_subcompactions, compaction_readahead_size, ...) are written as set.
fn db_options(o: &crate::Options) -> Vec<(String, String)> {
    let mut l = OptionsFile::rocksdb_11_defaults_ref().db_options.clone();
    put(&mut l, "create_if_missing", o.create_if_missing);
    put(&mut l, "create_missing_column_families", o.create_missing_column_families);
    put(&mut l, "error_if_exists", o.error_if_exists);
    put(&mut l, "paranoid_checks", o.paranoid_checks);
    put(&mut l, "max_open_files", o.max_open_files);
    put(&mut l, "max_background_jobs", o.max_background_jobs);
    put(&mut l, "max_background_compactions", o.max_background_compactions);
    put(&mut l, "max_background_flushes", o.max_background_flushes);
    put(&mut l, "use_fsync", o.use_fsync);
    put(&mut l, "wal_recovery_mode", wal_mode_name(o.wal_recovery_mode));
    put(&mut l, "max_manifest_file_size", o.max_manifest_file_size);
    put(&mut l, "keep_log_file_num", o.keep_log_file_num);
    put(&mut l, "max_bgerror_resume_count", o.max_bgerror_resume_count);
    put(&mut l, "bgerror_resume_retry_interval", o.bgerror_resume_retry_interval);
    put(&mut l, "stats_dump_period_sec", o.stats_dump_period_sec);
    put(&mut l, "delayed_write_rate", o.delayed_write_rate());
    put(&mut l, "db_write_buffer_size", o.db_write_buffer_size);
    // A TransactionDB's WAL holds two-phase-commit records; RocksDB's tools (ldb) read
    // this to recover it.
    put(&mut l, "allow_2pc", o.allow_2pc);
    put(&mut l, "manual_wal_flush", o.manual_wal_flush);
    let zstd = o.wal_compression == crate::table::compression::CompressionType::Zstd;
    put(&mut l, "wal_compression", if zstd { "kZSTD" } else { "kNoCompression" });
    put(&mut l, "wal_bytes_per_sync", o.wal_bytes_per_sync);
    put(&mut l, "writable_file_max_buffer_size", o.writable_file_max_buffer_size);
    put(&mut l, "dump_malloc_stats", o.dump_malloc_stats);
    put(&mut l, "unordered_write", o.unordered_write);
    put(&mut l, "allow_concurrent_memtable_write", o.allow_concurrent_memtable_write);
    put(&mut l, "enable_pipelined_write", o.enable_pipelined_write);
    put(&mut l, "enable_write_thread_adaptive_yield", o.enable_write_thread_adaptive_yield);
    put(&mut l, "write_thread_max_yield_usec", o.write_thread_max_yield_usec);
    put(&mut l, "write_thread_slow_yield_usec", o.write_thread_slow_yield_usec);
    put(&mut l, "atomic_flush", o.atomic_flush);
    put(&mut l, "avoid_unnecessary_blocking_io", o.avoid_unnecessary_blocking_io);
    put(&mut l, "track_and_verify_wals_in_manifest", o.track_and_verify_wals_in_manifest);
    put(&mut l, "write_dbid_to_manifest", o.write_dbid_to_manifest);
    put(&mut l, "max_subcompactions", o.max_subcompactions);
    put(&mut l, "compaction_readahead_size", o.compaction_readahead_size);
    put(&mut l, "advise_random_on_open", o.advise_random_on_open);
    put(&mut l, "manifest_preallocation_size", o.manifest_preallocation_size);
    put(&mut l, "max_file_opening_threads", o.max_file_opening_threads);
    put(&mut l, "table_cache_numshardbits", o.table_cache_numshardbits);
    l
}

/// A `[CFOptions]` list (see [`db_options`]).
fn cf_options(c: &crate::Options) -> Vec<(String, String)> {
    let mut l = defaults_cf().options.clone();
    let name_or_null = |n: Option<&str>| n.map_or("nullptr".to_string(), str::to_string);
    put(&mut l, "comparator", c.comparator.name());
    put(&mut l, "merge_operator", name_or_null(c.merge_operator.as_ref().map(|m| m.options_value())));
    put(&mut l, "compaction_filter", name_or_null(c.compaction_filter.as_ref().map(|f| f.name())));
    put(
        &mut l,
        "compaction_filter_factory",
        name_or_null(c.compaction_filter_factory.as_ref().map(|f| f.name())),
    );
    put(&mut l, "write_buffer_size", c.write_buffer_size);
    // As RocksDB sanitizes it (the default from the write buffer size: a fixed 1 MiB would
    // make a RocksDB that loads the file with a small write buffer flush each memtable at
    // its creation; 7.8.3's debug build asserts on it).
    put(&mut l, "arena_block_size", c.sanitized_arena_block_size());
    put(&mut l, "max_write_buffer_number", c.max_write_buffer_number);
    put(&mut l, "min_write_buffer_number_to_merge", c.flush_merge_min());
    put(&mut l, "max_successive_merges", c.max_successive_merges);
    put(&mut l, "num_levels", c.num_levels);
    put(&mut l, "level0_file_num_compaction_trigger", c.level0_file_num_compaction_trigger);
    put(&mut l, "level0_slowdown_writes_trigger", c.level0_slowdown_writes_trigger);
    put(&mut l, "level0_stop_writes_trigger", c.level0_stop_writes_trigger);
    put(&mut l, "target_file_size_base", c.target_file_size_base);
    put(&mut l, "target_file_size_multiplier", c.target_file_size_multiplier);
    put(&mut l, "max_bytes_for_level_base", c.max_bytes_for_level_base);
    put(&mut l, "max_bytes_for_level_multiplier", format!("{:.6}", c.max_bytes_for_level_multiplier));
    put(&mut l, "disable_auto_compactions", c.disable_auto_compactions);
    put(&mut l, "max_compaction_bytes", c.max_compaction_bytes());
    put(&mut l, "soft_pending_compaction_bytes_limit", c.soft_pending_compaction_bytes_limit);
    put(&mut l, "hard_pending_compaction_bytes_limit", c.hard_pending_compaction_bytes_limit);
    put(&mut l, "paranoid_file_checks", c.paranoid_file_checks);
    put(&mut l, "report_bg_io_stats", c.report_bg_io_stats);
    put(&mut l, "compression", compression_option_name(c.compression));
    // RocksDB 11.8.1's fields, in its order; those Shale lacks at their defaults.
    let z = &c.compression_opts;
    put(
        &mut l,
        "compression_opts",
        format!(
            "{{checksum=false;max_dict_buffer_bytes={};enabled=false;max_dict_bytes={};\
             max_compressed_bytes_per_kb=896;parallel_threads=1;zstd_max_train_bytes={};level={};\
             use_zstd_dict_trainer={};strategy={};window_bits={};}}",
            z.max_dict_buffer_bytes,
            z.max_dict_bytes,
            z.zstd_max_train_bytes,
            z.level,
            z.use_zstd_dict_trainer,
            z.strategy,
            z.window_bits
        ),
    );
    put(&mut l, "experimental_mempurge_threshold", format!("{:.6}", c.experimental_mempurge_threshold));
    put(&mut l, "compaction_style", compaction_style_name(c.compaction_style));
    put(
        &mut l,
        "compaction_options_fifo",
        format!(
            "{{use_kv_ratio_compaction=false;max_data_files_size=0;trivial_copy_buffer_size=4096;\
             allow_trivial_copy_when_change_temperature=false;file_temperature_age_thresholds=;\
             allow_compaction={};age_for_warm=0;max_table_files_size={};}}",
            c.fifo_allow_compaction, c.fifo_max_table_files_size
        ),
    );
    let u = &c.universal;
    put(
        &mut l,
        "compaction_options_universal",
        format!(
            "{{reduce_file_locking=true;incremental=false;compression_size_percent={};\
             allow_trivial_move=false;max_size_amplification_percent={};max_merge_width={};\
             stop_style={};min_merge_width={};max_read_amp=-1;size_ratio={};}}",
            u.compression_size_percent,
            u.max_size_amplification_percent,
            u.max_merge_width,
            stop_style_name(u.stop_style),
            u.min_merge_width,
            u.size_ratio
        ),
    );
    // The ages as RocksDB sanitizes them (`Options::sanitized_ttl`,
    // `age_compaction_seconds`); universal compaction folds `ttl` into the periodic
    // compaction, whose value is written, and the file keeps `ttl` itself.
    let (_, periodic) = c.age_compaction_seconds();
    put(&mut l, "ttl", c.sanitized_ttl());
    put(&mut l, "periodic_compaction_seconds", periodic);
    put(&mut l, "level_compaction_dynamic_level_bytes", c.dynamic_level_bytes_in_force());
    put(&mut l, "prefix_extractor", name_or_null(c.prefix_extractor.as_ref().map(|t| t.name())));
    put(&mut l, "memtable_prefix_bloom_size_ratio", format!("{:.6}", c.memtable_prefix_bloom_ratio));
    put(&mut l, "memtable_whole_key_filtering", c.memtable_whole_key_filtering);
    put(&mut l, "memtable_factory", c.memtable_rep.options_value(c.prefix_extractor.is_some()));
    put(&mut l, "table_factory", c.table_format.factory_name());
    put(&mut l, "enable_blob_files", c.blob.enable_blob_files);
    put(&mut l, "min_blob_size", c.blob.min_blob_size);
    put(&mut l, "blob_file_size", c.blob.blob_file_size);
    put(&mut l, "blob_compression_type", compression_option_name(c.blob.compression));
    put(&mut l, "enable_blob_garbage_collection", c.blob.enable_gc);
    put(&mut l, "blob_garbage_collection_age_cutoff", format!("{:.6}", c.blob.gc_age_cutoff));
    put(&mut l, "blob_compaction_readahead_size", c.blob.compaction_readahead_size);
    put(&mut l, "max_sequential_skip_in_iterations", c.max_sequential_skip_in_iterations);
    l
}

/// A family's table section: its factory's options in RocksDB 11.8.1's order.
fn table_options(c: &crate::Options) -> Vec<(String, String)> {
    let ordered = |order: &[&str], values: Vec<(&str, String)>| -> Vec<(String, String)> {
        order
            .iter()
            .filter_map(|k| values.iter().find(|(n, _)| n == k).map(|(n, v)| (n.to_string(), v.clone())))
            .collect()
    };
    match &c.table_format {
        crate::table::TableFormat::Plain(p) => ordered(
            PLAIN_TABLE_ORDER,
            vec![
                ("user_key_len", p.user_key_len.to_string()),
                ("bloom_bits_per_key", p.bloom_bits_per_key.to_string()),
                ("hash_table_ratio", format!("{:.6}", p.hash_table_ratio)),
                ("index_sparseness", p.index_sparseness.to_string()),
                ("huge_page_tlb_size", p.huge_page_tlb_size.to_string()),
                (
                    "encoding_type",
                    match p.encoding {
                        crate::table::plain::PlainEncoding::Plain => "kPlain",
                        crate::table::plain::PlainEncoding::Prefix => "kPrefix",
                    }
                    .to_string(),
                ),
                ("full_scan_mode", p.full_scan_mode.to_string()),
                ("store_index_in_file", p.store_index_in_file.to_string()),
            ],
        ),
        crate::table::TableFormat::Cuckoo(k) => ordered(
            CUCKOO_TABLE_ORDER,
            vec![
                ("hash_table_ratio", format!("{:.6}", k.hash_table_ratio)),
                ("max_search_depth", k.max_search_depth.to_string()),
                ("cuckoo_block_size", k.cuckoo_block_size.to_string()),
                ("identity_as_first_hash", k.identity_as_first_hash.to_string()),
                ("use_module_hash", k.use_module_hash.to_string()),
            ],
        ),
        crate::table::TableFormat::BlockBased => block_based_options(&c.table),
    }
}

/// The `[TableOptions/BlockBasedTable]` list (see [`db_options`]).
fn block_based_options(t: &crate::BlockBasedOptions) -> Vec<(String, String)> {
    let mut l = defaults_cf().table_options.clone();
    put(&mut l, "block_size", t.block_size);
    put(&mut l, "block_restart_interval", t.block_restart_interval);
    put(&mut l, "index_block_restart_interval", t.index_block_restart_interval);
    put(&mut l, "format_version", t.format_version);
    put(&mut l, "whole_key_filtering", t.whole_key_filtering);
    put(&mut l, "optimize_filters_for_memory", t.optimize_filters_for_memory);
    put(&mut l, "no_block_cache", t.no_block_cache);
    put(&mut l, "cache_index_and_filter_blocks", t.cache_index_and_filter_blocks);
    put(
        &mut l,
        "cache_index_and_filter_blocks_with_high_priority",
        t.cache_index_and_filter_blocks_with_high_priority,
    );
    put(&mut l, "pin_l0_filter_and_index_blocks_in_cache", t.pin_l0_filter_and_index_blocks_in_cache);
    put(&mut l, "pin_top_level_index_and_filter", t.pin_top_level_index_and_filter);
    let tier = |t: crate::BlockBasedTablePinningTier| match t {
        crate::BlockBasedTablePinningTier::Fallback => "kFallback",
        crate::BlockBasedTablePinningTier::None => "kNone",
        crate::BlockBasedTablePinningTier::FlushAndSimilar => "kFlushedAndSimilar",
        crate::BlockBasedTablePinningTier::All => "kAll",
    };
    let [top, part, unpart] = t.pinning_tiers;
    put(
        &mut l,
        "metadata_cache_options",
        format!(
            "{{unpartitioned_pinning={};partition_pinning={};top_level_index_pinning={};}}",
            tier(unpart),
            tier(part),
            tier(top)
        ),
    );
    let filter = match (t.bloom_bits_per_key, t.ribbon_bloom_before_level) {
        (None, _) => "nullptr".to_string(),
        // RocksDB 11.8.1's text: the policy's id, then its one mutable option.
        (Some(b), Some(before)) => format!(
            "{{id=ribbonfilter{}:{before};bloom_before_level={before};}}",
            crate::table::filter::bits_per_key_suffix(b)
        ),
        (Some(b), None) => format!("bloomfilter:{b}:false"),
    };
    put(&mut l, "filter_policy", filter);
    let checksum = {
        use crate::table::format::ChecksumType as T;
        match t.checksum {
            T::None => "kNoChecksum",
            T::Crc32c => "kCRC32c",
            T::XxHash => "kxxHash",
            T::XxHash64 => "kxxHash64",
            T::Xxh3 => "kXXH3",
        }
    };
    put(&mut l, "checksum", checksum);
    put(&mut l, "index_type", if t.partitioned_index { "kTwoLevelIndexSearch" } else { "kBinarySearch" });
    put(&mut l, "metadata_block_size", t.metadata_block_size);
    // RocksDB's sanitizing turns partition_filters off without a partitioned index.
    put(&mut l, "partition_filters", t.partitioned_index && t.partition_filters);
    put(&mut l, "decouple_partitioned_filters", t.decouple_partitioned_filters);
    let shortening = match t.index_shortening {
        crate::IndexShorteningMode::NoShortening => "kNoShortening",
        crate::IndexShorteningMode::ShortenSeparators => "kShortenSeparators",
        crate::IndexShorteningMode::ShortenSeparatorsAndSuccessor => "kShortenSeparatorsAndSuccessor",
    };
    put(&mut l, "index_shortening", shortening);
    let hash = t.data_block_index_type == crate::DataBlockIndexType::BinaryAndHash;
    put(
        &mut l,
        "data_block_index_type",
        if hash { "kDataBlockBinaryAndHash" } else { "kDataBlockBinarySearch" },
    );
    put(&mut l, "data_block_hash_table_util_ratio", format!("{:.6}", t.data_block_hash_ratio));
    l
}

/// The OPTIONS file describing `db` and its families `cfs` (name, options): what RocksDB
/// 11.8.1 writes (`rocksdb_version=11.8.1`, its options in its order).
pub(crate) fn options_file_of(db: &crate::Options, cfs: &[(&str, &crate::Options)]) -> OptionsFile {
    OptionsFile {
        rocksdb_version: options_file::WRITTEN_ROCKSDB_VERSION.to_string(),
        options_file_version: "1.1".to_string(),
        db_options: db_options(db),
        cfs: cfs
            .iter()
            .map(|(name, c)| CfSection {
                name: name.to_string(),
                options: cf_options(c),
                table_factory: c.table_format.factory_name().to_string(),
                table_options: table_options(c),
            })
            .collect(),
    }
}

/// Writes an OPTIONS file describing the open families (as RocksDB does after each change).
pub(crate) fn write_options_file(inner: &DbInner) -> Result<()> {
    let number = inner.versions.new_file_number();
    let cfs: Vec<Arc<CfHandle>> = inner.lock_state().cfs.values().map(|c| c.handle.clone()).collect();
    let named: Vec<(&str, &crate::Options)> = cfs.iter().map(|h| (h.name.as_str(), &*h.opts)).collect();
    let file = options_file_of(&inner.opts, &named);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Ribbon policies are written as RocksDB 11.8.1 writes them (its db_bench
    /// `--use_ribbon_filter=1 --bloom_bits=10` OPTIONS file) and read back to the same policy.
    #[test]
    fn ribbon_filter_policy_text_round_trips() {
        let text = |t: &crate::BlockBasedOptions| -> String {
            block_based_options(t).into_iter().find(|(k, _)| k == "filter_policy").unwrap().1
        };
        let mut t = crate::BlockBasedOptions::default();
        t.set_ribbon_filter(10.0);
        assert_eq!(text(&t), "{id=ribbonfilter:10:0;bloom_before_level=0;}");
        t.set_hybrid_ribbon_filter(7.125, -1);
        let written = text(&t);
        assert_eq!(written, "{id=ribbonfilter:7.125:-1;bloom_before_level=-1;}");
        let mut back = crate::BlockBasedOptions::default();
        assert!(crate::options_load::apply_table(&mut back, "filter_policy", &written).unwrap());
        assert_eq!((back.bloom_bits_per_key, back.ribbon_bloom_before_level), (Some(7.125), Some(-1)));
        // The explicit option wins over the id's; the short forms are read too.
        let v = "{id=ribbonfilter:9.5:0;bloom_before_level=2;}";
        assert!(crate::options_load::apply_table(&mut back, "filter_policy", v).unwrap());
        assert_eq!((back.bloom_bits_per_key, back.ribbon_bloom_before_level), (Some(9.5), Some(2)));
        assert!(crate::options_load::apply_table(&mut back, "filter_policy", "ribbonfilter:10").unwrap());
        assert_eq!((back.bloom_bits_per_key, back.ribbon_bloom_before_level), (Some(10.0), Some(0)));
        assert!(crate::options_load::apply_table(&mut back, "filter_policy", "bloomfilter:10:false").unwrap());
        assert_eq!((back.bloom_bits_per_key, back.ribbon_bloom_before_level), (Some(10.0), None));
        assert_eq!(text(&back), "bloomfilter:10:false");
        assert!(
            crate::options_load::apply_table(&mut back, "filter_policy", "{id=nosuch:3}").is_ok_and(|b| !b)
        );
    }

    fn names(l: &[(String, String)]) -> Vec<&str> {
        l.iter().map(|(k, _)| k.as_str()).collect()
    }

    /// Shale's file has every option RocksDB 11.8.1 writes, in 11.8.1's order, and nothing else.
    #[test]
    fn options_file_lists_what_rocksdb_11_writes() {
        let rocks = OptionsFile::rocksdb_11_defaults();
        let mut o = crate::Options::default();
        o.create_if_missing(true);
        let ours = options_file_of(&o, &[("default", &o), ("other", &o)]);
        assert_eq!(ours.rocksdb_version, "11.8.1");
        assert_eq!(ours.options_file_version, "1.1");
        assert_eq!(names(&ours.db_options), names(&rocks.db_options));
        let r = &rocks.cfs[0];
        for cf in &ours.cfs {
            assert_eq!(names(&cf.options), names(&r.options), "{}", cf.name);
            assert_eq!(cf.table_factory, "BlockBasedTable");
            assert_eq!(names(&cf.table_options), names(&r.table_options), "{}", cf.name);
        }
        // Struct values list 11.8.1's fields in its order.
        let fields = |v: &str| -> Vec<String> {
            v.trim_matches(|c| c == '{' || c == '}')
                .split(';')
                .filter_map(|f| f.split_once('=').map(|(k, _)| k.to_string()))
                .collect()
        };
        for s in ["compression_opts", "compaction_options_fifo", "compaction_options_universal"] {
            let (a, b) = (ours.cfs[0].option(s).unwrap(), r.option(s).unwrap());
            assert_eq!(fields(a), fields(b), "{s}");
        }
        // Shale's defaults are RocksDB's, and so is the text.
        let differs = |ours: &[(String, String)], rocks: &[(String, String)]| -> Vec<String> {
            ours.iter()
                .zip(rocks)
                .filter(|(a, b)| a.1 != b.1)
                .map(|(a, b)| format!("{}={} (RocksDB {})", a.0, a.1, b.1))
                .collect()
        };
        let d = differs(&ours.db_options, &rocks.db_options);
        let c = differs(&ours.cfs[0].options, &r.options);
        let t = differs(&ours.cfs[0].table_options, &r.table_options);
        println!("DBOptions: {d:#?}\nCFOptions: {c:#?}\nTable: {t:#?}");
        let start = |v: &[String]| -> Vec<String> {
            v.iter().map(|s| s.split('=').next().unwrap_or("").to_string()).collect()
        };
        assert_eq!(start(&d), ["create_if_missing"]);
        assert!(c.is_empty(), "{c:?}");
        assert!(t.is_empty(), "{t:?}");
    }

    /// Values RocksDB sanitizes from others are written as it writes them.
    #[test]
    fn sanitized_values() {
        let mut o = crate::Options::default();
        o.set_write_buffer_size(65536);
        o.set_target_file_size_base(1 << 20);
        let f = options_file_of(&o, &[("default", &o)]);
        let c = &f.cfs[0];
        assert_eq!(c.option("arena_block_size"), Some("8192"));
        let mut set = o.clone();
        set.set_arena_block_size(10_000);
        let f = options_file_of(&set, &[("default", &set)]);
        assert_eq!(f.cfs[0].option("arena_block_size"), Some("12288"), "a set size, rounded up to 4 KiB");
        assert_eq!(c.option("max_compaction_bytes"), Some("26214400"));
        assert_eq!(f.db_option("delayed_write_rate"), Some("16777216"));
        o.set_compaction_style(crate::DBCompactionStyle::Universal);
        let f = options_file_of(&o, &[("default", &o)]);
        assert_eq!(f.cfs[0].option("ttl"), Some("2592000"));
        assert_eq!(f.cfs[0].option("periodic_compaction_seconds"), Some("2592000"));
    }

    /// The block checksum and index shortening written are the ones the tables get.
    #[test]
    fn checksum_and_index_shortening_are_the_tables_own() {
        let mut o = crate::Options::default();
        let f = options_file_of(&o, &[("default", &o)]);
        assert_eq!(f.cfs[0].table_option("checksum"), Some("kXXH3"));
        assert_eq!(f.cfs[0].table_option("index_shortening"), Some("kShortenSeparators"));
        let mut t = crate::BlockBasedOptions::default();
        t.set_checksum_type(crate::ChecksumType::CRC32c);
        t.set_index_shortening(crate::IndexShorteningMode::ShortenSeparatorsAndSuccessor);
        o.set_block_based_table_factory(&t);
        let f = options_file_of(&o, &[("default", &o)]);
        assert_eq!(f.cfs[0].table_option("checksum"), Some("kCRC32c"));
        assert_eq!(f.cfs[0].table_option("index_shortening"), Some("kShortenSeparatorsAndSuccessor"));
    }

    /// Plain and cuckoo table sections have 11.8.1's options in its order.
    #[test]
    fn plain_and_cuckoo_sections_in_rocksdb_11_order() {
        let mut o = crate::Options::default();
        o.set_cuckoo_table_factory(&crate::CuckooTableOptions::default());
        let f = options_file_of(&o, &[("default", &o)]);
        assert_eq!(f.cfs[0].table_factory, "CuckooTable");
        assert_eq!(names(&f.cfs[0].table_options), CUCKOO_TABLE_ORDER);
        assert_eq!(f.cfs[0].option("table_factory"), Some("CuckooTable"));
        o.set_plain_table_factory(&crate::PlainTableFactoryOptions {
            user_key_length: 16,
            bloom_bits_per_key: 10,
            hash_table_ratio: 0.75,
            index_sparseness: 16,
            huge_page_tlb_size: 0,
            encoding_type: crate::KeyEncodingType::Plain,
            full_scan_mode: false,
            store_index_in_file: false,
        });
        let f = options_file_of(&o, &[("default", &o)]);
        assert_eq!(f.cfs[0].table_factory, "PlainTable");
        assert_eq!(names(&f.cfs[0].table_options), PLAIN_TABLE_ORDER);
        assert_eq!(f.cfs[0].table_option("user_key_len"), Some("16"));
    }
}
