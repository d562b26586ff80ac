//! The block-based table factory's options block and the table-properties-collector line of
//! the LOG, in RocksDB 11.8.1's text (`BlockBasedTableFactory::GetPrintableOptions`,
//! `ColumnFamilyOptions::Dump`), so tools and tests that read a LOG find the same lines:
//!
//! ```text
//! <time> <tid>            Options.table_factory: BlockBasedTable
//! <time> <tid>            table_factory options:   flush_block_policy_factory: FlushBlockBySizePolicyFactory (0x...)
//!   cache_index_and_filter_blocks: 0
//!   ...                                  (one "  name: value" line per option)
//!   num_file_reads_for_auto_readahead: 2
//! <time> <tid>                   Options.table_properties_collectors: <factory>;<factory>;
//! ```
//! Values Shale does not let a user change (RocksDB's defaults that Shale behaves as) are
//! printed as RocksDB prints those defaults; a changed one is refused at open.

use std::fmt::Write as _;
use std::sync::Arc;

use crate::cache::BlockCache;
use crate::options::BlockBasedOptions;

/// RocksDB's `GetPrintableOptions` of the block-based table factory: `"  name: value\n"` lines.
pub(crate) fn table_factory_options(t: &BlockBasedOptions, cache: Option<&Arc<BlockCache>>) -> String {
    let mut s = String::with_capacity(1500);
    macro_rules! line {
        ($k:expr, $v:expr $(,)?) => {{
            let _ = writeln!(s, "  {}: {}", $k, $v);
        }};
    }
    // The flush policy is Shale's only one, RocksDB's default (a block is cut at block_size).
    line!(
        "flush_block_policy_factory",
        &format_args!("FlushBlockBySizePolicyFactory ({:p})", t as *const BlockBasedOptions),
    );
    line!("cache_index_and_filter_blocks", &u8::from(t.cache_index_and_filter_blocks));
    line!(
        "cache_index_and_filter_blocks_with_high_priority",
        &u8::from(t.cache_index_and_filter_blocks_with_high_priority)
    );
    line!("pin_l0_filter_and_index_blocks_in_cache", &u8::from(t.pin_l0_filter_and_index_blocks_in_cache));
    line!("pin_top_level_index_and_filter", &u8::from(t.pin_top_level_index_and_filter));
    line!(
        "index_type",
        &if t.first_key_index {
            3
        } else if t.partitioned_index {
            2
        } else {
            u8::from(t.hash_index)
        }
    );
    line!("data_block_index_type", &(t.data_block_index_type as i32));
    line!("index_shortening", &(t.index_shortening as i32));
    line!("data_block_hash_table_util_ratio", &format_args!("{:.6}", t.data_block_hash_ratio));
    line!("checksum", &(t.checksum as u8));
    line!("no_block_cache", &u8::from(t.no_block_cache));
    match cache {
        Some(c) => {
            line!("block_cache", &format_args!("{:p}", Arc::as_ptr(c)));
            line!("block_cache_name", &cache_name(c));
            s.push_str("  block_cache_options:\n");
            s.push_str(&cache_printable_options(c));
        }
        None => s.push_str("  block_cache: (nil)\n"),
    }
    line!("persistent_cache", &"(nil)");
    line!("block_size", &t.block_size);
    // As RocksDB's factory sanitizes it (outside 0..=100: 0).
    line!(
        "block_size_deviation",
        &if (0..=100).contains(&t.block_size_deviation) { t.block_size_deviation } else { 0 }
    );
    line!("block_restart_interval", &t.block_restart_interval);
    line!("index_block_restart_interval", &t.sanitized_index_block_restart_interval());
    line!("metadata_block_size", &t.metadata_block_size);
    line!("partition_filters", &u8::from(t.partitioned_index && t.partition_filters));
    line!("use_delta_encoding", &u8::from(t.use_delta_encoding));
    line!(
        "filter_policy",
        &match (t.bloom_bits_per_key, t.ribbon_bloom_before_level) {
            _ if t.filter_internal.is_some() => t.filter_internal.map_or("nullptr", |p| p.name()),
            (None, _) => "nullptr",
            (Some(_), Some(_)) => "ribbonfilter",
            (Some(_), None) => "bloomfilter",
        }
    );
    line!("user_defined_index_factory", &"nullptr");
    line!("use_udi_as_primary_index", &u8::from(t.use_udi_as_primary_index));
    line!("fail_if_no_udi_on_open", &u8::from(t.fail_if_no_udi_on_open));
    line!("whole_key_filtering", &u8::from(t.whole_key_filtering));
    line!("verify_compression", &u8::from(t.verify_compression));
    line!("read_amp_bytes_per_bit", &t.read_amp_bytes_per_bit);
    line!("format_version", &t.format_version);
    line!("uniform_cv_threshold", &format_args!("{:.6}", t.uniform_cv_threshold));
    line!("enable_index_compression", &u8::from(t.enable_index_compression));
    line!("block_align", &u8::from(t.block_align));
    line!("super_block_alignment_size", &t.super_block_alignment_size);
    line!("super_block_alignment_space_overhead_ratio", &t.super_block_alignment_space_overhead_ratio);
    line!("max_auto_readahead_size", &t.auto_readahead.max);
    line!("prepopulate_block_cache", &(t.prepopulate_block_cache as u8));
    line!("initial_auto_readahead_size", &t.auto_readahead.initial);
    line!("num_file_reads_for_auto_readahead", &t.auto_readahead.num_file_reads);
    s
}

/// RocksDB's name of cache `c`: LRUCache, AutoHyperClockCache (estimated entry charge 0: a
/// table that grows) or FixedHyperClockCache.
pub(crate) fn cache_name(c: &BlockCache) -> &'static str {
    c.name()
}

/// A cache's `GetPrintableOptions` (RocksDB's `ShardedCache` and `LRUCache` lines).
pub(crate) fn cache_printable_options(c: &BlockCache) -> String {
    let mut s = String::with_capacity(200);
    let _ = writeln!(s, "    capacity : {}", c.capacity());
    let _ = writeln!(s, "    num_shard_bits : {}", c.num_shard_bits());
    let _ = writeln!(s, "    strict_capacity_limit : {}", u8::from(c.strict_capacity_limit()));
    s.push_str("    memory_allocator : None\n");
    if c.kind() == crate::cache::CacheKind::Lru {
        let _ = writeln!(s, "    high_pri_pool_ratio: {:.3}", c.high_pri_pool_ratio());
        let _ = writeln!(s, "    low_pri_pool_ratio: {:.3}", c.low_pri_pool_ratio());
    }
    s
}

/// The database options as RocksDB 11.8.1's `DBOptions::Dump` writes them at open: its
/// lines in its order and padding ([`crate::options_table::LOG_DB_LINES`]), flags as 0/1.
/// Where RocksDB prints an object's address, Shale prints the address of its own object of
/// that role, or `(nil)` when the option is not set.
pub(crate) fn log_db_options(log: &super::info_log::InfoLog, o: &crate::Options) {
    use crate::options_table::{log_value, LOG_DB_LINES};
    fn ptr<T: ?Sized>(a: Option<&Arc<T>>) -> String {
        a.map_or_else(|| "(nil)".to_string(), |a| format!("{:p}", Arc::as_ptr(a).cast::<u8>()))
    }
    for line in LOG_DB_LINES {
        let label = line.label;
        let v = match line.entry {
            "@env" | "@fs" => {
                let fs = o.fs.clone().unwrap_or_else(crate::fs::default_fs);
                if line.entry == "@fs" {
                    // Shale's own file system is RocksDB's POSIX one; a user's is named so.
                    if o.fs.is_some() { "CustomFileSystem" } else { "PosixFileSystem" }.to_string()
                } else {
                    ptr(Some(&fs))
                }
            }
            "@info_log" => format!("{:p}", log as *const super::info_log::InfoLog),
            "@statistics" => {
                log.header(format_args!("{label}: {}", ptr(o.statistics.as_ref())));
                if let Some(s) = &o.statistics {
                    // The statistics object holds RocksDB's value (`statistics.rs`).
                    let level = s.level();
                    log.header(format_args!(
                        "                             Options.statistics stats level: {level}"
                    ));
                }
                continue;
            }
            "@db_log_dir" => o.db_log_dir.display().to_string(),
            "@wal_dir" => o.wal_dir.display().to_string(),
            "@write_buffer_manager" => ptr(o.write_buffer_manager.as_ref()),
            "@rate_limiter" => ptr(o.rate_limiter.as_ref()),
            // Shale keeps no SstFileManager delete-rate limit: RocksDB's 0 (none).
            "@sfm_rate" => "0".to_string(),
            "@row_cache" => {
                o.row_cache.as_ref().map_or_else(|| "None".to_string(), |c| c.0.capacity().to_string())
            }
            _ => match log_value(o, line) {
                Some(v) if line.fmt == crate::options_table::LogFmt::Plain => {
                    // The OPTIONS file's text is escaped; the LOG prints the string itself.
                    crate::options_file::unescape_option_string(&v)
                }
                Some(v) => v,
                None => continue,
            },
        };
        log.header(format_args!("{label}: {v}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_options_block_has_rocksdb_lines() {
        let mut t = BlockBasedOptions::default();
        t.set_index_block_restart_interval(16);
        t.set_data_block_hash_ratio(0.35);
        let cache = Arc::new(BlockCache::new(32 << 20));
        let s = table_factory_options(&t, Some(&cache));
        assert!(s.starts_with("  flush_block_policy_factory: FlushBlockBySizePolicyFactory (0x"), "{s}");
        for want in [
            "\n  cache_index_and_filter_blocks: 0\n",
            "\n  data_block_index_type: 0\n",
            "\n  data_block_hash_table_util_ratio: 0.350000\n",
            "\n  index_block_restart_interval: 16\n",
            "\n    capacity : 33554432\n",
            &format!("\n  format_version: {}\n", t.format_version),
            "\n  num_file_reads_for_auto_readahead: 2\n",
        ] {
            assert!(s.contains(want), "missing {want:?} in\n{s}");
        }
        assert!(s.ends_with('\n'));
        t.set_cache_index_and_filter_blocks(true);
        t.set_pin_l0_filter_and_index_blocks_in_cache(true);
        t.set_cache_index_and_filter_blocks_with_high_priority(false);
        let clock = Arc::new(BlockCache::new_hyper_clock(64 << 20, -1, false));
        let s = table_factory_options(&t, Some(&clock));
        for want in [
            "\n  cache_index_and_filter_blocks: 1\n",
            "\n  cache_index_and_filter_blocks_with_high_priority: 0\n",
            "\n  pin_l0_filter_and_index_blocks_in_cache: 1\n",
            "\n  block_cache_name: AutoHyperClockCache\n",
            "\n    num_shard_bits : 1\n",
        ] {
            assert!(s.contains(want), "missing {want:?} in\n{s}");
        }
        assert!(!s.contains("high_pri_pool_ratio"));
        let s = table_factory_options(&BlockBasedOptions::default(), Some(&cache));
        assert!(s.contains("\n    strict_capacity_limit : 0\n    memory_allocator : None\n    high_pri_pool_ratio: 0.500\n    low_pri_pool_ratio: 0.000\n"), "{s}");
        let mut t2 = BlockBasedOptions::default();
        t2.disable_cache();
        assert!(table_factory_options(&t2, None).contains("\n  no_block_cache: 1\n  block_cache: (nil)\n"));
    }
}
