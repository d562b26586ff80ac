//! Golden: `shale ldb --ttl scan` on a TTL database (values end with their 4-byte write
//! time) prints what RocksDB 11.8.1's `ldb --ttl scan` prints: the values without the
//! write time; with `--timestamp` a `Scanning key-values from ... to ...` line and each
//! entry's write time first (strftime `%c`, local time: the test runs both tools with
//! TZ=UTC); `--start_time`/`--end_time` select by write time; and then, as 11.8.1 does
//! after every TTL command, `Failed: ldb doesn't support TTL DB with multiple column
//! families` with exit status 1. `scan --timestamp` without `--ttl` is a plain scan.
//! `dump --ttl` likewise (DBDumperCommand over the TtlIterator), with `--bucket` counts.
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
    // dump --ttl: the same values, filters and times, with --bucket counts by write time.
    &["--db=db", "--ttl", "dump"],
    &["--db=db", "--ttl", "dump", "--timestamp", "--max_keys=3"],
    &["--db=db", "--ttl", "dump", "--start_time=1795400000", "--end_time=1795500000", "--bucket=40000"],
    &["--db=db", "--ttl", "dump", "--start_time=1795471361", "--timestamp"],
    &["--db=db", "--ttl", "dump", "--count_delim= "],
    &["--db=db", "--ttl", "dump", "--count_only"],
    &["--db=db", "--ttl", "dump", "--start_time=5", "--end_time=2"],
    &["--db=db", "dump", "--start_time=5", "--end_time=2"],
    &["--db=db", "dump", "--timestamp", "--value_hex"],
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

/// `--ttl` writes interoperate with RocksDB 11.8.1's ldb both ways: what `shale ldb --ttl`
/// writes with put, batchput, put_entity and query, RocksDB's `ldb --ttl` reads (values
/// without their write time, the entity as written), and the other way round; a plain
/// `get_entity` of a TTL value shows the 4-byte write time (DBWithTTL does not override
/// GetEntity). Each command does its work, then ends as 11.8.1's does after every TTL
/// command: `Failed: ldb doesn't support TTL DB with multiple column families`, exit 1
/// (not `compact --ttl`, which sets its own success). Each writing step runs with both
/// tools on their own database and prints the same.
#[test]
fn ttl_writes_interoperate_with_rocksdb_ldb() {
    let oracles = oracles();
    let Some(o11) = oracles.iter().find(|o| o.major == 11) else { return };
    let before = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let dir = tempfile::tempdir().unwrap();
    let (by_shale, by_rocksdb) = (dir.path().join("s"), dir.path().join("r"));
    let ttl_failure = "Failed: ldb doesn't support TTL DB with multiple column families";
    let run = |prog: &Path, pre: &[&str], db: &Path, args: &[&str], stdin: &str| {
        let db_arg = format!("--db={}", db.display());
        let all: Vec<&str> = [&[db_arg.as_str()][..], args].concat();
        run_with_stdin(dir.path(), prog, pre, &all, stdin)
    };
    let shale_bin = shale();
    let writes: &[(&[&str], &str)] = &[
        (&["--create_if_missing", "--ttl", "put", "k1", "v1"], ""),
        (&["--ttl", "batchput", "k2", "v2", "k3", "v3"], ""),
        (&["--ttl", "put_entity", "e1", "a:1", "b:2"], ""),
        (&["--ttl", "query"], "put k4 v4\nget k4\nget k1\n"),
    ];
    for (args, stdin) in writes {
        let s = run(&shale_bin, &["ldb"], &by_shale, args, stdin);
        let r = run(&o11.ldb, &[], &by_rocksdb, args, stdin);
        assert_eq!((&s.stdout, s.status), (&r.stdout, r.status), "ldb {args:?}: {} / {}", s.stderr, r.stderr);
        assert_eq!(first_line(&s.stderr), ttl_failure, "{args:?}");
        assert_eq!(first_line(&r.stderr), ttl_failure, "{args:?}");
    }
    // compact --ttl: a DBWithTTL of TTL 0 (nothing expires); CompactorCommand sets its own
    // success, so it exits 0.
    let s = run(&shale_bin, &["ldb"], &by_shale, &["--ttl", "compact"], "");
    let r = run(&o11.ldb, &[], &by_rocksdb, &["--ttl", "compact"], "");
    assert_eq!((&s.stdout, s.status, &s.stderr), (&r.stdout, r.status, &r.stderr), "compact --ttl");
    assert_eq!(s.status, Some(0), "{}", s.stderr);
    // Each tool reads what the other wrote.
    for (reader, pre, db) in [(&o11.ldb, &[][..], &by_shale), (&shale_bin, &["ldb"][..], &by_rocksdb)] {
        let who = format!("{} reading {}", reader.display(), db.display());
        for (k, v) in [("k1", "v1"), ("k2", "v2"), ("k3", "v3"), ("k4", "v4")] {
            let p = run(reader, pre, db, &["--ttl", "get", k], "");
            assert_eq!(
                (p.stdout.as_str(), p.status),
                (format!("{v}\n").as_str(), Some(1)),
                "{who}: {}",
                p.stderr
            );
            assert_eq!(first_line(&p.stderr), ttl_failure, "{who}");
        }
        let p = run(reader, pre, db, &["--ttl", "scan", "--from=k1"], "");
        assert_eq!(p.stdout, "k1 ==> v1\nk2 ==> v2\nk3 ==> v3\nk4 ==> v4\n", "{who}: {}", p.stderr);
        let p = run(reader, pre, db, &["--ttl", "get_entity", "e1"], "");
        assert_eq!((p.stdout.as_str(), p.status), ("a:1 b:2\n", Some(1)), "{who}: {}", p.stderr);
        // The entity has no write time: DBWithTTL's Get finds its empty default column too short.
        let p = run(reader, pre, db, &["--ttl", "get", "e1"], "");
        assert_eq!(p.status, Some(1), "{who}");
        assert_eq!(
            first_line(&p.stderr),
            "Failed: Get failed: Corruption: Error: value's length less than timestamp's",
            "{who}"
        );
        // A plain value read as an entity: the default column, write time included.
        for plain in [false, true] {
            let args: &[&str] = if plain {
                &["get_entity", "k1", "--value_hex"]
            } else {
                &["--ttl", "get_entity", "k1", "--value_hex"]
            };
            let p = run(reader, pre, db, args, "");
            let hex =
                p.stdout.trim().strip_prefix(":0x7631").unwrap_or_else(|| panic!("{who}: {}", p.stdout));
            let t = u32::from_le_bytes(u32::from_str_radix(hex, 16).unwrap().to_be_bytes());
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
            assert!((before..=now).contains(&u64::from(t)), "{who}: write time {t}");
            assert_eq!(p.status, Some(if plain { 0 } else { 1 }), "{who}");
        }
    }
}
