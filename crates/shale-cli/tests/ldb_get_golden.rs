//! Golden: `shale ldb get` prints what RocksDB 11.8.1's `ldb get` prints: found, hex forms,
//! a missing key (`Key not found`, exit status 0 in 11.8.1: 7.8.3 failed), a family that
//! does not exist, and a missing key parameter. No difference is normalised away.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn get_matches_ldb() {
    let oracles = oracles();
    let mut rec = Recording::open("ldb_get_golden", &oracles);
    for (label, db) in databases(&oracles) {
        for case in [
            both(&["--db=db", "get", "c"]),
            both(&["--db=db", "get", "--hex", "0x0102"]),
            both(&["--db=db", "get", "--key_hex", "0x63"]),
            both(&["--db=db", "get", "--value_hex", "d"]),
            only11(&["--db=db", "get", "missing"]),
            both(&["--db=db", "--column_family=cf1", "get", "x"]),
            only11(&["--db=db", "--column_family=nope", "get", "x"]),
            both(&["--db=db", "get"]),
            only11(&["--db=db", "get", "--ttl2", "c"]),
        ] {
            check("ldb", &label, db.path(), &oracles, &case, &exact, Some(&mut rec));
        }
    }
}
