//! Golden: `shale ldb checkconsistency` prints `OK` on a sound database, and finds a
//! missing and a truncated SST with ldb's exit status. The error text is compared too: it
//! goes to stderr as `Failed: ...`, RocksDB 7.8.3's words.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

fn stderr_of(cwd: &std::path::Path, prog: &std::path::Path, pre: &[&str]) -> (Option<i32>, String) {
    let o = run_in(cwd, prog, pre, &["--db=db", "checkconsistency"]);
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn checkconsistency_finds_missing_and_truncated_tables() {
    let oracles = oracles();
    for (label, db) in databases(&oracles) {
        for o in &oracles {
            same_ldb(&label, db.path(), o, &["--db=db", "checkconsistency"], &exact);
        }
        let tables = files_with(db.path(), ".sst");
        assert!(!tables.is_empty());
        for damage in ["missing", "truncated"] {
            let a = tempfile::tempdir().unwrap();
            copy_dir(&db.path().join("db"), &a.path().join("db"));
            let victim = a.path().join("db").join(&tables[0]);
            if damage == "missing" {
                std::fs::remove_file(&victim).unwrap();
            } else {
                let f = std::fs::OpenOptions::new().write(true).open(&victim).unwrap();
                f.set_len(100).unwrap();
            }
            let (code, err) = stderr_of(a.path(), &shale(), &["ldb"]);
            assert_eq!(code, Some(1), "{damage} table in a database {label}: {err}");
            assert!(err.starts_with("Failed: Corruption:"), "{damage}: {err}");
            assert!(err.contains(&tables[0][..6]), "{damage}: the error names the table: {err}");
            for o in oracles.iter().filter(|o| o.name.contains("7.8.3")) {
                let (ocode, oerr) = stderr_of(a.path(), &o.ldb, &[]);
                assert_eq!(ocode, code, "{damage} table, {}: {oerr}", o.name);
                assert_eq!(oerr, err, "{damage} table in a database {label}: {}'s message", o.name);
            }
        }
    }
}
