//! Golden: `shale ldb scan` prints what RocksDB 11.8.1's `ldb scan` prints, with every flag,
//! on databases written by RocksDB and by Shale (`key ==> value`: 7.8.3 printed
//! `key : value`, so only `--no_value` scans are also checked against it). No difference
//! is normalised away.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn scan_matches_ldb() {
    let oracles = oracles();
    let mut rec = Recording::open("ldb_scan_golden", &oracles);
    for (label, db) in databases(&oracles) {
        for case in [
            only11(&["--db=db", "scan"]),
            only11(&["--db=db", "scan", "--hex"]),
            only11(&["--db=db", "scan", "--key_hex"]),
            only11(&["--db=db", "scan", "--value_hex"]),
            both(&["--db=db", "scan", "--no_value"]),
            both(&["--db=db", "scan", "--no_value", "--key_hex"]),
            only11(&["--db=db", "scan", "--from=c", "--to=e"]),
            only11(&["--db=db", "scan", "--max_keys=2"]),
            only11(&["--db=db", "scan", "--max_keys=-1"]),
            only11(&["--db=db", "scan", "--max_keys=x"]),
            only11(&["--db=db", "scan", "--key_hex", "--from=0x63"]),
            only11(&["--db=db", "--column_family=cf1", "scan"]),
            only11(&["--db=db", "--column_family=nope", "scan"]),
            only11(&["--db=db", "scan", "--bogus"]),
            only11(&["--db=db", "scan", "--bogus=1"]),
        ] {
            check("ldb", &label, db.path(), &oracles, &case, &exact, Some(&mut rec));
        }
    }
}
