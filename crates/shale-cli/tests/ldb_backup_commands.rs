//! `shale ldb` checkpoint, backup, restore, write_extern_sst and ingest_extern_sst: a
//! database put through each comes out with the same keys (`shale ldb scan`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

use std::io::Write;
use std::process::{Command, Stdio};

fn scan(cwd: &std::path::Path, db: &str) -> String {
    let o = run_in(cwd, &shale(), &[], &["ldb", &format!("--db={db}"), "scan"]);
    ok(&o, "scan");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn checkpoint_backup_restore_and_external_files() {
    let d = tempfile::tempdir().unwrap();
    let cwd = d.path();
    // An external file from stdin, ingested into a new database.
    let mut child = Command::new(shale())
        .current_dir(cwd)
        .args(["ldb", "--db=scratch", "--create_if_missing", "write_extern_sst", "ext.sst"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines: String = (0..50).map(|i| format!("k{i:03} ==> v{i}\n")).collect();
    child.stdin.take().unwrap().write_all(lines.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    ok(&o, "write_extern_sst");
    ok(&run_in(cwd, &shale(), &[], &["ldb", "--db=db", "--create_if_missing", "put", "k001", "old"]), "put");
    ok(&run_in(cwd, &shale(), &[], &["ldb", "--db=db", "ingest_extern_sst", "ext.sst"]), "ingest");
    let want = scan(cwd, "db");
    assert_eq!(want.lines().count(), 50, "{want}");
    assert!(want.contains("k001 ==> v1\n"), "{want}");

    ok(&run_in(cwd, &shale(), &[], &["ldb", "--db=db", "checkpoint", "--checkpoint_dir=cp"]), "checkpoint");
    assert_eq!(scan(cwd, "cp"), want);
    ok(
        &run_in(cwd, &shale(), &[], &["ldb", "--db=db", "backup", "--backup_dir=bk", "--num_threads=2"]),
        "backup",
    );
    ok(&run_in(cwd, &shale(), &[], &["ldb", "--db=restored", "restore", "--backup_dir=bk"]), "restore");
    assert_eq!(scan(cwd, "restored"), want);

    let o = run_in(
        cwd,
        &shale(),
        &[],
        &["ldb", "--db=db", "ingest_extern_sst", "ext.sst", "--write_global_seqno=true"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("Not implemented"));
}
