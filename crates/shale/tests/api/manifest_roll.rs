//! A MANIFEST over `max_manifest_file_size` is replaced by a new one holding a snapshot of
//! the state; CURRENT follows it and the old one is removed. Writes made without the WAL
//! survive a clean close (they are flushed at close, as RocksDB does).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{Options, WriteOptions, DB};

fn manifests(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("MANIFEST-"))
        .collect();
    v.sort();
    v
}

#[test]
fn manifest_rolls_over_when_large() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_max_manifest_file_size(2048);
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, dir.path()).unwrap();
    let first = manifests(dir.path());
    assert_eq!(first.len(), 1);
    for i in 0..40 {
        db.put(format!("key{i:04}"), format!("value{i}")).unwrap();
        db.flush().unwrap();
    }
    let now = manifests(dir.path());
    assert_eq!(now.len(), 1, "old MANIFESTs must be removed: {now:?}");
    assert_ne!(now, first, "a new MANIFEST must have been started");
    let current = std::fs::read_to_string(dir.path().join("CURRENT")).unwrap();
    assert_eq!(current, format!("{}\n", now[0]));
    assert!(std::fs::metadata(dir.path().join(&now[0])).unwrap().len() < 2048 * 4);
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(db.property_int_value("rocksdb.num-files-at-level0").unwrap(), Some(40));
    for i in 0..40 {
        assert_eq!(db.get(format!("key{i:04}")).unwrap(), Some(format!("value{i}").into_bytes()));
    }
}

#[test]
fn writes_without_wal_survive_clean_close() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    let mut wo = WriteOptions::default();
    wo.disable_wal(true);
    {
        let db = DB::open(&o, dir.path()).unwrap();
        for i in 0..100 {
            db.put_opt(format!("k{i}"), b"v", &wo).unwrap();
        }
        assert_eq!(db.property_int_value("rocksdb.num-files-at-level0").unwrap(), Some(0));
    }
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(db.property_int_value("rocksdb.num-files-at-level0").unwrap(), Some(1));
    for i in 0..100 {
        assert_eq!(db.get(format!("k{i}")).unwrap(), Some(b"v".to_vec()), "k{i}");
    }
    let mut sync_no_wal = WriteOptions::default();
    sync_no_wal.disable_wal(true);
    sync_no_wal.set_sync(true);
    let e = db.put_opt(b"x", b"y", &sync_no_wal).unwrap_err();
    assert_eq!(e.kind(), shale::ErrorKind::InvalidArgument);
}
