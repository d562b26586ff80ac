//! Dynamic column-family options: rust-rocksdb's `set_options` / `set_options_cf`, RocksDB's
//! `DB::SetOptions`.
//!
//! A family's settings live in `CfHandle::settings` (`cf_settings.rs`): the engine's
//! `CfConfig`, which the database reads, and beside it the `Options` it was built from
//! ([`cf_options`]), which only the facade reads. `set_options` applies the changes to a copy
//! of the `Options`, builds the configuration from it, and publishes the pair at once.
//!
//! What changes take effect (the rest of RocksDB's mutable options answer NotSupported
//! naming the option; names that are not options, or options that cannot change, answer
//! InvalidArgument naming them):
//! - `write_buffer_size`: the active memtable is full at the new size (the write leader reads
//!   it from `WalState::mems`, republished here).
//! - `arena_block_size`: memtables made from then on take arena blocks of the new size.
//! - `max_write_buffer_number`, `level0_slowdown_writes_trigger`,
//!   `level0_stop_writes_trigger`, `soft/hard_pending_compaction_bytes_limit`: the write-stall
//!   condition is recomputed at once.
//! - `disable_auto_compactions`, `level0_file_num_compaction_trigger`,
//!   `max_bytes_for_level_base`, `max_bytes_for_level_multiplier`, `max_compaction_bytes`:
//!   read by the compaction picker, which is asked again at once.
//! - `target_file_size_base`, `target_file_size_multiplier`, `compression`: the next table
//!   written uses them.
//! - `paranoid_file_checks`: every table a flush or compaction writes is read back whole
//!   (block checksums, key order, entry count) before the MANIFEST names it.
//! - `report_bg_io_stats`: flush and compaction lines in LOG carry the time spent writing.
//! - `max_sequential_skip_in_iterations`: iterators created afterwards reseek after that
//!   many hidden versions of one key.
//! - `ttl`, `periodic_compaction_seconds`: the picker's age-based compactions use them from
//!   the next pick (idle compaction threads look about once a second).
//! - `compaction_options_universal={size_ratio=..;...}`, `compaction_options_fifo={...}`: the
//!   fields named change, the others keep their values; the universal and FIFO pickers use
//!   them from the next pick (fields Shale does not build accept only their default).
//!   Universal's `allow_trivial_move`: the next pick whose files do not overlap moves them
//!   unchanged (`compaction/universal.rs`). FIFO's `ttl` is deprecated in RocksDB 11.8.1:
//!   any value, no effect. FIFO's `max_data_files_size`, `use_kv_ratio_compaction`,
//!   `file_temperature_age_thresholds` (checked as RocksDB's ValidateOptions: FIFO only, one
//!   level, ages increasing), `allow_trivial_copy_when_change_temperature` and
//!   `trivial_copy_buffer_size`: the next pick and the compaction it starts use them
//!   (`compaction/fifo.rs`, `db/fifo_copy.rs`).
//! - BlobDB's `enable_blob_files`, `min_blob_size`, `blob_file_size`,
//!   `blob_compression_type`, `enable_blob_garbage_collection`,
//!   `blob_garbage_collection_age_cutoff`, `blob_garbage_collection_force_threshold`,
//!   `blob_compaction_readahead_size`: read by each flush and compaction when it starts;
//!   `prepopulate_blob_cache`: read by each flush.
//! - `uncache_aggressiveness`: read when a table leaves the database (`versions.rs`).
//! - `default_write_temperature`, `last_level_temperature`: recorded for the tables the next
//!   flushes and compactions write (`CfConfig::output_temperature`).
//!
//! - `sample_for_compression`: tables written from then on sample their data blocks with
//!   LZ4 and ZSTD and record the estimated sizes.
//! - `memtable_max_range_deletions`: memtables made from then on are full at that many range
//!   deletions (`MemTable::range_deletions_full`, checked by the write path).
//! - `blob_file_starting_level`: the next flush or compaction writes blob files only if its
//!   output level is at least this (`flush.rs::blob_write_options`).
//! - `check_flush_compaction_key_order`: deprecated in RocksDB 11.8.1; accepted, no effect.
//! - `memtable_protection_bytes_per_key`, `paranoid_memory_checks`,
//!   `memtable_prefix_bloom_size_ratio`, `memtable_whole_key_filtering`: memtables made from
//!   then on take them (the family's config is read at each switch).
//! - `bottommost_file_compaction_delay`: the picker's next look at bottommost files uses it.
//! - `target_file_size_is_upper_bound`: compactions from then on cut outputs counting
//!   their estimated tail.
//! - `memtable_op_scan_flush_trigger`, `memtable_avg_op_scan_flush_trigger`: iterators
//!   made from then on count the hidden active-memtable entries they pass.
//! - `min_tombstones_for_range_conversion`: iterators made from then on convert runs of
//!   point tombstones into range tombstones in the active memtable (`db_iter.rs` RangeConv).
//! - `verify_output_flags`: compactions from then on check their outputs as the flags say
//!   (`verify_output.rs`).
//! - `compression_opts={level=..;...}`: the fields named change, the others keep their
//!   values; tables written from then on compress with them.
//! - `block_based_table_factory={block_size=..;...}`: any block-based table option, as
//!   RocksDB's `TableFactoryParseFn` clones the factory with the fields named changed.
//!   Flushes and compactions from then on write tables with them, iterators made from then
//!   on read ahead by them, and table readers opened from then on take the block cache
//!   (`block_cache`, `no_block_cache`), the index and filter caching and pinning choices,
//!   `index_block_search_type` and `read_amp_bytes_per_bit`; readers already open keep
//!   theirs, as RocksDB's do.
//! - `block_protection_bytes_per_key`: table readers opened from then on (new tables, and
//!   tables the table cache opens again) protect the blocks they parse; readers already
//!   open keep theirs, as RocksDB's (`TableCache::GetTableReader` takes the value at open).
//! - `memtable_verify_per_key_checksum_on_seek` (and RocksDB's misspelled alias
//!   `memtable_veirfy_per_key_checksum_on_seek`): memtables made from then on check every
//!   entry a search passes (with `memtable_protection_bytes_per_key` above 0).
//! - `plain_table_factory={user_key_len=..;...}` on a PlainTable family: the plain table
//!   options named change; flushes and compactions from then on write tables with them.
//! - `table_factory=BlockBasedTable|PlainTable|CuckooTable` (or `{id=<name>;field=..;}`):
//!   RocksDB's `TableFactoryParseFn` makes a new factory of that name with RocksDB's default
//!   options and the fields named (`options_table.rs::apply_table_factory_value`); the
//!   family's previous table options are not kept. Flushes and compactions from then on write
//!   tables of the new format; the tables already written keep being read (each reader is
//!   picked by the table's magic number, `table/any.rs`), and a compaction rewrites them in
//!   the new format. As RocksDB, the `ttl` and `periodic_compaction_seconds` the family was
//!   sanitized to at open stay (`keep_sanitized_ages`), and ValidateOptions' checks apply: a
//!   block-based family (ttl 30 days) switches to PlainTable only with `ttl=0` in the same
//!   call. RocksDB 11.8.1 reads every table through the family's current factory, so when
//!   it reopens a database holding tables of both formats it fails with Corruption ("Bad
//!   table magic number", `tests/interop/table_factory_switch.rs`); Shale reads each table
//!   by its own format.
//! - `prefix_extractor`: memtables and tables made from then on use the new extractor; reads
//!   consult a table's or memtable's prefix filter only while its extractor is the one in
//!   force (helper cfblob).
//! - `blob_compression_opts={level=..;...}`: the next flush or compaction compresses blobs
//!   with the fields named changed, the others kept.
//! - `compression_manager`: tables written from then on record the built-in manager
//!   ("BuiltinV2") in their compression options, or none.
//!
//! The OPTIONS file is then rewritten, as RocksDB does after each SetOptions. `set_db_options`
//! rewrites it only when a value changes (RocksDB's `MutableDBOptionsAreEqual`).

use std::sync::Arc;

use super::cf::CfHandle;
use super::cf_settings::LayerRecord;
use super::DbInner;
use crate::error::{Error, Result};
use crate::options::Options;
use crate::options_table::bad_value;
use shale_engine::config::CfConfig;

/// A family's settings made from rust-rocksdb's `Options`: the engine's configuration, and
/// the `Options` themselves as the record the facade keeps beside it (`cf_settings.rs`).
pub(crate) fn settings_of(opts: Options) -> (CfConfig, LayerRecord) {
    (opts.engine_cf_config(), Arc::new(opts))
}

/// RocksDB's SanitizeCfOptions values that then stay in the family's mutable options:
/// `max_compaction_bytes` 0 becomes 25 target files (unless FIFO with
/// `use_kv_ratio_compaction` keeps it 0) once, when the family opens or is created; a later
/// `set_options` does not sanitize again (RocksDB's SetOptions builds on the sanitized
/// options), so turning `use_kv_ratio_compaction` on or changing `target_file_size_base`
/// keeps the value the family opened with.
pub(crate) fn sanitized_at_open(mut opts: Options) -> Options {
    opts.max_compaction_bytes = opts.max_compaction_bytes();
    opts.max_compaction_bytes_sanitized = true;
    opts
}

/// The user's options in force of family `h`, for the facade's own work (the OPTIONS file,
/// the info LOG's dump, `set_options`' copy): the database reads `h.config()`.
pub(crate) fn cf_options(h: &CfHandle) -> Result<&Options> {
    h.settings.record().downcast_ref::<Options>().ok_or_else(|| {
        Error::invalid_argument(format!(
            "column family {}: its settings hold no rust-rocksdb Options (made by another layer)",
            h.name
        ))
    })
}

/// Column-family options that exist but cannot change while the database is open, besides
/// the option table's immutable rows.
const NOT_CHANGEABLE: &[&str] = &["cf_paths"];

/// Applies one RocksDB option to `o` by its row in the option table (see the module comment
/// for what each does).
pub(crate) fn apply_mutable(o: &mut Options, name: &str, v: &str) -> Result<()> {
    use crate::options_table::{find, Mutable, Section};
    if name == "block_based_table_factory" {
        return apply_table_factory(o, v);
    }
    match find(Section::Cf, name) {
        Some(r) if r.mutable == Mutable::Yes => {
            if !r.set(o, v)? {
                return Err(bad_value(name, v));
            }
        }
        Some(_) => return Err(Error::invalid_argument(format!("Option not changeable: {name}"))),
        None if NOT_CHANGEABLE.contains(&name) => {
            return Err(Error::invalid_argument(format!("Option not changeable: {name}")))
        }
        None => return Err(Error::invalid_argument(format!("Could not find option: {name}"))),
    }
    Ok(())
}

/// `block_based_table_factory={name=value;...}` (RocksDB's `TableFactoryParseFn`): the
/// family's block-based table options with the fields named changed, the others kept.
/// Tables written from then on are built with them; iterators made from then on read ahead
/// by them.
fn apply_table_factory(o: &mut Options, v: &str) -> Result<()> {
    use crate::options_table::{find, struct_fields, Section};
    let name = "block_based_table_factory";
    if o.table_format != crate::table::TableFormat::BlockBased {
        return Err(Error::invalid_argument(format!(
            "Cannot modify {} as {name}",
            o.table_format.factory_name()
        )));
    }
    for (k, x) in struct_fields(name, v)? {
        match find(Section::Table, k) {
            Some(r) => {
                if !r.set_table(&mut o.table, x)? {
                    return Err(bad_value(&format!("{name}.{k}"), x));
                }
            }
            None => return Err(Error::invalid_argument(format!("Could not find option: {name}.{k}"))),
        }
    }
    Ok(())
}

/// RocksDB's SetOptions on one family: all of `pairs` or none of them take effect.
pub(crate) fn set_cf_options(inner: &DbInner, handle: &Arc<CfHandle>, pairs: &[(&str, &str)]) -> Result<()> {
    {
        let this = inner;
        this.check_writable()?;
        let old = cf_options(handle)?;
        let mut new = old.clone();
        for (k, v) in pairs {
            apply_mutable(&mut new, k, v)?;
        }
        keep_sanitized_ages(old, &mut new);
        new.check_supported()?;
        new.check_validate_options()?;
        if new.level0_stop_writes_trigger < new.level0_slowdown_writes_trigger {
            new.level0_stop_writes_trigger = new.level0_slowdown_writes_trigger;
        }
        let (config, record) = settings_of(new);
        this.publish_cf_settings(handle, config, record);
        let listed: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        this.info_log.log(format_args!(
            "SetOptions() on column family [{}], inputs: {}; succeeded",
            handle.name,
            listed.join(", ")
        ));
        this.hooks.write_options_file(this)
    }
}

use crate::options::AGE_DEFAULT;

/// RocksDB's SanitizeCfOptions turns the default `ttl` and `periodic_compaction_seconds` into
/// values that depend on the table factory (30 days for block-based tables, 0 otherwise) once,
/// when the family opens; SetOptions does not sanitize again. Shale keeps the default and
/// reads it by the factory in force, so when `table_factory` changes, the values the family
/// had are written into `new` (those still at the default): a block-based family switched to
/// PlainTable keeps its 30 days (and is refused below), a PlainTable family switched to
/// BlockBasedTable keeps 0.
fn keep_sanitized_ages(old: &Options, new: &mut Options) {
    if std::mem::discriminant(&old.table_format) == std::mem::discriminant(&new.table_format) {
        return;
    }
    if new.ttl == AGE_DEFAULT {
        new.ttl = old.sanitized_ttl();
    }
    if new.periodic_compaction_seconds == AGE_DEFAULT {
        new.periodic_compaction_seconds = old.age_compaction_seconds().1;
    }
}

/// The mutable DB options `set_db_options` applies on an open database (see
/// `shale_engine::db::live_options` for where each acts; `daily_offpeak_time_utc` reaches
/// every family's settings, `fast_sst_open` is kept and written, with no effect on Shale's
/// file systems as on RocksDB's posix one).
const DB_OPTIONS_BUILT: &[&str] = &[
    "max_total_wal_size",
    "delayed_write_rate",
    "max_subcompactions",
    "compaction_readahead_size",
    "stats_history_buffer_size",
    "avoid_flush_during_shutdown",
    "verify_manifest_content_on_close",
    "optimize_manifest_for_recovery",
    "max_manifest_file_size",
    "max_manifest_space_amp_pct",
    "delete_obsolete_files_period_micros",
    "daily_offpeak_time_utc",
    "fast_sst_open",
    "stats_dump_period_sec",
    "stats_persist_period_sec",
    "max_compaction_trigger_wakeup_seconds",
    "max_background_jobs",
    "max_background_compactions",
    "max_background_flushes",
    "max_open_files",
    "bytes_per_sync",
    "wal_bytes_per_sync",
    "strict_bytes_per_sync",
    "writable_file_max_buffer_size",
    "manifest_preallocation_size",
];

/// RocksDB 11.8.1's deprecated mutable DB options: any value is accepted and changes nothing
/// (`OptionVerificationType::kDeprecated`).
const DB_OPTIONS_DEPRECATED: &[&str] = &["allow_os_buffer", "base_background_compactions"];

/// `DB::set_db_options`: the DB-wide options are the opening layer's, so its hooks apply
/// the change (the facade's [`RocksOptionsHooks`](super::options_writer::RocksOptionsHooks)
/// call [`apply_db_options`]).
pub(crate) fn set_db_options(inner: &Arc<DbInner>, pairs: &[(&str, &str)]) -> Result<()> {
    inner.hooks.set_db_options(inner, pairs)
}

/// RocksDB's SetDBOptions: all of `pairs` or none of them take effect (every value is parsed
/// and checked before any is applied). The options of [`DB_OPTIONS_BUILT`] change live;
/// options that cannot change answer InvalidArgument, as RocksDB's. As RocksDB, a
/// `bytes_per_sync` of 0 becomes 1 MiB at every call. The OPTIONS file written after holds
/// the values in force.
pub(crate) fn apply_db_options(
    inner: &Arc<DbInner>,
    hooks: &super::options_writer::RocksOptionsHooks,
    pairs: &[(&str, &str)],
) -> Result<()> {
    use crate::options_table::{find, Mutable, Section};
    use shale_engine::db::live_options::DbOptionsUpdate;
    if pairs.is_empty() {
        return Err(Error::invalid_argument("empty input"));
    }
    inner.check_writable()?;
    let current = hooks.db_options();
    let mut new = current.clone();
    for (name, v) in pairs {
        match find(Section::Db, name) {
            Some(r) if r.mutable == Mutable::Yes && DB_OPTIONS_BUILT.contains(name) => {
                if !r.set(&mut new, v)? {
                    return Err(bad_value(name, v));
                }
            }
            Some(r) if r.mutable == Mutable::Yes && DB_OPTIONS_DEPRECATED.contains(name) => {
                r.set(&mut new, v)?;
            }
            Some(r) if r.mutable == Mutable::Yes || r.mutable == Mutable::NotBuilt => {
                return Err(Error::not_supported(format!(
                    "set_db_options: option {name} cannot be changed by Shale yet (issue 33)"
                )))
            }
            Some(_) => return Err(Error::invalid_argument(format!("Option not changeable: {name}"))),
            None => return Err(Error::invalid_argument(format!("Unrecognized option: {name}"))),
        }
    }
    // RocksDB's SetDBOptions: `bytes_per_sync` 0 becomes 1 MiB whatever was set.
    if new.bytes_per_sync == 0 {
        new.bytes_per_sync = 1 << 20;
    }
    // RocksDB's MutableDBOptionsAreEqual: values that change nothing leave the database as it
    // is (no validation, no new OPTIONS file) and answer OK.
    let unchanged = crate::options_table::rows(Section::Db)
        .filter(|r| r.mutable == Mutable::Yes)
        .all(|r| r.get(&current) == r.get(&new));
    if unchanged {
        inner
            .info_log
            .log(format_args!("SetDBOptions(), input option value is not changed, skipping updating."));
        return Ok(());
    }
    // RocksDB's ValidateOptions of the DB options set.
    new.dbmisc.validate()?;
    if new.use_direct_io_for_flush_and_compaction && new.writable_file_max_buffer_size == 0 {
        return Err(Error::invalid_argument("writes in direct IO require writable_file_max_buffer_size > 0"));
    }
    let set = |name: &str| pairs.iter().any(|(k, _)| *k == name);
    let pick = |name: &str| set(name).then_some(());
    // ... and each family's ColumnFamilyData::ValidateOptions against them.
    if new.max_open_files != -1 {
        let handles: Vec<Arc<CfHandle>> = inner.lock_state().cfs.values().map(|c| c.handle.clone()).collect();
        for h in &handles {
            let o = cf_options(h)?;
            if o.compaction_style == crate::DBCompactionStyle::Fifo && o.age_compaction_seconds().0 > 0 {
                return Err(Error::not_supported("FIFO compaction only supported with max_open_files = -1."));
            }
        }
    }
    let bg = ["max_background_jobs", "max_background_compactions", "max_background_flushes"];
    let u = DbOptionsUpdate {
        background_job_limits: bg.iter().any(|n| set(n)).then(|| new.background_job_limits()),
        max_open_files: pick("max_open_files").map(|_| new.max_open_files),
        bytes_per_sync: Some(new.sanitized_bytes_per_sync()),
        wal_bytes_per_sync: pick("wal_bytes_per_sync").map(|_| new.wal_bytes_per_sync),
        strict_bytes_per_sync: pick("strict_bytes_per_sync").map(|_| new.dbopt.strict_bytes_per_sync),
        writable_file_max_buffer_size: pick("writable_file_max_buffer_size")
            .map(|_| new.writable_file_max_buffer_size),
        manifest_preallocation_size: pick("manifest_preallocation_size")
            .map(|_| new.manifest_preallocation_size),
        max_total_wal_size: pick("max_total_wal_size").map(|_| new.max_total_wal_size),
        // RocksDB's `set_max_delayed_write_rate`: the value as given (0 counts as 1).
        delayed_write_rate: pick("delayed_write_rate").map(|_| new.delayed_write_rate),
        max_subcompactions: pick("max_subcompactions").map(|_| new.max_subcompactions),
        compaction_readahead_size: pick("compaction_readahead_size").map(|_| new.compaction_readahead_size),
        stats_history_buffer_size: pick("stats_history_buffer_size")
            .map(|_| new.stats_history_buffer_size as u64),
        avoid_flush_during_shutdown: pick("avoid_flush_during_shutdown")
            .map(|_| new.avoid_flush_during_shutdown),
        verify_manifest_content_on_close: pick("verify_manifest_content_on_close")
            .map(|_| new.mfst.verify_manifest_content_on_close),
        optimize_manifest_for_recovery: pick("optimize_manifest_for_recovery")
            .map(|_| new.mfst.optimize_manifest_for_recovery),
        max_manifest_file_size: pick("max_manifest_file_size").map(|_| new.max_manifest_file_size),
        max_manifest_space_amp_pct: pick("max_manifest_space_amp_pct")
            .map(|_| new.dbwal.max_manifest_space_amp_pct),
        delete_obsolete_files_period_micros: pick("delete_obsolete_files_period_micros")
            .map(|_| new.delete_obsolete_files_period_micros),
        stats_dump_period_sec: pick("stats_dump_period_sec").map(|_| new.stats_dump_period_sec),
        stats_persist_period_sec: pick("stats_persist_period_sec").map(|_| new.stats_persist_period_sec),
        max_compaction_trigger_wakeup_seconds: pick("max_compaction_trigger_wakeup_seconds")
            .map(|_| new.dbmisc.max_compaction_trigger_wakeup_seconds),
    };
    inner.set_db_options(&u)?;
    if set("daily_offpeak_time_utc") {
        // RocksDB's `ChangeOffpeakTimeOption`: each family's picker takes the new window
        // (`CfConfig::daily_offpeak`) and is asked again at once.
        let handles: Vec<Arc<CfHandle>> = inner.lock_state().cfs.values().map(|c| c.handle.clone()).collect();
        for h in handles {
            let mut o = cf_options(&h)?.clone();
            o.dbmisc.daily_offpeak_time_utc = new.dbmisc.daily_offpeak_time_utc.clone();
            let (config, record) = settings_of(o);
            inner.publish_cf_settings(&h, config, record);
        }
    }
    hooks.set_db_options(new);
    let listed: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    inner.info_log.log(format_args!("SetDBOptions(), inputs: {}; succeeded", listed.join(", ")));
    inner.hooks.write_options_file(inner)
}

/// Writes a family's options to LOG as RocksDB 11.8.1 does when it opens or creates one:
/// `ColumnFamilyOptions::Dump`'s lines in its order and padding
/// ([`crate::options_table::LOG_CF_LINES`]), the values in force after sanitizing.
pub(crate) fn log_cf_options(
    log: &super::info_log::InfoLog,
    name: &str,
    o: &Options,
    cache: Option<&Arc<crate::cache::BlockCache>>,
) {
    use crate::options_table::{log_value, LOG_CF_LINES};
    if o.compaction_style_none {
        // RocksDB's ColumnFamilyData, building the family's NullCompactionPicker, just
        // before it dumps the options.
        log.log_at(
            shale_engine::config::LogLevel::Warn,
            format_args!(
                "Column family {name} does not use any background compaction. Compactions can only be \
                 done via CompactFiles"
            ),
        );
    }
    log.log(format_args!("--------------- Options for column family [{name}]:"));
    for line in LOG_CF_LINES {
        let label = line.label;
        match line.entry {
            "@persist_ts" => {
                // Printed only for a comparator with timestamps.
                if o.comparator.timestamp_size() > 0 {
                    let row =
                        crate::options_table::LogLine { entry: "persist_user_defined_timestamps", ..*line };
                    log.header(format_args!("{label}: {}", log_value(o, &row).as_deref().unwrap_or("true")));
                }
            }
            "@table_factory" => {
                log.header(format_args!("{label}: {}", o.table_format.factory_name()));
                if o.table_format == crate::table::TableFormat::BlockBased {
                    let table = super::options_dump::table_factory_options(&o.table, cache);
                    log.header(format_args!(
                        "           table_factory options: {}",
                        table.trim_end_matches('\n')
                    ));
                }
            }
            "@compression" => {
                // The codec per level when set, by CompressionTypeToString's name.
                if o.compression_per_level.is_empty() {
                    log.header(format_args!("{label}: {}", o.compression.to_table().name()));
                } else {
                    for (i, c) in o.compression_per_level.iter().enumerate() {
                        log.header(format_args!("       Options.compression[{i}]: {}", c.to_table().name()));
                    }
                }
            }
            "@bottommost_compression" => {
                let bottom = o.bottommost_compression.map_or("Disabled", |c| c.to_table().name());
                log.header(format_args!("{label}: {bottom}"));
            }
            "@addtl" => {
                for (i, m) in o.max_bytes_for_level_multiplier_additional.iter().enumerate() {
                    log.header(format_args!("{label}[{i}]: {m}"));
                }
            }
            "@collectors" => {
                // RocksDB prints each factory's ToString() followed by ';'.
                let collectors: String =
                    o.deletion_collectors.iter().map(|f| f.description() + ";").collect();
                log.header(format_args!("{label}: {collectors}"));
            }
            "@ttl" => log.header(format_args!("{label}: {}", o.age_compaction_seconds().0)),
            "@blob_cache" => {
                if let Some(c) = &o.blob_cache {
                    log.header(format_args!("{label}: {}", super::options_dump::cache_name(c)));
                    let text = super::options_dump::cache_printable_options(c);
                    log.header(format_args!(
                        "                          blob_cache options: {}",
                        text.trim_end_matches('\n')
                    ));
                    let prepopulated = if o.blob.prepopulate_cache { "flush only" } else { "disabled" };
                    log.header(format_args!(
                        "                          blob_cache prepopulated: {prepopulated}"
                    ));
                }
            }
            _ => {
                if let Some(v) = log_value(o, line) {
                    log.header(format_args!("{label}: {v}"));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::DBCompressionType;
    use crate::ErrorKind;

    #[test]
    fn values_and_refusals() {
        // Not an option of RocksDB 11.8.1: unknown, as there.
        let kind = |n: &str| apply_mutable(&mut Options::default(), n, "true").unwrap_err().kind();
        assert_eq!(kind("level0_file_num_compaction_trigger_for_ingest"), ErrorKind::InvalidArgument);
        let mut o = Options::default();
        // helper cfblob: the per-key checksum check on seek, by its name and RocksDB's alias.
        apply_mutable(&mut o, "memtable_verify_per_key_checksum_on_seek", "true").unwrap();
        assert!(o.memtable_verify_per_key_checksum_on_seek);
        apply_mutable(&mut o, "memtable_veirfy_per_key_checksum_on_seek", "false").unwrap();
        assert!(!o.memtable_verify_per_key_checksum_on_seek);
        apply_mutable(&mut o, "write_buffer_size", "1048576").unwrap();
        assert_eq!(o.write_buffer_size, 1 << 20);
        apply_mutable(&mut o, "disable_auto_compactions", "true").unwrap();
        assert!(o.disable_auto_compactions);
        apply_mutable(&mut o, "compression", "kZSTD").unwrap();
        assert_eq!(o.compression, DBCompressionType::Zstd);
        let kind = |n: &str, v: &str| apply_mutable(&mut Options::default(), n, v).unwrap_err().kind();
        assert_eq!(kind("disable_auto_compactions", "INVALID_VALUE"), ErrorKind::InvalidArgument);
        assert_eq!(kind("write_buffer_size", "-1"), ErrorKind::InvalidArgument);
        assert_eq!(kind("INVALID_NAME", "1"), ErrorKind::InvalidArgument);
        assert_eq!(kind("num_levels", "3"), ErrorKind::InvalidArgument);
        apply_mutable(&mut o, "arena_block_size", "10000").unwrap();
        assert_eq!(o.sanitized_arena_block_size(), 12288);
        assert_eq!(kind("arena_block_size", "-1"), ErrorKind::InvalidArgument);
        apply_mutable(&mut o, "memtable_huge_page_size", "2097152").unwrap();
        assert_eq!(o.memtable_huge_page_size, 2 << 20);
        apply_mutable(&mut o, "inplace_update_num_locks", "3").unwrap();
        assert_eq!(o.inplace_update_num_locks, 3);
        apply_mutable(&mut o, "ttl", "3600").unwrap();
        assert_eq!(o.age_compaction_seconds(), (3600, 0));
        let e = apply_mutable(&mut o, "INVALID_NAME", "1").unwrap_err();
        assert!(e.to_string().contains("INVALID_NAME"), "{e}");
    }

    /// issue 33: every mutable DB option of the table acts (none answers NotSupported).
    #[test]
    fn every_mutable_db_option_is_built() {
        use crate::options_table::{rows, Mutable, Section};
        for r in rows(Section::Db).filter(|r| r.mutable != Mutable::No) {
            assert!(
                r.mutable == Mutable::Yes
                    && (DB_OPTIONS_BUILT.contains(&r.name) || DB_OPTIONS_DEPRECATED.contains(&r.name)),
                "{} is mutable in RocksDB 11.8.1 but not applied by set_db_options",
                r.name
            );
        }
    }

    #[test]
    fn universal_and_fifo_struct_options() {
        let mut o = Options::default();
        apply_mutable(
            &mut o,
            "compaction_options_universal",
            "{size_ratio=5;stop_style=kCompactionStopStyleSimilarSize;}",
        )
        .unwrap();
        assert_eq!(o.universal.size_ratio, 5);
        assert_eq!(o.universal.stop_style, shale_engine::config::StopStyle::Similar);
        assert_eq!(o.universal.min_merge_width, 2, "fields not named keep their values");
        apply_mutable(
            &mut o,
            "compaction_options_fifo",
            "{max_table_files_size=1024;allow_compaction=true;}",
        )
        .unwrap();
        assert_eq!((o.fifo_max_table_files_size, o.fifo_allow_compaction), (1024, true));
        let kind = |n: &str, v: &str| apply_mutable(&mut Options::default(), n, v).unwrap_err().kind();
        apply_mutable(&mut o, "compaction_options_universal", "{allow_trivial_move=true;}").unwrap();
        assert!(o.universal.allow_trivial_move);
        // Kept and written back (the BOTTOM hand-over reads it, `db/scheduler.rs`).
        assert!(o.universal.reduce_file_locking, "default true");
        apply_mutable(&mut o, "compaction_options_universal", "{reduce_file_locking=false;}").unwrap();
        assert!(!o.universal.reduce_file_locking);
        // rust-rocksdb's setter copies a whole struct, as RocksDB's C API: the field is true again.
        o.set_universal_compaction_options(&crate::UniversalCompactOptions::default());
        assert!(o.universal.reduce_file_locking && !o.universal.allow_trivial_move);
        apply_mutable(&mut o, "compaction_options_fifo", "{ttl=99;}").unwrap();
        assert_eq!(kind("compaction_options_universal", "{no_such=1;}"), ErrorKind::InvalidArgument);
        // Deprecated in RocksDB 11.8.1 yet kept and written (helper cfblob).
        apply_mutable(&mut o, "compaction_options_fifo", "{age_for_warm=10;}").unwrap();
        assert_eq!(o.fifo_age_for_warm, 10);
        // issue 33 (fifo): every field is built.
        apply_mutable(
            &mut o,
            "compaction_options_fifo",
            "{max_data_files_size=10;use_kv_ratio_compaction=true;trivial_copy_buffer_size=8192;\
             allow_trivial_copy_when_change_temperature=true;\
             file_temperature_age_thresholds={{age=5;temperature=kWarm}:{age=9;temperature=kIce}}}",
        )
        .unwrap();
        assert_eq!((o.fifo_max_data_files_size, o.fifo_use_kv_ratio_compaction), (10, true));
        assert_eq!((o.fifo_trivial_copy, o.fifo_trivial_copy_buffer_size), (true, 8192));
        assert_eq!(o.fifo_temperature_ages, vec![(5, 0x08), (9, 0x10)]);
        apply_mutable(&mut o, "compaction_options_fifo", "{file_temperature_age_thresholds=}").unwrap();
        assert!(o.fifo_temperature_ages.is_empty());
        assert_eq!(
            kind("compaction_options_fifo", "{file_temperature_age_thresholds={age=x}}"),
            ErrorKind::InvalidArgument
        );
        assert_eq!(kind("compaction_options_fifo", "{max_table_files_size=x;}"), ErrorKind::InvalidArgument);
    }
}
