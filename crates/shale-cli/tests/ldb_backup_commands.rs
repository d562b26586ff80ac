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

/// checkpoint, backup, restore, write_extern_sst and ingest_extern_sst print what RocksDB
/// 11.8.1's ldb prints (exit status, stdout, first line of stderr: ldb reports the
/// external-file commands' success there), and what they leave reads back the same in the
/// oracle.
#[test]
fn backup_commands_print_what_ldb_prints() {
    let oracles = oracles();
    for (label, db) in databases(&oracles) {
        for case in [
            only11(&["--db=db", "checkpoint", "--checkpoint_dir=db/cp"]),
            only11(&["--db=db", "checkpoint"]),
            only11(&["--db=db", "backup", "--backup_dir=db/bk"]),
            only11(&["--db=db", "backup"]),
            only11(&["--db=db/restored", "restore", "--backup_dir=db/nothing"]),
            only11(&["--db=db", "write_extern_sst", "db/ext.sst"]),
        ] {
            check("ldb", &label, db.path(), &oracles, &case, &exact, None);
        }
        // A missing input file: the same exit status and words up to the I/O error, whose
        // text is the file system layer's (Shale's differs from RocksDB's Env).
        for o in oracles.iter().filter(|o| o.major == 11) {
            let (r, s) =
                run_both(db.path(), &o.ldb, "ldb", &["--db=db", "ingest_extern_sst", "db/missing.sst"]);
            assert_eq!(r.status, s.status);
            let head = "Failed: failed to ingest external SST: IO error: ";
            assert!(r.stderr.starts_with(head) && s.stderr.starts_with(head), "{} / {}", r.stderr, s.stderr);
            assert!(s.stderr.contains("db/missing.sst"), "{}", s.stderr);
        }
        // A backup made by each, restored by each, read by the oracle.
        for o in oracles.iter().filter(|o| o.major == 11) {
            let a = tempfile::tempdir().unwrap();
            let b = tempfile::tempdir().unwrap();
            copy_dir(&db.path().join("db"), &a.path().join("db"));
            copy_dir(&db.path().join("db"), &b.path().join("db"));
            for (dir, prog, pre) in [(a.path(), &o.ldb, &[][..]), (b.path(), &shale(), &["ldb"][..])] {
                for s in [
                    &["--db=db", "backup", "--backup_dir=bk"][..],
                    &["--db=restored", "restore", "--backup_dir=bk"],
                    &["--db=db", "checkpoint", "--checkpoint_dir=cp"],
                ] {
                    let out = run_in(dir, prog, pre, s);
                    ok(&out, &format!("{s:?} by {}", prog.display()));
                }
            }
            for d in ["restored", "cp"] {
                for cf in ["default", "cf1"] {
                    let args = [format!("--db={d}"), format!("--column_family={cf}"), "dump".to_string()];
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    let ra = run_in(a.path(), &o.ldb, &[], &args);
                    let rb = run_in(b.path(), &o.ldb, &[], &args);
                    assert_eq!(ra.stdout, rb.stdout, "{d} {cf} on a database {label}");
                    assert_eq!(ra.status.code(), rb.status.code(), "{d} {cf} on a database {label}");
                }
            }
        }
    }
}
