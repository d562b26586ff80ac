//! Golden: `shale ldb reduce_levels` does what RocksDB 11.8.1's does, on databases written
//! by RocksDB and by Shale: what it prints (`--print_old_levels`, `Compacting the db...`),
//! then the levels of the live files, the keys, and a second reduction; its errors (no,
//! bad or too small `--new_levels`, a missing database, nothing to reduce, a database with
//! several column families, which RocksDB refuses). Afterwards both
//! leave two MANIFESTs (the open's and the rewritten one), so `manifest_dump` without
//! `--path` fails alike.
//!
//! What legitimately differs, normalised away: the numbers of the tables a compaction
//! writes (each engine numbers its own outputs), so `list_live_files_metadata` is compared
//! with table numbers replaced by `N`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

/// A database with the default column family only (RocksDB's reduce_levels refuses others):
/// tables in level 0 and deeper, and keys only in the WAL.
fn write_single(dir: &std::path::Path, ldb: &std::path::Path, pre: &[&str]) {
    let steps: &[&[&str]] = &[
        &["--db=db", "--create_if_missing", "put", "a", "1"],
        &["--db=db", "batchput", "b", "2", "c", "3"],
        &["--db=db", "compact"],
        &["--db=db", "put", "d", "4"],
        &["--db=db", "compact", "--from=d", "--to=e"],
        &["--db=db", "put", "e", "5"],
    ];
    for s in steps {
        ok(&run_in(dir, ldb, pre, s), &format!("{} {s:?}", ldb.display()));
    }
}

#[test]
fn reduce_levels_matches_ldb() {
    let oracles = oracles();
    let mut rec = Recording::open("ldb_reduce_levels_golden", &oracles);
    let mut dbs = Vec::new();
    for o in &oracles {
        let d = tempfile::tempdir().unwrap();
        write_single(d.path(), &o.ldb, &[]);
        dbs.push((format!("with one column family written by {}", o.name), d));
    }
    let d = tempfile::tempdir().unwrap();
    write_single(d.path(), &shale(), &["ldb"]);
    dbs.push((SHALE_DB.to_string(), d));
    // With several column families RocksDB refuses: "Column families not opened".
    for (label, db) in databases(&oracles) {
        let case = only11(&["--db=db", "reduce_levels", "--new_levels=3"]);
        check("ldb", &label, db.path(), &oracles, &case, &exact, None);
    }
    for (label, db) in dbs {
        let live: &[&str] = &["--db=db", "list_live_files_metadata", "--sort_by_filename"];
        let steps: Vec<Step<'_>> = vec![
            (&["--db=db", "reduce_levels", "--new_levels=9", "--print_old_levels"], ""),
            (&["--db=db", "reduce_levels", "--new_levels=3", "--print_old_levels"], ""),
            (live, ""),
            (&["--db=db", "scan"], ""),
            (&["--db=db", "--column_family=cf1", "scan"], ""),
            (&["--db=db", "manifest_dump"], ""),
            (&["--db=db", "reduce_levels", "--new_levels=2"], ""),
            (live, ""),
            (&["--db=db", "scan"], ""),
        ];
        check_script(&label, db.path(), &oracles, false, &steps, &mask_table_numbers, Some(&mut rec));
        for args in [
            &["--db=db", "reduce_levels"][..],
            &["--db=db", "reduce_levels", "--new_levels=x"],
            &["--db=db", "reduce_levels", "--new_levels=1"],
            &["--db=db", "reduce_levels", "--new_levels=3", "--bogus"],
            &["--db=nodb", "reduce_levels", "--new_levels=3"],
        ] {
            check("ldb", &label, db.path(), &oracles, &only11(args), &exact, Some(&mut rec));
        }
    }
}
