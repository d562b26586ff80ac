//! Golden: `shale ldb load` (key ==> value lines on stdin) does what RocksDB's `ldb load`
//! does, checked by what it prints and by `scan` afterwards, on databases written by RocksDB
//! and by Shale: plain and hex lines, bad lines counted on stdout, `Keys in range:` lines
//! skipped, an empty key and an empty value, `--column_family`, `--disable_wal`,
//! `--compact`, `--bulk_load`, `--create_if_missing` on a new database and its absence.
//! No difference is normalised away. RocksDB 7.8.3 judges a load followed by `scan --no_value`
//! (its `scan` prints `key : value`). (`--bulk_load` is RocksDB's PrepareForBulkLoad in
//! RocksDB; in Shale the parts that matter to a load: no automatic compaction, no stall.)
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

const LINES: &str = "x ==> 1\ny ==> 2 ==> 3\nbad line\nKeys in range: 3\n ==> empty\nz ==> \nanother bad\n";

#[test]
fn load_matches_ldb() {
    let oracles = oracles();
    let mut rec = Recording::open("ldb_load_golden", &oracles);
    for (label, db) in databases(&oracles) {
        let scan: &[&str] = &["--db=db", "scan"];
        let scan_cf1: &[&str] = &["--db=db", "--column_family=cf1", "scan"];
        let steps: Vec<Vec<Step<'_>>> = vec![
            vec![(&["--db=db", "load"], LINES), (scan, "")],
            vec![(&["--db=db", "load", "--hex", "--compact"], "0x41 ==> 0x42\n0x6B01 ==> 0x\n"), (scan, "")],
            vec![(&["--db=db", "load", "--disable_wal", "--bulk_load"], "w ==> 9\n"), (scan, "")],
            vec![(&["--db=db", "--column_family=cf1", "load"], "q ==> r\n"), (scan_cf1, "")],
            vec![(&["--db=new", "load", "--create_if_missing"], "n ==> 1\n"), (&["--db=new", "scan"], "")],
            vec![(&["--db=nodb", "load"], "n ==> 1\n")],
            vec![(&["--db=db", "load", "--bogus"], "n ==> 1\n")],
        ];
        for s in &steps {
            check_script(&label, db.path(), &oracles, false, s, &exact, Some(&mut rec));
        }
        // 7.8.3 loads as 11.8.1 does; its scan prints `key : value`, so only keys are compared.
        let v7: Vec<Step<'_>> = vec![(&["--db=db", "load"], LINES), (&["--db=db", "scan", "--no_value"], "")];
        check_script(&label, db.path(), &oracles, true, &v7, &exact, Some(&mut rec));
    }
}
