//! RocksDB 11.8.1's `ldb` loads, strictly (`--try_load_options`), the OPTIONS file Shale
//! writes with the column-family options of the `cfopt` rows at non-default values, and keeps
//! them: the OPTIONS file it writes after a `put` holds them too.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

const TEST: &str = "interop option_rows_cfopt";

const SET: &[(&str, &str)] = &[
    ("memtable_protection_bytes_per_key", "4"),
    ("paranoid_memory_checks", "true"),
    ("bottommost_file_compaction_delay", "600"),
    ("target_file_size_is_upper_bound", "true"),
    ("memtable_prefix_bloom_size_ratio", "0.125000"),
    ("memtable_whole_key_filtering", "true"),
    // helper cfmisc's rows
    ("memtable_op_scan_flush_trigger", "300"),
    ("memtable_avg_op_scan_flush_trigger", "20"),
    ("verify_output_flags", "1027"),
    ("memtable_batch_lookup_optimization", "true"),
];

#[test]
fn rocksdb_11_loads_and_keeps_the_cfopt_rows() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    tools::ldb_keeps_option_rows(SET, true);
}
