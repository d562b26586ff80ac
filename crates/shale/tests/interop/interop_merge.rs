//! Merge operands between RocksDB and Shale, both ways, with RocksDB's tools (Debian's
//! 7.8.3 in /usr/bin, and 11.8.1 where `SHALE_ROCKSDB_11_BIN` or the shared copy runs; see
//! tools/mod.rs; each part is skipped with a printed reason when its tools are absent):
//! - RocksDB -> Shale: `db_bench --benchmarks=mergerandom --merge_operator=uint64add` (8-byte
//!   operands), `stringappend` and `max` (16-byte operands), small files so that operands
//!   spread over the WAL, level 0 and deeper levels, read in Shale, opened with the operator
//!   of that name (`shale::merge_operators::by_name`), exactly as `ldb scan` prints it,
//!   forward and backward, and still after Shale compacts everything;
//! - Shale -> RocksDB: operands Shale writes with `uint64add`, `stringappend` and `max` (in tables,
//!   partially merged by compaction, and in the WAL) read the same with `ldb scan
//!   --try_load_options`, which builds the operator from the name Shale wrote in its OPTIONS
//!   file (ldb has no `--merge_operator` flag).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{ColumnFamilyDescriptor, Options, DB};
use tools::*;

fn opts_with(op: shale::merge_operator::MergeOperator) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_merge_operator_object(op);
    for_rocksdb7(&mut o); // format 5: RocksDB 7.8.3's ldb reads the tables
    o
}

fn rocksdb_to_shale(test: &str) {
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    for (op, value_size) in [("uint64add", "8"), ("stringappend", "16"), ("max", "16")] {
        let test = format!("{test} ({op})");
        let dir = tempfile::tempdir().unwrap();
        db_bench_run(
            dir.path(),
            "mergerandom",
            20000,
            &[
                &format!("--merge_operator={op}"),
                &format!("--value_size={value_size}"),
                "--key_size=16",
                "--num=20000",
                "--compression_type=none",
                "--write_buffer_size=65536",
                "--target_file_size_base=131072",
                "--max_bytes_for_level_base=524288",
            ],
        );
        assert!(!sst_files(dir.path()).is_empty(), "db_bench wrote tables");
        let want = ldb_scan(dir.path(), None);
        assert!(!want.is_empty());
        let db = open_all(dir.path(), &opts_with(shale::merge_operators::by_name(op).unwrap()));
        assert_same_pairs(&shale_scan(&db, "default"), &want, &format!("{test}: forward"));
        let mut rev = shale_scan_reverse(&db, "default");
        rev.reverse();
        assert_same_pairs(&rev, &want, &format!("{test}: reverse"));
        for (k, v) in want.iter().step_by(37) {
            assert_eq!(db.get(k).unwrap().as_ref(), Some(v), "{test}: get");
        }
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        assert_same_pairs(&shale_scan(&db, "default"), &want, &format!("{test}: after Shale's compaction"));
        drop(db);
        // And RocksDB reads what Shale's compaction wrote.
        assert_same_pairs(
            &ldb_scan(dir.path(), None),
            &want,
            &format!("{test}: ldb after Shale's compaction"),
        );
    }
}

#[test]
fn rocksdb_7_mergerandom_reads_the_same() {
    rocksdb_to_shale("rocksdb_7_mergerandom_reads_the_same");
}

#[test]
fn rocksdb_11_mergerandom_reads_the_same() {
    let test = "rocksdb_11_mergerandom_reads_the_same";
    if use_rocksdb_11(test) {
        rocksdb_to_shale(test);
    }
}

fn ldb_scan_loading_options(dir: &Path, cf: &str) -> Pairs {
    let a = args(&[
        &format!("--db={}", dir.display()),
        "scan",
        "--hex",
        "--try_load_options",
        &format!("--column_family={cf}"),
    ]);
    run_tool("ldb", &a)
        .lines()
        .filter(|l| l.starts_with("0x"))
        .map(|l| {
            let (k, v) = l.split_once(" ==> ").or_else(|| l.split_once(" : ")).unwrap();
            (decode_hex(k), decode_hex(v))
        })
        .collect()
}

fn shale_to_rocksdb(test: &str) {
    if !tools_available(test, &["ldb"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut base = Options::default();
    base.create_if_missing(true);
    base.create_missing_column_families(true);
    base.set_disable_auto_compactions(true);
    let db = DB::open_cf_descriptors(
        &base,
        dir.path(),
        vec![
            ColumnFamilyDescriptor::new("default", opts_with(shale::merge_operators::uint64add())),
            ColumnFamilyDescriptor::new("strings", opts_with(shale::merge_operators::stringappend(","))),
            ColumnFamilyDescriptor::new("maxes", opts_with(shale::merge_operators::max())),
        ],
    )
    .unwrap();
    let (d, s) = (db.cf_handle("default").unwrap(), db.cf_handle("strings").unwrap());
    let m = db.cf_handle("maxes").unwrap();
    for round in 0..4u64 {
        for i in 0..300u64 {
            let k = format!("key{:04}", (i * 7 + round) % 200);
            if i % 50 == 0 {
                db.put_cf(&d, &k, (i * 1000).to_le_bytes()).unwrap();
                db.put_cf(&s, &k, format!("base{i}")).unwrap();
                db.put_cf(&m, &k, format!("m{:03}", i / 2)).unwrap();
            } else {
                db.merge_cf(&d, &k, (i + round).to_le_bytes()).unwrap();
                db.merge_cf(&s, &k, format!("r{round}i{i}")).unwrap();
                db.merge_cf(&m, &k, format!("m{:03}", (i * 37 + round) % 300)).unwrap();
            }
        }
        if round < 3 {
            db.flush_cf(&d).unwrap();
            db.flush_cf(&s).unwrap();
            db.flush_cf(&m).unwrap();
        }
        if round == 1 {
            // Operands combined by partial merges and full merges in tables.
            db.compact_range_cf(&d, None::<&[u8]>, None::<&[u8]>);
            db.compact_range_cf(&s, None::<&[u8]>, None::<&[u8]>);
            db.compact_range_cf(&m, None::<&[u8]>, None::<&[u8]>);
        }
    }
    let want_d = shale_scan(&db, "default");
    let want_s = shale_scan(&db, "strings");
    let want_m = shale_scan(&db, "maxes");
    drop(db);
    assert_same_pairs(
        &ldb_scan_loading_options(dir.path(), "default"),
        &want_d,
        &format!("{test}: uint64add"),
    );
    assert_same_pairs(
        &ldb_scan_loading_options(dir.path(), "strings"),
        &want_s,
        &format!("{test}: stringappend"),
    );
    assert_same_pairs(&ldb_scan_loading_options(dir.path(), "maxes"), &want_m, &format!("{test}: max"));
}

#[test]
fn shale_operands_read_by_rocksdb_7() {
    shale_to_rocksdb("shale_operands_read_by_rocksdb_7");
}

#[test]
fn shale_operands_read_by_rocksdb_11() {
    let test = "shale_operands_read_by_rocksdb_11";
    if use_rocksdb_11(test) {
        shale_to_rocksdb(test);
    }
}
