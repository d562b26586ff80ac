//! Golden: `shale ldb list_file_range_deletes` prints what RocksDB 11.8.1's ldb prints: per
//! table, level by level in the version's order, `=== file : db/N.sst ===` and its range
//! tombstones (`start: <hex> end: <hex> seq: N`), at most `--max_keys`, then
//! `(results may not be complete)` when cut. No difference is normalised away. RocksDB
//! 7.8.3 prints the same.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

fn cases() -> Vec<Case<'static>> {
    vec![
        both(&["--db=db", "list_file_range_deletes"]),
        both(&["--db=db", "list_file_range_deletes", "--max_keys=1"]),
        both(&["--db=db", "list_file_range_deletes", "--max_keys=0"]),
        both(&["--db=db", "--column_family=cf1", "list_file_range_deletes"]),
        only11(&["--db=db", "list_file_range_deletes", "--max_keys=x"]),
        only11(&["--db=missing", "list_file_range_deletes"]),
    ]
}

#[test]
fn list_file_range_deletes_matches_ldb() {
    let oracles = oracles();
    for (label, db) in databases(&oracles) {
        for case in cases() {
            check("ldb", &label, db.path(), &oracles, &case, &exact, None);
        }
    }
    // Tables holding several range tombstones each, in level 0.
    let d = tempfile::tempdir().unwrap();
    for s in [
        &["--db=db", "--create_if_missing", "put", "a", "1"][..],
        &["--db=db", "deleterange", "b", "k"],
        &["--db=db", "deleterange", "e", "z"],
        &["--db=db", "deleterange", "c", "f"],
        &["--db=db", "put", "q", "1"],
    ] {
        ok(&run_in(d.path(), &shale(), &["ldb"], s), &format!("{s:?}"));
    }
    for case in cases().into_iter().take(3) {
        check("ldb", SHALE_DB, d.path(), &oracles, &case, &exact, None);
    }
}
