//! Shared by the golden tests: run RocksDB's `ldb`/`sst_dump` (the oracles) and `shale ldb`
//! / `shale sst_dump` on identical copies of a database, at the same relative path (`db`),
//! and compare what they print.
//!
//! Oracles: RocksDB 11.8.1's release tools at `../shared/tools/rocksdb-11.8.1/bin/` beside
//! the checkout, and Debian's RocksDB 7.8.3 `ldb`/`sst_dump` on PATH. One that is absent or
//! does not run on this machine (the 11.8.1 build uses the build machine's instruction set
//! and dies with SIGILL elsewhere) is skipped with the reason printed.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Oracle {
    pub name: &'static str,
    pub ldb: PathBuf,
    pub sst_dump: PathBuf,
}

fn runs(tool: &Path) -> Result<(), String> {
    match Command::new(tool).arg("--version").output() {
        Err(e) => Err(format!("{}: {e}", tool.display())),
        Ok(o) => {
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                if let Some(sig) = o.status.signal() {
                    return Err(format!(
                        "{} died with signal {sig} (built for another processor?)",
                        tool.display()
                    ));
                }
            }
            let _ = o;
            Ok(())
        }
    }
}

/// The oracles that run here; prints why each missing one is skipped.
pub fn oracles() -> Vec<Oracle> {
    let mut v = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    // `$SHALE_ROCKSDB_11_BIN` names another 11.8.1 build (as for the KV engine's interop tests).
    let bin = std::env::var_os("SHALE_ROCKSDB_11_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("shared/tools/rocksdb-11.8.1/bin"));
    let o11 = Oracle { name: "RocksDB 11.8.1", ldb: bin.join("ldb"), sst_dump: bin.join("sst_dump") };
    match runs(&o11.ldb).and_then(|()| runs(&o11.sst_dump)) {
        Ok(()) => v.push(o11),
        Err(e) => println!("skipping the RocksDB 11.8.1 oracle: {e}"),
    }
    let o7 = Oracle { name: "RocksDB 7.8.3 (Debian)", ldb: "ldb".into(), sst_dump: "sst_dump".into() };
    match runs(&o7.ldb).and_then(|()| runs(&o7.sst_dump)) {
        Ok(()) => v.push(o7),
        Err(e) => println!("skipping the RocksDB 7.8.3 oracle (apt-get install rocksdb-tools): {e}"),
    }
    v
}

pub fn shale() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_shale"))
}

/// Runs `prog args` in `cwd`.
pub fn run_in(cwd: &Path, prog: &Path, pre: &[&str], args: &[&str]) -> Output {
    Command::new(prog).current_dir(cwd).args(pre).args(args).output().expect("run tool")
}

pub fn ok(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Writes a database with `ldb` (an oracle's, or `shale ldb`) in `dir/db`: two column
/// families, puts, a batch, deletes, a range deletion, a compaction, then more writes
/// flushed by a second compaction, so that nothing is left only in the WAL (opening a
/// database flushes recovered WAL data in Shale but not in RocksDB 7.8.3, which would
/// change the file lists compared). No key or value holds a NUL byte: ldb prints text
/// output through C strings, which end there, where Shale prints every byte.
pub fn write_db(dir: &Path, ldb: &Path, pre: &[&str]) {
    let steps: &[&[&str]] = &[
        &["--db=db", "--create_if_missing", "put", "a", "1"],
        &["--db=db", "put", "b", "2"],
        &["--db=db", "batchput", "c", "3", "d", "4", "k\u{1}", "bin"],
        &["--db=db", "delete", "a"],
        &["--db=db", "create_column_family", "cf1"],
        &["--db=db", "--column_family=cf1", "put", "x", "y"],
        &["--db=db", "compact"],
        &["--db=db", "put", "e", "5"],
        &["--db=db", "put", "--hex", "0x0102", "0xFF01"],
        &["--db=db", "singledelete", "zz"],
        &["--db=db", "deleterange", "b", "c"],
        &["--db=db", "compact", "--from=a", "--to=b"],
        &["--db=db", "--column_family=cf1", "compact"],
    ];
    for s in steps {
        ok(&run_in(dir, ldb, pre, s), &format!("{} {s:?}", ldb.display()));
    }
}

/// The databases every golden test runs on: written by each oracle and by Shale.
/// Returns (label, tempdir holding `db`).
pub fn databases(oracles: &[Oracle]) -> Vec<(String, tempfile::TempDir)> {
    let mut v = Vec::new();
    for o in oracles {
        let d = tempfile::tempdir().unwrap();
        write_db(d.path(), &o.ldb, &[]);
        v.push((format!("written by {}", o.name), d));
    }
    let d = tempfile::tempdir().unwrap();
    write_db(d.path(), &shale(), &["ldb"]);
    v.push(("written by Shale".to_string(), d));
    v
}

/// What a tool printed, after `normalise`.
pub struct Printed {
    pub stdout: String,
    pub status: Option<i32>,
}

/// Runs the oracle's tool and Shale's on fresh copies of `src/db` at the same relative
/// path; returns both outputs.
pub fn both(src: &Path, oracle: &Path, shale_sub: &str, args: &[&str]) -> (Printed, Printed) {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    copy_dir(&src.join("db"), &a.path().join("db"));
    copy_dir(&src.join("db"), &b.path().join("db"));
    let oa = run_in(a.path(), oracle, &[], args);
    let ob = run_in(b.path(), &shale(), &[shale_sub], args);
    let p = |o: &Output| Printed {
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        status: o.status.code(),
    };
    (p(&oa), p(&ob))
}

/// Asserts `shale ldb args` prints what `ldb args` prints, after `normalise` on both.
pub fn same_ldb(label: &str, src: &Path, o: &Oracle, args: &[&str], normalise: &dyn Fn(&str) -> String) {
    let (r, s) = both(src, &o.ldb, "ldb", args);
    assert_eq!(r.status, s.status, "exit status of {args:?} on a database {label}, oracle {}", o.name);
    assert_eq!(
        normalise(&r.stdout),
        normalise(&s.stdout),
        "output of ldb {args:?} on a database {label}, oracle {}",
        o.name
    );
}

/// Asserts `shale sst_dump args` prints what `sst_dump args` prints, after `normalise`.
pub fn same_sst_dump(label: &str, src: &Path, o: &Oracle, args: &[&str], normalise: &dyn Fn(&str) -> String) {
    let (r, s) = both(src, &o.sst_dump, "sst_dump", args);
    assert_eq!(
        r.status, s.status,
        "exit status of sst_dump {args:?} on a database {label}, oracle {}",
        o.name
    );
    assert_eq!(
        normalise(&r.stdout),
        normalise(&s.stdout),
        "output of sst_dump {args:?} on a database {label}, oracle {}",
        o.name
    );
}

/// No normalisation: byte-identical output.
pub fn exact(s: &str) -> String {
    s.to_string()
}

/// Files of `db` with the given suffix, sorted.
pub fn files_with(src: &Path, suffix: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(src.join("db"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(suffix))
        .collect();
    v.sort();
    v
}
