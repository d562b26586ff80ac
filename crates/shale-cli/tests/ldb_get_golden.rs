//! Golden: `shale ldb get` prints what `ldb get` prints (found, hex forms, not found with
//! exit status 1). No difference is normalised away.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn get_matches_ldb() {
    let oracles = oracles();
    for (label, db) in databases(&oracles) {
        for o in &oracles {
            for args in [
                &["--db=db", "get", "c"][..],
                &["--db=db", "get", "--hex", "0x0102"],
                &["--db=db", "get", "--key_hex", "0x63"],
                &["--db=db", "get", "--value_hex", "d"],
                &["--db=db", "get", "missing"],
                &["--db=db", "--column_family=cf1", "get", "x"],
            ] {
                same_ldb(&label, db.path(), o, args, &exact);
            }
        }
    }
}
