//! Golden: the write commands (put, batchput, delete, singledelete, deleterange, compact,
//! create_column_family, drop_column_family) print what ldb prints, and leave a database
//! whose scan, as ldb prints it, is the same as after ldb's own command.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn write_commands_match_ldb() {
    let oracles = oracles();
    for (label, db) in databases(&oracles) {
        for o in &oracles {
            for cmd in [
                &["--db=db", "put", "k", "v"][..],
                &["--db=db", "put", "--hex", "0x01", "0x02"],
                &["--db=db", "batchput", "k1", "v1", "k2", "v2"],
                &["--db=db", "batchput", "k1"],
                &["--db=db", "delete", "c"],
                &["--db=db", "singledelete", "c"],
                &["--db=db", "deleterange", "c", "e"],
                &["--db=db", "compact"],
                &["--db=db", "compact", "--from=a", "--to=d"],
                &["--db=db", "create_column_family", "cf9"],
                &["--db=db", "drop_column_family", "cf1"],
                &["--db=db", "--column_family=cf1", "put", "q", "r"],
                &["--db=db", "--column_family=nope", "put", "q", "r"],
            ] {
                let a = tempfile::tempdir().unwrap();
                let b = tempfile::tempdir().unwrap();
                copy_dir(&db.path().join("db"), &a.path().join("db"));
                copy_dir(&db.path().join("db"), &b.path().join("db"));
                let ra = run_in(a.path(), &o.ldb, &[], cmd);
                let rb = run_in(b.path(), &shale(), &["ldb"], cmd);
                assert_eq!(ra.status.code(), rb.status.code(), "{cmd:?} on a database {label}");
                assert_eq!(ra.stdout, rb.stdout, "{cmd:?} on a database {label}");
                // What each wrote, read by the oracle.
                for cf in ["default", "cf1", "cf9"] {
                    let c = format!("--column_family={cf}");
                    let sa = run_in(a.path(), &o.ldb, &[], &["--db=db", &c, "scan", "--hex"]);
                    let sb = run_in(b.path(), &o.ldb, &[], &["--db=db", &c, "scan", "--hex"]);
                    assert_eq!(sa.stdout, sb.stdout, "{cf} after {cmd:?} on a database {label}");
                    assert_eq!(sa.status.code(), sb.status.code(), "{cf} after {cmd:?}");
                }
            }
        }
    }
}
