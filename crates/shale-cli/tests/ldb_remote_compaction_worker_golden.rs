//! Golden: RocksDB 11.8.1's `ldb remote_compaction_primary` with `shale ldb
//! remote_compaction_worker` as its worker ends with the database RocksDB's own worker
//! leaves, on a database written by 11.8.1's ldb and on one written by Shale's.
//!
//! The database has one column family (11.8.1's primary fails with more) and four L0
//! tables: puts, an overwrite, a deletion. Two copies of it: on one 11.8.1's primary runs
//! with 11.8.1's worker, on the other with Shale's. Sequencing is the protocol's own: the
//! primary is started, then the worker, which polls (every 100 ms, up to 120 s) for the
//! `input.bin` the primary writes; the primary polls for the worker's `result.bin`, then
//! installs it. Nothing here sleeps.
//!
//! Compared: both commands' exit status and stdout (the worker's result size masked: each
//! worker describes its own tables); then, after the primary installed the result,
//! `scan` by 11.8.1's ldb and by Shale's (the expected keys and values, the same on both
//! copies), `checkconsistency`, and the shape of the tree (one table, on L6). What
//! legitimately differs: file numbers and sizes; the sequence numbers in the output table
//! (11.8.1 zeroes them at the bottommost level, Shale's compaction does not yet).
//!
//! Needs 11.8.1's ldb (its primary); skipped with the reason printed without it. The worker
//! alone is tested without RocksDB in ldb_remote_compaction_worker.rs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

use std::path::Path;
use std::process::{Command, Stdio};

fn write(dir: &Path, ldb: &Path, pre: &[&str]) {
    let steps: &[&[&str]] = &[
        &["--db=db", "--create_if_missing", "put", "a", "1"],
        &["--db=db", "batchput", "b", "2", "c", "3", "d", "x"],
        &["--db=db", "put", "a", "4"],
        &["--db=db", "delete", "c"],
        &["--db=db", "put", "e", "5"],
    ];
    for s in steps {
        let mut args = s.to_vec();
        args.push("--auto_compaction=false");
        ok(&run_in(dir, ldb, pre, &args), &format!("{} {args:?}", ldb.display()));
    }
}

/// Runs 11.8.1's primary and `worker` (prog + leading args) in `dir` on `db` with `job`;
/// returns (primary's output, worker's output).
fn pair(dir: &Path, primary: &Path, worker: &Path, worker_pre: &[&str]) -> (Printed, Printed) {
    std::fs::create_dir(dir.join("job")).unwrap();
    let p = Command::new(primary)
        .current_dir(dir)
        .args(["--db=db", "remote_compaction_primary", "--job_dir=job"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let w = run_in(dir, worker, worker_pre, &["--db=db", "remote_compaction_worker", "--job_dir=job"]);
    let p = p.wait_with_output().unwrap();
    let printed = |o: std::process::Output| Printed {
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        status: o.status.code(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    };
    (printed(p), printed(w))
}

fn mask_result_size(s: &str) -> String {
    match s.find(" (") {
        Some(i) if s.starts_with("remote_compaction_worker: OK") => format!("{} (N bytes result)\n", &s[..i]),
        _ => s.to_string(),
    }
}

/// The tables per level, from manifest_dump: "L6: 1".
fn shape(dir: &Path, ldb: &Path) -> Vec<String> {
    let o = run_in(dir, ldb, &[], &["--db=db", "manifest_dump"]);
    ok(&o, "manifest_dump");
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut out = Vec::new();
    let mut level = None;
    let mut count = 0;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("--- level ") {
            if let Some(l) = level.take() {
                if count > 0 {
                    out.push(format!("L{l}: {count}"));
                }
            }
            level = rest.split(' ').next().map(str::to_string);
            count = 0;
        } else if level.is_some() && line.starts_with(' ') && line.contains(':') {
            count += 1;
        } else if level.is_some() && !line.starts_with(' ') {
            if let Some(l) = level.take() {
                if count > 0 {
                    out.push(format!("L{l}: {count}"));
                }
            }
        }
    }
    out
}

#[test]
fn rocksdb_primary_installs_shale_workers_result() {
    let oracles = oracles();
    let Some(o) = oracles.iter().find(|o| o.major == 11) else {
        println!("skipping: RocksDB 11.8.1's ldb (the primary) does not run here");
        return;
    };
    let expected = "a ==> 4\nb ==> 2\nd ==> x\ne ==> 5\n";
    for (label, writer, pre) in [("11.8.1", o.ldb.clone(), vec![]), ("Shale", shale(), vec!["ldb"])] {
        let src = tempfile::tempdir().unwrap();
        write(src.path(), &writer, &pre);
        let theirs = tempfile::tempdir().unwrap();
        let ours = tempfile::tempdir().unwrap();
        copy_dir(&src.path().join("db"), &theirs.path().join("db"));
        copy_dir(&src.path().join("db"), &ours.path().join("db"));

        let (p11, w11) = pair(theirs.path(), &o.ldb, &o.ldb, &[]);
        let (p, w) = pair(ours.path(), &o.ldb, &shale(), &["ldb"]);
        let what = format!("database written by {label}");
        assert_eq!(w11.status, Some(0), "{what}: 11.8.1's worker: {}", w11.stderr);
        assert_eq!(w.status, Some(0), "{what}: Shale's worker: {}", w.stderr);
        assert_eq!(mask_result_size(&w.stdout), mask_result_size(&w11.stdout), "{what}");
        assert_eq!((p.status, &p.stdout), (p11.status, &p11.stdout), "{what}: primary: {}", p.stderr);
        assert_eq!(p.stdout, "remote_compaction_primary: OK\n", "{what}");

        for (tool, tpre) in [(&o.ldb, vec![]), (&shale(), vec!["ldb"])] {
            for dir in [theirs.path(), ours.path()] {
                let s = run_in(dir, tool, &tpre, &["--db=db", "scan"]);
                ok(&s, "scan");
                assert_eq!(String::from_utf8_lossy(&s.stdout), expected, "{what}: {} scan", tool.display());
                let c = run_in(dir, tool, &tpre, &["--db=db", "checkconsistency"]);
                ok(&c, "checkconsistency");
                assert_eq!(String::from_utf8_lossy(&c.stdout), "OK\n", "{what}");
            }
        }
        assert_eq!(shape(ours.path(), &o.ldb), ["L6: 1"], "{what}");
        assert_eq!(shape(ours.path(), &o.ldb), shape(theirs.path(), &o.ldb), "{what}");
    }
}
