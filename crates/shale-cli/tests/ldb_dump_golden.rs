//! Golden: `shale ldb dump` and `shale ldb idump` print what RocksDB 11.8.1's ldb prints
//! (user keys; internal keys with sequence numbers and types, without the entries a range
//! tombstone hides, as 11.8.1's internal iterator does); `dump --count_only` (the value-size
//! histogram) and `--count_delim`. No difference is normalised away.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn dump_and_idump_match_ldb() {
    let oracles = oracles();
    let mut rec = Recording::open("ldb_dump_golden", &oracles);
    for (label, db) in databases(&oracles) {
        for case in [
            both(&["--db=db", "dump"]),
            both(&["--db=db", "dump", "--hex"]),
            both(&["--db=db", "dump", "--from=c", "--to=e", "--max_keys=5"]),
            only11(&["--db=db", "dump", "--max_keys=x"]),
            both(&["--db=db", "dump", "--count_only"]),
            both(&["--db=db", "dump", "--count_only", "--from=b", "--max_keys=2"]),
            both(&["--db=db", "dump", "--count_delim"]),
            both(&["--db=db", "dump", "--count_delim=k"]),
            both(&["--db=db", "--column_family=cf1", "dump", "--count_only"]),
            both(&["--db=db", "idump"]),
            both(&["--db=db", "idump", "--key_hex"]),
            both(&["--db=db", "idump", "--hex"]),
            both(&["--db=db", "idump", "--from=c", "--to=e"]),
            both(&["--db=db", "idump", "--max_keys=2"]),
            only11(&["--db=db", "idump", "--max_keys=x"]),
            both(&["--db=db", "--column_family=cf1", "idump"]),
        ] {
            // idump shows what compactions left, which depends on timing in the database
            // Shale writes: not recorded.
            let r = if case.args.contains(&"idump") { None } else { Some(&mut rec) };
            check("ldb", &label, db.path(), &oracles, &case, &exact, r);
        }
    }
}

/// A database whose newest table is a range tombstone over older tables: 11.8.1's idump
/// shows none of the covered entries (and approxsize counts the tombstone-only table as
/// half its size, as RocksDB 11's table reader does for a file without data blocks).
#[test]
fn idump_hides_what_a_range_tombstone_covers() {
    let oracles = oracles();
    for o in oracles.iter().filter(|o| o.major == 11) {
        let d = tempfile::tempdir().unwrap();
        for s in [
            &["--db=db", "--create_if_missing", "put", "a", "1"][..],
            &["--db=db", "batchput", "b", "2", "c", "3"],
            &["--db=db", "delete", "a"],
            &["--db=db", "deleterange", "a", "z"],
            &["--db=db", "put", "zz", "9"],
        ] {
            // Each open of RocksDB 11.8.1 flushes the WAL it recovers: one table per step.
            ok(&run_in(d.path(), &o.ldb, &[], s), &format!("{s:?}"));
        }
        for case in [
            only11(&["--db=db", "idump"]),
            only11(&["--db=db", "idump", "--from=b"]),
            only11(&["--db=db", "approxsize", "--from=a", "--to=z"]),
            only11(&["--db=db", "approxsize", "--from=a", "--to=zz"]),
        ] {
            check("ldb", "written by RocksDB 11.8.1", d.path(), &oracles, &case, &exact, None);
        }
    }
}
