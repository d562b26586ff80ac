//! Where the tests find RocksDB 7.8.3's own tools (`ldb`, `sst_dump`, `db_bench`), the
//! format oracle of the interop tests, and whether a missing one fails the test.
//!
//! The tools are Debian's `rocksdb-tools` in /usr/bin. Without them a test skips (saying
//! so) on a developer's machine; under CI (`CI` set to anything but empty, `0` or `false`,
//! as CI services set `CI=true`) or with `SHALE_REQUIRE_ORACLE` set likewise, a missing tool
//! is a failure naming it, so that a run without the oracle never looks green.

use std::path::PathBuf;

/// Where Debian's `rocksdb-tools` installs RocksDB 7.8.3's tools.
pub const ROCKSDB_7_BIN: &str = "/usr/bin";

/// Whether the interop tests must run: `CI` or `SHALE_REQUIRE_ORACLE` set (not empty, `0`
/// or `false`).
pub fn required() -> bool {
    let set = |name: &str| {
        std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
    };
    set("CI") || set("SHALE_REQUIRE_ORACLE")
}

/// The message of a test that cannot find `tools` while they are [`required`].
pub fn missing_message(test: &str, tools: &[String]) -> String {
    format!(
        "{test}: RocksDB's tools {} are not installed, and the interop tests are required here \
         (CI or SHALE_REQUIRE_ORACLE is set): install Debian's rocksdb-tools (7.8.3), \
         `apt-get install rocksdb-tools`, as .ci/run does",
        tools.join(", ")
    )
}

/// RocksDB 7.8.3's `tool` in /usr/bin, or None (with the reason printed) when it is not
/// installed and not [`required`].
///
/// # Panics
/// When the tool is missing and [`required`]: the test fails, naming the tool.
pub fn rocksdb_7_tool(test: &str, tool: &str) -> Option<PathBuf> {
    let p = PathBuf::from(ROCKSDB_7_BIN).join(tool);
    if p.exists() {
        return Some(p);
    }
    let missing = [p.display().to_string()];
    assert!(!required(), "{}", missing_message(test, &missing));
    eprintln!("SKIPPED {test}: {} (RocksDB tools) is not installed", p.display());
    None
}
