//! Golden: `shale sst_dump --command=raw` prints what RocksDB 11.8.1's `sst_dump` prints
//! and writes the same `<file>_dump.txt`, byte for byte (footer, checksum legend,
//! metaindex, properties, index, range deletions, data blocks, summary), with and without
//! `--show_sequence_number_type`; and `--decode_blob_index` prints blob references as
//! 11.8.1 does. The only normalisation is sst_dump's first line (`options.env is 0x...`,
//! an object address in RocksDB).
//!
//! Cases: the tables of the databases every golden test uses (written by 11.8.1, 7.8.3
//! and Shale), judged live by 11.8.1; and fixtures written by 11.8.1 in
//! `tests/golden/sst/` (a bloom filter, 256-byte blocks, a range tombstone, a key and a
//! value holding NUL bytes; a table of blob references and its blob file), whose 11.8.1
//! dumps are recorded beside them, so that CI without 11.8.1 still checks them
//! (re-record: `SHALE_ROCKSDB_11_BIN=... SHALE_GOLDEN_RECORD=1 cargo test -p shale-cli
//! --test sst_dump_raw_golden`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;
use std::path::Path;

fn normalise(s: &str) -> String {
    s.lines()
        .map(|l| if l.starts_with("options.env is 0x") { "options.env is <address>" } else { l })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `prog [pre] args` on a fresh copy of `src/db`; returns what it printed and the
/// dump file `db/<table>_dump.txt` it wrote (None when it wrote none).
fn run_raw(src: &Path, prog: &Path, pre: &[&str], args: &[&str], table: &str) -> (Printed, Option<Vec<u8>>) {
    let d = tempfile::tempdir().unwrap();
    copy_dir(&src.join("db"), &d.path().join("db"));
    let o = run_in(d.path(), prog, pre, args);
    let dump =
        std::fs::read(d.path().join("db").join(format!("{}_dump.txt", &table[..table.len() - 4]))).ok();
    let p = Printed {
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        status: o.status.code(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    };
    (p, dump)
}

fn same(what: &str, r: &(Printed, Option<Vec<u8>>), s: &(Printed, Option<Vec<u8>>)) {
    assert_eq!(r.0.status, s.0.status, "exit status of {what}: {} / {}", r.0.stderr, s.0.stderr);
    assert_eq!(normalise(&r.0.stdout), normalise(&s.0.stdout), "stdout of {what}");
    assert_eq!(first_line(&r.0.stderr), first_line(&s.0.stderr), "stderr of {what}");
    let text = |d: &Option<Vec<u8>>| d.as_ref().map(|b| String::from_utf8_lossy(b).into_owned());
    assert_eq!(text(&r.1), text(&s.1), "the dump file {what} writes");
}

#[test]
fn raw_matches_sst_dump_on_the_golden_databases() {
    let oracles = oracles();
    let Some(o11) = oracles.iter().find(|o| o.major == 11) else {
        println!("no RocksDB 11.8.1: the fixtures test checks the recorded dumps");
        return;
    };
    for (label, db) in databases(&oracles) {
        for t in files_with(db.path(), ".sst") {
            let f = format!("--file=db/{t}");
            for args in [
                vec![f.as_str(), "--command=raw"],
                vec![f.as_str(), "--command=raw", "--show_sequence_number_type"],
            ] {
                let r = run_raw(db.path(), &o11.sst_dump, &[], &args, &t);
                let s = run_raw(db.path(), &shale(), &["sst_dump"], &args, &t);
                same(&format!("sst_dump {args:?} on a database {label}"), &r, &s);
            }
        }
        // A directory: one dump per table, each line of stdout in the same order.
        let r = run_raw(db.path(), &o11.sst_dump, &[], &["--file=db", "--command=raw"], "x.sst");
        let s = run_raw(db.path(), &shale(), &["sst_dump"], &["--file=db", "--command=raw"], "x.sst");
        let sorted = |p: &Printed| {
            let mut v: Vec<String> = normalise(&p.stdout).lines().map(String::from).collect();
            v.sort();
            v
        };
        assert_eq!(r.0.status, s.0.status);
        // Both list the directory in the order the file system gives, which may differ.
        assert_eq!(sorted(&r.0), sorted(&s.0), "sst_dump --file=db --command=raw on a database {label}");
    }
}

const FIXTURES: &str = "tests/golden/sst";

/// The fixture tables and the flags each is dumped with.
const FIXTURE_CASES: &[(&str, &[&str])] = &[
    ("000013.sst", &["--command=raw"]),
    ("000020.sst", &["--command=raw", "--show_sequence_number_type"]),
    ("000025.sst", &["--command=raw"]),
    ("000020.sst", &["--command=raw"]),
    ("000019.sst", &["--command=raw", "--show_sequence_number_type"]),
    ("000019.sst", &["--command=scan", "--decode_blob_index"]),
    ("000019.sst", &["--command=scan", "--decode_blob_index", "--output_hex"]),
];

#[test]
fn raw_and_decode_blob_index_match_the_recorded_fixtures() {
    let oracles = oracles();
    let o11 = oracles.iter().find(|o| o.major == 11);
    let record = o11.is_some() && std::env::var_os("SHALE_GOLDEN_RECORD").is_some();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURES);
    let src = tempfile::tempdir().unwrap();
    copy_dir(&root, &src.path().join("db"));
    for (i, (table, flags)) in FIXTURE_CASES.iter().enumerate() {
        let f = format!("--file=db/{table}");
        let mut args = vec![f.as_str()];
        args.extend_from_slice(flags);
        let s = run_raw(src.path(), &shale(), &["sst_dump"], &args, table);
        let expected_path = root.join(format!("expected-{i}.txt"));
        let body = |p: &(Printed, Option<Vec<u8>>)| {
            let dump = p.1.as_ref().map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_default();
            format!(
                "sst_dump {}\nexit {:?}\nstderr {:?}\n{}\n### dump file\n{}",
                args.join(" "),
                p.0.status,
                first_line(&p.0.stderr),
                normalise(&p.0.stdout),
                dump
            )
        };
        if let Some(o) = o11 {
            let r = run_raw(src.path(), &o.sst_dump, &[], &args, table);
            same(&format!("sst_dump {args:?} on fixture {table}"), &r, &s);
            if record {
                std::fs::write(&expected_path, body(&r)).unwrap();
            }
        }
        let expected = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("{}: {e} (record it with 11.8.1)", expected_path.display()));
        assert_eq!(expected, body(&s), "sst_dump {args:?} on fixture {table}, against 11.8.1's recording");
    }
}
