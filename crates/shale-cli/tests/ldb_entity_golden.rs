//! Golden: wide-column entities. `shale ldb put_entity`, `get_entity`, `multi_get_entity`,
//! and `scan`, `dump`, `idump`, `get`, `dump_wal --print_value` on entities, print what
//! RocksDB 11.8.1's ldb prints (7.8.3 has no wide columns), and `shale sst_dump
//! --command=scan` what 11.8.1's sst_dump prints on its tables. Normalised: only sst_dump's
//! first line, `options.env is <address>` (Shale prints `0x0`).
//!
//! The database, `tests/golden/entity/db`, was written by 11.8.1's ldb:
//! ```text
//! ldb --db=db --create_if_missing put_entity k1 :d1 a:1 b:2;  ldb --db=db put_entity k2 x:9
//! ldb --db=db put k3 plain;  ldb --db=db batchput k7 v7 k8 v8;  ldb --db=db create_column_family cf1
//! ldb --db=db --column_family=cf1 put_entity c1 :cv n:nv;  ldb --db=db compact
//! ldb --db=db put_entity k4 b:2 :dd;  ldb --db=db put_entity --hex 0x6B35 0x:0x41FF 0x6E:0x
//! ldb --db=db delete k7;  ldb --db=db put_entity k1 :new z:zz     (then rm db/LOG*)
//! ```
//! so entities sit in the last level, in level-0 tables (each ldb open flushes the WAL it
//! recovers) and in the WAL (`000057.log`: the newest k1). The write cases run
//! `put_entity` on a copy and then `scan` on that copy, with each tool. 11.8.1's output is
//! recorded in `tests/golden/entity/expected.txt` for CI (re-record:
//! `SHALE_ROCKSDB_11_BIN=... SHALE_GOLDEN_RECORD=1 cargo test -p shale-cli --test
//! ldb_entity_golden`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;
use std::path::Path;

/// Read cases, each on a fresh copy.
const READS: &[&[&str]] = &[
    &["--db=db", "scan"],
    &["--db=db", "scan", "--hex"],
    &["--db=db", "scan", "--value_hex"],
    &["--db=db", "scan", "--key_hex", "--from=0x6B32", "--max_keys=3"],
    &["--db=db", "scan", "--no_value"],
    &["--db=db", "--column_family=cf1", "scan"],
    &["--db=db", "dump"],
    &["--db=db", "dump", "--hex"],
    &["--db=db", "idump"],
    &["--db=db", "idump", "--value_hex"],
    &["--db=db", "get", "k1"],
    &["--db=db", "get", "k2"],
    &["--db=db", "get", "--value_hex", "k5"],
    &["--db=db", "get_entity", "k1"],
    &["--db=db", "get_entity", "k2"],
    &["--db=db", "get_entity", "k3"],
    &["--db=db", "get_entity", "--value_hex", "k5"],
    &["--db=db", "get_entity", "--hex", "0x6B34"],
    &["--db=db", "get_entity", "k7"],
    &["--db=db", "get_entity", "nope"],
    &["--db=db", "get_entity"],
    &["--db=db", "get_entity", "k1", "k2"],
    &["--db=db", "--column_family=cf1", "get_entity", "c1"],
    &["--db=db", "multi_get_entity", "k1", "k3", "nope", "k4", "k2"],
    &["--db=db", "multi_get_entity", "--hex", "0x6B31", "0x6B35", "0x00"],
    &["--db=db", "multi_get_entity", "--key_hex", "0x6B32"],
    &["--db=db", "multi_get_entity"],
    &["--db=db", "dump_wal", "--walfile=db/000057.log", "--print_value"],
    &["--db=db", "dump_wal", "--walfile=db/000057.log"],
];

/// `sst_dump` cases (RocksDB's SstFileDumper prints an entity's columns too).
const SST_DUMPS: &[&[&str]] = &[
    &["--file=db", "--command=scan"],
    &["--file=db", "--command=scan", "--output_hex"],
    &["--file=db/000056.sst", "--command=scan"],
];

/// Write cases: the command, then `scan` on the same copy (not `idump`: what it shows
/// depends on whether an automatic compaction ran in between).
const WRITES: &[&[&str]] = &[
    &["--db=db", "put_entity", "k6", "b:2", ":x", "a:1"],
    &["--db=db", "put_entity", "k1", "only:one"],
    &["--db=db", "put_entity", "k3", ":replaced"],
    &["--db=db", "put_entity", "--hex", "0x6B39", "0x:0x7A", "0x63:0x64"],
    &["--db=db", "--column_family=cf1", "put_entity", "c2", "q:r"],
    &["--db=db", "put_entity", "k6"],
    &["--db=db", "put_entity", "k6", "novalue"],
    &["--db=db", "put_entity", "k6", "a:b:c"],
    &["--db=db", "put_entity", "k6", "a:1", "a:2"],
];

fn printed(o: std::process::Output) -> Printed {
    Printed {
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        status: o.status.code(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Runs `steps` in order on one fresh copy of `root/db` with `prog`.
fn run_steps(root: &Path, prog: &Path, pre: &[&str], steps: &[&[&str]]) -> Vec<Printed> {
    let d = tempfile::tempdir().unwrap();
    copy_dir(&root.join("db"), &d.path().join("db"));
    steps.iter().map(|args| printed(run_in(d.path(), prog, pre, args))).collect()
}

#[test]
fn entity_commands_match_ldb() {
    let oracles = oracles();
    let o11 = oracles.iter().find(|o| o.major == 11);
    let record = o11.is_some() && std::env::var_os("SHALE_GOLDEN_RECORD").is_some();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/entity");
    let mut scripts: Vec<Vec<&[&str]>> = READS.iter().map(|a| vec![*a]).collect();
    for w in WRITES {
        let cf: &[&str] = if w.contains(&"--column_family=cf1") {
            &["--db=db", "--column_family=cf1", "scan"]
        } else {
            &["--db=db", "scan"]
        };
        scripts.push(vec![*w, cf]);
    }
    let (mut recorded, mut shale_text) = (String::new(), String::new());
    for steps in &scripts {
        let s = run_steps(&root, &shale(), &["ldb"], steps);
        if let Some(o) = o11 {
            let r = run_steps(&root, &o.ldb, &[], steps);
            for ((args, r), s) in steps.iter().zip(&r).zip(&s) {
                assert_eq!(r.status, s.status, "exit status of ldb {args:?}: {} / {}", r.stderr, s.stderr);
                assert_eq!(r.stdout, s.stdout, "stdout of ldb {args:?} (script {steps:?})");
                assert_eq!(first_line(&r.stderr), first_line(&s.stderr), "stderr of ldb {args:?}");
                recorded.push_str(&case_text(args, r));
            }
        }
        for (args, s) in steps.iter().zip(&s) {
            shale_text.push_str(&case_text(args, s));
        }
    }
    // sst_dump's first line names an object address (`options.env is 0x...`); Shale prints
    // `0x0` (README): that line is masked on both.
    let mask = |mut p: Printed| {
        if let Some(rest) = p.stdout.strip_prefix("options.env is ") {
            let rest = rest.split_once('\n').map_or("", |(_, r)| r);
            p.stdout = format!("options.env is 0x0\n{rest}");
        }
        p
    };
    for args in SST_DUMPS {
        let s = &mask(run_steps(&root, &shale(), &["sst_dump"], &[args]).remove(0));
        if let Some(o) = o11 {
            let r = &mask(run_steps(&root, &o.sst_dump, &[], &[args]).remove(0));
            assert_eq!(r.status, s.status, "exit status of sst_dump {args:?}: {} / {}", r.stderr, s.stderr);
            assert_eq!(r.stdout, s.stdout, "stdout of sst_dump {args:?}");
            assert_eq!(first_line(&r.stderr), first_line(&s.stderr), "stderr of sst_dump {args:?}");
            recorded.push_str(&case_text(args, r).replacen("### ldb", "### sst_dump", 1));
        }
        shale_text.push_str(&case_text(args, s).replacen("### ldb", "### sst_dump", 1));
    }
    check_recording(&root.join("expected.txt"), record, o11.is_some(), &recorded, &shale_text);
}
