//! Golden: `shale ldb dump_wal` prints what `ldb dump_wal` prints for WALs holding puts,
//! deletes, single deletes, range deletions, batches and column families. No difference is
//! normalised away.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn dump_wal_matches_ldb() {
    let oracles = oracles();
    for o in &oracles {
        // A WAL written by each oracle and by Shale, kept whole: these databases are not
        // flushed after the writes.
        for (label, writer, pre) in
            [("by the oracle", o.ldb.clone(), vec![]), ("by Shale", shale(), vec!["ldb"])]
        {
            let d = tempfile::tempdir().unwrap();
            let steps: &[&[&str]] = &[
                &["--db=db", "--create_if_missing", "put", "a", "1"],
                &["--db=db", "batchput", "b", "2", "c\u{7f}", "3"],
                &["--db=db", "delete", "a"],
                &["--db=db", "singledelete", "b"],
                &["--db=db", "deleterange", "a", "z"],
                &["--db=db", "create_column_family", "cf1"],
                &["--db=db", "--column_family=cf1", "put", "x", "y"],
            ];
            for s in steps {
                ok(&run_in(d.path(), &writer, &pre, s), &format!("{s:?}"));
            }
            for wal in files_with(d.path(), ".log") {
                let f = format!("--walfile=db/{wal}");
                for args in [
                    &["dump_wal", f.as_str()][..],
                    &["dump_wal", f.as_str(), "--header"],
                    &["dump_wal", f.as_str(), "--header", "--print_value"],
                    &["dump_wal", f.as_str(), "--print_value=true"],
                ] {
                    same_ldb(label, d.path(), o, args, &exact);
                }
            }
        }
    }
}
