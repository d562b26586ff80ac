//! Golden: `shale ldb checkconsistency` prints `OK` on a sound database, and finds a
//! missing and a truncated SST with RocksDB 11.8.1's exit status and words (on stderr:
//! `Failed: Corruption: ...  The file db/MANIFEST-N may be corrupted.`; 7.8.3's words
//! differ, so it judges only the sound database).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn checkconsistency_finds_missing_and_truncated_tables() {
    let oracles = oracles();
    for (label, db) in databases(&oracles) {
        check("ldb", &label, db.path(), &oracles, &both(&["--db=db", "checkconsistency"]), &exact, None);
        check("ldb", &label, db.path(), &oracles, &both(&["--db=missing", "checkconsistency"]), &exact, None);
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
            // Shale finds it whatever the oracles.
            let o = run_in(a.path(), &shale(), &["ldb"], &["--db=db", "checkconsistency"]);
            let err = String::from_utf8_lossy(&o.stderr).into_owned();
            assert_eq!(o.status.code(), Some(1), "{damage} table in a database {label}: {err}");
            assert!(err.starts_with("Failed: Corruption:"), "{damage}: {err}");
            assert!(err.contains(&tables[0]), "{damage}: the error names the table: {err}");
            check("ldb", &label, a.path(), &oracles, &only11(&["--db=db", "checkconsistency"]), &exact, None);
        }
    }
}
