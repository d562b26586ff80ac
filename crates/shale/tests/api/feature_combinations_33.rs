//! Feature combinations Shale refused and RocksDB 11.8.1 takes (issue 33), each shown acting
//! as RocksDB's:
//! - merge in a TTL database: the family's operator is wrapped as RocksDB's
//!   `TtlMergeOperator` (the user's operator sees values and operands without their 4-byte
//!   write time; the result gets the time of the merge), in reads, flushes and compactions,
//!   and each table names "TtlMergeOperator" as its merge operator;
//! - `DB::repair` with `db_paths` and `cf_paths`: tables are found in every path.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use shale::{MergeOperands, Options, DB};

fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64
}

fn concat(_key: &[u8], existing: Option<&[u8]>, ops: &MergeOperands) -> Option<Vec<u8>> {
    let mut v = existing.map(<[u8]>::to_vec).unwrap_or_default();
    for o in ops {
        v.push(b'+');
        v.extend_from_slice(o);
    }
    Some(v)
}

fn merge_opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_merge_operator_associative("concat", concat);
    o
}

/// The stored value of `key` (write time included), read as a plain database.
fn raw_value(path: &std::path::Path, key: &[u8]) -> Vec<u8> {
    let db = DB::open(&merge_opts(), path).unwrap();
    db.get(key).unwrap().unwrap()
}

#[test]
fn merge_in_a_ttl_database_strips_and_stamps_write_times() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = DB::open_with_ttl(&merge_opts(), &path, Duration::from_secs(3600)).unwrap();
        db.put(b"k", b"base").unwrap();
        db.merge(b"k", b"a").unwrap();
        db.merge(b"only", b"x").unwrap();
        // The memtable: the user's operator saw no write times.
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"base+a"[..]));
        assert_eq!(db.get(b"only").unwrap().as_deref(), Some(&b"+x"[..]));
        db.flush().unwrap();
        db.merge(b"k", b"b").unwrap();
        // Table and memtable together, by point reads and by iterators.
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"base+a+b"[..]));
        let all: Vec<_> = db.iterator(shale::IteratorMode::Start).map(|r| r.unwrap()).collect();
        assert_eq!(all.len(), 2);
        assert_eq!(&*all[0].1, b"base+a+b");
        assert_eq!(&*all[1].1, b"+x");
        db.flush().unwrap();
        db.compact_range::<&[u8], &[u8]>(None, None);
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"base+a+b"[..]));
        // Each table names RocksDB's wrapper as its merge operator.
        for lf in db.live_files().unwrap() {
            let f = path.join(lf.name.trim_start_matches('/'));
            let bytes = std::fs::read(&f).unwrap();
            assert!(
                bytes.windows(b"TtlMergeOperator".len()).any(|w| w == b"TtlMergeOperator"),
                "{} does not name TtlMergeOperator",
                f.display()
            );
        }
    }
    // The compaction's full merge stored the result with the time of the merge.
    let raw = raw_value(&path, b"k");
    assert_eq!(&raw[..raw.len() - 4], b"base+a+b");
    let t = i64::from(i32::from_le_bytes(raw[raw.len() - 4..].try_into().unwrap()));
    assert!((now() - t).abs() <= 600, "merge time {t}, now {}", now());
}

#[test]
fn ttl_merge_of_a_value_without_a_write_time_fails() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = DB::open(&merge_opts(), &path).unwrap();
        db.put(b"k", b"ab").unwrap();
    }
    let db = DB::open_with_ttl(&merge_opts(), &path, Duration::from_secs(3600)).unwrap();
    db.merge(b"k", b"c").unwrap();
    // RocksDB's TtlMergeOperator cannot remove a timestamp from a 2-byte value.
    assert_eq!(db.get(b"k").unwrap_err().kind(), shale::ErrorKind::Corruption);
}

/// Writes 3100 keys through a flush and a compaction (level 0 over the first path's target
/// moves the next level to the second path) and a family "c" with one key; then removes the
/// MANIFEST.
fn write_then_lose_manifest(o: &Options, path: &std::path::Path) {
    {
        let mut db = DB::open(o, path).unwrap();
        for i in 0..3000u32 {
            db.put(format!("key{i:06}"), repair_value(i)).unwrap();
        }
        db.flush().unwrap();
        db.compact_range::<&[u8], &[u8]>(None, None);
        for i in 3000..3100u32 {
            db.put(format!("key{i:06}"), repair_value(i)).unwrap();
        }
        db.flush().unwrap();
        db.create_cf("c", o).unwrap();
        let c = db.cf_handle("c").unwrap();
        db.put_cf(c, b"in_cf", b"v").unwrap();
        db.flush_cf(c).unwrap();
    }
    for e in std::fs::read_dir(path).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        if name.starts_with("MANIFEST-") {
            std::fs::remove_file(path.join(name)).unwrap();
        }
    }
}

fn repair_value(i: u32) -> String {
    format!("value{i:06}").repeat(20)
}

fn tables_in(d: &std::path::Path) -> usize {
    std::fs::read_dir(d).map_or(0, |r| {
        r.filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".sst")).count()
    })
}

fn reads_everything(o: &Options, path: &std::path::Path) {
    let names = DB::list_cf(o, path).unwrap();
    assert!(names.contains(&"c".to_string()), "{names:?}");
    let descs = ["default", "c"].map(|n| shale::ColumnFamilyDescriptor::new(n, o.clone()));
    let db = DB::open_cf_descriptors(o, path, descs).unwrap();
    for i in (0..3100u32).step_by(97) {
        assert_eq!(db.get(format!("key{i:06}")).unwrap(), Some(repair_value(i).into_bytes()), "key{i:06}");
    }
    assert_eq!(db.iterator(shale::IteratorMode::Start).count(), 3100);
    assert_eq!(db.get_cf(db.cf_handle("c").unwrap(), b"in_cf").unwrap().as_deref(), Some(&b"v"[..]));
}

/// `DB::repair` with `db_paths` (RocksDB's repairer searches each of them, a table found in
/// path i gets path id i) and with `cf_paths` (searched too, where RocksDB's repairer would
/// lose the tables): the repaired database reads every key.
#[test]
fn repair_finds_tables_in_db_paths_and_cf_paths() {
    use shale::DBPath;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let (p1, p2) = (dir.path().join("p1"), dir.path().join("p2"));
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_db_paths(&[DBPath::new(&p1, 64 << 10).unwrap(), DBPath::new(&p2, 1 << 40).unwrap()]);
    o.set_disable_auto_compactions(true);
    write_then_lose_manifest(&o, &path);
    assert!(tables_in(&p1) > 0 && tables_in(&p2) > 0, "tables in both paths");
    assert_eq!(tables_in(&path), 0);
    DB::repair(&o, &path).unwrap();
    reads_everything(&o, &path);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let (c1, c2) = (dir.path().join("c1"), dir.path().join("c2"));
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_cf_paths(&[DBPath::new(&c1, 64 << 10).unwrap(), DBPath::new(&c2, 1 << 40).unwrap()]);
    o.set_disable_auto_compactions(true);
    write_then_lose_manifest(&o, &path);
    assert!(tables_in(&c1) > 0 && tables_in(&c2) > 0, "tables in both paths");
    DB::repair(&o, &path).unwrap();
    reads_everything(&o, &path);
}

fn ts(t: u64) -> [u8; 8] {
    t.to_le_bytes()
}

fn get_at(db: &DB, key: &[u8], t: u64) -> Option<Vec<u8>> {
    let mut ro = shale::ReadOptions::default();
    ro.set_timestamp(ts(t));
    db.get_opt(key, &ro).unwrap()
}

/// User-defined timestamps with blob files (as RocksDB 11.8.1, which keeps the timestamped
/// user key in each blob record): values go to blob files, reads at a timestamp see the
/// version of that time, through flushes, compactions with garbage collection and a reopen.
#[test]
fn timestamps_with_blob_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_comparator_object(std::sync::Arc::new(shale::U64TsComparator::bytewise()));
    o.set_enable_blob_files(true);
    o.set_min_blob_size(16);
    o.set_enable_blob_gc(true);
    o.set_blob_gc_age_cutoff(1.0);
    let big = |i: u32, t: u64| format!("value-{i:05}-at-{t}-").repeat(4);
    {
        let db = DB::open(&o, dir.path()).unwrap();
        for t in [10u64, 20] {
            for i in 0..200u32 {
                db.put_with_ts(format!("k{i:05}"), ts(t), big(i, t)).unwrap();
            }
            db.flush().unwrap();
        }
        assert!(!util::files_ending(dir.path(), ".blob").is_empty(), "no blob file written");
        for (t, want) in [(15u64, Some(10u64)), (25, Some(20)), (5, None)] {
            for i in (0..200u32).step_by(13) {
                assert_eq!(
                    get_at(&db, format!("k{i:05}").as_bytes(), t),
                    want.map(|w| big(i, w).into_bytes()),
                    "k{i} at {t}"
                );
            }
        }
        db.compact_range::<&[u8], &[u8]>(None, None);
        for i in (0..200u32).step_by(7) {
            assert_eq!(get_at(&db, format!("k{i:05}").as_bytes(), 25), Some(big(i, 20).into_bytes()));
            assert_eq!(get_at(&db, format!("k{i:05}").as_bytes(), 15), Some(big(i, 10).into_bytes()));
        }
    }
    let db = DB::open(&o, dir.path()).unwrap();
    let mut ro = shale::ReadOptions::default();
    ro.set_timestamp(ts(30));
    let all: Vec<_> = db.iterator_opt(shale::IteratorMode::Start, ro).map(|r| r.unwrap()).collect();
    assert_eq!(all.len(), 200);
    for (i, (_, v)) in all.iter().enumerate() {
        assert_eq!(&v[..], big(i as u32, 20).as_bytes());
    }
}
