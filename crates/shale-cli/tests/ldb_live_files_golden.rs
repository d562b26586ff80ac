//! Golden: `shale ldb dump_live_files` and `list_live_files_metadata` print what RocksDB
//! 11.8.1's ldb prints. Both open the database read-only, as ldb does, so nothing is
//! normalised away: the MANIFEST named, the WALs listed (those with at least one record, as
//! GetSortedWalFiles lists them) and every table's properties are the same files'.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn live_files_match_ldb() {
    let oracles = oracles();
    for (label, db) in databases(&oracles) {
        for case in [
            both(&["--db=db", "list_live_files_metadata"]),
            both(&["--db=db", "list_live_files_metadata", "--sort_by_filename"]),
            // The manifest summary's note and the 11.x table properties: 11.8.1 only.
            only11(&["--db=db", "dump_live_files"]),
            only11(&["--db=missing", "dump_live_files"]),
        ] {
            check("ldb", &label, db.path(), &oracles, &case, &exact, None);
        }
    }
}
