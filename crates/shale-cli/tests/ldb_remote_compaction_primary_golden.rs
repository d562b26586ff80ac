//! Golden: `shale ldb remote_compaction_primary` hands its compaction to a worker and installs
//! the result: with RocksDB 11.8.1's `ldb remote_compaction_worker` (when it runs here) and
//! with Shale's own worker (always: so CI, without RocksDB, runs the Shale + Shale case).
//!
//! The database (written by Shale's ldb, and by 11.8.1's when it runs) has one column family
//! and four L0 tables plus a WAL: puts, an overwrite, a deletion. Sequencing is the
//! protocol's own: the primary is started, then the worker, which polls (every 100 ms, up to
//! 120 s) for the `input.bin` the primary writes; the primary polls for the worker's
//! `result.bin`, then moves the outputs into the database and installs them through its
//! MANIFEST. Nothing here sleeps.
//!
//! Compared: both commands' exit status and stdout (the worker's result size masked: each
//! worker describes its own tables) with what 11.8.1's pair prints on a copy of the same
//! database; then `scan` (the expected keys and values) and `checkconsistency` by Shale's ldb
//! and by 11.8.1's, and the tree's shape (one table, on L6, nothing left in `job/output`).
//! What legitimately differs: file numbers and sizes, and sequence numbers (11.8.1's worker
//! zeroes them at the bottommost level, Shale's compaction does not yet).
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

fn printed(o: std::process::Output) -> Printed {
    Printed {
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        status: o.status.code(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Runs the primary (prog + leading args), then the worker, in `dir` on `db` with `job`.
fn pair(dir: &Path, primary: (&Path, &[&str]), worker: (&Path, &[&str])) -> (Printed, Printed) {
    std::fs::create_dir(dir.join("job")).unwrap();
    let p = Command::new(primary.0)
        .current_dir(dir)
        .args(primary.1)
        .args(["--db=db", "remote_compaction_primary", "--job_dir=job"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let w = run_in(dir, worker.0, worker.1, &["--db=db", "remote_compaction_worker", "--job_dir=job"]);
    (printed(p.wait_with_output().unwrap()), printed(w))
}

fn mask_result_size(s: &str) -> String {
    match s.find(" (") {
        Some(i) if s.starts_with("remote_compaction_worker: OK") => format!("{} (N bytes result)\n", &s[..i]),
        _ => s.to_string(),
    }
}

/// The live tables per level, from Shale's list_live_files_metadata-free view: the
/// MANIFEST's current files, as `shale ldb manifest_dump` prints them ("L6: 1").
fn shape(dir: &Path) -> Vec<String> {
    let o = run_in(dir, &shale(), &["ldb"], &["--db=db", "manifest_dump"]);
    ok(&o, "manifest_dump");
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut out = Vec::new();
    let mut level: Option<String> = None;
    let mut count = 0;
    let close = |level: &mut Option<String>, count: &mut usize, out: &mut Vec<String>| {
        if let Some(l) = level.take() {
            if *count > 0 {
                out.push(format!("L{l}: {count}"));
            }
        }
        *count = 0;
    };
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("--- level ") {
            close(&mut level, &mut count, &mut out);
            level = rest.split(' ').next().map(str::to_string);
        } else if level.is_some() && line.starts_with(' ') && line.contains(':') {
            count += 1;
        } else if level.is_some() {
            close(&mut level, &mut count, &mut out);
        }
    }
    close(&mut level, &mut count, &mut out);
    out
}

#[test]
fn shale_primary_installs_a_workers_result() {
    let oracles = oracles();
    let o11 = oracles.iter().find(|o| o.major == 11);
    if o11.is_none() {
        println!("RocksDB 11.8.1's ldb does not run here: only Shale's primary with Shale's worker");
    }
    let expected = "a ==> 4\nb ==> 2\nd ==> x\ne ==> 5\n";
    let shale_bin = shale();
    let mut writers: Vec<(&str, &Path, &[&str])> = vec![("Shale", &shale_bin, &["ldb"])];
    if let Some(o) = o11 {
        writers.push(("11.8.1", &o.ldb, &[]));
    }
    for (label, writer, pre) in writers {
        let src = tempfile::tempdir().unwrap();
        write(src.path(), writer, pre);
        let mut workers: Vec<(&str, &Path, &[&str])> = vec![("Shale", &shale_bin, &["ldb"])];
        if let Some(o) = o11 {
            workers.push(("11.8.1", &o.ldb, &[]));
        }
        for (wlabel, worker, wpre) in workers {
            let what = format!("database written by {label}, {wlabel}'s worker");
            let ours = tempfile::tempdir().unwrap();
            copy_dir(&src.path().join("db"), &ours.path().join("db"));
            let (p, w) = pair(ours.path(), (&shale_bin, &["ldb"]), (worker, wpre));
            assert_eq!(w.status, Some(0), "{what}: worker: {}", w.stderr);
            assert_eq!(p.status, Some(0), "{what}: primary: {}", p.stderr);
            assert_eq!(p.stdout, "remote_compaction_primary: OK\n", "{what}");
            assert!(w.stdout.starts_with("remote_compaction_worker: OK ("), "{what}: {}", w.stdout);
            if let Some(o) = o11 {
                // What 11.8.1's own pair prints on a copy of the same database.
                let theirs = tempfile::tempdir().unwrap();
                copy_dir(&src.path().join("db"), &theirs.path().join("db"));
                let (p11, w11) = pair(theirs.path(), (&o.ldb, &[]), (&o.ldb, &[]));
                assert_eq!((p.status, &p.stdout), (p11.status, &p11.stdout), "{what}");
                assert_eq!(mask_result_size(&w.stdout), mask_result_size(&w11.stdout), "{what}");
                assert_eq!(shape(ours.path()), shape(theirs.path()), "{what}");
            }
            let mut tools: Vec<(&Path, &[&str])> = vec![(&shale_bin, &["ldb"])];
            if let Some(o) = o11 {
                tools.push((&o.ldb, &[]));
            }
            for (tool, tpre) in tools {
                let s = run_in(ours.path(), tool, tpre, &["--db=db", "scan"]);
                ok(&s, "scan");
                assert_eq!(String::from_utf8_lossy(&s.stdout), expected, "{what}: {} scan", tool.display());
                let c = run_in(ours.path(), tool, tpre, &["--db=db", "checkconsistency"]);
                ok(&c, "checkconsistency");
                assert_eq!(String::from_utf8_lossy(&c.stdout), "OK\n", "{what}");
            }
            assert_eq!(shape(ours.path()), ["L6: 1"], "{what}");
            let left: Vec<_> = std::fs::read_dir(ours.path().join("job/output"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".sst"))
                .collect();
            assert!(left.is_empty(), "{what}: the outputs were moved into the database: {left:?}");
        }
    }
}
