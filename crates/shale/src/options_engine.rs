//! From rust-rocksdb's names to the engine's: the database's `Options` become the engine's
//! `DbConfig` (resolved as RocksDB's `SanitizeOptions` leaves them), a family's `Options` the
//! engine's `CfConfig` and `MemTableConfig` (resolved as `SanitizeCfOptions` leaves them),
//! the facade's `MergeOperator` serves as the engine's `MergeOperatorCore`, and a
//! `CompactionDecision` becomes the engine's `FilterDecision`.
//!
//! The `DbConfig` is built once, when the database opens (`db/open.rs::new_inner`, kept as
//! `DbInner::config`); the `CfConfig` when a family's options are published
//! (`db/dyn_options.rs`: at open and at every `set_options`), never per pick.

use std::path::Path;
use std::sync::Arc;

use shale_engine::compaction::filter::{
    CompactionFilterCore, CompactionFilterFactoryCore, FilterContext, SubcompactionFilter,
};
use shale_engine::compaction::job::FilterDecision;
use shale_engine::config::{
    BlobGc, BlobSettings, CfCallbacks, CfConfig, CompactionPri as EnginePri, CompactionStyle, DbConfig,
    MemTableConfig, MetaPinning, Pin,
};
use shale_engine::key::InternalKeyComparator;
use shale_engine::merge::MergeOperatorCore;
use shale_engine::table::TableBuilderOptions;

use crate::compaction_filter::{Decision, FactorySlot, FilterSlot};
use crate::compaction_filter_factory::CompactionFilterContext;
use crate::options::{BlockBasedOptions, Options};
use crate::options_api::CompactionPri;
use crate::DBCompactionStyle;

impl Options {
    /// The table format new tables are written in; a plain table takes the family's
    /// `bloom_locality` (RocksDB's plain table builder reads it from the family's options).
    fn engine_table_format(&self) -> crate::table::TableFormat {
        match &self.table_format {
            crate::table::TableFormat::Plain(p) => {
                crate::table::TableFormat::Plain(crate::table::plain::PlainTableOptions {
                    bloom_locality: self.bloom_locality,
                    ..p.clone()
                })
            }
            other => other.clone(),
        }
    }

    /// What the database at `path` reads of these DB-wide options, sanitized as RocksDB's
    /// `SanitizeOptions` leaves them. The write buffer manager, the TTL and the table
    /// identities are taken as they are: `db/open.rs` sets them on the options first.
    pub(crate) fn engine_db_config(&self, path: &Path) -> DbConfig {
        let (max_background_flushes, max_background_compactions) = self.background_job_limits();
        DbConfig {
            create_if_missing: self.create_if_missing,
            create_missing_column_families: self.create_missing_column_families,
            error_if_exists: self.error_if_exists,
            paranoid_checks: self.paranoid_checks,
            max_open_files: self.max_open_files,
            max_file_opening_threads: self.max_file_opening_threads,
            max_background_flushes,
            max_background_compactions,
            env_threads: self.env_threads,
            env_bottom_threads: self.env_bottom_threads,
            env_lower_cpu: self.env_lower_cpu,
            env_lower_io: self.env_lower_io,
            fs: self.fs.clone(),
            use_fsync: self.use_fsync,
            is_fd_close_on_exec: self.is_fd_close_on_exec,
            use_direct_reads: self.use_direct_reads,
            allow_mmap_reads: self.allow_mmap_reads,
            advise_random_on_open: self.advise_random_on_open,
            use_direct_io_for_flush_and_compaction: self.use_direct_io_for_flush_and_compaction,
            allow_mmap_writes: self.allow_mmap_writes,
            writable_file_max_buffer_size: self.writable_file_max_buffer_size,
            bytes_per_sync: self.sanitized_bytes_per_sync(),
            wal_bytes_per_sync: self.wal_bytes_per_sync,
            wal_dir: self.wal_dir_of(path),
            wal_recovery_mode: self.wal_recovery_mode,
            wal_ttl_seconds: self.wal_ttl_seconds,
            wal_size_limit_mb: self.wal_size_limit_mb,
            recycle_log_file_num: self.sanitized_recycle_log_file_num(),
            wal_compression: self.wal_compression,
            max_total_wal_size: self.max_total_wal_size,
            manual_wal_flush: self.manual_wal_flush,
            track_and_verify_wals_in_manifest: self.track_and_verify_wals_in_manifest,
            enforce_single_del_contracts: self.dbopt.enforce_single_del_contracts,
            allow_data_in_errors: self.dbmisc.allow_data_in_errors,
            daily_offpeak: self.dbmisc.daily_offpeak(),
            max_compaction_trigger_wakeup_seconds: self.dbmisc.max_compaction_trigger_wakeup_seconds,
            open_files_async: self.dbmisc.open_files_async,
            skip_stats_update_on_db_open: self.dbmisc.skip_stats_update_on_db_open,
            best_efforts_recovery: self.dbopt.best_efforts_recovery,
            prefix_seek_opt_in_only: self.dbopt.prefix_seek_opt_in_only,
            strict_bytes_per_sync: self.dbopt.strict_bytes_per_sync,
            flush_verify_memtable_count: self.dbopt.flush_verify_memtable_count,
            compaction_verify_record_count: self.dbopt.compaction_verify_record_count,
            track_and_verify_wals: self.dbwal.track_and_verify_wals,
            verify_sst_unique_id_in_manifest: self.dbwal.verify_sst_unique_id_in_manifest,
            max_manifest_space_amp_pct: self.dbwal.max_manifest_space_amp_pct,
            verify_manifest_content_on_close: self.mfst.verify_manifest_content_on_close,
            reuse_manifest_on_open: self.mfst.reuse_manifest_on_open,
            async_wal_precreate: self.mfst.async_wal_precreate,
            background_close_inactive_wals: self.mfst.background_close_inactive_wals,
            optimize_manifest_for_recovery: self.mfst.optimize_manifest_for_recovery,
            file_checksum_crc32c: self.dbfile.file_checksum_crc32c,
            use_direct_io_for_compaction_reads: self.dbfile.use_direct_io_for_compaction_reads,
            enforce_write_buffer_manager_during_recovery: self
                .dbfile
                .enforce_write_buffer_manager_during_recovery,
            max_manifest_file_size: self.max_manifest_file_size,
            write_dbid_to_manifest: self.write_dbid_to_manifest,
            write_identity_file: self.write_identity_file,
            avoid_flush_during_recovery: self.avoid_flush_during_recovery && !self.allow_2pc,
            avoid_flush_during_shutdown: self.avoid_flush_during_shutdown,
            max_write_batch_group_size_bytes: self.max_write_batch_group_size_bytes,
            db_paths: self.db_paths.clone(),
            atomic_flush: self.atomic_flush,
            allow_2pc: self.allow_2pc,
            allow_ingest_behind: self.allow_ingest_behind,
            two_write_queues: self.two_write_queues,
            enable_pipelined_write: self.enable_pipelined_write,
            unordered_write: self.unordered_write,
            allow_concurrent_memtable_write: self.allow_concurrent_memtable_write,
            enable_write_thread_adaptive_yield: self.enable_write_thread_adaptive_yield,
            write_thread_max_yield_usec: self.write_thread_max_yield_usec,
            write_thread_slow_yield_usec: self.write_thread_slow_yield_usec,
            delayed_write_rate: self.delayed_write_rate(),
            write_buffer_manager: self.write_buffer_manager.clone(),
            rate_limiter: self.rate_limiter.clone(),
            row_cache: self.row_cache.as_ref().map(|c| c.0.clone()),
            statistics: self.statistics.clone(),
            max_subcompactions: self.max_subcompactions,
            compaction_readahead_size: self.compaction_readahead_size,
            avoid_unnecessary_blocking_io: self.avoid_unnecessary_blocking_io,
            delete_obsolete_files_period_micros: self.delete_obsolete_files_period_micros,
            use_adaptive_mutex: self.use_adaptive_mutex,
            max_bgerror_resume_count: self.max_bgerror_resume_count,
            bgerror_resume_retry_interval: self.bgerror_resume_retry_interval,
            stats_dump_period_sec: self.stats_dump_period_sec,
            stats_persist_period_sec: self.stats_persist_period_sec,
            persist_stats_to_disk: self.persist_stats_to_disk,
            stats_history_buffer_size: self.stats_history_buffer_size,
            stats_history_clock: self.stats_history_clock.clone(),
            dump_malloc_stats: self.dump_malloc_stats,
            db_log_dir: self.db_log_dir.clone(),
            info_log_level: self.info_log_level,
            max_log_file_size: self.max_log_file_size as u64,
            log_file_time_to_roll: self.log_file_time_to_roll as u64,
            keep_log_file_num: self.keep_log_file_num,
            ttl_db: self.ttl_db,
            table_ids: self.table_ids.clone(),
            // RocksDB's SanitizeOptions: recovery flushes with two-phase commit.
            log_readahead_size: self.log_readahead_size,
            allow_fallocate: self.allow_fallocate,
            manifest_preallocation_size: self.manifest_preallocation_size,
        }
    }

    /// What the engine's pickers and compaction outputs read of this family.
    pub(crate) fn engine_cf_config(&self) -> CfConfig {
        let (age_ttl, age_periodic) = self.age_compaction_seconds();
        CfConfig {
            style: match self.compaction_style {
                _ if self.compaction_style_none => CompactionStyle::None,
                DBCompactionStyle::Level => CompactionStyle::Level,
                DBCompactionStyle::Universal => CompactionStyle::Universal,
                DBCompactionStyle::Fifo => CompactionStyle::Fifo,
            },
            pri: match self.compaction_pri {
                CompactionPri::ByCompensatedSize => EnginePri::ByCompensatedSize,
                CompactionPri::OldestLargestSeqFirst => EnginePri::OldestLargestSeqFirst,
                CompactionPri::OldestSmallestSeqFirst => EnginePri::OldestSmallestSeqFirst,
                CompactionPri::MinOverlappingRatio => EnginePri::MinOverlappingRatio,
                CompactionPri::RoundRobin => EnginePri::RoundRobin,
            },
            disable_auto_compactions: self.disable_auto_compactions,
            max_output_level: self.max_output_level(),
            level0_file_num_compaction_trigger: self.level0_file_num_compaction_trigger,
            level0_stop_writes_trigger: self.level0_stop_writes_trigger,
            write_buffer_size: self.write_buffer_size,
            max_bytes_for_level_base: self.max_bytes_for_level_base,
            max_bytes_for_level_multiplier: self.max_bytes_for_level_multiplier,
            max_bytes_for_level_multiplier_additional: self.max_bytes_for_level_multiplier_additional.clone(),
            level_compaction_dynamic_level_bytes: self.level_compaction_dynamic_level_bytes,
            max_compaction_bytes: self.max_compaction_bytes(),
            ttl: self.sanitized_ttl(),
            age_ttl,
            age_periodic,
            read_triggered_compaction_threshold: self.read_triggered_compaction_threshold,
            preserve_internal_time_seconds: self.preserve_internal_time_seconds,
            preclude_last_level_data_seconds: self.preclude_last_level_data_seconds,
            daily_offpeak: self.dbmisc.daily_offpeak(),
            bottommost_file_compaction_delay: self.bottommost_file_compaction_delay,
            target_file_size_is_upper_bound: self.target_file_size_is_upper_bound,
            default_temperature: self.default_temperature,
            fifo_max_table_files_size: self.fifo_max_table_files_size,
            fifo_allow_compaction: self.fifo_allow_compaction,
            fifo_max_data_files_size: self.fifo_max_data_files_size,
            fifo_use_kv_ratio_compaction: self.fifo_use_kv_ratio_compaction,
            fifo_temperature_ages: self.fifo_temperature_ages.clone(),
            fifo_trivial_copy: self.fifo_trivial_copy,
            fifo_trivial_copy_buffer_size: self.fifo_trivial_copy_buffer_size,
            universal: self.universal.clone(),
            compression: self.compression.to_table(),
            compression_opts: self.compression_opts.clone(),
            compression_per_level: self.compression_per_level.iter().map(|c| c.to_table()).collect(),
            bottommost_compression: self.bottommost_compression.map(|c| c.to_table()),
            bottommost_compression_opts: self
                .bottommost_compression_opts_enabled
                .then(|| self.bottommost_compression_opts.clone()),
            blob_gc: BlobGc {
                enable: self.blob.enable_gc,
                age_cutoff: self.blob.gc_age_cutoff,
                force_threshold: self.blob.gc_force_threshold,
            },
            uncache_aggressiveness: self.uncache_aggressiveness,
            num_levels: self.num_levels.max(1) as usize,
            max_write_buffer_number: self.max_write_buffer_number,
            level0_slowdown_writes_trigger: self.level0_slowdown_writes_trigger,
            soft_pending_compaction_bytes_limit: self.soft_pending_compaction_bytes_limit,
            hard_pending_compaction_bytes_limit: self.hard_pending_compaction_bytes_limit,
            flush_merge_min: self.flush_merge_min(),
            max_write_buffer_size_to_maintain: self.sanitized_max_write_buffer_size_to_maintain(),
            target_file_size_base: self.target_file_size_base,
            target_file_size_multiplier: self.target_file_size_multiplier,
            ingest_behind: self.ingest_behind_allowed(),
            ttl_db: self.ttl_db,
            paranoid_file_checks: self.paranoid_file_checks,
            memtable_op_scan_flush_trigger: self.memtable_op_scan_flush_trigger,
            memtable_avg_op_scan_flush_trigger: self.memtable_avg_op_scan_flush_trigger,
            min_tombstones_for_range_conversion: self.min_tombstones_for_range_conversion,
            persist_user_defined_timestamps: self.persist_user_defined_timestamps,
            verify_output_flags: self.verify_output_flags,
            memtable_batch_lookup_optimization: self.memtable_batch_lookup_optimization,
            force_consistency_checks: self.force_consistency_checks,
            report_bg_io_stats: self.report_bg_io_stats,
            optimize_filters_for_hits: self.optimize_filters_for_hits,
            disallow_memtable_writes: self.disallow_memtable_writes,
            strict_max_successive_merges: self.strict_max_successive_merges,
            max_sequential_skip_in_iterations: self.max_sequential_skip_in_iterations,
            experimental_mempurge_threshold: self.experimental_mempurge_threshold,
            flush_compression: self.flush_compression().to_table(),
            blob: BlobSettings {
                enable_blob_files: self.blob.enable_blob_files,
                min_blob_size: self.blob.min_blob_size,
                blob_file_size: self.blob.blob_file_size,
                compression: self.blob.compression.to_table(),
                compression_opts: self.blob_compression_opts.codec(),
                file_starting_level: self.blob.file_starting_level,
                compaction_readahead_size: self.blob.compaction_readahead_size,
                prepopulate_cache: self.blob.prepopulate_cache,
                // RocksDB's SanitizeCfOptions: off without blob files, 0 partitions is 1.
                direct_write: self.blob.direct_write && self.blob.enable_blob_files,
                direct_write_partitions: self.blob.direct_write_partitions.max(1),
            },
            blob_cache: self.blob_cache.clone(),
            block_cache: self.table.block_cache.as_ref().map(|c| c.0.clone()),
            no_block_cache: self.table.no_block_cache,
            cf_paths: self.cf_paths.clone(),
            table_format: self.engine_table_format(),
            prefix_extractor: self.prefix_extractor.clone(),
            table: self.table_template(),
            auto_readahead: self.table.auto_readahead,
            meta_pinning: self.table.meta_pinning(),
            index_block_search: self.table.index_block_search_type.to_engine(),
            read_amp_bytes_per_bit: self.table.read_amp_bytes_per_bit,
            block_protection_bytes_per_key: self.block_protection_bytes_per_key,
            prepopulate_block_cache: {
                use crate::options_tbl::PrepopulateBlockCache as P;
                let mode = self.table.prepopulate_block_cache;
                shale_engine::config::PrepopulateBlocks {
                    flushes: mode != P::Disable,
                    compactions: mode == P::FlushAndCompaction,
                }
            },
            memtable: self.memtable_config(),
            callbacks: CfCallbacks {
                merge_operator: self.merge_core_arc(),
                compaction_filter: self.compaction_filter.clone().map(|f| f as Arc<dyn CompactionFilterCore>),
                compaction_filter_factory: self
                    .compaction_filter_factory
                    .clone()
                    .map(|f| f as Arc<dyn CompactionFilterFactoryCore>),
            },
            default_write_temperature: self.default_write_temperature,
            // RocksDB's SanitizeCfOptions: ignored with FIFO compaction.
            last_level_temperature: if self.compaction_style == crate::DBCompactionStyle::Fifo {
                0
            } else {
                self.last_level_temperature
            },
            sst_partitioner: self.sst_partitioner_factory.clone(),
        }
    }

    /// What every table of this family is written with (a flush's codec: compactions choose
    /// their own), less what each table sets itself: its number, times, level and target
    /// size, and the family's id and name.
    fn table_template(&self) -> TableBuilderOptions {
        let t = &self.table;
        let mut b = TableBuilderOptions::new(InternalKeyComparator::new(self.comparator.clone()));
        b.block_size = t.block_size;
        b.block_restart_interval = t.block_restart_interval;
        b.index_block_restart_interval = t.sanitized_index_block_restart_interval();
        b.index_shortening = t.index_shortening;
        b.compression = self.flush_compression().to_table();
        b.compression_opts = self.compression_opts.clone();
        b.builtin_compression_manager = self.builtin_compression_manager;
        b.filter_bits_per_key = t.bloom_bits_per_key;
        b.filter_rounding = t.optimize_filters_for_memory.then(|| t.filter_rounding.clone());
        b.filter_ribbon_before_level = t.ribbon_bloom_before_level;
        b.filter_internal = t.filter_internal;
        b.whole_key_filtering = t.whole_key_filtering;
        b.partitioned_index = t.partitioned_index;
        b.hash_index = t.hash_index;
        b.first_key_index = t.first_key_index;
        // RocksDB turns partitioned filters off without a partitioned index.
        b.partition_filters = t.partitioned_index && t.partition_filters;
        b.metadata_block_size = t.metadata_block_size;
        b.decouple_partitioned_filters = t.decouple_partitioned_filters;
        b.checksum = t.checksum;
        t.apply_layout(&mut b);
        b.sample_for_compression = self.sample_for_compression;
        b.prefix_extractor = self.prefix_extractor.clone();
        b.format_version = t.format_version;
        b.collectors = self.deletion_collectors.clone();
        b.table_format = self.engine_table_format();
        // Flushes are high-priority writes; compactions lower it (`db/compact.rs`).
        b.rate_limiter = self.rate_limiter.clone().map(|l| (l, crate::rate_limiter::IoPriority::High));
        b.rate_limiter_stats = self.rate_limiter.as_ref().and(self.statistics.clone());
        if t.data_block_index_type == crate::DataBlockIndexType::BinaryAndHash {
            b.data_block_hash_ratio = Some(t.data_block_hash_ratio);
        }
        if let Some(ids) = &self.table_ids {
            b.db_id = ids.db_id.clone();
            b.db_session_id = ids.session_id.clone();
            b.db_host_id = ids.host_id.clone();
        }
        if let Some(m) = self.merge_core_arc() {
            b.merge_operator_name = m.name().to_string();
        }
        b
    }

    /// What a new memtable of this family takes.
    pub(crate) fn memtable_config(&self) -> MemTableConfig {
        MemTableConfig {
            arena_block_size: self.sanitized_arena_block_size(),
            write_buffer_manager: self.write_buffer_manager.clone(),
            max_successive_merges: self.max_successive_merges,
            huge_page_size: self.memtable_huge_page_size,
            write_buffer_size: self.write_buffer_size,
            prefix_bloom_ratio: self.memtable_prefix_bloom_ratio,
            whole_key_filtering: self.memtable_whole_key_filtering,
            prefix_extractor: self.prefix_extractor.clone(),
            hash_rep: crate::options::MemtableRep::sanitized(self).is_hash(),
            vector_rep: match crate::options::MemtableRep::sanitized(self) {
                crate::options::MemtableRep::Vector { count } => Some(count),
                _ => None,
            },
            inplace_update_support: self.inplace_update_support,
            inplace_update_num_locks: self.inplace_update_num_locks,
            statistics: self.statistics.clone(),
            max_range_deletions: self.memtable_max_range_deletions,
            // check_supported refused anything but 0, 1, 2, 4 and 8 before a memtable is made.
            protection_bytes_per_key: self.memtable_protection_bytes_per_key.min(8) as u8,
            paranoid_memory_checks: self.paranoid_memory_checks,
            verify_checksum_on_seek: self.memtable_verify_per_key_checksum_on_seek,
            allow_data_in_errors: self.dbmisc.allow_data_in_errors,
            insert_with_hint_prefix_extractor: self.memtable_insert_with_hint_prefix_extractor.clone(),
        }
    }

    /// The family's merge operator, for an iterator that keeps it. In a TTL database it is
    /// wrapped as RocksDB's `DBWithTTL` wraps it (`TtlMergeOperator`).
    pub(crate) fn merge_core_arc(&self) -> Option<Arc<dyn MergeOperatorCore>> {
        let user = self.merge_operator.clone().map(|m| m as Arc<dyn MergeOperatorCore>)?;
        Some(if self.ttl_db.is_some() {
            Arc::new(crate::merge_operator::TtlMergeOperator { user })
        } else {
            user
        })
    }
}

impl BlockBasedOptions {
    /// The pinning tiers with RocksDB's fallbacks resolved: an unpartitioned index and
    /// filter, and partitions, fall back to `pin_l0_filter_and_index_blocks_in_cache`
    /// (flushed-and-similar tables), the top level of a partitioned index or filter to
    /// `pin_top_level_index_and_filter` (all tables).
    fn meta_pinning(&self) -> MetaPinning {
        use crate::BlockBasedTablePinningTier as T;
        let l0_fallback =
            if self.pin_l0_filter_and_index_blocks_in_cache { Pin::FlushedLike } else { Pin::Never };
        let top_fallback = if self.pin_top_level_index_and_filter { Pin::Always } else { Pin::Never };
        let resolve = |tier: T, fallback: Pin| match tier {
            T::Fallback => fallback,
            T::None => Pin::Never,
            T::FlushAndSimilar => Pin::FlushedLike,
            T::All => Pin::Always,
        };
        MetaPinning {
            cache_index_and_filter_blocks: self.cache_index_and_filter_blocks,
            high_priority: self.cache_index_and_filter_blocks_with_high_priority,
            unpartitioned: resolve(self.pinning_tiers[2], l0_fallback),
            top_level: resolve(self.pinning_tiers[0], top_fallback),
            partitions: resolve(self.pinning_tiers[1], l0_fallback),
        }
    }
}

impl CompactionFilterCore for FilterSlot {
    fn name(&self) -> &str {
        FilterSlot::name(self)
    }

    fn filter(&self, level: u32, key: &[u8], value: &[u8]) -> FilterDecision {
        FilterSlot::filter(self, level, key, value).into()
    }
}

/// A filter a rust-rocksdb factory made, as the engine runs it.
struct MadeFilter(Box<dyn crate::compaction_filter::CompactionFilter>);

impl SubcompactionFilter for MadeFilter {
    fn filter(&mut self, level: u32, key: &[u8], value: &[u8]) -> FilterDecision {
        self.0.filter(level, key, value).into()
    }
}

impl CompactionFilterFactoryCore for FactorySlot {
    fn name(&self) -> &str {
        FactorySlot::name(self)
    }

    fn create(&self, ctx: FilterContext) -> Box<dyn SubcompactionFilter> {
        Box::new(MadeFilter(FactorySlot::create(
            self,
            CompactionFilterContext {
                is_full_compaction: ctx.is_full_compaction,
                is_manual_compaction: ctx.is_manual_compaction,
            },
        )))
    }
}

impl From<Decision> for FilterDecision {
    fn from(d: Decision) -> FilterDecision {
        match d {
            Decision::Keep => FilterDecision::Keep,
            Decision::Remove => FilterDecision::Remove,
            Decision::Change(v) => FilterDecision::Change(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_options_resolve_to_the_engines_defaults() {
        // The engine's defaults are RocksDB 11.8.1's as the facade resolves them (the default
        // codec is LZ4, the crate's default features having it).
        assert_eq!(
            format!("{:?}", Options::default().engine_cf_config()),
            format!("{:?}", CfConfig::default())
        );
    }

    #[test]
    fn default_db_options_resolve_to_the_engines_defaults() {
        let path = Path::new("/db");
        let c = Options::default().engine_db_config(path);
        let d = DbConfig::default();
        // Every plain field (the Arcs are None on both sides), the WAL directory resolved.
        assert_eq!(
            (c.create_if_missing, c.create_missing_column_families, c.error_if_exists, c.paranoid_checks),
            (d.create_if_missing, d.create_missing_column_families, d.error_if_exists, d.paranoid_checks)
        );
        assert_eq!(
            (c.max_open_files, c.max_file_opening_threads),
            (d.max_open_files, d.max_file_opening_threads)
        );
        assert_eq!(
            (c.max_background_flushes, c.max_background_compactions),
            (d.max_background_flushes, d.max_background_compactions)
        );
        assert_eq!(
            (c.env_threads, c.env_bottom_threads, c.env_lower_cpu, c.env_lower_io),
            (d.env_threads, d.env_bottom_threads, d.env_lower_cpu, d.env_lower_io)
        );
        assert_eq!(
            (c.use_fsync, c.is_fd_close_on_exec, c.use_direct_reads, c.allow_mmap_reads),
            (d.use_fsync, d.is_fd_close_on_exec, d.use_direct_reads, d.allow_mmap_reads)
        );
        assert_eq!(
            (c.use_direct_io_for_flush_and_compaction, c.allow_mmap_writes, c.writable_file_max_buffer_size),
            (d.use_direct_io_for_flush_and_compaction, d.allow_mmap_writes, d.writable_file_max_buffer_size)
        );
        assert_eq!((c.bytes_per_sync, c.wal_bytes_per_sync), (d.bytes_per_sync, d.wal_bytes_per_sync));
        assert_eq!(c.wal_dir, path, "no wal_dir: the database directory");
        assert_eq!(
            (c.wal_recovery_mode, c.wal_ttl_seconds, c.wal_size_limit_mb, c.recycle_log_file_num),
            (d.wal_recovery_mode, d.wal_ttl_seconds, d.wal_size_limit_mb, d.recycle_log_file_num)
        );
        assert_eq!(
            (
                c.wal_compression,
                c.max_total_wal_size,
                c.manual_wal_flush,
                c.track_and_verify_wals_in_manifest
            ),
            (
                d.wal_compression,
                d.max_total_wal_size,
                d.manual_wal_flush,
                d.track_and_verify_wals_in_manifest
            )
        );
        assert_eq!(
            (c.max_manifest_file_size, c.write_dbid_to_manifest, c.db_paths.clone()),
            (d.max_manifest_file_size, d.write_dbid_to_manifest, d.db_paths.clone())
        );
        assert_eq!(
            (c.atomic_flush, c.allow_2pc, c.two_write_queues, c.enable_pipelined_write, c.unordered_write),
            (d.atomic_flush, d.allow_2pc, d.two_write_queues, d.enable_pipelined_write, d.unordered_write)
        );
        assert_eq!(
            (
                c.allow_concurrent_memtable_write,
                c.enable_write_thread_adaptive_yield,
                c.write_thread_max_yield_usec,
                c.write_thread_slow_yield_usec,
                c.delayed_write_rate
            ),
            (
                d.allow_concurrent_memtable_write,
                d.enable_write_thread_adaptive_yield,
                d.write_thread_max_yield_usec,
                d.write_thread_slow_yield_usec,
                d.delayed_write_rate
            )
        );
        assert_eq!(
            (c.max_subcompactions, c.compaction_readahead_size, c.avoid_unnecessary_blocking_io),
            (d.max_subcompactions, d.compaction_readahead_size, d.avoid_unnecessary_blocking_io)
        );
        assert_eq!(
            (c.max_bgerror_resume_count, c.bgerror_resume_retry_interval, c.stats_dump_period_sec),
            (d.max_bgerror_resume_count, d.bgerror_resume_retry_interval, d.stats_dump_period_sec)
        );
        assert_eq!(
            (c.stats_persist_period_sec, c.persist_stats_to_disk, c.stats_history_buffer_size),
            (d.stats_persist_period_sec, d.persist_stats_to_disk, d.stats_history_buffer_size)
        );
        assert_eq!((c.dump_malloc_stats, c.ttl_db), (d.dump_malloc_stats, d.ttl_db));
        assert_eq!(c.delete_obsolete_files_period_micros, d.delete_obsolete_files_period_micros);
        assert_eq!(c.use_adaptive_mutex, d.use_adaptive_mutex);
        assert_eq!(
            (c.write_identity_file, c.avoid_flush_during_recovery, c.avoid_flush_during_shutdown),
            (d.write_identity_file, d.avoid_flush_during_recovery, d.avoid_flush_during_shutdown)
        );
        assert_eq!(c.max_write_batch_group_size_bytes, d.max_write_batch_group_size_bytes);
        assert_eq!((c.db_log_dir.clone(), c.info_log_level), (d.db_log_dir.clone(), d.info_log_level));
        assert_eq!(
            (c.max_log_file_size, c.log_file_time_to_roll, c.keep_log_file_num),
            (d.max_log_file_size, d.log_file_time_to_roll, d.keep_log_file_num)
        );
        assert!(c.write_buffer_manager.is_none() && c.rate_limiter.is_none() && c.row_cache.is_none());
        assert!(c.statistics.is_none() && c.stats_history_clock.is_none() && c.table_ids.is_none());
        assert_eq!(c.log_readahead_size, d.log_readahead_size);
        assert_eq!(c.allow_ingest_behind, d.allow_ingest_behind);
    }

    #[test]
    fn db_options_are_sanitized_for_the_engine() {
        let path = Path::new("/db");
        let mut o = Options::default();
        o.set_wal_dir("/wal/");
        o.set_recycle_log_file_num(4);
        o.set_max_background_jobs(8);
        o.set_ratelimiter(1 << 20, 100_000, 10);
        let c = o.engine_db_config(path);
        assert_eq!(c.wal_dir, Path::new("/wal"), "the trailing slash dropped");
        assert_eq!(c.recycle_log_file_num, 4);
        assert_eq!((c.max_background_flushes, c.max_background_compactions), (2, 6));
        assert_eq!(c.bytes_per_sync, 1 << 20, "1 MiB with a rate limiter");
        o.set_wal_ttl_seconds(60);
        let c = o.engine_db_config(path);
        assert!(c.wal_archive_on());
        assert_eq!(c.recycle_log_file_num, 0, "no recycling with the WAL archive");
        o.set_wal_dir("/db");
        assert_eq!(o.engine_db_config(path).wal_dir, path);
        o.set_avoid_flush_during_recovery(true);
        assert!(o.engine_db_config(path).avoid_flush_during_recovery);
        o.allow_2pc = true;
        assert!(!o.engine_db_config(path).avoid_flush_during_recovery, "off with allow_2pc");
    }

    #[test]
    fn sanitized_values_reach_the_engine() {
        let mut o = Options::default();
        o.set_target_file_size_base(1 << 20);
        o.set_ttl(0);
        let c = o.engine_cf_config();
        assert_eq!(c.max_compaction_bytes, 25 << 20, "0 means 25 target files");
        assert_eq!((c.ttl, c.age_ttl), (0, 0));
        o.set_compaction_style(DBCompactionStyle::Fifo);
        o.set_ttl(u64::MAX - 1);
        assert_eq!(o.engine_cf_config().age_ttl, 30 * 24 * 3600, "RocksDB's 30-day FIFO default");
        assert_eq!(o.engine_cf_config().style, CompactionStyle::Fifo);
        o.set_bottommost_compression_type(crate::DBCompressionType::Zstd);
        assert_eq!(
            o.engine_cf_config().bottommost_compression,
            Some(shale_base::compression::CompressionType::Zstd)
        );
        assert_eq!(o.engine_cf_config().bottommost_compression_opts, None, "not enabled");
    }
}
