//! Golden: `shale ldb dump` and `shale ldb idump` print what ldb prints (user keys; internal
//! keys with sequence numbers and types). No difference is normalised away: the databases
//! keep nothing only in their WAL, so both engines' opens leave the same tables.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn dump_and_idump_match_ldb() {
    let oracles = oracles();
    for (label, db) in databases(&oracles) {
        for o in &oracles {
            for args in [
                &["--db=db", "dump"][..],
                &["--db=db", "dump", "--hex"],
                &["--db=db", "dump", "--from=c", "--to=e", "--max_keys=5"],
                &["--db=db", "idump"],
                &["--db=db", "idump", "--key_hex"],
                &["--db=db", "idump", "--hex"],
                &["--db=db", "idump", "--from=c", "--to=e"],
                &["--db=db", "idump", "--max_keys=2"],
                &["--db=db", "--column_family=cf1", "idump"],
            ] {
                same_ldb(&label, db.path(), o, args, &exact);
            }
        }
    }
}
