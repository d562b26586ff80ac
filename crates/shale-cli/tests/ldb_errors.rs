//! Bad input to `shale ldb` and `shale sst_dump` gives a clear error and a non-zero exit
//! status, never a panic: missing database, corrupt files, unknown flags and commands, and
//! the commands whose feature is not built yet (NotSupported).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("junk.sst"), vec![0x5a; 3000]).unwrap();
    std::fs::create_dir(d.path().join("db")).unwrap();
    std::fs::write(d.path().join("db/CURRENT"), b"garbage").unwrap();
    let o = run_in(d.path(), &shale(), &[], args);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn bad_input_fails_cleanly() {
    let cases: &[(&[&str], &str)] = &[
        (&["ldb", "--db=missing", "scan"], "Failed: "),
        (&["ldb", "--db=db", "scan"], "Failed: Corruption"),
        (&["ldb", "--db=missing", "scan", "--bogus"], "Invalid command-line flag bogus"),
        (&["ldb", "--db=missing", "bogus"], "Unknown command"),
        (&["ldb"], "ldb - RocksDB Tool"),
        (&["ldb", "--db=missing", "get"], "Failed: "),
        (&["ldb", "--db=missing", "scan", "--hex", "--from=zz"], "Must start with 0x"),
        (&["ldb", "--db=missing", "manifest_dump"], "Failed: "),
        (&["ldb", "dump_wal", "--walfile=missing.log"], "Failed: "),
        (&["ldb", "dump_wal", "--header"], "Argument walfile must be specified."),
        (&["sst_dump", "--file=junk.sst"], "junk.sst is not a valid SST file"),
        (&["sst_dump", "--file=missing.sst"], "No such file or directory"),
        (&["sst_dump", "--bogus"], "Unrecognized argument '--bogus'"),
        (&["sst_dump", "--file=junk.sst", "--command=raw"], "junk.sst is not a valid SST file"),
    ];
    for (args, want) in cases {
        let (code, out, err) = run(args);
        assert_eq!(code, Some(1), "{args:?}: {out} {err}");
        assert!(err.contains(want), "{args:?}: stderr {err:?} lacks {want:?}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn remote_compaction_without_job_dir_and_unknown_commands_fail() {
    // As 11.8.1's: the job directory is required (checked before the database is opened).
    for cmd in ["remote_compaction_primary", "remote_compaction_worker"] {
        let (code, _, err) = run(&["ldb", "--db=db", cmd]);
        assert_eq!(code, Some(1), "{cmd}");
        assert_eq!(err, "Failed: --job_dir is required\n", "{cmd}");
    }
    // RocksDB 11.8.1's ldb (and 7.8.3's) has no dump_trace: "Unknown command", then the usage.
    let (code, _, err) = run(&["ldb", "--db=db", "dump_trace", "--trace_file=t"]);
    assert_eq!(code, Some(1));
    assert!(err.starts_with("Unknown command\n"), "{err}");
}
