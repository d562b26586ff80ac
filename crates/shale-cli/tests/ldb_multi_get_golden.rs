//! Golden: `shale ldb multi_get` prints what RocksDB 11.8.1's prints (7.8.3 has no
//! multi_get), on databases written by RocksDB and by Shale: found and missing keys in the
//! order given, hex forms, another column family, no key, and `--read_timestamp` on a family
//! without user-defined timestamps. No difference is normalised away.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn multi_get_matches_ldb() {
    let oracles = oracles();
    let mut rec = Recording::open("ldb_multi_get_golden", &oracles);
    for (label, db) in databases(&oracles) {
        for case in [
            only11(&["--db=db", "multi_get", "c", "a", "e", "nope", "c"]),
            only11(&["--db=db", "multi_get", "--hex", "0x0102", "0x63", "0x00"]),
            only11(&["--db=db", "multi_get", "--key_hex", "0x6B01"]),
            only11(&["--db=db", "multi_get", "--value_hex", "d"]),
            only11(&["--db=db", "--column_family=cf1", "multi_get", "x", "c"]),
            only11(&["--db=db", "multi_get"]),
            only11(&["--db=db", "multi_get", "c", "--read_timestamp=5"]),
            only11(&["--db=db", "multi_get", "c", "--bogus"]),
            only11(&["--db=nodb", "multi_get", "c"]),
        ] {
            check("ldb", &label, db.path(), &oracles, &case, &exact, Some(&mut rec));
        }
    }
}
