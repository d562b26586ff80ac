//! Scenarios of the rust-rocksdb API on Shale: options, reads, writes, iterators, column families,
//! compaction, flush, properties, statistics, transactions, backups and checkpoints.
//!
//! One test binary (each file under `tests/` is one more binary linking the whole engine);
//! each file of this folder is a module of it, named as the file.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

#[path = "../common/mod.rs"]
mod common;
#[path = "../families/mod.rs"]
mod families;
#[path = "../util/mod.rs"]
mod util;

mod age_compaction;
mod api_compat;
mod arena_block_size;
mod atomic_flush;
mod blob_db;
mod block_cache_destroy_recreate;
mod block_cache_set_capacity;
mod block_cache_shared_two_dbs;
mod bottom_priority_pool;
mod bytes_per_sync;
mod cache_charging_defaults;
mod cache_index_and_filter_blocks;
mod column_families;
mod compact_range_bottommost;
mod compaction;
mod compaction_filter;
mod comparators;
mod db_identity;
mod db_option_rows;
mod db_paths;
mod delete_file_in_range;
mod deletion_collector_compaction;
mod direct_writes;
mod dump_malloc_stats;
mod event_log_compaction_reason;
mod feature_combinations_33;
mod fifo_compaction;
mod hash_memtable_concurrent_writes;
mod hint_options;
mod info_log_level;
mod ingest_timestamps;
mod inplace_update;
mod interop_rocksdb_9x;
mod iterator_auto_refresh;
mod iterator_pinned_blocks;
mod iterator_refresh;
mod iterator_tailing;
mod load_latest_rocksdb9;
mod local_super_version;
mod manifest_roll;
mod many_families;
mod max_successive_merges;
mod max_total_wal_size;
mod memory_usage_report;
mod mempurge;
mod memtable_flush;
mod memtable_history;
mod memtable_merge;
mod memtable_vector;
mod mmap_writes;
mod multi_get_one_view;
mod mutable_cf_options;
mod obsolete_files;
mod open_cf_default_options;
mod option_rows_33;
mod option_rows_cfblob;
mod option_rows_cfmisc;
mod option_rows_cfopt;
mod option_rows_dbmisc;
mod option_rows_dbopt;
mod option_rows_dbwal;
mod option_rows_fchk;
mod perf_context_counts;
mod pinned_table_readers;
mod prefix_seek_filter;
mod properties;
mod rate_limiter_compaction;
mod read_amp_bitmap;
mod read_only_open;
mod read_write_options;
mod readahead;
mod readonly_2pc;
mod reads_iterators;
mod recycle_log_file_num;
mod refused_options;
mod remote_compaction_blob;
mod row_cache;
mod secondary_instance;
mod set_options;
mod set_options_built;
mod statistics_blob_tickers;
mod statistics_counted_tickers;
mod statistics_feature_tickers;
mod statistics_merge_failures;
mod stats_text;
mod stats_text_blob_line;
mod table_formats_db;
mod table_options_set;
mod table_options_tbl;
mod thread_modes;
mod timestamps_bottommost_compaction;
mod timestamps_gc;
mod timestamps_prefix_extractor;
mod ttl_database;
mod txn_bank;
mod txn_semantics;
mod txn_two_phase;
mod universal_compaction;
mod wide_columns;
mod writable_file_buffer;
mod write_buffer_manager;
mod write_ops;
mod write_options_relaxed;
