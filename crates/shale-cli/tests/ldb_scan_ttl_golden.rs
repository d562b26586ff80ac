//! Golden: `shale ldb --ttl scan` on a TTL database (values end with their 4-byte write
//! time) prints what RocksDB 11.8.1's `ldb --ttl scan` prints: the values without the
//! write time; with `--timestamp` a `Scanning key-values from ... to ...` line and each
//! entry's write time first (strftime `%c`, local time: the test runs both tools with
//! TZ=UTC); `--start_time`/`--end_time` select by write time; and then, as 11.8.1 does
//! after every TTL command, `Failed: ldb doesn't support TTL DB with multiple column
//! families` with exit status 1. `scan --timestamp` without `--ttl` is a plain scan.
//! No normalisation.
//!
//! The database, `tests/golden/ttl/db`, was written by 11.8.1 (`ldb --create_if_missing
//! --ttl batchput ...`); 11.8.1's output is recorded in `tests/golden/ttl/expected.txt`
//! for CI (re-record: `SHALE_ROCKSDB_11_BIN=... SHALE_GOLDEN_RECORD=1 cargo test -p
//! shale-cli --test ldb_scan_ttl_golden`). Not compared: `--ttl --column_family=<other>`,
//! on which 11.8.1 crashes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;
use std::path::Path;
use std::process::Command;

fn run_utc(src: &Path, prog: &Path, pre: &[&str], args: &[&str]) -> Printed {
    let d = tempfile::tempdir().unwrap();
    copy_dir(&src.join("db"), &d.path().join("db"));
    let o = Command::new(prog).current_dir(d.path()).env("TZ", "UTC").args(pre).args(args).output().unwrap();
    Printed {
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        status: o.status.code(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

const CASES: &[&[&str]] = &[
    &["--db=db", "--ttl", "scan"],
    &["--db=db", "--ttl", "scan", "--timestamp"],
    &["--db=db", "--ttl", "scan", "--timestamp", "--hex"],
    &["--db=db", "--ttl", "scan", "--max_keys=2", "--key_hex"],
    &["--db=db", "--ttl", "scan", "--from=k2", "--to=k9", "--no_value"],
    &["--db=db", "--ttl", "scan", "--timestamp", "--start_time=1", "--end_time=2"],
    &["--db=db", "--ttl", "scan", "--start_time=5", "--end_time=2"],
    &["--db=db", "--ttl", "--column_family=default", "scan"],
    &["--db=db", "scan", "--timestamp", "--value_hex"],
];

#[test]
fn scan_ttl_matches_ldb() {
    let oracles = oracles();
    let o11 = oracles.iter().find(|o| o.major == 11);
    let record = o11.is_some() && std::env::var_os("SHALE_GOLDEN_RECORD").is_some();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/ttl");
    let (mut recorded, mut shale_text) = (String::new(), String::new());
    for args in CASES {
        let s = run_utc(&root, &shale(), &["ldb"], args);
        if let Some(o) = o11 {
            let r = run_utc(&root, &o.ldb, &[], args);
            assert_eq!(r.status, s.status, "exit status of ldb {args:?}: {} / {}", r.stderr, s.stderr);
            assert_eq!(r.stdout, s.stdout, "stdout of ldb {args:?}");
            assert_eq!(first_line(&r.stderr), first_line(&s.stderr), "stderr of ldb {args:?}");
            recorded.push_str(&case_text(args, &r));
        }
        shale_text.push_str(&case_text(args, &s));
    }
    let expected_path = root.join("expected.txt");
    check_recording(&expected_path, record, o11.is_some(), &recorded, &shale_text);
}
