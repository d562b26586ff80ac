//! Golden: `shale ldb approxsize`, `get_property` and `list_column_families` print what
//! RocksDB 11.8.1's ldb prints. No difference is normalised away. approxsize's figures
//! depend on file sizes (the tables' properties hold the host name), so they are not
//! recorded for CI; list_column_families is.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn approxsize_get_property_list_cf_match_ldb() {
    let oracles = oracles();
    let mut rec = Recording::open("ldb_approxsize_golden", &oracles);
    for (label, db) in databases(&oracles) {
        for case in [
            both(&["--db=db", "approxsize", "--from=a", "--to=z"]),
            both(&["--db=db", "approxsize", "--from=c", "--to=d"]),
            both(&["--db=db", "approxsize", "--from=y", "--to=z"]),
            both(&["--db=db", "approxsize", "--to=z"]),
            both(&["--db=db", "--column_family=cf1", "approxsize", "--from=a", "--to=z"]),
            both(&["--db=db", "get_property", "rocksdb.num-files-at-level0"]),
            both(&["--db=db", "get_property", "rocksdb.num-files-at-level1"]),
            both(&["--db=db", "get_property", "rocksdb.no-such-property"]),
        ] {
            check("ldb", &label, db.path(), &oracles, &case, &exact, None);
        }
        for case in
            [both(&["--db=db", "list_column_families"]), both(&["--db=missing", "list_column_families"])]
        {
            check("ldb", &label, db.path(), &oracles, &case, &exact, Some(&mut rec));
        }
    }
}
