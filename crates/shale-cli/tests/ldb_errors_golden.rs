//! Golden: bad input to `shale ldb` gives what RocksDB 11.8.1's ldb gives: the exit status,
//! stdout and the first line of stderr (ldb follows some errors with its help text, whose
//! command list is Shale's own). A missing database for each kind of command (read-only
//! commands read CURRENT, writable ones check it), a garbage CURRENT, missing `--db`, an
//! unknown command, no command, unknown options and flags, bad numbers and hex,
//! unsafe_remove_sst_file's checks. One case differs on purpose: a bad hex input makes ldb
//! abort (an uncaught C++ exception, status 134) after printing its message; Shale prints
//! the same message and exits with status 1 (checked separately below).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn errors_match_ldb() {
    let oracles = oracles();
    let mut rec = Recording::open("ldb_errors_golden", &oracles);
    let d = tempfile::tempdir().unwrap();
    write_db(d.path(), &shale(), &["ldb"]);
    let db = d.path().join("db");
    std::fs::create_dir(db.join("garbage")).unwrap();
    std::fs::write(db.join("garbage/CURRENT"), b"garbage").unwrap();
    let cases: Vec<Vec<String>> = [
        "--db=db/missing scan",
        "--db=db/missing get a",
        "--db=db/missing put a b",
        "--db=db/missing dump",
        "--db=db/missing idump",
        "--db=db/missing approxsize --from=a --to=b",
        "--db=db/missing list_live_files_metadata",
        "--db=db/missing dump_live_files",
        "--db=db/missing get_property rocksdb.stats",
        "--db=db/missing checkconsistency",
        "--db=db/missing manifest_dump",
        "--db=db/missing repair",
        "--db=db/missing unsafe_remove_sst_file 5",
        "--db=db/garbage scan",
        "--db=db/garbage get a",
        "--db=db/garbage put a b",
        "--db=db/garbage idump",
        "--db=db/garbage manifest_dump",
        "--db=db/garbage checkconsistency",
        "--db=db/garbage list_column_families",
        "get a",
        "scan --from=a",
        "put a b",
        "--db=db unknowncmd",
        "--db=db",
        "",
        "--db=db scan --bogus",
        "--db=db scan --bogus=1",
        "--db=db get --from=a a",
        "--db=db scan --max_keys=1x",
        "--db=db scan --max_keys=99999999999",
        "--db=db get a b",
        "--db=db batchput a b c",
        "--db=db unsafe_remove_sst_file",
        "--db=db unsafe_remove_sst_file x",
        "--db=db unsafe_remove_sst_file 999",
    ]
    .iter()
    .map(|s| s.split_whitespace().map(String::from).collect())
    .collect();
    for args in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        check("ldb", SHALE_DB, d.path(), &oracles, &only11(&args), &exact, Some(&mut rec));
    }
    // A table that is there: ldb_unsafe_remove_sst_file_golden.rs.
    // Bad hex: the same message; ldb aborts, Shale exits with status 1.
    for o in oracles.iter().filter(|o| o.major == 11) {
        let args = ["--db=db", "scan", "--hex", "--from=zz"];
        let (r, s) = run_both(d.path(), &o.ldb, "ldb", &args);
        assert_eq!(first_line(&r.stderr), first_line(&s.stderr));
        assert_eq!(r.status, None, "ldb aborts (SIGABRT: no exit status; the shell shows 134)");
        assert_eq!(s.status, Some(1));
    }
}
