//! `set_experimental_mempurge_threshold` (RocksDB's MemPurge): overwriting a few keys again
//! and again fills write buffers with garbage; instead of flushing them, Shale
//! garbage-collects them into one immutable memtable, so no table is written, reads (and a
//! snapshot's reads) stay right, the LOG says so, and a reopen recovers everything from the
//! WALs that were kept. Data that does not fit one memtable is flushed as usual.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{Options, DB};

fn sst_count(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".sst"))
        .count()
}

#[test]
fn overwrites_are_purged_in_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_write_buffer_size(256 << 10);
    opts.set_max_write_buffer_number(4);
    opts.set_experimental_mempurge_threshold(1.0);
    {
        let db = DB::open(&opts, &dir).unwrap();
        db.put(b"old", b"before the snapshot").unwrap();
        let snap = db.snapshot();
        // About 12 write buffers of overwrites of 50 keys.
        for round in 0..3000u32 {
            for k in 0..50u32 {
                if round.is_multiple_of(60) || k == 0 {
                    db.put(format!("key{k:02}"), format!("round {round} {}", "x".repeat(10))).unwrap();
                }
            }
            db.put(b"old", format!("overwritten {round}").repeat(20)).unwrap();
        }
        assert_eq!(sst_count(&dir), 0, "MemPurge writes no table");
        assert_eq!(snap.get(b"old").unwrap().unwrap(), b"before the snapshot");
        assert_eq!(db.get(b"key00").unwrap().unwrap(), format!("round 2999 {}", "x".repeat(10)).as_bytes());
        assert_eq!(db.get(b"key07").unwrap().unwrap(), format!("round 2940 {}", "x".repeat(10)).as_bytes());
        drop(snap);
        let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
        assert!(log.contains("experimental_mempurge_threshold: 1.000000"), "LOG lists the option");
        assert!(log.contains("Mempurge of"), "LOG records the purges");
    }
    // The WALs were kept: a reopen recovers everything.
    let db = DB::open(&opts, &dir).unwrap();
    assert_eq!(db.get(b"key00").unwrap().unwrap(), format!("round 2999 {}", "x".repeat(10)).as_bytes());
    assert_eq!(db.get(b"old").unwrap().unwrap(), "overwritten 2999".repeat(20).as_bytes());

    // Unique keys do not fit one memtable: flushed as usual.
    for i in 0..20_000u32 {
        db.put(format!("unique{i:06}"), [b'u'; 100]).unwrap();
    }
    db.flush().unwrap();
    assert!(sst_count(&dir) > 1, "unique data is flushed");
    assert_eq!(db.get(b"unique000123").unwrap().unwrap(), [b'u'; 100]);
}

/// A flush after MemPurges returns once the purged memtable is flushed: the purged one
/// stands for every memtable it merged in the count a flush waits for (it waited forever).
#[test]
fn a_flush_after_purges_returns() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_write_buffer_size(256 << 10);
    opts.set_max_write_buffer_number(4);
    opts.set_experimental_mempurge_threshold(1.0);
    let db = DB::open(&opts, &dir).unwrap();
    for round in 0..3000u32 {
        db.put(b"key00", format!("round {round} {}", "x".repeat(10))).unwrap();
        db.put(b"old", format!("overwritten {round}").repeat(20)).unwrap();
    }
    assert_eq!(sst_count(&dir), 0, "MemPurge writes no table");
    db.flush().unwrap();
    assert!(sst_count(&dir) >= 1, "the flush wrote the purged memtables");
    assert_eq!(db.get(b"old").unwrap().unwrap(), "overwritten 2999".repeat(20).as_bytes());
    assert_eq!(db.property_int_value("rocksdb.num-immutable-mem-table").unwrap(), Some(0));
}

/// RocksDB adds a MemPurge's output to the immutable memtables without a flush request: it
/// is purged (or flushed) again only with the memtables switched after it. Here one switch
/// gives one purge of 1 memtable, the next switch one purge of 2; each time the background
/// work then stops (Shale purged the lone output again and again, never idle).
#[test]
fn a_purged_memtable_is_not_purged_alone_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_write_buffer_size(256 << 10);
    opts.set_max_write_buffer_number(4);
    // Above the number of memtables: RocksDB's MemPurgeDecider purges without sampling.
    opts.set_experimental_mempurge_threshold(4.0);
    let db = DB::open(&opts, &dir).unwrap();
    let imm = |db: &DB| db.property_int_value("rocksdb.num-immutable-mem-table").unwrap().unwrap();
    let mut wait = shale::WaitForCompactOptions::default();
    // A liveness bound, not a timing assert: an idle DB returns at once; the old code
    // never became idle.
    wait.set_timeout(120_000_000);
    let purges = || {
        let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
        log.lines()
            .filter_map(|l| l.split("Mempurge of ").nth(1))
            .map(|rest| rest.split(' ').next().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let active = |db: &DB| db.property_int_value("rocksdb.num-entries-active-mem-table").unwrap().unwrap();
    let mut round = 0u32;
    for _ in 0..2 {
        // Write until a memtable is switched: the put that switches starts a new one.
        let mut written = 0;
        loop {
            db.put(format!("key{:02}", round % 20), format!("round {round} {}", "x".repeat(100))).unwrap();
            round += 1;
            written += 1;
            if written > 1 && active(&db) == 1 {
                break;
            }
        }
        db.wait_for_compact(&wait).expect("background work stops after the purge");
        assert_eq!(imm(&db), 1, "the purged memtable stays");
    }
    assert_eq!(purges(), ["1", "2"], "one purge per switch");
    assert_eq!(sst_count(&dir), 0);
    let last = round - 1;
    assert_eq!(
        db.get(format!("key{:02}", last % 20)).unwrap().unwrap(),
        format!("round {last} {}", "x".repeat(100)).as_bytes()
    );
}

/// Wide-column entities are purged like plain values (RocksDB's MemPurge copies every entry
/// its CompactionIterator keeps, entities included): overwriting a few entities again and
/// again writes no table, and the newest entity of each key reads back, before and after a
/// reopen.
#[test]
fn entities_are_purged_in_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_write_buffer_size(256 << 10);
    opts.set_max_write_buffer_number(4);
    opts.set_experimental_mempurge_threshold(1.0);
    let wo = shale::WriteOptions::default();
    let ro = shale::ReadOptions::default();
    let want = |k: u32, round: u32| -> Vec<(Vec<u8>, Vec<u8>)> {
        vec![
            (b"a".to_vec(), format!("{k} {round}").into_bytes()),
            (b"b".to_vec(), format!("{round} {}", "y".repeat(200)).into_bytes()),
        ]
    };
    {
        let db = DB::open(&opts, &dir).unwrap();
        let cf = db.cf_handle("default").unwrap();
        // About 12 write buffers of overwrites of 8 entities.
        for round in 0..1500u32 {
            for k in 0..8u32 {
                let cols = want(k, round);
                let c: Vec<(&[u8], &[u8])> = cols.iter().map(|(n, v)| (n.as_slice(), v.as_slice())).collect();
                db.put_entity_cf(cf, format!("e{k}"), &c, &wo).unwrap();
            }
        }
        assert_eq!(sst_count(&dir), 0, "MemPurge writes no table");
        assert!(std::fs::read_to_string(dir.join("LOG")).unwrap().contains("Mempurge of"));
        for k in 0..8u32 {
            assert_eq!(db.get_entity_cf_opt(cf, format!("e{k}"), &ro).unwrap(), Some(want(k, 1499)), "e{k}");
        }
    }
    let db = DB::open(&opts, &dir).unwrap();
    let cf = db.cf_handle("default").unwrap();
    for k in 0..8u32 {
        assert_eq!(
            db.get_entity_cf_opt(cf, format!("e{k}"), &ro).unwrap(),
            Some(want(k, 1499)),
            "e{k} after reopen"
        );
    }
}
