//! RocksDB 11.8.1's `ldb` loads, strictly (`--try_load_options`), the OPTIONS file Shale
//! writes with `read_triggered_compaction_threshold` at a non-default value, and keeps it:
//! the OPTIONS file it writes after a `put` holds it too; Shale reads RocksDB's back.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

const TEST: &str = "interop option_rows_rtc";

const SET: &[(&str, &str)] = &[("read_triggered_compaction_threshold", "0.012500")];

#[test]
fn rocksdb_11_loads_and_keeps_the_read_triggered_row() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    tools::ldb_keeps_option_rows(SET, true);
}
