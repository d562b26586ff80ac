//! Golden: `shale ldb query` (the interactive shell, fed on stdin) prints what RocksDB's
//! `ldb query` prints, line by line, on databases written by RocksDB and by Shale: help,
//! get/put/delete/count with and without hex, bad and unknown lines, options it refuses,
//! and timestamps given to a family without user-defined timestamps (Shale's never have
//! them; RocksDB's words for that). The writes are then checked with `scan`.
//!
//! Only 11.8.1 judges: 7.8.3's `query` is another shell (no `count`, other words).
//!
//! What legitimately differs, and is not fed: a bare `put` or `delete` (ldb reads past its
//! tokens, undefined behaviour; Shale says `put gets invalid arguments`), and a bad hex key
//! (ldb aborts on an uncaught exception, status 134; Shale prints the same line and exits 1).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

const SESSION: &str = "help\nget c\nget nope\nput k v\nget k\ncount\ncount --from=c\ncount --from=b --to=e\n\
delete k\nget k\ncount --to=e\nbogus x\nget\nget c d\n\nget c --bad\n--flag\ncount --x=1\n\
put p 5 q\nput p x q\ndelete c 7\nget c --read_timestamp=5\nget c --read_timestamp=z\n\
get c --other=1\ncount --read_timestamp=3\nput  sp v\nput a b c d e\n";

const HEX_SESSION: &str =
    "get 0x63\nput 0x6B01 0xFF00\nget 0x6B01\ncount --from=0x63 --to=0x65\ndelete 0x6B01\nget 0x6B01\n";

#[test]
fn query_matches_ldb() {
    let oracles = oracles();
    let mut rec = Recording::open("ldb_query_golden", &oracles);
    for (label, db) in databases(&oracles) {
        let scan: &[&str] = &["--db=db", "scan"];
        let scan_hex: &[&str] = &["--db=db", "scan", "--hex"];
        for (v7, steps) in [
            (false, vec![(&["--db=db", "query"][..], SESSION), (scan, "")]),
            (false, vec![(&["--db=db", "query", "--hex"][..], HEX_SESSION), (scan_hex, "")]),
            (false, vec![(&["--db=db", "--column_family=cf1", "query"][..], "get x\nput y 1\ncount\n")]),
            (false, vec![(&["--db=db", "--column_family=nope", "query"][..], "get x\n")]),
            (false, vec![(&["--db=nodb", "query"][..], "get x\n")]),
            (false, vec![(&["--db=db", "query", "--from=a"][..], "get x\n")]),
        ] {
            check_script(&label, db.path(), &oracles, v7, &steps, &exact, Some(&mut rec));
        }
    }
    assert!(!oracles.is_empty() || rec.len() > 0, "no oracle and no recording");
}
