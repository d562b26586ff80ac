//! RocksDB 11.8.1's `ldb` loads, strictly (`--try_load_options`), the OPTIONS file Shale
//! writes with the DB options of the `dbopt` rows at non-default values, and keeps those
//! values: the OPTIONS file it writes after a `put` holds them too.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

const TEST: &str = "interop option_rows_dbopt";

const SET: &[(&str, &str)] = &[
    ("best_efforts_recovery", "true"),
    ("enforce_single_del_contracts", "false"),
    ("read_io_executor_threads", "3"),
    ("lowest_used_cache_tier", "kVolatileTier"),
    ("follower_refresh_catchup_period_ms", "777"),
    ("follower_catchup_retry_count", "3"),
    ("follower_catchup_retry_wait_ms", "55"),
    ("metadata_write_temperature", "kWarm"),
    ("wal_write_temperature", "kCold"),
];

#[test]
fn rocksdb_11_loads_and_keeps_the_dbopt_rows() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    tools::ldb_keeps_option_rows(SET, false);
}
