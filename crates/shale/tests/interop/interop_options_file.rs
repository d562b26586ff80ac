//! Shale's OPTIONS file is the one RocksDB 11.8.1 writes (`rocksdb_version=11.8.1`, every
//! option 11.8.1 writes, in its order), and RocksDB's tools load it:
//! - RocksDB 11.8.1's `ldb` loads it strictly (`--try_load_options`, no unknown option) and
//!   reads every family; a database 11.8.1 wrote has the same options in the same order;
//! - RocksDB 7.8.3's `ldb` loads it with `--ignore_unknown_options`, which its parser honours
//!   because the file names a newer version; without the flag it refuses the options it does
//!   not know, exactly as it refuses a database RocksDB 11.8.1 wrote.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;
use std::process::Command;

use shale::options_file::{latest_options_file, OptionsFile};
use shale::{DBCompressionType, Options, DB};
use tools::*;

/// A database Shale wrote and closed: two families with settings of their own, and tables
/// 7.8.3 reads (format_version 5).
fn shale_db(path: &Path) {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_max_background_jobs(3);
    let mut t = rocksdb7_tables();
    t.set_bloom_filter(10.0, false);
    t.set_block_size(8192);
    o.set_block_based_table_factory(&t);
    o.set_compression_type(DBCompressionType::Snappy);
    let mut other = o.clone();
    other.set_compaction_style(shale::DBCompactionStyle::Universal);
    other.set_write_buffer_size(4 << 20);
    let descs = vec![
        shale::ColumnFamilyDescriptor::new("default", o.clone()),
        shale::ColumnFamilyDescriptor::new("other", other),
    ];
    let db = DB::open_cf_descriptors(&o, path, descs).unwrap();
    db.put(b"k", b"v").unwrap();
    db.put_cf(db.cf_handle("other").unwrap(), b"k2", b"v2").unwrap();
    db.flush().unwrap();
}

fn latest(path: &Path) -> OptionsFile {
    latest_options_file(&*shale::fs::default_fs(), path).unwrap().expect("an OPTIONS file").1
}

fn names(l: &[(String, String)]) -> Vec<&str> {
    l.iter().map(|(k, _)| k.as_str()).collect()
}

/// Runs this thread's `ldb` with exactly `args` (nothing added); (success, stdout + stderr).
fn ldb_raw(db: &Path, args: &[&str]) -> (bool, String) {
    let out = tool_command("ldb").arg(format!("--db={}", db.display())).args(args).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[test]
fn rocksdb_11_ldb_loads_shale_options_file_strictly() {
    if !use_rocksdb_11("rocksdb_11_ldb_loads_shale_options_file_strictly") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shale");
    shale_db(&db);
    let ours = latest(&db);
    assert_eq!(ours.rocksdb_version, "11.8.1");
    assert_eq!(ours.cf("default").unwrap().table_option("filter_policy"), Some("bloomfilter:10:false"));
    assert_eq!(ours.cf("other").unwrap().option("compaction_style"), Some("kCompactionStyleUniversal"));

    // Strict load (no --ignore_unknown_options), both families.
    let (ok, out) = ldb_raw(&db, &["--try_load_options", "scan"]);
    assert!(ok && out.contains("k ==> v"), "{out}");
    let (ok, out) = ldb_raw(&db, &["--try_load_options", "--column_family=other", "scan"]);
    assert!(ok && out.contains("k2 ==> v2"), "{out}");

    // A database 11.8.1 wrote has the same options, in the same order.
    let rocks = dir.path().join("rocks");
    let (ok, out) = ldb_raw(&rocks, &["--create_if_missing", "put", "a", "b"]);
    assert!(ok, "{out}");
    let theirs = latest(&rocks);
    assert_eq!(theirs.rocksdb_version, ours.rocksdb_version);
    assert_eq!(theirs.options_file_version, ours.options_file_version);
    assert_eq!(names(&ours.db_options), names(&theirs.db_options));
    let (a, b) = (ours.cf("default").unwrap(), theirs.cf("default").unwrap());
    assert_eq!(names(&a.options), names(&b.options));
    assert_eq!(a.table_factory, b.table_factory);
    assert_eq!(names(&a.table_options), names(&b.table_options));
    assert_eq!(names(&ours.cf("other").unwrap().options), names(&b.options));
    // Where the settings agree, so does the text.
    for k in ["max_open_files", "wal_recovery_mode", "max_manifest_file_size", "db_host_id"] {
        assert_eq!(ours.db_option(k), theirs.db_option(k), "{k}");
    }
    for k in ["compression_opts", "compaction_options_universal", "max_bytes_for_level_multiplier"] {
        assert_eq!(a.option(k), b.option(k), "{k}");
    }
}

#[test]
fn rocksdb_7_ldb_loads_shale_options_file_with_ignore_unknown_options() {
    if !tools_available("rocksdb_7_ldb_loads_shale_options_file_with_ignore_unknown_options", &["ldb"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shale");
    shale_db(&db);
    let (ok, out) = ldb_raw(&db, &["--try_load_options", "--ignore_unknown_options", "scan"]);
    assert!(ok && out.contains("k : v"), "{out}");
    let (ok, out) =
        ldb_raw(&db, &["--try_load_options", "--ignore_unknown_options", "--column_family=other", "scan"]);
    assert!(ok && out.contains("k2 : v2"), "{out}");
    // Without the flag 7.8.3 refuses an option it does not know (11.8.1 has dozens more).
    let (ok, out) = ldb_raw(&db, &["--try_load_options", "scan"]);
    assert!(!ok && out.contains("Could not find option"), "{out}");
}

/// 7.8.3's `ldb` refuses a database RocksDB 11.8.1 wrote in the same words as Shale's.
#[test]
fn rocksdb_7_ldb_treats_an_11_database_as_it_treats_shale() {
    if !tools_available("rocksdb_7_ldb_treats_an_11_database_as_it_treats_shale", &["ldb"]) {
        return;
    }
    let ldb11 = rocksdb_11_bin().join("ldb");
    let runs = Command::new(&ldb11).arg("--help").output().is_ok_and(|o| o.status.code().is_some());
    if !runs {
        if std::env::var_os("SHALE_REQUIRE_ROCKSDB_11").is_some() {
            panic!("SHALE_REQUIRE_ROCKSDB_11 is set but {} does not run", ldb11.display());
        }
        eprintln!("SKIPPED rocksdb_7_ldb_treats_an_11_database_as_it_treats_shale: no RocksDB 11.8.1 ldb");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rocks = dir.path().join("rocks");
    let out = Command::new(&ldb11)
        .arg(format!("--db={}", rocks.display()))
        .args(["--create_if_missing", "put", "a", "b"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let (ok, out) = ldb_raw(&rocks, &["--try_load_options", "scan"]);
    assert!(!ok && out.contains("Could not find option"), "{out}");
    let (ok, out) = ldb_raw(&rocks, &["--try_load_options", "--ignore_unknown_options", "scan"]);
    assert!(ok && out.contains("a : b"), "{out}");
}
