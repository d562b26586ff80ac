//! RocksDB 11.8.1's `ldb` loads, strictly (`--try_load_options`), the OPTIONS file Shale
//! writes with the DB options of the `dbmisc` rows at non-default values, and keeps those
//! values (its own OPTIONS file after a `put` holds them); Shale reads RocksDB's back.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

const TEST: &str = "interop option_rows_dbmisc";

// A string option is written escaped, as RocksDB writes it (and read back unescaped).
const SET: &[(&str, &str)] = &[
    ("allow_data_in_errors", "true"),
    ("daily_offpeak_time_utc", "23\\:30-04\\:00"),
    ("max_compaction_trigger_wakeup_seconds", "77"),
    ("fast_sst_open", "true"),
    ("open_files_async", "true"),
    ("skip_stats_update_on_db_open", "true"),
];

#[test]
fn rocksdb_11_loads_and_keeps_the_dbmisc_rows() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    tools::ldb_keeps_option_rows(SET, true);
}
