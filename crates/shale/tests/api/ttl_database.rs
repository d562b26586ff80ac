//! TTL databases (RocksDB's DBWithTTL): values carry a 4-byte little-endian write time,
//! reads strip it, compactions drop expired entries (not reads), snapshots keep them, and
//! RocksDB's own `ldb --ttl` reads and writes the same format.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use shale::{ColumnFamilyDescriptor, ColumnFamilyTtl, ErrorKind, IteratorMode, Options, DB};

fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64
}

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o
}

#[test]
fn values_carry_the_write_time_and_expire_at_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = DB::open_with_ttl(&opts(), &path, Duration::from_secs(1)).unwrap();
        db.put(b"k", b"value").unwrap();
        db.put(b"gone", b"x").unwrap();
        db.delete(b"gone").unwrap();
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"value"[..]));
        assert_eq!(db.get_pinned(b"k").unwrap().as_deref(), Some(&b"value"[..]));
        let all: Vec<_> = db.iterator(IteratorMode::Start).map(|r| r.unwrap()).collect();
        assert_eq!(all, vec![(b"k".to_vec().into_boxed_slice(), b"value".to_vec().into_boxed_slice())]);
    }
    // The format on disk: the value, then the write time as fixed32 little-endian.
    {
        let db = DB::open(&Options::default(), &path).unwrap();
        let raw = db.get(b"k").unwrap().unwrap();
        assert_eq!(raw.len(), 9);
        assert_eq!(&raw[..5], b"value");
        let t = i32::from_le_bytes(raw[5..].try_into().unwrap()) as i64;
        assert!((now() - t).abs() <= 5, "write time {t}, now {}", now());
    }
    let db = DB::open_with_ttl(&opts(), &path, Duration::from_secs(1)).unwrap();
    let snapshot_db = &db;
    sleep(Duration::from_millis(2100));
    // Expired, but only a compaction removes it (as RocksDB).
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"value"[..]));
    {
        // A snapshot that sees the entry keeps it through a compaction.
        let snap = snapshot_db.snapshot();
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        assert_eq!(snap.get(b"k").unwrap().as_deref(), Some(&b"value"[..]));
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(db.get(b"k").unwrap(), None);
    assert!(db.live_files().unwrap().is_empty(), "expired entry left a table behind");
}

#[test]
fn family_ttls_and_families_created_later() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let short = ColumnFamilyDescriptor::new_with_ttl(
        "short",
        Options::default(),
        ColumnFamilyTtl::Duration(Duration::from_secs(1)),
    );
    let never = ColumnFamilyDescriptor::new_with_ttl("never", Options::default(), ColumnFamilyTtl::Disabled);
    let long = ColumnFamilyDescriptor::new("long", Options::default()); // SameAsDb
    let mut db =
        DB::open_cf_descriptors_with_ttl(&opts(), &path, [short, never, long], Duration::from_secs(3600))
            .unwrap();
    db.create_cf("later", &Options::default()).unwrap();
    for cf in ["short", "never", "long", "later"] {
        db.put_cf(db.cf_handle(cf).unwrap(), b"k", cf.as_bytes()).unwrap();
    }
    sleep(Duration::from_millis(2100));
    for cf in ["short", "never", "long", "later"] {
        db.compact_range_cf(db.cf_handle(cf).unwrap(), None::<&[u8]>, None::<&[u8]>);
    }
    let get = |cf: &str| db.get_cf(db.cf_handle(cf).unwrap(), b"k").unwrap();
    assert_eq!(get("short"), None);
    assert_eq!(get("never").as_deref(), Some(&b"never"[..]));
    assert_eq!(get("long").as_deref(), Some(&b"long"[..]));
    assert_eq!(get("later").as_deref(), Some(&b"later"[..]));
}

#[test]
fn a_plain_database_opened_with_ttl_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = DB::open(&opts(), &path).unwrap();
        db.put(b"k", b"v").unwrap();
        db.put(b"k2", b"0000").unwrap();
    }
    let db = DB::open_with_ttl(&opts(), &path, Duration::from_secs(60)).unwrap();
    assert_eq!(db.get(b"k").unwrap_err().kind(), ErrorKind::Corruption);
    // "0000" reads as a write time in 1970, before TTL databases existed.
    assert_eq!(db.get(b"k2").unwrap_err().kind(), ErrorKind::Corruption);
}

/// RocksDB's `ldb --ttl` (Debian's 7.8.3) reads Shale's TTL values and writes ones Shale reads.
#[test]
fn rocksdb_ldb_reads_and_writes_the_same_format() {
    // RocksDB 7.8.3's ldb; a failure naming it under CI (`shale_base::oracle`).
    let Some(ldb_bin) =
        shale_base::oracle::rocksdb_7_tool("rocksdb_ldb_reads_and_writes_the_same_format", "ldb")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    // Tables RocksDB 7.8.3 reads: format_version 5 (Shale's default is 11.x's 7).
    let mut o7 = opts();
    let mut t = shale::BlockBasedOptions::default();
    t.set_format_version(5);
    o7.set_block_based_table_factory(&t);
    {
        let db = DB::open_with_ttl(&o7, &path, Duration::from_secs(3600)).unwrap();
        db.put(b"from_shale", b"v1").unwrap();
        db.flush().unwrap();
    }
    // Debian's ldb 7.8.3 prints the answer and then exits with 1 ("ldb doesn't support TTL
    // DB with multiple column families", also on a database RocksDB wrote): the output is
    // what is checked.
    let ldb = |args: &[&str]| {
        let out = Command::new(&ldb_bin).arg(format!("--db={}", path.display())).args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").trim().to_string()
    };
    assert_eq!(ldb(&["--ttl", "get", "from_shale"]), "v1");
    ldb(&["--ttl", "put", "from_rocksdb", "v2"]);
    let db = DB::open_with_ttl(&opts(), &path, Duration::from_secs(3600)).unwrap();
    assert_eq!(db.get(b"from_rocksdb").unwrap().as_deref(), Some(&b"v2"[..]));
    assert_eq!(db.get(b"from_shale").unwrap().as_deref(), Some(&b"v1"[..]));
    drop(db);
    assert!(Path::new(&path).exists());
}

/// RocksDB's DBWithTTL does not override GetEntity or PutEntity: StackableDB passes them to
/// the base database. A plain value comes back as the default column with its 4-byte write
/// time; an entity written by put_entity carries none (and a plain get of it is Corruption,
/// its empty default column being shorter than a write time); a batch holding an entity is
/// refused by the TTL write path as RocksDB's `DBWithTTLImpl::Write` refuses PutEntityCF.
#[test]
fn entities_in_a_ttl_database_are_the_base_database_s() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = DB::open_with_ttl(&opts(), &path, Duration::from_secs(3600)).unwrap();
    let before = now();
    db.put(b"plain", b"v").unwrap();
    let cf = db.cf_handle("default").unwrap();
    db.put_entity_cf(&cf, b"ent", &[(b"a", b"1"), (b"b", b"2")], &shale::WriteOptions::default()).unwrap();
    for flushed in [false, true] {
        let cols = db.get_entity_cf_opt(&cf, b"plain", &shale::ReadOptions::default()).unwrap().unwrap();
        assert_eq!(cols.len(), 1, "flushed {flushed}");
        assert_eq!(cols[0].0, b"");
        let stored = &cols[0].1;
        assert_eq!(stored.len(), 5, "the value and its write time");
        assert_eq!(&stored[..1], b"v");
        let t = i64::from(i32::from_le_bytes(stored[1..5].try_into().unwrap()));
        assert!((before..=now()).contains(&t), "write time {t}");
        let ent = db.get_entity_cf_opt(&cf, b"ent", &shale::ReadOptions::default()).unwrap().unwrap();
        assert_eq!(ent, vec![(b"a".to_vec(), b"1".to_vec()), (b"b".to_vec(), b"2".to_vec())]);
        assert_eq!(db.get(b"plain").unwrap().as_deref(), Some(&b"v"[..]));
        assert_eq!(db.get(b"ent").unwrap_err().kind(), ErrorKind::Corruption);
        assert!(db.get_entity_cf_opt(&cf, b"none", &shale::ReadOptions::default()).unwrap().is_none());
        db.flush().unwrap();
    }
    let mut b = shale::WriteBatch::default();
    b.put_entity(b"e2", &[(b"c", b"3")]).unwrap();
    assert_eq!(db.write(b).unwrap_err().kind(), ErrorKind::NotSupported);
}
