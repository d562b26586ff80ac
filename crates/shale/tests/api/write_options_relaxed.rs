//! The options `get_with_cache_and_bulkload_test` sets that change how writes reach the disk
//! but not what is read: `unordered_write` (Shale keeps snapshots immutable, more than
//! RocksDB promises with it), `wal_bytes_per_sync` (write-back of the WAL started every N
//! bytes) and `db_log_dir` (the info log in another directory under RocksDB's name), with
//! RocksDB's refusals of the combinations it refuses.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{ErrorKind, Options, TransactionDB, DB};

#[test]
fn relaxed_write_options_keep_every_write_and_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let db_path = dir.path().join("db");
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_unordered_write(true);
    o.set_wal_bytes_per_sync(8 << 10);
    o.set_db_log_dir(&logs);
    {
        let db = DB::open(&o, &db_path).unwrap();
        let snap = db.snapshot();
        // 3 MB through the WAL: several write-back requests.
        for i in 0..3000u32 {
            db.put(format!("k{i:05}"), vec![b'v'; 1000]).unwrap();
        }
        assert_eq!(snap.get("k00001").unwrap(), None, "a snapshot sees nothing written after it");
        assert_eq!(db.get("k02999").unwrap().map(|v| v.len()), Some(1000));
    }
    // Reopened from the WAL: nothing lost.
    let db = DB::open(&o, &db_path).unwrap();
    for i in (0..3000u32).step_by(97) {
        assert_eq!(db.get(format!("k{i:05}")).unwrap().map(|v| v.len()), Some(1000), "k{i}");
    }
    drop(db);
    // The info log is in `logs`, named after the database's absolute path; none in the database.
    assert!(!db_path.join("LOG").exists());
    let abs = db_path.to_string_lossy().into_owned();
    let prefix: String = abs
        .chars()
        .enumerate()
        .filter_map(|(i, c)| {
            if c.is_ascii_alphanumeric() || "-._".contains(c) {
                Some(c)
            } else {
                (i > 0).then_some('_')
            }
        })
        .collect();
    let name = format!("{prefix}_LOG");
    assert!(
        logs.join(&name).exists(),
        "{name} in {:?}",
        std::fs::read_dir(&logs).unwrap().collect::<Vec<_>>()
    );
    let olds = std::fs::read_dir(&logs)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with(&format!("{name}.old.")))
        .count();
    assert_eq!(olds, 1, "the first open's log was renamed at the second");
}

#[test]
fn unordered_write_is_refused_where_rocksdb_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_unordered_write(true);
    o.set_enable_pipelined_write(true);
    let e = DB::open(&o, dir.path()).expect_err("refused");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("unordered_write is incompatible with enable_pipelined_write"), "{e}");
    o.set_enable_pipelined_write(false);
    o.set_allow_concurrent_memtable_write(false);
    let e = DB::open(&o, dir.path()).expect_err("refused");
    assert!(e.to_string().contains("!allow_concurrent_memtable_write"), "{e}");
    o.set_allow_concurrent_memtable_write(true);
    // TransactionDB is RocksDB's WRITE_COMMITTED policy.
    let e = TransactionDB::<shale::SingleThreaded>::open(&o, &Default::default(), dir.path())
        .err()
        .expect("refused");
    assert_eq!(e.kind(), ErrorKind::NotSupported);
    assert!(e.to_string().contains("WRITE_COMMITTED is incompatible with unordered_writes"), "{e}");
    DB::open(&o, dir.path()).unwrap();
}
