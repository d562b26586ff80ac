//! Golden: `shale ldb unsafe_remove_sst_file <n>` does what RocksDB 11.8.1's does, on
//! databases written by RocksDB and by Shale: it reports success on stderr, starts a new
//! MANIFEST with the same number (the old one stays, so `manifest_dump` without `--path`
//! then finds two, in RocksDB's words), the file is gone from the live files, its keys from
//! scans, and the new MANIFEST's summary (`manifest_dump --path=<it>`) is what RocksDB's
//! reads back from its own; removing it again is NotFound.
//!
//! What legitimately differs: the records of the new MANIFEST (`--verbose`) are Shale's
//! snapshot of the state, as Shale's engine writes it when it starts a MANIFEST (RocksDB
//! adds records Shale's engine does not write, e.g. `LastCompactedManifestFileSize`); the
//! state they describe is compared through the summary.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

/// The number of the newest table of `src/db`.
fn newest_table(src: &std::path::Path) -> String {
    files_with(src, ".sst").last().unwrap().trim_end_matches(".sst").trim_start_matches('0').to_string()
}

#[test]
fn unsafe_remove_sst_file_matches_ldb() {
    let oracles = oracles();
    for (label, db) in databases(&oracles) {
        let n = newest_table(db.path());
        let remove = ["--db=db", "unsafe_remove_sst_file", &n];
        let steps: Vec<&[&str]> = vec![
            &remove,
            &["--db=db", "list_live_files_metadata", "--sort_by_filename"],
            &["--db=db", "scan"],
            &["--db=db", "--column_family=cf1", "scan"],
            &["--db=db", "manifest_dump"],
            &remove,
        ];
        for o in oracles.iter().filter(|o| o.major == 11) {
            let a = tempfile::tempdir().unwrap();
            let b = tempfile::tempdir().unwrap();
            copy_dir(&db.path().join("db"), &a.path().join("db"));
            copy_dir(&db.path().join("db"), &b.path().join("db"));
            for args in &steps {
                let r = run_with_stdin(a.path(), &o.ldb, &[], args, "");
                let s = run_with_stdin(b.path(), &shale(), &["ldb"], args, "");
                let what = format!("{args:?} on a database {label}");
                assert_eq!(r.status, s.status, "{what}: {} / {}", r.stderr, s.stderr);
                assert_eq!(r.stdout, s.stdout, "{what}");
                assert_eq!(first_line(&r.stderr), first_line(&s.stderr), "{what}");
            }
            let current = |d: &std::path::Path| std::fs::read_to_string(d.join("db/CURRENT")).unwrap();
            assert_eq!(current(a.path()), current(b.path()), "the new MANIFEST's name, {label}");
            let manifests = |d: &std::path::Path| {
                files_with(d, "").into_iter().filter(|f| f.starts_with("MANIFEST-")).collect::<Vec<_>>()
            };
            assert_eq!(manifests(a.path()), manifests(b.path()), "the MANIFEST files, {label}");
            let path = format!("--path=db/{}", current(a.path()).trim_end());
            let args = ["--db=db", "manifest_dump", &path];
            let r = run_with_stdin(a.path(), &o.ldb, &[], &args, "");
            let s = run_with_stdin(b.path(), &shale(), &["ldb"], &args, "");
            assert_eq!(r.stdout, s.stdout, "the new MANIFEST's summary, {label}");
            // RocksDB reads the MANIFEST Shale wrote as Shale reads it.
            let r = run_with_stdin(b.path(), &o.ldb, &[], &args, "");
            assert_eq!(r.stdout, s.stdout, "RocksDB reading Shale's new MANIFEST, {label}");
        }
        if oracles.iter().all(|o| o.major != 11) {
            // Without 11.8.1: the removal, checked by Shale's own reads.
            let d = tempfile::tempdir().unwrap();
            copy_dir(&db.path().join("db"), &d.path().join("db"));
            let o = run_in(d.path(), &shale(), &["ldb"], &["--db=db", "unsafe_remove_sst_file", &n]);
            ok(&o, "unsafe_remove_sst_file");
            assert_eq!(String::from_utf8_lossy(&o.stderr), "unsafely removed SST file\n");
            let o = run_in(
                d.path(),
                &shale(),
                &["ldb"],
                &["--db=db", "list_live_files_metadata", "--sort_by_filename"],
            );
            assert!(!String::from_utf8_lossy(&o.stdout).contains(&format!("{n:0>6}.sst")));
        }
    }
}
