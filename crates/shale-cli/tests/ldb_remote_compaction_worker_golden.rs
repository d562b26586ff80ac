//! Golden: RocksDB 11.8.1's `ldb remote_compaction_primary` with `shale ldb
//! remote_compaction_worker` as its worker ends with the database RocksDB's own worker
//! leaves, on databases written by 11.8.1's ldb, by Debian's 7.8.3 ldb (when installed) and
//! by Shale's.
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
//! legitimately differs: file numbers and sizes.
//!
//! Needs 11.8.1's ldb (its primary); skipped with the reason printed without it. The worker
//! alone is tested without RocksDB in ldb_remote_compaction_worker.rs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::remote::{mask_result_size, pair, shape, write};
use golden::*;

#[test]
fn rocksdb_primary_installs_shale_workers_result() {
    let oracles = oracles();
    let Some(o) = oracles.iter().find(|o| o.major == 11) else {
        println!("skipping: RocksDB 11.8.1's ldb (the primary) does not run here");
        return;
    };
    let expected = "a ==> 4\nb ==> 2\nd ==> x\ne ==> 5\n";
    // Databases written by 11.8.1, by Debian's 7.8.3 (when installed) and by Shale.
    let mut writers = vec![("11.8.1", o.ldb.clone(), vec![]), ("Shale", shale(), vec!["ldb"])];
    if let Some(o7) = oracles.iter().find(|o| o.major == 7) {
        writers.push(("7.8.3", o7.ldb.clone(), vec![]));
    }
    for (label, writer, pre) in writers {
        let src = tempfile::tempdir().unwrap();
        write(src.path(), &writer, &pre);
        let theirs = tempfile::tempdir().unwrap();
        let ours = tempfile::tempdir().unwrap();
        copy_dir(&src.path().join("db"), &theirs.path().join("db"));
        copy_dir(&src.path().join("db"), &ours.path().join("db"));

        let (p11, w11) = pair(theirs.path(), (&o.ldb, &[]), (&o.ldb, &[]));
        let (p, w) = pair(ours.path(), (&o.ldb, &[]), (&shale(), &["ldb"]));
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
        assert_eq!(shape(ours.path(), Some(&o.ldb)), ["L6: 1"], "{what}");
        assert_eq!(shape(ours.path(), Some(&o.ldb)), shape(theirs.path(), Some(&o.ldb)), "{what}");
    }
}
