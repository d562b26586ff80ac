//! Column families: create/drop/handles, open_cf / open_cf_descriptors /
//! create_missing_column_families / list_cf, per-family options, one shared WAL, and
//! RocksDB's errors for families not named at open.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::sync::Arc;

use shale::{ColumnFamilyDescriptor, ErrorKind, IteratorMode, Options, ReverseBytewiseComparator, DB};

use util::{files_ending, value};

use util::create_options as base;

fn reverse_small() -> Options {
    let mut o = Options::default();
    o.set_comparator_object(Arc::new(ReverseBytewiseComparator));
    o.set_write_buffer_size(32 << 10);
    o.set_disable_auto_compactions(true);
    o
}

fn keys_cf(db: &DB, name: &str) -> Vec<Vec<u8>> {
    let cf = db.cf_handle(name).unwrap();
    db.iterator_cf(cf, IteratorMode::Start).map(|r| r.unwrap().0.into_vec()).collect()
}

#[test]
fn create_use_and_drop() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = DB::open(&base(), dir.path()).unwrap();
    assert!(db.cf_handle("default").is_some());
    assert!(db.cf_handle("logs").is_none());
    db.create_cf("logs", &Options::default()).unwrap();
    let e = db.create_cf("logs", &Options::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("Column family already exists"), "{e}");
    let logs = db.cf_handle("logs").unwrap();
    assert_eq!(logs.name(), "logs");
    db.put_cf(logs, b"k", b"in logs").unwrap();
    db.put(b"k", b"in default").unwrap();
    assert_eq!(db.get_cf(logs, b"k").unwrap().as_deref(), Some(&b"in logs"[..]));
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"in default"[..]));
    for i in 0..200u64 {
        db.put_cf(logs, format!("x{i:03}"), value(i, 100)).unwrap();
    }
    db.flush_cf(logs).unwrap();
    let ssts = files_ending(dir.path(), ".sst");
    assert_eq!(ssts.len(), 1);

    let e = db.drop_cf("default").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    db.drop_cf("logs").unwrap();
    assert!(db.cf_handle("logs").is_none());
    assert!(db.drop_cf("logs").is_err(), "dropping twice");
    // The dropped family's table is removed; the default family is intact.
    assert!(files_ending(dir.path(), ".sst").is_empty(), "{:?}", files_ending(dir.path(), ".sst"));
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"in default"[..]));
    assert_eq!(DB::list_cf(&Options::default(), dir.path()).unwrap(), vec!["default"]);
    drop(db);

    // Reopened, the family is gone and its WAL records are not replayed anywhere.
    let mut db = DB::open(&base(), dir.path()).unwrap();
    assert!(db.cf_handle("logs").is_none());
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"in default"[..]));
    // A new family of the same name starts empty.
    db.create_cf("logs", &Options::default()).unwrap();
    let logs = db.cf_handle("logs").unwrap();
    assert_eq!(db.get_cf(logs, b"k").unwrap(), None);
    assert_eq!(db.iterator_cf(logs, IteratorMode::Start).count(), 0);
}

#[test]
fn per_family_options_and_a_shared_wal() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = base();
    o.create_missing_column_families(true);
    let descs = || {
        vec![
            ColumnFamilyDescriptor::new("rev", reverse_small()),
            ColumnFamilyDescriptor::new("plain", Options::default()),
        ]
    };
    {
        let db = DB::open_cf_descriptors(&o, dir.path(), descs()).unwrap();
        let rev = db.cf_handle("rev").unwrap();
        let plain = db.cf_handle("plain").unwrap();
        for i in 0..400u64 {
            let k = format!("k{i:03}");
            db.put_cf(rev, &k, value(i, 200)).unwrap();
            db.put_cf(plain, &k, value(i, 200)).unwrap();
            db.put(&k, b"d").unwrap();
        }
        // 32 KiB write buffer in "rev" only: it flushed, the others did not.
        util::wait_until(30, "rev flushes", || {
            db.property_int_value_cf(rev, "rocksdb.num-immutable-mem-table").unwrap() == Some(0)
        });
        assert!(db.property_int_value_cf(rev, "rocksdb.num-files-at-level0").unwrap().unwrap() >= 2);
        assert_eq!(db.property_int_value_cf(plain, "rocksdb.num-files-at-level0").unwrap(), Some(0));
        assert_eq!(util::int_prop(&db, "rocksdb.num-files-at-level0"), 0);
        // Orders differ per family.
        let r = keys_cf(&db, "rev");
        let p = keys_cf(&db, "plain");
        assert_eq!(r.len(), 400);
        assert_eq!(r[0], b"k399");
        assert_eq!(p[0], b"k000");
        // One WAL for all families (the unflushed data of "plain" and "default" is in it).
        assert!(!files_ending(dir.path(), ".log").is_empty());
        // The OPTIONS file records each family's own options.
        let opt_files: Vec<String> =
            files_ending(dir.path(), "").into_iter().filter(|n| n.starts_with("OPTIONS-")).collect();
        let text = std::fs::read_to_string(dir.path().join(opt_files.last().unwrap())).unwrap();
        let parsed = shale::options_file::OptionsFile::parse(&text).unwrap();
        assert_eq!(parsed.cf("rev").unwrap().option("comparator"), Some("rocksdb.ReverseBytewiseComparator"));
        assert_eq!(parsed.cf("rev").unwrap().option("write_buffer_size"), Some("32768"));
        assert_eq!(parsed.cf("plain").unwrap().option("comparator"), Some("leveldb.BytewiseComparator"));
    }
    // Reopen without any flush: every family recovers from the shared WAL.
    let db = DB::open_cf_descriptors(&o, dir.path(), descs()).unwrap();
    let rev = db.cf_handle("rev").unwrap();
    let plain = db.cf_handle("plain").unwrap();
    for i in (0..400u64).step_by(13) {
        let k = format!("k{i:03}");
        assert_eq!(db.get_cf(rev, &k).unwrap(), Some(value(i, 200)));
        assert_eq!(db.get_cf(plain, &k).unwrap(), Some(value(i, 200)));
        assert_eq!(db.get(&k).unwrap().as_deref(), Some(&b"d"[..]));
    }
    assert_eq!(keys_cf(&db, "rev")[0], b"k399");
    assert_eq!(keys_cf(&db, "plain").len(), 400);
    // The wrong comparator for "rev" is refused.
    drop(db);
    let wrong = vec![
        ColumnFamilyDescriptor::new("rev", Options::default()),
        ColumnFamilyDescriptor::new("plain", Options::default()),
    ];
    let e = DB::open_cf_descriptors(&o, dir.path(), wrong).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(
        e.to_string().contains("does not match existing comparator rocksdb.ReverseBytewiseComparator"),
        "{e}"
    );
}

#[test]
fn opening_requires_every_family() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut db = DB::open(&base(), dir.path()).unwrap();
        db.create_cf("a", &Options::default()).unwrap();
        db.create_cf("b", &Options::default()).unwrap();
        db.put_cf(db.cf_handle("b").unwrap(), b"k", b"v").unwrap();
    }
    assert_eq!(DB::list_cf(&Options::default(), dir.path()).unwrap(), vec!["default", "a", "b"]);
    let e = DB::open(&base(), dir.path()).expect_err("opening without the families must fail");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // RocksDB lists them in its hash map's order ("b, a" here); the order is not part of the contract.
    let msg = e.into_string();
    assert!(
        msg == "Invalid argument: Column families not opened: a, b"
            || msg == "Invalid argument: Column families not opened: b, a",
        "{msg}"
    );
    let e = DB::open_cf(&base(), dir.path(), ["a"]).err().unwrap();
    assert_eq!(e.into_string(), "Invalid argument: Column families not opened: b");

    // A family that does not exist, without create_missing_column_families.
    let e = DB::open_cf(&base(), dir.path(), ["a", "b", "c"]).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(e.into_string(), "Invalid argument: Column family not found: c");

    // With it, "c" is created.
    let mut o = base();
    o.create_missing_column_families(true);
    let db = DB::open_cf(&o, dir.path(), ["a", "b", "c"]).unwrap();
    assert_eq!(db.get_cf(db.cf_handle("b").unwrap(), b"k").unwrap().as_deref(), Some(&b"v"[..]));
    db.put_cf(db.cf_handle("c").unwrap(), b"kc", b"vc").unwrap();
    drop(db);
    assert_eq!(DB::list_cf(&Options::default(), dir.path()).unwrap(), vec!["default", "a", "b", "c"]);
    // Naming "default" explicitly is allowed.
    let db = DB::open_cf(&base(), dir.path(), ["default", "a", "b", "c"]).unwrap();
    assert_eq!(db.get_cf(db.cf_handle("c").unwrap(), b"kc").unwrap().as_deref(), Some(&b"vc"[..]));
}
