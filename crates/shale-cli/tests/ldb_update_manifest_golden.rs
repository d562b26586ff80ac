//! Golden: `shale ldb update_manifest --update_temperatures` does what RocksDB 11.8.1's does
//! (experimental::UpdateManifestForFilesState), on databases written by RocksDB and by Shale.
//!
//! On a local file system neither RocksDB (POSIX) nor Shale knows file temperatures, so
//! both check that every live table opens, change nothing (the same MANIFEST and CURRENT,
//! which 11.8.1's manifest_dump then reads the same) and print `Manifest updates
//! successful` (on stderr, as ldb prints a command's success); after it the database opens and scans the same in both tools. A missing
//! table fails naming it, a missing database fails on its CURRENT, no action and unknown
//! flags fail in ldb's words. (The rewrite for a file system that reports temperatures is
//! unit-tested in src/ldb/update_manifest.rs.)
//!
//! Compared: exit status, stdout, and the last line of stderr (11.8.1 logs its errors on
//! stderr with a time stamp before the `Failed: ...` line; Shale prints that line only. On
//! the tables Shale writes 11.8.1 also warns `Tail prefetch size ... is calculated based on
//! heuristics`, as Shale's MANIFEST records no tail size).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

use std::path::Path;

fn last_line(s: &str) -> &str {
    s.lines().last().unwrap_or("")
}

fn manifests(d: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(d.join("db"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.starts_with("MANIFEST-") || f == "CURRENT")
        .map(|f| {
            let b = std::fs::read(d.join("db").join(&f)).unwrap();
            (f, b)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn update_manifest_matches_ldb() {
    let oracles = oracles();
    let o11 = oracles.iter().find(|o| o.major == 11);
    let mut rec = Recording::open("ldb_update_manifest_golden", &oracles);
    // `--auto_compaction=false`: no compaction may change the files between the copies.
    for (label, db) in databases_with(&oracles, &["--auto_compaction=false"]) {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        copy_dir(&db.path().join("db"), &a.path().join("db"));
        copy_dir(&db.path().join("db"), &b.path().join("db"));
        let before = manifests(b.path());
        let cases: Vec<&[&str]> = vec![
            &["--db=db", "update_manifest", "--update_temperatures"],
            &["--db=db", "update_manifest", "--update_temperatures=true", "--verbose=false"],
            &["--db=db", "update_manifest"],
            &["--db=db", "update_manifest", "--update_temperatures=false"],
            &["--db=db", "update_manifest", "--update_temperatures", "--bogus"],
            &["--db=nodb", "update_manifest", "--update_temperatures"],
        ];
        for args in &cases {
            let s = run_with_stdin(b.path(), &shale(), &["ldb"], args, "");
            assert!(!s.stderr.contains("panicked"), "{args:?}: {}", s.stderr);
            let r = o11.map(|o| run_with_stdin(a.path(), &o.ldb, &[], args, ""));
            if let Some(r) = &r {
                let what = format!("{args:?} on a database {label}");
                assert_eq!(r.status, s.status, "{what}: {} / {}", r.stderr, s.stderr);
                assert_eq!(r.stdout, s.stdout, "{what}");
                assert_eq!(last_line(&r.stderr), last_line(&s.stderr), "{what}");
            }
            if label == SHALE_DB && !args.contains(&"--db=nodb") {
                // Recorded with the last line of stderr, the one compared.
                let last = |p: &Printed| Printed {
                    stdout: p.stdout.clone(),
                    status: p.status,
                    stderr: last_line(&p.stderr).to_string(),
                };
                rec.check("ldb", args, r.as_ref().map(last).as_ref(), &last(&s), &exact);
            }
        }
        assert_eq!(manifests(b.path()), before, "nothing to change: the MANIFEST stays, {label}");
        let s =
            run_in(b.path(), &shale(), &["ldb"], &["--db=db", "update_manifest", "--update_temperatures"]);
        assert_eq!(String::from_utf8_lossy(&s.stderr), "Manifest updates successful\n", "{label}");
        if let Some(o) = o11 {
            assert_eq!(manifests(a.path()), before, "11.8.1 changes nothing either, {label}");
            // The state both leave reads the same in 11.8.1, and the database opens in both.
            for args in [
                &["--db=db", "manifest_dump"][..],
                &["--db=db", "scan"],
                &["--db=db", "--column_family=cf1", "scan"],
            ] {
                let r = run_with_stdin(a.path(), &o.ldb, &[], args, "");
                let x = run_with_stdin(b.path(), &o.ldb, &[], args, "");
                let s = run_with_stdin(b.path(), &shale(), &["ldb"], args, "");
                assert_eq!(
                    r.stdout, x.stdout,
                    "11.8.1's {args:?} after each tool's update_manifest, {label}"
                );
                if args.contains(&"scan") {
                    assert_eq!(r.stdout, s.stdout, "{args:?} in Shale, {label}");
                }
            }
        }
        // A missing table fails, naming it.
        let sst = files_with(b.path(), ".sst").last().unwrap().clone();
        std::fs::remove_file(b.path().join("db").join(&sst)).unwrap();
        let _ = std::fs::remove_file(a.path().join("db").join(&sst));
        let args = ["--db=db", "update_manifest", "--update_temperatures"];
        let s = run_with_stdin(b.path(), &shale(), &["ldb"], &args, "");
        assert_eq!(s.status, Some(1), "{label}: {}", s.stderr);
        assert_eq!(
            last_line(&s.stderr),
            format!(
                "Failed: failed to update manifest: IO error: No such file or directory: While opening a file \
                 for sequentially reading: db/{sst}: No such file or directory"
            ),
            "{label}"
        );
        if let Some(o) = o11 {
            let r = run_with_stdin(a.path(), &o.ldb, &[], &args, "");
            assert_eq!(r.status, s.status, "{label}");
            assert_eq!(r.stdout, s.stdout, "{label}");
            assert_eq!(last_line(&r.stderr), last_line(&s.stderr), "{label}");
        }
    }
}
