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
}

/// The "rocksdb.external_sst_file.global_seqno" line RocksDB 11.8.1's
/// `sst_dump --show_properties` prints for each table of `dir/db` holding it.
fn global_seqno_lines(o: &Oracle, dir: &std::path::Path, db: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut tables: Vec<String> = std::fs::read_dir(dir.join(db))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sst"))
        .collect();
    tables.sort();
    for t in tables {
        let f = format!("--file={db}/{t}");
        let out = run_in(dir, &o.sst_dump, &[], &[f.as_str(), "--show_properties"]);
        ok(&out, "sst_dump --show_properties");
        for l in String::from_utf8_lossy(&out.stdout).lines() {
            if l.contains("rocksdb.external_sst_file.global_seqno") {
                lines.push(l.trim().to_string());
            }
        }
    }
    lines
}

/// `ingest_extern_sst` writes the sequence number it assigns into the ingested file's
/// global seqno property (ldb's `--write_global_seqno`, true by default), or leaves it 0
/// with `--write_global_seqno=false` (and warns as RocksDB 11.8.1's ldb warns); with
/// `--allow_global_seqno=false` it refuses as ldb refuses. Each case is run by 11.8.1's
/// ldb and Shale's on copies of one database (a key of the file's range in the memtable,
/// so the file gets a sequence number), on external files written by 11.8.1's and by
/// Shale's `write_extern_sst`, also hard-linked (`--move_files`): both print the same, the
/// property 11.8.1's `sst_dump --show_properties` reads is the same, and both ldbs scan the
/// same keys from both databases.
#[test]
fn ingest_writes_the_global_seqno_as_ldb_does() {
    let oracles = oracles();
    let Some(o) = oracles.iter().find(|o| o.major == 11) else {
        println!("no RocksDB 11.8.1: nothing to compare against");
        return;
    };
    let lines: String = (0..50).map(|i| format!("k{i:03} ==> v{i}\n")).collect();
    for (writer, writer_pre) in [(&o.ldb, &[][..]), (&shale(), &["ldb"][..])] {
        for extra in [
            &[][..],
            &["--write_global_seqno=true"],
            &["--write_global_seqno"],
            &["--write_global_seqno=false"],
            &["--allow_global_seqno=false"],
            &["--allow_global_seqno=false", "--write_global_seqno=false"],
            &["--move_files"],
        ] {
            let mut got = Vec::new();
            for (prog, pre) in [(&o.ldb, &[][..]), (&shale(), &["ldb"][..])] {
                let d = tempfile::tempdir().unwrap();
                let cwd = d.path();
                let mut args: Vec<&str> = writer_pre.to_vec();
                args.extend(["--db=scratch", "--create_if_missing", "write_extern_sst", "ext.sst"]);
                let mut child = Command::new(writer)
                    .current_dir(cwd)
                    .args(&args)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                child.stdin.take().unwrap().write_all(lines.as_bytes()).unwrap();
                ok(&child.wait_with_output().unwrap(), "write_extern_sst");
                for kv in [["k001", "old"], ["k900", "x"]] {
                    let put = ["--db=db", "--create_if_missing", "put", kv[0], kv[1]];
                    ok(&run_in(cwd, &o.ldb, &[], &put), "put");
                }
                let mut args = vec!["--db=db", "ingest_extern_sst", "ext.sst"];
                args.extend_from_slice(extra);
                let out = run_in(cwd, prog, pre, &args);
                let printed = (
                    out.status.code(),
                    String::from_utf8_lossy(&out.stdout).into_owned(),
                    String::from_utf8_lossy(&out.stderr).into_owned(),
                );
                let props = global_seqno_lines(o, cwd, "db");
                let mut scans = Vec::new();
                for (p, pp) in [(&o.ldb, &[][..]), (&shale(), &["ldb"][..])] {
                    let s = run_in(cwd, p, pp, &["--db=db", "scan"]);
                    ok(&s, "scan");
                    scans.push(String::from_utf8_lossy(&s.stdout).into_owned());
                }
                assert_eq!(
                    scans[0],
                    scans[1],
                    "11.8.1's and Shale's scan after {extra:?} by {}",
                    prog.display()
                );
                // A hard-linked file is the source: it holds the number too.
                let source = if extra.contains(&"--move_files") {
                    None
                } else {
                    Some(global_seqno_lines(o, cwd, "."))
                };
                got.push((printed, props, scans.remove(0), source));
            }
            assert_eq!(
                got[0],
                got[1],
                "ingest_extern_sst {extra:?} of a file written by {}",
                writer.display()
            );
            let (printed, props, scan, _) = &got[0];
            let writes = printed.0 == Some(0) && !extra.iter().any(|e| e.ends_with("=false"));
            if printed.0 == Some(0) {
                assert_eq!(scan.lines().count(), 51, "{scan}");
                assert!(scan.contains("k001 ==> v1\n"), "{scan}");
                // Two puts, then the file: sequence number 3.
                let want = if writes { "0x0300000000000000" } else { "0x0000000000000000" };
                assert_eq!(
                    props,
                    &vec![format!("# rocksdb.external_sst_file.global_seqno: {want}")],
                    "{extra:?}"
                );
            } else if extra.contains(&"--write_global_seqno=false") {
                // The file needs a number, which is not allowed.
                assert!(printed.2.contains("Global seqno is required, but disabled"), "{}", printed.2);
            } else {
                assert!(printed.2.contains("ldb cannot write global_seqno"), "{}", printed.2);
            }
        }
    }
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
