//! Golden: `shale ldb manifest_dump` prints what RocksDB 11.8.1's `ldb manifest_dump`
//! prints: the version of each column family (with `--db`, the number of levels of the
//! latest OPTIONS file, else the 64 levels ldb configures; then 11.x's note on it), the
//! summary line, and with --verbose every VersionEdit in 11.x's DebugString form
//! (epoch_number, tail size, the timestamps flags); with --json every VersionEdit as
//! 11.x's DebugJSON line (EditNumber first). No difference is normalised away.
//! 7.8.3 prints neither the note nor the 11.x fields: it judges none of these.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn manifest_dump_matches_ldb() {
    let oracles = oracles();
    for (label, db) in databases(&oracles) {
        let manifest = format!(
            "--path=db/{}",
            files_with(db.path(), "").iter().find(|n| n.starts_with("MANIFEST-")).unwrap()
        );
        for case in [
            only11(&["--db=db", "manifest_dump"]),
            only11(&["--db=db", "manifest_dump", "--verbose"]),
            only11(&["--db=db", "manifest_dump", "--hex"]),
            only11(&["manifest_dump", manifest.as_str()]),
            only11(&["manifest_dump", "--verbose", manifest.as_str()]),
            only11(&["--db=db", "--try_load_options=false", "manifest_dump"]),
            only11(&["--db=db", "manifest_dump", "--json"]),
            only11(&["--db=db", "manifest_dump", "--json", "--hex"]),
            only11(&["--db=db", "manifest_dump", "--json", "--verbose"]),
            only11(&["manifest_dump", "--json", manifest.as_str()]),
            only11(&["--db=missing", "manifest_dump"]),
            only11(&["manifest_dump"]),
        ] {
            check("ldb", &label, db.path(), &oracles, &case, &exact, None);
        }
    }
}
