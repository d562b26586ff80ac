//! Golden: `shale ldb file_checksum_dump` prints what RocksDB's prints, on databases written
//! by RocksDB and by Shale (none generates file checksums by default: every file shows
//! `Unknown` and an empty checksum), in the order RocksDB's `std::unordered_map` gives, with
//! `--hex`, and its errors. No difference is normalised away.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn file_checksum_dump_matches_ldb() {
    let oracles = oracles();
    let mut rec = Recording::open("ldb_file_checksum_dump_golden", &oracles);
    for (label, db) in databases(&oracles) {
        for case in [
            both(&["--db=db", "file_checksum_dump"]),
            both(&["--db=db", "file_checksum_dump", "--hex"]),
            only11(&["--db=db", "file_checksum_dump", "--path="]),
            only11(&["--db=nodb", "file_checksum_dump"]),
            only11(&["--db=db", "file_checksum_dump", "--bogus"]),
        ] {
            // The tables the Shale-written database keeps depend on when its background
            // compactions ran: listings are not recorded for CI, errors are.
            let r = if case.args.contains(&"--db=db") && !case.args.contains(&"--bogus") {
                None
            } else {
                Some(&mut rec)
            };
            check("ldb", &label, db.path(), &oracles, &case, &exact, r);
        }
    }
}

/// Many files, so the unordered map's order is not the files' order: a database with one
/// table per key written by 11.8.1 (each put flushed by a compaction of that key alone).
#[test]
fn file_checksum_dump_order_with_many_files() {
    let oracles = oracles();
    let Some(o11) = oracles.iter().find(|o| o.major == 11) else {
        println!("skipping: needs RocksDB 11.8.1 to write the database");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    ok(&run_in(d.path(), &o11.ldb, &[], &["--db=db", "--create_if_missing", "put", "k00", "v"]), "create");
    for i in 1..40 {
        let k = format!("k{i:02}");
        ok(&run_in(d.path(), &o11.ldb, &[], &["--db=db", "put", &k, "v"]), "put");
        ok(
            &run_in(
                d.path(),
                &o11.ldb,
                &[],
                &["--db=db", "compact", &format!("--from={k}"), &format!("--to={k}")],
            ),
            "compact",
        );
    }
    let (r, s) = run_both(d.path(), &o11.ldb, "ldb", &["--db=db", "file_checksum_dump"]);
    assert!(r.stdout.lines().count() > 14, "{}", r.stdout);
    assert_eq!(r.stdout, s.stdout);
}

/// A database written by 11.8.1's db_bench with `--file_checksum` (the CRC32C factory) and
/// blob files: the checksums of its tables and the blob files its MANIFEST adds, as RocksDB
/// prints them.
#[test]
fn file_checksum_dump_with_checksums_and_blob_files() {
    let oracles = oracles();
    let Some(o11) = oracles.iter().find(|o| o.major == 11) else {
        println!("skipping: needs RocksDB 11.8.1 to write the database");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let db = format!("--db={}", d.path().join("db").display());
    ok(
        &run_in(
            d.path(),
            &o11.ldb.with_file_name("db_bench"),
            &[],
            &[
                "--benchmarks=fillrandom",
                "--num=3000",
                &db,
                "--seed=42",
                "--threads=1",
                "--file_checksum=true",
                "--enable_blob_files=true",
                "--min_blob_size=50",
                "--value_size=100",
                "--write_buffer_size=65536",
                "--compression_type=none",
            ],
        ),
        "db_bench",
    );
    for args in [&["--db=db", "file_checksum_dump"][..], &["--db=db", "file_checksum_dump", "--hex"][..]] {
        let (r, s) = run_both(d.path(), &o11.ldb, "ldb", args);
        assert!(r.stdout.contains(", FileChecksumCrc32c, "), "{}", r.stdout);
        assert!(r.stdout.lines().count() > 3, "{}", r.stdout);
        assert_eq!(r.stdout, s.stdout);
    }
    let blobs = std::fs::read_dir(d.path().join("db"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".blob"))
        .count();
    assert!(blobs > 0, "db_bench wrote blob files");
}
