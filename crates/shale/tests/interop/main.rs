//! Interop with RocksDB's own tools (7.8.3 from Debian, 11.8.1 beside the checkout): databases,
//! tables, WALs, MANIFESTs and OPTIONS files written by one read by the other.
//!
//! One test binary (each file under `tests/` is one more binary linking the whole engine);
//! each file of this folder is a module of it, named as the file.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

#[path = "../families/mod.rs"]
mod families;
#[path = "../tools/mod.rs"]
mod tools;
#[path = "../util/mod.rs"]
mod util;

mod backup;
mod blob_direct_write;
mod checkpoint;
mod checkpoint_backup_blob;
mod compact_range_change_level;
mod compaction_bottommost_seqno_zero;
mod compression_opts_33;
mod compression_per_level;
mod concurrent_memtable_write;
mod db_option_rows;
mod direct_writes;
mod event_log_flush_data_size;
mod event_log_rocksdb_11;
mod fifo_temperature;
mod flush_drops_hidden_versions;
mod index_first_key;
mod ingest;
mod ingest_behind;
mod ingest_blob;
mod interop_blob;
mod interop_bloom;
mod interop_bzip2;
mod interop_compaction_styles;
mod interop_compression_dict;
mod interop_corruption;
mod interop_data_block_hash;
mod interop_filter_ids;
mod interop_hash_index;
mod interop_index_shortening;
mod interop_lz4hc;
mod interop_manifest;
mod interop_merge;
mod interop_options_file;
mod interop_partitioned_index;
mod interop_plain_cuckoo;
mod interop_prefix_bloom;
mod interop_rocksdb_11;
mod interop_rocksdb_formats;
mod interop_rocksdb_to_shale;
mod interop_separated_kv;
mod interop_shale_to_rocksdb;
mod interop_table_layout_options;
mod interop_table_properties_11;
mod interop_table_tbl;
mod interop_tail_size;
mod interop_timestamps;
mod interop_wal_compression;
mod interop_wide_columns;
mod interop_wide_columns_blob;
mod interop_wide_columns_blob_write;
mod interop_zlib_parallel;
mod load_latest_options;
mod log_cf_options_11;
mod memtable_vector;
mod merge_at_flush;
mod merge_operator;
mod merge_without_operator;
mod optimize_filters_for_memory;
mod option_rows_cfopt;
mod option_rows_dbmisc;
mod option_rows_dbopt;
mod option_rows_dbwal;
mod option_rows_fchk;
mod option_rows_mfst;
mod option_rows_prot;
mod option_rows_rtc;
mod option_rows_ts;
mod options_file_hash_memtable;
mod partitioned_coupled_filters;
mod partitioned_timestamps;
mod partitioned_write_bytes;
mod partitioned_write_db;
mod partitioned_write_rocksdb7;
mod read_amp_options;
mod ribbon_filter_write;
mod seqno_time;
mod set_db_options;
mod sst_writer_formats_33;
mod stats_history;
mod subcompactions;
mod table_factory_switch;
mod tiered_placement;
mod timestamps_blob_33;
mod timestamps_merge_rangedel;
mod timestamps_prefix_extractor;
mod tools_ldb_get;
mod txn_interop_2pc;
mod universal_incremental;
mod wal_options;
mod wal_recycle;
mod wal_tracking_manifest;
mod write_temperatures;
