//! `persist_user_defined_timestamps=false` with `SstFileWriter` and ingestion, as RocksDB
//! 11.8.1's: the writer (options with the flag false and a `.u64ts` comparator) accepts only
//! the minimum timestamp and writes keys without it ("rocksdb.user.defined.timestamps.
//! persisted" = 0); ingestion checks the file's comparator and flag against the family's
//! (`ValidateUserDefinedTimestampsOptions`, RocksDB's texts) and reads a file without
//! timestamps with the minimum one, before and after a reopen.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;
use std::sync::Arc;

use super::option_rows_ts::{opts, read_at, ts};
use shale::table::reader::{Table, TableReaderOptions};
use shale::{ErrorKind, Options, SstFileWriter, U64TsComparator, DB};

/// Writes `keys` (each with value `v<key>`) with the writer's options; with timestamps at
/// `t`.
fn write_file(o: &Options, path: &Path, keys: &[&str], t: Option<u64>) {
    let mut w = SstFileWriter::create(o);
    w.open(path).unwrap();
    for k in keys {
        match t {
            Some(t) => w.put_with_ts(k, ts(t), format!("v{k}")).unwrap(),
            None => w.put(k, format!("v{k}")).unwrap(),
        }
    }
    w.finish().unwrap();
}

/// The file's keys as stored and its "persisted" property.
fn raw(path: &Path) -> (Vec<Vec<u8>>, Option<u64>) {
    let size = std::fs::metadata(path).unwrap().len();
    let file = shale::fs::default_fs().new_random_access_file(path).unwrap();
    let opts = TableReaderOptions {
        timestamps_persisted: true,
        icmp: shale::key::InternalKeyComparator::new(Arc::new(U64TsComparator::bytewise())),
        block_cache: None,
        verify_checksums: true,
        file_name: path.display().to_string(),
        cache_key: shale::cache::OffsetableCacheKey::unique(),
        statistics: None,
        block_protection_bytes_per_key: 0,
    };
    let t = Table::open(file, size, opts).unwrap();
    let mut it = t.iter(true);
    it.seek_to_first();
    let mut keys = Vec::new();
    while it.valid() {
        keys.push(it.key()[..it.key().len() - 8].to_vec());
        it.next();
    }
    (keys, t.properties().raw_u64("rocksdb.user.defined.timestamps.persisted"))
}

#[test]
fn the_writer_strips_timestamps_and_takes_only_the_minimum() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(false, true);
    let mut w = SstFileWriter::create(&o);
    w.open(dir.path().join("x.sst")).unwrap();
    let e = w.put_with_ts(b"a", ts(5), b"1").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert_eq!(
        e.to_string(),
        "Invalid argument: persist_user_defined_timestamps flag is set to false, only minimum \
         timestamp is accepted."
    );
    w.put_with_ts(b"a", ts(0), b"1").unwrap();
    w.delete_with_ts(b"b", ts(0)).unwrap();
    w.put_with_ts(b"c", ts(0), b"3").unwrap();
    w.finish().unwrap();
    let (keys, persisted) = raw(&dir.path().join("x.sst"));
    assert_eq!(keys, [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
    assert_eq!(persisted, Some(0));
    // With the flag true the timestamps stay, and the property is not written.
    let o = opts(true, true);
    let path = dir.path().join("y.sst");
    write_file(&o, &path, &["a"], Some(5));
    let (keys, persisted) = raw(&path);
    assert_eq!(keys, [[&b"a"[..], &ts(5)].concat()]);
    assert_eq!(persisted, None);
}

#[test]
fn ingestion_checks_the_flag_and_reads_with_the_minimum_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let stripped = dir.path().join("stripped.sst");
    write_file(&opts(false, true), &stripped, &["b", "c"], Some(0));
    let with_ts = dir.path().join("with_ts.sst");
    write_file(&opts(true, true), &with_ts, &["x"], Some(5));
    let plain = dir.path().join("plain.sst");
    write_file(&opts(true, false), &plain, &["p", "q"], None);

    // A family whose timestamps are not persisted takes the stripped file and a file
    // without timestamps; a file with them is refused.
    let db_path = dir.path().join("db");
    let o = opts(false, true);
    let db = DB::open(&o, &db_path).unwrap();
    db.put_with_ts(b"a", ts(3), b"va").unwrap();
    db.ingest_external_file(vec![&stripped]).unwrap();
    let e = db.ingest_external_file(vec![&with_ts]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Invalid argument: Cannot toggle the persist_user_defined_timestamps flag for a column \
         family with user-defined timestamps feature enabled."
    );
    db.ingest_external_file(vec![&plain]).unwrap();
    let check = |db: &DB| {
        for k in ["b", "c", "p", "q"] {
            assert_eq!(
                db.get_opt(k, &read_at(0)).unwrap().as_deref(),
                Some(format!("v{k}").as_bytes()),
                "{k}"
            );
        }
        let mut it = db.raw_iterator_opt(read_at(9));
        it.seek(b"b");
        assert_eq!((it.key(), it.timestamp()), (Some(&b"b"[..]), Some(&ts(0)[..])));
        it.seek(b"q");
        assert_eq!((it.key(), it.timestamp()), (Some(&b"q"[..]), Some(&ts(0)[..])));
        drop(it);
        assert_eq!(db.get_opt(b"x", &read_at(9)).unwrap(), None);
    };
    check(&db);
    drop(db);
    let db = DB::open(&o, &db_path).unwrap();
    check(&db);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    check(&db);
    drop(db);

    // A family that persists its timestamps refuses both kinds without them.
    let db = DB::open(&opts(true, true), dir.path().join("db2")).unwrap();
    let e = db.ingest_external_file(vec![&stripped]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Invalid argument: Cannot toggle the persist_user_defined_timestamps flag for a column \
         family with user-defined timestamps feature enabled."
    );
    let e = db.ingest_external_file(vec![&plain]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Invalid argument: Cannot open a column family and enable user-defined timestamps \
         feature without setting persist_user_defined_timestamps flag to false."
    );
    db.ingest_external_file(vec![&with_ts]).unwrap();
    assert_eq!(db.get_opt(b"x", &read_at(9)).unwrap().as_deref(), Some(&b"vx"[..]));
    drop(db);

    // A family without timestamps takes the stripped file (its flag was false), not one
    // whose timestamps were persisted.
    let db = DB::open(&opts(true, false), dir.path().join("db3")).unwrap();
    db.ingest_external_file(vec![&stripped]).unwrap();
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"vb"[..]));
    let e = db.ingest_external_file(vec![&with_ts]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Invalid argument: Cannot open a column family and disable user-defined timestamps \
         feature if its existing persist_user_defined_timestamps flag is not false."
    );
}
