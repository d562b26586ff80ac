//! `Options::load_latest`: the options of a database's latest OPTIONS file (`options_file.rs`)
//! as rust-rocksdb's `Options` and column family descriptors, as RocksDB's
//! `LoadLatestOptions`.
//!
//! Each `name=value` of the file goes through the setter Shale has for it (so what a setter
//! refuses is refused here too). An option Shale does not apply is accepted only when its
//! value is RocksDB's default (RocksDB 11.8.1's, `options_file/rocksdb_11_defaults.ini`, the
//! version Shale's OPTIONS files name, or 7.8.3's, `options_file/rocksdb_defaults.ini`, for
//! files older RocksDBs wrote): then it changes nothing. Any other value is NotSupported
//! naming it. A name neither version knows (a newer RocksDB's option, or none at all) is an
//! InvalidArgument in RocksDB 11.8.1's words (`Extra option not recognized: <name>`), skipped
//! only with `ignore_unknown_options` in a file a RocksDB newer than 11.8 wrote, as RocksDB's
//! parser does. Struct values (`{a=1;b=2;}`) are compared field by field. The table section
//! builds BlockBasedTable (with the given cache as block cache), PlainTable or CuckooTable
//! options.
//!
//! Function-valued options (`comparator`, `merge_operator`, `compaction_filter`,
//! `compaction_filter_factory`, `prefix_extractor`, ...) are not rebuilt from the names the
//! file holds: the caller sets them on the descriptors' options, as with RocksDB, whose
//! LoadLatestOptions leaves them null unless the name is registered. `memtable_factory` is
//! rebuilt for the factories Shale has (skip list, HashSkipList, HashLinkList), which
//! RocksDB registers built in; another one is NotSupported.

use crate::db::dyn_options::{bad_value, boolean, number};
use crate::options_file::{self, CfSection, OptionsFile};
use crate::{
    BlockBasedIndexType, BlockBasedOptions, BlockBasedTablePinningTier, Cache, ChecksumType,
    ColumnFamilyDescriptor, DBCompactionStyle, DBCompressionType, DBRecoveryMode, DataBlockIndexType, Env,
    Error, LogLevel, Options, Result,
};

/// Options whose values name code (objects the caller supplies); never applied from a file.
const FUNCTION_VALUED: &[&str] = &[
    "comparator",
    "merge_operator",
    "compaction_filter",
    "compaction_filter_factory",
    "prefix_extractor",
    "memtable_insert_with_hint_prefix_extractor",
    "sst_partitioner_factory",
    "table_properties_collectors",
    "compaction_thread_limiter",
    "blob_cache",
    "table_factory",
    "env",
    "file_system",
    "statistics",
    "rate_limiter",
    "sst_file_manager",
    "info_log",
    "listeners",
    "row_cache",
    "wal_filter",
    "persist_stats_to_disk",
];

/// Column-family options `db/dyn_options.rs` applies (the mutable ones Shale builds).
const MUTABLE_APPLIED: &[&str] = &[
    "write_buffer_size",
    "max_write_buffer_number",
    "disable_auto_compactions",
    "level0_file_num_compaction_trigger",
    "level0_slowdown_writes_trigger",
    "level0_stop_writes_trigger",
    "target_file_size_base",
    "target_file_size_multiplier",
    "max_bytes_for_level_base",
    "max_bytes_for_level_multiplier",
    "max_compaction_bytes",
    "soft_pending_compaction_bytes_limit",
    "hard_pending_compaction_bytes_limit",
    "compression",
    "paranoid_file_checks",
    "ttl",
    "periodic_compaction_seconds",
    "report_bg_io_stats",
    "experimental_mempurge_threshold",
    "compaction_options_universal",
    "compaction_options_fifo",
];

/// Whether two option values are the same value: as text, as numbers or as booleans.
fn same_value(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    if let (Ok(x), Ok(y)) = (a.parse::<f64>(), b.parse::<f64>()) {
        return x == y;
    }
    let as_bool = |s: &str| match s {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    };
    matches!((as_bool(a), as_bool(b)), (Some(x), Some(y)) if x == y)
}

/// What applying a file's options needs: RocksDB's defaults (11.8.1's, then 7.8.3's) and
/// whether unknown options are skipped.
struct Loader {
    defaults: [OptionsFile; 2],
    ignore_unknown: bool,
}

impl Loader {
    /// An option Shale has not applied: accepted at RocksDB's default, NotSupported
    /// otherwise, and unknown names as `ignore_unknown_options` says.
    /// `defaults`: the option's default in RocksDB 11.8.1 and 7.8.3 (those that have it).
    fn not_applied(&self, section: &str, defaults: &[&str], name: &str, v: &str) -> Result<()> {
        let Some(&d) = defaults.first() else {
            // An option RocksDB knows but does not write by default: unset only.
            if options_file::REGISTERED_NOT_WRITTEN.contains(&name) {
                return match v {
                    "" | "nullptr" => Ok(()),
                    _ => Err(not_supported(section, name, v, "nullptr")),
                };
            }
            return self.unknown(name);
        };
        let is_struct = |s: &str| s.starts_with('{') && s.ends_with('}');
        if is_struct(v) && defaults.iter().all(|d| is_struct(d)) {
            let mut known = Vec::new();
            for d in defaults {
                known.extend(crate::db::dyn_options::struct_fields(name, d)?);
            }
            for (k, x) in crate::db::dyn_options::struct_fields(name, v)? {
                let mut field_defaults =
                    known.iter().filter(|(dk, _)| *dk == k).map(|(_, dx)| *dx).peekable();
                match field_defaults.peek() {
                    None => self.unknown(&format!("{name}.{k}"))?,
                    Some(&dx) => {
                        if !field_defaults.any(|dx| same_value(x, dx)) {
                            return Err(not_supported(section, &format!("{name}.{k}"), x, dx));
                        }
                    }
                }
            }
            return Ok(());
        }
        if defaults.iter().any(|d| same_value(v, d)) {
            Ok(())
        } else {
            Err(not_supported(section, name, v, d))
        }
    }

    /// RocksDB 11.8.1's refusal of an unknown option (`Extra option not recognized` for an
    /// option, `Unrecognized option` for a struct's field), unless it is skipped.
    fn unknown(&self, name: &str) -> Result<()> {
        if self.ignore_unknown {
            return Ok(());
        }
        if name.contains('.') {
            Err(Error::invalid_argument(format!("Unrecognized option: {name}")))
        } else {
            Err(Error::invalid_argument(format!("Extra option not recognized: {name}")))
        }
    }

    /// A struct value without the fields no RocksDB default of it has, when unknown options
    /// are skipped (a newer RocksDB's fields); otherwise the value as it is.
    fn known_fields_only(&self, name: &str, v: &str, defaults: &[&str]) -> Result<String> {
        let is_struct = |s: &str| s.starts_with('{') && s.ends_with('}');
        if !self.ignore_unknown || !is_struct(v) || defaults.is_empty() {
            return Ok(v.to_string());
        }
        let mut known = Vec::new();
        for d in defaults {
            known.extend(crate::db::dyn_options::struct_fields(name, d)?.into_iter().map(|(k, _)| k));
        }
        let mut out = String::from("{");
        for (k, x) in crate::db::dyn_options::struct_fields(name, v)? {
            if known.contains(&k) {
                out.push_str(&format!("{k}={x};"));
            }
        }
        out.push('}');
        Ok(out)
    }

    fn db_defaults(&self, name: &str) -> Vec<&str> {
        self.defaults.iter().filter_map(|d| d.db_option(name)).collect()
    }

    fn cf_defaults(&self, name: &str) -> Vec<&str> {
        self.defaults.iter().filter_map(|d| d.cfs.first().and_then(|c| c.option(name))).collect()
    }

    fn table_defaults(&self, name: &str) -> Vec<&str> {
        self.defaults.iter().filter_map(|d| d.cfs.first().and_then(|c| c.table_option(name))).collect()
    }

    fn db_option(&self, o: &mut Options, name: &str, v: &str) -> Result<()> {
        let applied = apply_db(o, name, v)?;
        if !applied && !FUNCTION_VALUED.contains(&name) {
            self.not_applied("DBOptions", &self.db_defaults(name), name, v)?;
        }
        Ok(())
    }

    fn cf_option(&self, o: &mut Options, name: &str, v: &str) -> Result<()> {
        let applied = if MUTABLE_APPLIED.contains(&name) {
            let v = self.known_fields_only(name, v, &self.cf_defaults(name))?;
            crate::db::dyn_options::apply_mutable(o, name, &v)?;
            true
        } else {
            apply_cf(o, name, v)?
        };
        if !applied && !FUNCTION_VALUED.contains(&name) {
            self.not_applied("CFOptions", &self.cf_defaults(name), name, v)?;
        }
        Ok(())
    }

    fn table_option(&self, t: &mut BlockBasedOptions, name: &str, v: &str) -> Result<()> {
        if !apply_table(t, name, v)? && !FUNCTION_VALUED.contains(&name) {
            self.not_applied("TableOptions/BlockBasedTable", &self.table_defaults(name), name, v)?;
        }
        Ok(())
    }

    fn family(&self, db: &Options, cf: &CfSection, cache: &Cache) -> Result<Options> {
        let mut o = db.clone();
        for (k, v) in &cf.options {
            self.cf_option(&mut o, k, v)?;
        }
        match cf.table_factory.as_str() {
            "" | "BlockBasedTable" => {
                let mut t = BlockBasedOptions::default();
                t.set_block_cache(cache);
                for (k, v) in &cf.table_options {
                    self.table_option(&mut t, k, v)?;
                }
                o.set_block_based_table_factory(&t);
            }
            "PlainTable" => {
                let mut p = crate::PlainTableFactoryOptions {
                    user_key_length: 0,
                    bloom_bits_per_key: 10,
                    hash_table_ratio: 0.75,
                    index_sparseness: 16,
                    huge_page_tlb_size: 0,
                    encoding_type: crate::KeyEncodingType::Plain,
                    full_scan_mode: false,
                    store_index_in_file: false,
                };
                for (k, v) in &cf.table_options {
                    match k.as_str() {
                        "user_key_len" => p.user_key_length = number(k, v)?,
                        "bloom_bits_per_key" => p.bloom_bits_per_key = number(k, v)?,
                        "hash_table_ratio" => p.hash_table_ratio = number(k, v)?,
                        "index_sparseness" => p.index_sparseness = number(k, v)?,
                        "huge_page_tlb_size" => p.huge_page_tlb_size = number(k, v)?,
                        "encoding_type" => {
                            p.encoding_type = match v.as_str() {
                                "kPlain" => crate::KeyEncodingType::Plain,
                                "kPrefix" => crate::KeyEncodingType::Prefix,
                                _ => return Err(bad_value(k, v)),
                            }
                        }
                        "full_scan_mode" => p.full_scan_mode = boolean(k, v)?,
                        "store_index_in_file" => p.store_index_in_file = boolean(k, v)?,
                        _ => self.unknown(k)?,
                    }
                }
                o.set_plain_table_factory(&p);
            }
            "CuckooTable" => {
                let mut c = crate::CuckooTableOptions::default();
                for (k, v) in &cf.table_options {
                    match k.as_str() {
                        "hash_table_ratio" => c.set_hash_ratio(number(k, v)?),
                        "max_search_depth" => c.set_max_search_depth(number(k, v)?),
                        "cuckoo_block_size" => c.set_cuckoo_block_size(number(k, v)?),
                        "identity_as_first_hash" => c.set_identity_as_first_hash(boolean(k, v)?),
                        "use_module_hash" => c.set_use_module_hash(boolean(k, v)?),
                        _ => self.unknown(k)?,
                    }
                }
                o.set_cuckoo_table_factory(&c);
            }
            other => {
                return Err(Error::not_supported(format!(
                    "load_latest: table factory {other} of column family \"{}\" is not supported by Shale",
                    cf.name
                )))
            }
        }
        refused(&o, &format!("column family \"{}\"", cf.name))?;
        Ok(o)
    }
}

fn not_supported(section: &str, name: &str, v: &str, default: &str) -> Error {
    Error::not_supported(format!(
        "load_latest: option {section}::{name}={v} is not supported by Shale (only RocksDB's default {default})"
    ))
}

/// NotSupported naming the first option a setter recorded as refused.
fn refused(o: &Options, what: &str) -> Result<()> {
    match o.unsupported.first().or(o.table.unsupported.first()) {
        Some(name) => Err(Error::not_supported(format!(
            "load_latest: option {name} of {what} is not supported by Shale"
        ))),
        None => Ok(()),
    }
}

/// Builds the options of an OPTIONS file (see the module comment).
pub(crate) fn from_file(
    file: &OptionsFile,
    env: &Env,
    ignore_unknown_options: bool,
    cache: &Cache,
) -> Result<(Options, Vec<ColumnFamilyDescriptor>)> {
    // RocksDB's parser skips unknown options only in a file a newer RocksDB wrote.
    let loader = Loader {
        defaults: [OptionsFile::rocksdb_11_defaults(), OptionsFile::rocksdb_defaults()],
        ignore_unknown: ignore_unknown_options && file.is_from_newer_version(),
    };
    // Unknown options (struct fields too) in RocksDB 11.8.1's words, before any is applied.
    file.check_unknown_options(ignore_unknown_options)?;
    let mut db = Options::default();
    db.set_env(env);
    for (k, v) in &file.db_options {
        loader.db_option(&mut db, k, v)?;
    }
    refused(&db, "DBOptions")?;
    let mut descs = Vec::with_capacity(file.cfs.len());
    let mut main = None;
    for cf in &file.cfs {
        let o = loader.family(&db, cf, cache)?;
        if cf.name == "default" {
            main = Some(o.clone());
        }
        descs.push(ColumnFamilyDescriptor::new(cf.name.clone(), o));
    }
    // The parser requires a "default" section; its options are the returned ones.
    let main = main.ok_or_else(|| Error::corruption("OPTIONS file without a default column family"))?;
    Ok((main, descs))
}

/// The latest OPTIONS file of `path`, built (NotFound when there is none).
pub(crate) fn load_latest(
    path: &std::path::Path,
    env: &Env,
    ignore_unknown_options: bool,
    cache: &Cache,
) -> Result<(Options, Vec<ColumnFamilyDescriptor>)> {
    let fs = env.fs.clone().unwrap_or_else(crate::fs::default_fs);
    match options_file::latest_options_file(&*fs, path)? {
        Some((_, file)) => from_file(&file, env, ignore_unknown_options, cache),
        None => Err(Error::not_found(format!("There is no options file in: {}", path.display()))),
    }
}

/// `load_latest` of the OPTIONS file numbered `number` (what RocksDB's `OpenAndCompact`
/// loads: the file the primary names in its CompactionServiceInput).
pub(crate) fn load_numbered(
    path: &std::path::Path,
    number: u64,
    env: &Env,
    ignore_unknown_options: bool,
    cache: &Cache,
) -> Result<(Options, Vec<ColumnFamilyDescriptor>)> {
    let fs = env.fs.clone().unwrap_or_else(crate::fs::default_fs);
    let file = options_file::read_options_file(&*fs, path, number)?;
    from_file(&file, env, ignore_unknown_options, cache)
}

/// Applies a DB or column-family option by RocksDB's name (for `get_options_from_string`);
/// false when Shale has no setter for it.
pub(crate) fn apply_named(o: &mut Options, name: &str, v: &str) -> Result<bool> {
    if MUTABLE_APPLIED.contains(&name) {
        crate::db::dyn_options::apply_mutable(o, name, v)?;
        return Ok(true);
    }
    Ok(apply_db(o, name, v)? || apply_cf(o, name, v)?)
}

fn compression_type(name: &str, v: &str) -> Result<DBCompressionType> {
    crate::db::dyn_options::compression(name, v)
}

/// Applies one DBOptions entry through Shale's setter; false when Shale has none.
fn apply_db(o: &mut Options, name: &str, v: &str) -> Result<bool> {
    match name {
        "create_if_missing" => o.create_if_missing(boolean(name, v)?),
        "create_missing_column_families" => o.create_missing_column_families(boolean(name, v)?),
        "error_if_exists" => o.set_error_if_exists(boolean(name, v)?),
        "paranoid_checks" => o.set_paranoid_checks(boolean(name, v)?),
        "max_open_files" => o.set_max_open_files(number(name, v)?),
        "max_background_jobs" => o.set_max_background_jobs(number(name, v)?),
        "max_background_compactions" => o.max_background_compactions = number(name, v)?,
        "max_background_flushes" => o.max_background_flushes = number(name, v)?,
        "use_fsync" => o.set_use_fsync(boolean(name, v)?),
        "wal_recovery_mode" => o.set_wal_recovery_mode(match v {
            "kTolerateCorruptedTailRecords" => DBRecoveryMode::TolerateCorruptedTailRecords,
            "kAbsoluteConsistency" => DBRecoveryMode::AbsoluteConsistency,
            "kPointInTimeRecovery" => DBRecoveryMode::PointInTime,
            "kSkipAnyCorruptedRecords" => DBRecoveryMode::SkipAnyCorruptedRecord,
            _ => return Err(bad_value(name, v)),
        }),
        "max_manifest_file_size" => o.set_max_manifest_file_size(number(name, v)?),
        "keep_log_file_num" => o.set_keep_log_file_num(number(name, v)?),
        "max_bgerror_resume_count" => o.set_max_bgerror_resume_count(number(name, v)?),
        "bgerror_resume_retry_interval" => o.set_bgerror_resume_retry_interval(number(name, v)?),
        "stats_dump_period_sec" => o.set_stats_dump_period_sec(number(name, v)?),
        "allow_2pc" => o.allow_2pc = boolean(name, v)?,
        "wal_compression" => match v {
            "kNoCompression" => o.set_wal_compression_type(DBCompressionType::None),
            "kZSTD" => o.set_wal_compression_type(DBCompressionType::Zstd),
            _ => return Ok(false),
        },
        "wal_bytes_per_sync" => o.set_wal_bytes_per_sync(number(name, v)?),
        "bytes_per_sync" => o.set_bytes_per_sync(number(name, v)?),
        "writable_file_max_buffer_size" => o.set_writable_file_max_buffer_size(number(name, v)?),
        "dump_malloc_stats" => o.set_dump_malloc_stats(boolean(name, v)?),
        "unordered_write" => o.set_unordered_write(boolean(name, v)?),
        "allow_concurrent_memtable_write" => o.set_allow_concurrent_memtable_write(boolean(name, v)?),
        "enable_pipelined_write" => o.set_enable_pipelined_write(boolean(name, v)?),
        "enable_write_thread_adaptive_yield" => o.set_enable_write_thread_adaptive_yield(boolean(name, v)?),
        "write_thread_max_yield_usec" => o.set_write_thread_max_yield_usec(number(name, v)?),
        "write_thread_slow_yield_usec" => o.set_write_thread_slow_yield_usec(number(name, v)?),
        "delayed_write_rate" => o.set_delayed_write_rate(number(name, v)?),
        "db_write_buffer_size" => o.set_db_write_buffer_size(number(name, v)?),
        "compaction_readahead_size" => o.set_compaction_readahead_size(number(name, v)?),
        "table_cache_numshardbits" => o.set_table_cache_num_shard_bits(number(name, v)?),
        "write_dbid_to_manifest" => o.set_write_dbid_to_manifest(boolean(name, v)?),
        "track_and_verify_wals_in_manifest" => o.set_track_and_verify_wals_in_manifest(boolean(name, v)?),
        "max_total_wal_size" => o.set_max_total_wal_size(number(name, v)?),
        "max_subcompactions" => o.set_max_subcompactions(number(name, v)?),
        "use_direct_reads" => o.set_use_direct_reads(boolean(name, v)?),
        "use_direct_io_for_flush_and_compaction" => {
            o.set_use_direct_io_for_flush_and_compaction(boolean(name, v)?)
        }
        "atomic_flush" => o.set_atomic_flush(boolean(name, v)?),
        "avoid_unnecessary_blocking_io" => o.set_avoid_unnecessary_blocking_io(boolean(name, v)?),
        "manual_wal_flush" => o.set_manual_wal_flush(boolean(name, v)?),
        "WAL_ttl_seconds" => o.set_wal_ttl_seconds(number(name, v)?),
        "WAL_size_limit_MB" => o.set_wal_size_limit_mb(number(name, v)?),
        "max_log_file_size" => o.set_max_log_file_size(number(name, v)?),
        "log_file_time_to_roll" => o.set_log_file_time_to_roll(number(name, v)?),
        "recycle_log_file_num" => o.set_recycle_log_file_num(number(name, v)?),
        "skip_stats_update_on_db_open" => o.set_skip_stats_update_on_db_open(boolean(name, v)?),
        "advise_random_on_open" => o.set_advise_random_on_open(boolean(name, v)?),
        "is_fd_close_on_exec" => o.set_is_fd_close_on_exec(boolean(name, v)?),
        "allow_mmap_reads" => o.set_allow_mmap_reads(boolean(name, v)?),
        "allow_mmap_writes" => o.set_allow_mmap_writes(boolean(name, v)?),
        "manifest_preallocation_size" => o.set_manifest_preallocation_size(number(name, v)?),
        "delete_obsolete_files_period_micros" => o.set_delete_obsolete_files_period_micros(number(name, v)?),
        "max_file_opening_threads" => o.set_max_file_opening_threads(number(name, v)?),
        "use_adaptive_mutex" => o.set_use_adaptive_mutex(boolean(name, v)?),
        "allow_ingest_behind" => o.set_allow_ingest_behind(boolean(name, v)?),
        "info_log_level" => o.set_log_level(match v {
            "DEBUG_LEVEL" => LogLevel::Debug,
            "INFO_LEVEL" => LogLevel::Info,
            "WARN_LEVEL" => LogLevel::Warn,
            "ERROR_LEVEL" => LogLevel::Error,
            "FATAL_LEVEL" => LogLevel::Fatal,
            "HEADER_LEVEL" => LogLevel::Header,
            _ => return Err(bad_value(name, v)),
        }),
        "wal_dir" if !v.is_empty() => o.set_wal_dir(options_file::unescape_option_string(v)),
        "db_log_dir" if !v.is_empty() => o.set_db_log_dir(options_file::unescape_option_string(v)),
        _ => return Ok(false),
    }
    Ok(true)
}

/// Applies one CFOptions entry Shale builds that `set_options` cannot change; false when
/// Shale has no setter for it.
fn apply_cf(o: &mut Options, name: &str, v: &str) -> Result<bool> {
    match name {
        // The skip list and the hash memtables, as RocksDB rebuilds these built-in
        // factories from their ids; another factory is not applied.
        "memtable_factory" => match crate::options::MemtableRep::parse(name, v)? {
            Some(rep) => o.memtable_rep = rep,
            None => return Ok(false),
        },
        "num_levels" => o.set_num_levels(number(name, v)?),
        "min_write_buffer_number_to_merge" => o.set_min_write_buffer_number_to_merge(number(name, v)?),
        "level_compaction_dynamic_level_bytes" => {
            o.set_level_compaction_dynamic_level_bytes(boolean(name, v)?)
        }
        "compaction_style" => o.set_compaction_style(match v {
            "kCompactionStyleLevel" => DBCompactionStyle::Level,
            "kCompactionStyleUniversal" => DBCompactionStyle::Universal,
            "kCompactionStyleFIFO" => DBCompactionStyle::Fifo,
            _ => return Ok(false),
        }),
        // kDisableCompressionOption: bottommost levels use `compression` (Shale's only way).
        "bottommost_compression" if v == "kDisableCompressionOption" => {}
        "bottommost_compression" => o.set_bottommost_compression_type(compression_type(name, v)?),
        "compression_opts" => {
            let (mut window_bits, mut level, mut strategy, mut max_dict) = (-14, 32767, 0, 0);
            for (k, x) in crate::db::dyn_options::struct_fields(name, v)? {
                match k {
                    "window_bits" => window_bits = number(k, x)?,
                    "level" => level = number(k, x)?,
                    "strategy" => strategy = number(k, x)?,
                    "max_dict_bytes" => max_dict = number(k, x)?,
                    "zstd_max_train_bytes" => o.set_zstd_max_train_bytes(number(k, x)?),
                    "parallel_threads" => o.set_compression_options_parallel_threads(number(k, x)?),
                    "max_dict_buffer_bytes" => o.compression_opts.max_dict_buffer_bytes = number(k, x)?,
                    "use_zstd_dict_trainer" => o.compression_opts.use_zstd_dict_trainer = boolean(k, x)?,
                    // Only bottommost_compression_opts reads `enabled`.
                    "enabled" => {
                        boolean(k, x)?;
                    }
                    // RocksDB 8+: no block checksum inside the compressed data (Shale has
                    // none), and keep a block compressed below 7/8 of its size (Shale's rule).
                    "checksum" if !boolean(k, x)? => {}
                    "max_compressed_bytes_per_kb" if number::<u32>(k, x)? == 896 => {}
                    "checksum" | "max_compressed_bytes_per_kb" => {
                        return Err(Error::not_supported(format!(
                            "load_latest: option compression_opts.{k}={x} is not supported by Shale"
                        )))
                    }
                    _ => {
                        return Err(Error::invalid_argument(format!(
                            "Unrecognized option compression_opts.{k}"
                        )))
                    }
                }
            }
            o.set_compression_options(window_bits, level, strategy, max_dict);
        }
        "memtable_prefix_bloom_size_ratio" => o.set_memtable_prefix_bloom_ratio(number(name, v)?),
        "memtable_whole_key_filtering" => o.set_memtable_whole_key_filtering(boolean(name, v)?),
        "enable_blob_files" => o.set_enable_blob_files(boolean(name, v)?),
        "min_blob_size" => o.set_min_blob_size(number(name, v)?),
        "blob_file_size" => o.set_blob_file_size(number(name, v)?),
        "blob_compression_type" => o.set_blob_compression_type(compression_type(name, v)?),
        "enable_blob_garbage_collection" => o.set_enable_blob_gc(boolean(name, v)?),
        "blob_garbage_collection_age_cutoff" => o.set_blob_gc_age_cutoff(number(name, v)?),
        "blob_garbage_collection_force_threshold" => o.set_blob_gc_force_threshold(number(name, v)?),
        "blob_compaction_readahead_size" => o.set_blob_compaction_readahead_size(number(name, v)?),
        "max_successive_merges" => o.set_max_successive_merges(number(name, v)?),
        "inplace_update_support" => o.set_inplace_update_support(boolean(name, v)?),
        "inplace_update_num_locks" => o.set_inplace_update_locks(number(name, v)?),
        "arena_block_size" => o.set_arena_block_size(number(name, v)?),
        "memtable_huge_page_size" => o.set_memtable_huge_page_size(number(name, v)?),
        "bloom_locality" => o.set_bloom_locality(number(name, v)?),
        "max_sequential_skip_in_iterations" => o.set_max_sequential_skip_in_iterations(number(name, v)?),
        "optimize_filters_for_hits" => o.set_optimize_filters_for_hits(boolean(name, v)?),
        "max_write_buffer_size_to_maintain" => o.set_max_write_buffer_size_to_maintain(number(name, v)?),
        _ => return Ok(false),
    }
    Ok(true)
}

/// Applies one BlockBasedTable entry; false when Shale has no setter for it.
pub(crate) fn apply_table(t: &mut BlockBasedOptions, name: &str, v: &str) -> Result<bool> {
    match name {
        "block_size" => t.set_block_size(number(name, v)?),
        "block_restart_interval" => t.set_block_restart_interval(number(name, v)?),
        "index_block_restart_interval" => t.set_index_block_restart_interval(number(name, v)?),
        "format_version" => t.set_format_version(number(name, v)?),
        "whole_key_filtering" => t.set_whole_key_filtering(boolean(name, v)?),
        "no_block_cache" => t.no_block_cache = boolean(name, v)?,
        "cache_index_and_filter_blocks" => t.set_cache_index_and_filter_blocks(boolean(name, v)?),
        "cache_index_and_filter_blocks_with_high_priority" => {
            t.set_cache_index_and_filter_blocks_with_high_priority(boolean(name, v)?)
        }
        "pin_l0_filter_and_index_blocks_in_cache" => {
            t.set_pin_l0_filter_and_index_blocks_in_cache(boolean(name, v)?)
        }
        "pin_top_level_index_and_filter" => t.set_pin_top_level_index_and_filter(boolean(name, v)?),
        "optimize_filters_for_memory" => t.set_optimize_filters_for_memory(boolean(name, v)?),
        "partition_filters" => t.set_partition_filters(boolean(name, v)?),
        "metadata_block_size" => t.set_metadata_block_size(number(name, v)?),
        "decouple_partitioned_filters" => t.decouple_partitioned_filters = boolean(name, v)?,
        "data_block_hash_table_util_ratio" => t.set_data_block_hash_ratio(number(name, v)?),
        "data_block_index_type" => t.set_data_block_index_type(match v {
            "kDataBlockBinarySearch" => DataBlockIndexType::BinarySearch,
            "kDataBlockBinaryAndHash" => DataBlockIndexType::BinaryAndHash,
            _ => return Ok(false),
        }),
        "index_type" => t.set_index_type(match v {
            "kBinarySearch" => BlockBasedIndexType::BinarySearch,
            "kHashSearch" => BlockBasedIndexType::HashSearch,
            "kTwoLevelIndexSearch" => BlockBasedIndexType::TwoLevelIndexSearch,
            _ => return Ok(false),
        }),
        "checksum" => t.set_checksum_type(match v {
            "kNoChecksum" => ChecksumType::NoChecksum,
            "kCRC32c" => ChecksumType::CRC32c,
            "kxxHash" => ChecksumType::XXHash,
            "kxxHash64" => ChecksumType::XXHash64,
            "kXXH3" => ChecksumType::XXH3,
            _ => return Err(bad_value(name, v)),
        }),
        "filter_policy" => match v {
            "nullptr" | "" => t.bloom_bits_per_key = None,
            // RocksDB 11's Ribbon policy: "{id=ribbonfilter:<bits>:<level>;bloom_before_level=<level>;}"
            // (the explicit option wins over the id's).
            _ if v.starts_with('{') => {
                let inner = v.trim_start_matches('{').trim_end_matches('}');
                let fields: Vec<(&str, &str)> = inner.split(';').filter_map(|f| f.split_once('=')).collect();
                let field = |k: &str| fields.iter().find(|(n, _)| n.trim() == k).map(|(_, v)| v.trim());
                let id = field("id").ok_or_else(|| bad_value(name, v))?;
                let parts: Vec<&str> = id.split(':').collect();
                let before = match (field("bloom_before_level"), parts.get(2).copied()) {
                    (Some(l), _) | (None, Some(l)) => number(name, l)?,
                    (None, None) => 0,
                };
                match parts.as_slice() {
                    ["ribbonfilter" | "rocksdb.RibbonFilter", bits, ..] => {
                        t.set_hybrid_ribbon_filter(number(name, bits)?, before)
                    }
                    ["bloomfilter" | "rocksdb.BloomFilter", bits, ..] => {
                        t.set_bloom_filter(number(name, bits)?, false)
                    }
                    _ => return Ok(false),
                }
            }
            _ => {
                // "bloomfilter:<bits>:<use_block_based>", RocksDB's text of its Bloom policy;
                // "ribbonfilter:<bits>:<bloom_before_level>" for Ribbon.
                let parts: Vec<&str> = v.split(':').collect();
                match parts.as_slice() {
                    ["bloomfilter", bits, block_based] => {
                        t.set_bloom_filter(number(name, bits)?, boolean(name, block_based)?)
                    }
                    ["bloomfilter", bits] => t.set_bloom_filter(number(name, bits)?, false),
                    ["ribbonfilter", bits, before] => {
                        t.set_hybrid_ribbon_filter(number(name, bits)?, number(name, before)?)
                    }
                    ["ribbonfilter", bits] => t.set_ribbon_filter(number(name, bits)?),
                    _ => return Ok(false),
                }
            }
        },
        // Which keys the index stores for its blocks (`table/builder.rs` IndexShorteningMode).
        "index_shortening" => {
            use crate::table::builder::IndexShorteningMode;
            t.index_shortening = match v {
                "kNoShortening" => IndexShorteningMode::NoShortening,
                "kShortenSeparators" => IndexShorteningMode::ShortenSeparators,
                "kShortenSeparatorsAndSuccessor" => IndexShorteningMode::ShortenSeparatorsAndSuccessor,
                _ => return Err(bad_value(name, v)),
            }
        }
        "metadata_cache_options" => {
            let tier = |k: &str, x: &str| -> Result<BlockBasedTablePinningTier> {
                Ok(match x {
                    "kFallback" => BlockBasedTablePinningTier::Fallback,
                    "kNone" => BlockBasedTablePinningTier::None,
                    "kFlushedAndSimilar" => BlockBasedTablePinningTier::FlushAndSimilar,
                    "kAll" => BlockBasedTablePinningTier::All,
                    _ => return Err(bad_value(k, x)),
                })
            };
            for (k, x) in crate::db::dyn_options::struct_fields(name, v)? {
                match k {
                    "top_level_index_pinning" => t.set_top_level_index_pinning_tier(tier(k, x)?),
                    "partition_pinning" => t.set_partition_pinning_tier(tier(k, x)?),
                    "unpartitioned_pinning" => t.set_unpartitioned_pinning_tier(tier(k, x)?),
                    _ => return Err(Error::invalid_argument(format!("Unrecognized option {name}.{k}"))),
                }
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}
