//! Golden: `shale ldb scan` prints what `ldb scan` prints, with every flag, on databases
//! written by RocksDB and by Shale. No difference is normalised away.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn scan_matches_ldb() {
    let oracles = oracles();
    for (label, db) in databases(&oracles) {
        for o in &oracles {
            for args in [
                &["--db=db", "scan"][..],
                &["--db=db", "scan", "--hex"],
                &["--db=db", "scan", "--key_hex"],
                &["--db=db", "scan", "--value_hex"],
                &["--db=db", "scan", "--no_value"],
                &["--db=db", "scan", "--from=c", "--to=e"],
                &["--db=db", "scan", "--max_keys=2"],
                &["--db=db", "scan", "--key_hex", "--from=0x63"],
                &["--db=db", "--column_family=cf1", "scan"],
            ] {
                same_ldb(&label, db.path(), o, args, &exact);
            }
        }
    }
}
