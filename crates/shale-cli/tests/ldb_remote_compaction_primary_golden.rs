//! Golden: `shale ldb remote_compaction_primary` hands its compaction to a worker and installs
//! the result: with RocksDB 11.8.1's `ldb remote_compaction_worker` (when it runs here) and
//! with Shale's own worker (always: so CI, without RocksDB, runs the Shale + Shale case).
//!
//! The database (written by Shale's ldb, and by 11.8.1's and Debian's 7.8.3 when they run) has one column family
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
//! What legitimately differs: file numbers and sizes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::remote::{mask_result_size, pair, shape, write};
use golden::*;

use std::path::Path;

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
    // A database Debian's 7.8.3 wrote, when it is installed (CI has it).
    if let Some(o7) = oracles.iter().find(|o| o.major == 7) {
        writers.push(("7.8.3", &o7.ldb, &[]));
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
                assert_eq!(shape(ours.path(), None), shape(theirs.path(), None), "{what}");
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
            assert_eq!(shape(ours.path(), None), ["L6: 1"], "{what}");
            let left: Vec<_> = std::fs::read_dir(ours.path().join("job/output"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".sst"))
                .collect();
            assert!(left.is_empty(), "{what}: the outputs were moved into the database: {left:?}");
        }
    }
}
