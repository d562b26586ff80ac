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

/// Partitioned (two-level) indexes and indexes with first keys (kBinarySearchWithFirstKey),
/// each with user-key and internal-key separators, delta-encoded values or not: tables
/// written by 11.8.1's db_bench (300 keys, 256-byte blocks, 128-byte index partitions,
/// compacted to one table), dumped by 11.8.1's sst_dump and by Shale's, which must print
/// and write the same bytes (RocksDB's `DumpIndexBlock` walks every partition's entries and
/// shows each value with its first key).
#[test]
fn raw_matches_sst_dump_on_partitioned_and_first_key_indexes() {
    let oracles = oracles();
    let Some(o11) = oracles.iter().find(|o| o.major == 11) else {
        println!("no RocksDB 11.8.1: nothing to compare against");
        return;
    };
    let db_bench = o11.sst_dump.with_file_name("db_bench");
    let cases: &[(&str, &[&str], &str)] = &[
        ("partitioned index", &["--partition_index=1"], "# index partitions: "),
        (
            "partitioned index and filters",
            &["--partition_index_and_filters=1", "--bloom_bits=10"],
            "# index partitions: ",
        ),
        (
            "partitioned index, format_version 3",
            &["--partition_index=1", "--format_version=3"],
            "delta-value? 0",
        ),
        ("index with first keys", &["--index_with_first_key=1"], "delta-value? 1"),
        (
            "index with first keys, format_version 2",
            &["--index_with_first_key=1", "--format_version=2"],
            "user-key? 0, delta-value? 0",
        ),
    ];
    for (label, flags, expect) in cases {
        let src = tempfile::tempdir().unwrap();
        let db = src.path().join("db");
        let db_arg = format!("--db={}", db.display());
        let mut args = vec![
            "--benchmarks=fillrandom",
            "--num=300",
            "--key_size=16",
            "--value_size=20",
            "--block_size=256",
            "--metadata_block_size=128",
            "--compression_type=none",
            db_arg.as_str(),
        ];
        args.extend_from_slice(flags);
        let o = std::process::Command::new(&db_bench).args(&args).output().unwrap();
        assert!(o.status.success(), "db_bench {label}: {}", String::from_utf8_lossy(&o.stderr));
        let o = std::process::Command::new(&o11.ldb).args([db_arg.as_str(), "compact"]).output().unwrap();
        assert!(o.status.success(), "ldb compact {label}: {}", String::from_utf8_lossy(&o.stderr));
        let tables = files_with(src.path(), ".sst");
        assert_eq!(tables.len(), 1, "{label}: one table after the compaction: {tables:?}");
        let t = &tables[0];
        for extra in [&[][..], &["--show_sequence_number_type"][..]] {
            let f = format!("--file=db/{t}");
            let mut args = vec![f.as_str(), "--command=raw"];
            args.extend_from_slice(extra);
            let r = run_raw(src.path(), &o11.sst_dump, &[], &args, t);
            let s = run_raw(src.path(), &shale(), &["sst_dump"], &args, t);
            same(&format!("sst_dump {args:?} on a table with a {label}"), &r, &s);
            let dump = String::from_utf8_lossy(r.1.as_deref().unwrap()).into_owned();
            assert!(dump.contains(expect), "{label}: 11.8.1's dump shows {expect:?}:\n{dump}");
            assert!(dump.matches("Data Block # ").count() > 10, "{label}: many data blocks");
            // With first keys, each index value is the handle then the 24-byte first
            // internal key, length-prefixed: at least 25 bytes, 50 hex digits.
            let index_line = dump.lines().find(|l| l.starts_with("  HEX ")).unwrap();
            let value = index_line.split(": ").nth(1).unwrap().split(' ').next().unwrap();
            assert_eq!(value.len() >= 50, label.contains("first keys"), "{label}: {index_line}");
        }
    }
}
