//! RocksDB 9.8.4 -> Shale, from databases kept in `tests/data/rocksdb-9.8.4/` (made by
//! `tests/data/gen_rocksdb_9x.py` through the `rocksdict` wheel, which bundles RocksDB 9.8.4):
//! - `defaults`: RocksDB 9's defaults (table format_version 6 with context checksums, XXH3,
//!   dynamic level bytes, an 8.x+ MANIFEST with epoch numbers, unique ids and tail sizes),
//!   three column families, range deletions, data left in the WAL;
//! - `fv2` .. `fv5`: the older table formats written by a 9.x RocksDB;
//! - `fv6-crc32c`, `fv6-xxhash`, `fv6-xxhash64`: format 6 with every other checksum kind;
//! - `fv6-recycled-wal`: `recycle_log_file_num = 2` (recyclable WAL records).
//!
//! Each is copied to a temporary directory, opened by Shale with all its column families and
//! checked against the rule the script wrote it by (forward, reverse, get); Shale then writes,
//! flushes, compacts and reopens, and must see its own writes over RocksDB's data.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use shale::{IteratorMode, Options, DB};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn key(i: usize) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(round: usize, i: usize, cf: &str) -> Vec<u8> {
    format!("{cf}-r{round}-{i};").repeat(1 + i % 5).into_bytes()
}

/// The rule `model` in gen_rocksdb_9x.py follows.
fn model(n: usize, cf: &str) -> Model {
    let mut m = Model::new();
    for i in 0..n {
        m.insert(key(i), value(1, i, cf));
    }
    for i in (0..n).step_by(3) {
        m.insert(key(i), value(2, i, cf));
    }
    for i in (0..n).step_by(7) {
        m.remove(&key(i));
    }
    for i in n / 10..n / 5 {
        m.remove(&key(i));
    }
    for i in (0..n).step_by(5) {
        m.insert(key(i), value(3, i, cf));
    }
    m
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rocksdb-9.8.4").join(name)
}

/// Copies a fixture database into a fresh temporary directory.
fn copy_fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join(name);
    std::fs::create_dir(&dst).unwrap();
    for e in std::fs::read_dir(fixture(name)).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
    }
    (tmp, dst)
}

/// RocksDB 9's level layout (dynamic level bytes) with the fixtures' small sizes.
fn options() -> Options {
    let mut o = Options::default();
    o.set_level_compaction_dynamic_level_bytes(true);
    o.set_write_buffer_size(64 << 10);
    o.set_max_bytes_for_level_base(256 << 10);
    o.set_level_zero_file_num_compaction_trigger(2);
    o
}

fn open(dir: &Path) -> DB {
    let o = options();
    let cfs = DB::list_cf(&o, dir)
        .expect("list_cf")
        .into_iter()
        .map(|n| shale::ColumnFamilyDescriptor::new(n, o.clone()));
    DB::open_cf_descriptors(&o, dir, cfs)
        .unwrap_or_else(|e| panic!("Shale cannot open {}: {e}", dir.display()))
}

fn files_at(db: &DB, level: usize) -> u64 {
    db.property_int_value(format!("rocksdb.num-files-at-level{level}")).unwrap().unwrap()
}

fn check(db: &DB, cf: &str, want: &Model, ctx: &str) {
    let h = db.cf_handle(cf).unwrap_or_else(|| panic!("{ctx}: no column family {cf}"));
    let fwd: Vec<(Vec<u8>, Vec<u8>)> = db
        .iterator_cf(h, IteratorMode::Start)
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
        .collect();
    let want_v: Vec<(Vec<u8>, Vec<u8>)> = want.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(fwd.len(), want_v.len(), "{ctx}: forward scan of {cf}: count");
    assert!(fwd == want_v, "{ctx}: forward scan of {cf} differs");
    let mut rev: Vec<(Vec<u8>, Vec<u8>)> = db
        .iterator_cf(h, IteratorMode::End)
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
        .collect();
    rev.reverse();
    assert!(rev == want_v, "{ctx}: reverse scan of {cf} differs");
    for i in 0..want.keys().count().max(1) * 2 {
        let k = key(i);
        assert_eq!(
            db.get_cf(h, &k).unwrap().as_deref(),
            want.get(&k).map(|v| v.as_slice()),
            "{ctx}: get {i} in {cf}"
        );
    }
}

/// Opens a fixture, checks it, writes over it, compacts, reopens and checks again.
fn round_trip(name: &str, n: usize, cfs: &[&str]) {
    let (_tmp, dir) = copy_fixture(name);
    let mut models: BTreeMap<String, Model> = cfs.iter().map(|cf| (cf.to_string(), model(n, cf))).collect();
    {
        let db = open(&dir);
        for (cf, m) in &models {
            check(&db, cf, m, &format!("{name} as RocksDB left it"));
        }
        for (cf, m) in models.iter_mut() {
            let h = db.cf_handle(cf).unwrap();
            for i in (1..n).step_by(4) {
                let v = format!("shale-{cf}-{i}").into_bytes();
                db.put_cf(h, key(i), &v).unwrap();
                m.insert(key(i), v);
            }
            for i in (2..n).step_by(9) {
                db.delete_cf(h, key(i)).unwrap();
                m.remove(&key(i));
            }
        }
        db.flush().unwrap();
        for cf in cfs {
            let h = db.cf_handle(cf).unwrap();
            db.compact_range_cf(h, None::<&[u8]>, None::<&[u8]>);
        }
        for (cf, m) in &models {
            check(&db, cf, m, &format!("{name} after Shale's writes and compaction"));
        }
    }
    let db = open(&dir);
    for (cf, m) in &models {
        check(&db, cf, m, &format!("{name} reopened"));
    }
}

#[test]
fn rocksdb_9_defaults_format_6_three_cfs_wal() {
    round_trip("defaults", 2000, &["default", "cf1", "cf2"]);
}

/// RocksDB 9.8.4's OPTIONS file has only options 7.8.3 or 11.8.1 writes: opening reports
/// none. A newer RocksDB's options (here in a file made to name 12.0.0) are reported in the
/// info log by name, and opening goes on.
#[test]
fn rocksdb_9_options_are_known_and_newer_unknown_ones_reported_not_fatal() {
    let (_tmp, dir) = copy_fixture("defaults");
    drop(open(&dir));
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    assert!(!log.contains("options Shale does not know"), "{log}");

    let (_tmp, dir) = copy_fixture("defaults");
    let file = dir.join("OPTIONS-000011");
    let text = std::fs::read_to_string(&file).unwrap();
    let text = text
        .replace("rocksdb_version=9.8.4", "rocksdb_version=12.0.0")
        .replace("[DBOptions]\n", "[DBOptions]\n  future_option=1\n");
    std::fs::write(&file, text).unwrap();
    drop(open(&dir));
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    let line = log
        .lines()
        .find(|l| l.contains("options Shale does not know"))
        .unwrap_or_else(|| panic!("no report of unknown options in LOG:\n{log}"));
    assert!(line.contains("OPTIONS-000011 (RocksDB 12.0.0)"), "{line}");
    assert!(line.contains("DBOptions.future_option"), "{line}");
}

#[test]
fn rocksdb_9_format_versions_2_to_5() {
    for fv in 2..=5 {
        round_trip(&format!("fv{fv}"), 300, &["default"]);
    }
}

#[test]
fn rocksdb_9_format_6_every_checksum() {
    for ck in ["crc32c", "xxhash", "xxhash64"] {
        round_trip(&format!("fv6-{ck}"), 300, &["default"]);
    }
}

#[test]
fn rocksdb_9_recycled_wal() {
    round_trip("fv6-recycled-wal", 300, &["default"]);
}

/// RocksDB 9 left its data in the last level (dynamic level bytes): Shale's own level-0
/// compactions go to the base level below level 1, not to level 1.
#[test]
fn dynamic_level_bytes_compacts_level_0_into_the_base_level() {
    let (_tmp, dir) = copy_fixture("defaults");
    let db = open(&dir);
    assert!(files_at(&db, 6) > 0, "RocksDB 9 put its data in L6");
    assert_eq!(files_at(&db, 1), 0);
    let mut want = model(2000, "default");
    for round in 0..6 {
        for i in 0..400 {
            let k = key(5000 + round * 400 + i);
            let v = format!("{round}-{i}-").repeat(40).into_bytes();
            db.put(&k, &v).unwrap();
            want.insert(k, v);
        }
        db.flush().unwrap();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while files_at(&db, 0) >= 2 || db.property_int_value("rocksdb.compaction-pending").unwrap() != Some(0) {
        assert!(std::time::Instant::now() < deadline, "compactions did not finish");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    for level in 1..5 {
        assert_eq!(files_at(&db, level), 0, "level {level} stays empty under dynamic level bytes");
    }
    check(&db, "default", &want, "after level-0 compactions");
}
