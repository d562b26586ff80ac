//! `shale ldb repair` recovers a database whose MANIFEST was deleted: every key back, in
//! every column family, from its tables and its WAL, as RocksDB's RepairDB does; the
//! repaired database reads back the same in RocksDB's ldb.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

fn scan(dir: &std::path::Path, prog: &std::path::Path, pre: &[&str], cf: &str) -> Vec<u8> {
    let c = format!("--column_family={cf}");
    // dump prints `key ==> value` in RocksDB 7.8.3 and 11.8.1 alike (scan changed).
    let o = run_in(dir, prog, pre, &["--db=db", &c, "dump", "--hex"]);
    ok(&o, "scan");
    o.stdout
}

#[test]
fn repair_recovers_every_key_after_the_manifest_is_deleted() {
    let oracles = oracles();
    for (label, db) in databases(&oracles) {
        // Add WAL-only data: repair must bring it back too.
        ok(&run_in(db.path(), &shale(), &["ldb"], &["--db=db", "put", "wal-only", "w"]), "put");
        let want_default = scan(db.path(), &shale(), &["ldb"], "default");
        let want_cf1 = scan(db.path(), &shale(), &["ldb"], "cf1");
        assert!(String::from_utf8_lossy(&want_default).contains("0x77616C2D6F6E6C79"));
        for m in files_with(db.path(), "") {
            if m.starts_with("MANIFEST-") {
                std::fs::remove_file(db.path().join("db").join(m)).unwrap();
            }
        }
        // Without a MANIFEST the database does not open.
        assert!(!run_in(db.path(), &shale(), &["ldb"], &["--db=db", "scan"]).status.success());
        let o = run_in(db.path(), &shale(), &["ldb"], &["--db=db", "repair"]);
        ok(&o, "repair");
        assert_eq!(o.stdout, b"OK\n");
        assert_eq!(scan(db.path(), &shale(), &["ldb"], "default"), want_default, "{label}");
        assert_eq!(scan(db.path(), &shale(), &["ldb"], "cf1"), want_cf1, "{label}");
        // Only 11.8.1 reads the result: repair turned the WAL into a table of Shale's default
        // format_version 7, which 7.8.3 cannot read (nor a database 11.8.1 wrote: a newer
        // OPTIONS file).
        for o in oracles.iter().filter(|o| o.major == 11) {
            assert_eq!(scan(db.path(), &o.ldb, &[], "default"), want_default, "{label}, read by {}", o.name);
            assert_eq!(scan(db.path(), &o.ldb, &[], "cf1"), want_cf1, "{label}, read by {}", o.name);
        }
    }
}
