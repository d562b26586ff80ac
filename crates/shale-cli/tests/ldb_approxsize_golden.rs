//! Golden: `shale ldb approxsize`, `get_property` and `list_column_families` print what ldb
//! prints. No difference is normalised away.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn approxsize_get_property_list_cf_match_ldb() {
    let oracles = oracles();
    for (label, db) in databases(&oracles) {
        for o in &oracles {
            for args in [
                &["--db=db", "approxsize", "--from=a", "--to=z"][..],
                &["--db=db", "approxsize", "--from=c", "--to=d"],
                &["--db=db", "approxsize", "--from=y", "--to=z"],
                &["--db=db", "approxsize", "--to=z"],
                &["--db=db", "--column_family=cf1", "approxsize", "--from=a", "--to=z"],
                &["--db=db", "get_property", "rocksdb.num-files-at-level0"],
                &["--db=db", "get_property", "rocksdb.num-files-at-level1"],
                &["--db=db", "list_column_families"],
            ] {
                same_ldb(&label, db.path(), o, args, &exact);
            }
        }
    }
}
