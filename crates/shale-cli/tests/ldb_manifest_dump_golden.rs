//! Golden: `shale ldb manifest_dump` prints what `ldb manifest_dump` prints: the version of
//! each column family (64 levels, as ldb configures), the summary line, and with --verbose
//! every VersionEdit in RocksDB's DebugString form. No difference is normalised away.
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
        for o in &oracles {
            for args in [
                &["--db=db", "manifest_dump"][..],
                &["--db=db", "manifest_dump", "--verbose"],
                &["--db=db", "manifest_dump", "--hex"],
                &["manifest_dump", manifest.as_str()],
                &["manifest_dump", "--verbose", manifest.as_str()],
            ] {
                same_ldb(&label, db.path(), o, args, &exact);
            }
        }
    }
}
