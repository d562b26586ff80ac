//! A read-only open (RocksDB's DBImplReadOnly) reads tables and WALs, refuses every write
//! with RocksDB's message, and leaves the directory byte for byte as it found it, even
//! beside a running read-write instance.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::BTreeMap;
use std::path::Path;

use shale::{ColumnFamilyDescriptor, ErrorKind, FlushOptions, Options, DB};

/// Every file of the directory: name -> (length, FNV-1a of the contents, mtime).
fn fingerprint(dir: &Path) -> BTreeMap<String, (u64, u64, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let data = std::fs::read(e.path()).unwrap();
        let mut h: u64 = 0xcbf29ce484222325;
        for b in &data {
            h = (h ^ *b as u64).wrapping_mul(0x100000001b3);
        }
        let mtime = e.metadata().unwrap().modified().unwrap();
        out.insert(e.file_name().to_string_lossy().into_owned(), (data.len() as u64, h, mtime));
    }
    out
}

fn make_db(path: &Path) {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let db = DB::open_cf(&opts, path, ["cf1", "cf2"]).unwrap();
    let cf1 = db.cf_handle("cf1").unwrap();
    // In a table...
    db.put(b"flushed", b"t").unwrap();
    db.put_cf(cf1, b"k", b"old").unwrap();
    db.flush_cf(cf1).unwrap();
    db.flush().unwrap();
    // ...and only in the WAL.
    db.put(b"wal-only", b"w").unwrap();
    db.put_cf(cf1, b"k", b"new").unwrap();
    db.delete(b"flushed").unwrap();
}

#[test]
fn read_only_open_writes_nothing_and_sees_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    make_db(&path);
    let before = fingerprint(&path);
    {
        let opts = Options::default();
        let db = DB::open_cf_for_read_only(&opts, &path, ["cf1"], false).unwrap();
        let cf1 = db.cf_handle("cf1").unwrap();
        assert_eq!(db.get(b"wal-only").unwrap().as_deref(), Some(&b"w"[..]));
        assert_eq!(db.get(b"flushed").unwrap(), None);
        assert_eq!(db.get_cf(cf1, b"k").unwrap().as_deref(), Some(&b"new"[..]));
        let keys: Vec<Box<[u8]>> = db.iterator(shale::IteratorMode::Start).map(|r| r.unwrap().0).collect();
        assert_eq!(keys, vec![b"wal-only".to_vec().into_boxed_slice()]);

        let not_supported = |r: Result<(), shale::Error>| {
            let e = r.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
            assert!(e.to_string().contains("Not supported operation in read only mode."), "{e}");
        };
        not_supported(db.put(b"a", b"b"));
        not_supported(db.put_cf(cf1, b"a", b"b"));
        not_supported(db.delete(b"wal-only"));
        not_supported(db.flush());
        not_supported(db.flush_cf_opt(cf1, &FlushOptions::default()));
        not_supported(db.flush_wal(true));
        not_supported(db.try_compact_range_cf(cf1, None::<&[u8]>, None::<&[u8]>));
        not_supported(db.resume());
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        let mut db = db;
        not_supported(db.create_cf("new", &Options::default()));
        not_supported(db.drop_cf("cf1"));
        // A secondary-only call.
        let e = db.try_catch_up_with_primary().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotSupported);
    }
    assert_eq!(before, fingerprint(&path), "a read-only open changed the directory");

    // Reopened read-write afterwards, everything is still there.
    let mut opts = Options::default();
    opts.create_missing_column_families(true);
    let db = DB::open_cf(&opts, &path, ["cf1", "cf2"]).unwrap();
    assert_eq!(db.get(b"wal-only").unwrap().as_deref(), Some(&b"w"[..]));
}

#[test]
fn read_only_beside_a_running_primary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    let primary = DB::open(&opts, &path).unwrap();
    primary.put(b"a", b"1").unwrap();
    // No LOCK is taken, so it opens while the primary holds it.
    let ro = DB::open_for_read_only(&Options::default(), &path, false).unwrap();
    assert_eq!(ro.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    // A read-only instance is a fixed view: later primary writes are not seen.
    primary.put(b"a", b"2").unwrap();
    assert_eq!(ro.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    // The primary can still write and flush.
    primary.flush().unwrap();
    drop(ro);
    assert_eq!(primary.get(b"a").unwrap().as_deref(), Some(&b"2"[..]));
}

#[test]
fn read_only_refusals_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    // A missing database is an error, and no file is created (with create_if_missing,
    // RocksDB creates the empty directory first; so does Shale).
    let mut opts = Options::default();
    assert!(DB::open_for_read_only(&opts, &path, false).is_err());
    assert!(!path.exists(), "a read-only open created the directory");
    opts.create_if_missing(true);
    assert!(DB::open_for_read_only(&opts, &path, false).is_err());
    assert_eq!(std::fs::read_dir(&path).unwrap().count(), 0, "a read-only open created a file");
    std::fs::remove_dir(&path).unwrap();

    make_db(&path);
    // A family the database lacks, whatever create_missing_column_families says.
    opts.create_missing_column_families(true);
    let e = DB::open_cf_descriptors_read_only(
        &opts,
        &path,
        [ColumnFamilyDescriptor::new("nope", Options::default())],
        false,
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("Column family not found: nope"), "{e}");
    // error_if_log_file_exist: the WAL holds writes.
    let e = DB::open_for_read_only(&Options::default(), &path, true).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains("error_if_wal_file_exists"), "{e}");
}

#[test]
fn read_only_after_everything_is_flushed_accepts_error_if_log_file_exist() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        let db = DB::open(&opts, &path).unwrap();
        db.put(b"k", b"v").unwrap();
    }
    // Reopening read-write flushes what the WAL held and starts an empty WAL.
    drop(DB::open(&Options::default(), &path).unwrap());
    let before = fingerprint(&path);
    let db = DB::open_for_read_only(&Options::default(), &path, true).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    drop(db);
    assert_eq!(before, fingerprint(&path));
}
