//! A read-only open of a two-phase-commit database replays the WALs the read-write open
//! does: a WAL older than every family's log number that holds a prepare section, whose
//! commit marker is in a later WAL, gives the committed data (RocksDB's DBImplReadOnly
//! runs the same Recover: with allow_2pc only min_log_number_to_keep bounds the WALs).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{Cache, Env, Options, TransactionDB, TransactionDBOptions, DB};

/// Writes a two-phase-commit database in `path`: transaction "t" puts a=1 and is prepared,
/// then a put and a flush move every family's log number past the prepare section's WAL.
/// With `commit`, the commit marker then goes to the new WAL (its data stays in the
/// memtable); without, the new WAL stays empty.
fn prepare_then_flush(path: &std::path::Path, commit: bool) {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let db: TransactionDB = TransactionDB::open(&o, &TransactionDBOptions::default(), path).unwrap();
    let txn = db.transaction();
    txn.put(b"a", b"1").unwrap();
    txn.set_name(b"t").unwrap();
    txn.prepare().unwrap();
    db.put(b"z", b"z").unwrap();
    db.flush().unwrap();
    if commit {
        txn.commit().unwrap();
    }
}

#[test]
fn read_only_open_replays_a_prepare_section_older_than_every_log_number() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    prepare_then_flush(path, true);
    let (opts, cfs) =
        Options::load_latest(path, Env::new().unwrap(), false, Cache::new_lru_cache(1 << 20)).unwrap();
    let names: Vec<String> = cfs.iter().map(|d| d.name().to_string()).collect();
    {
        let db = DB::open_cf_for_read_only(&opts, path, &names, false).unwrap();
        assert_eq!(db.get(b"z").unwrap().unwrap(), b"z");
        assert_eq!(
            db.get(b"a").unwrap().as_deref(),
            Some(&b"1"[..]),
            "read-only open lost the committed write"
        );
    }
    // The read-write open agrees.
    let db: TransactionDB = TransactionDB::open(&opts, &TransactionDBOptions::default(), path).unwrap();
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
}

#[test]
fn error_if_wal_file_exists_sees_a_wal_older_than_every_log_number() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    prepare_then_flush(path, false);
    // RocksDB's Recover checks every WAL file in the directory, not only those it replays.
    let e = DB::open_for_read_only(&Options::default(), path, true).err().unwrap();
    assert_eq!(e.kind(), shale::ErrorKind::Corruption);
    assert!(e.to_string().contains("non-empty WAL file already exists"), "{e}");
}
