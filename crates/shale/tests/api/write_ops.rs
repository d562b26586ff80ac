//! Writes: put, delete, single_delete, delete_range, WriteBatch across column families
//! (atomic), WriteOptions (sync, disable_wal), and group commit under 8 concurrent writers.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::sync::Arc;

use shale::{AsColumnFamilyRef, ErrorKind, Options, WriteBatch, WriteOptions, DB};

fn create_opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o
}

fn get(db: &DB, k: &[u8]) -> Option<Vec<u8>> {
    db.get(k).unwrap()
}

#[test]
fn put_delete_single_delete_delete_range() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&create_opts(), dir.path()).unwrap();
    db.put(b"a", b"1").unwrap();
    db.put(b"a", b"2").unwrap();
    assert_eq!(get(&db, b"a"), Some(b"2".to_vec()));
    db.delete(b"a").unwrap();
    assert_eq!(get(&db, b"a"), None);
    // Deleting a missing key is not an error.
    db.delete(b"never").unwrap();

    // single_delete used correctly: one put, then one single_delete.
    db.put(b"s", b"once").unwrap();
    assert_eq!(get(&db, b"s"), Some(b"once".to_vec()));
    db.single_delete(b"s").unwrap();
    assert_eq!(get(&db, b"s"), None);
    // Also across a flush (put in a table, single delete in the memtable) and a compaction.
    db.put(b"t", b"tabled").unwrap();
    db.flush().unwrap();
    db.single_delete(b"t").unwrap();
    assert_eq!(get(&db, b"t"), None);
    db.compact_range::<&[u8], &[u8]>(None, None);
    assert_eq!(get(&db, b"t"), None);

    // delete_range removes [from, to).
    for k in [b"r1", b"r2", b"r3", b"r4", b"r5"] {
        db.put(k, b"x").unwrap();
    }
    db.delete_range(b"r2", b"r4").unwrap();
    assert_eq!(get(&db, b"r1"), Some(b"x".to_vec()));
    assert_eq!(get(&db, b"r2"), None);
    assert_eq!(get(&db, b"r3"), None);
    assert_eq!(get(&db, b"r4"), Some(b"x".to_vec()), "the range end is exclusive");
    // A put after the tombstone is visible.
    db.put(b"r2", b"again").unwrap();
    assert_eq!(get(&db, b"r2"), Some(b"again".to_vec()));
    let keys: Vec<Vec<u8>> =
        db.iterator(shale::IteratorMode::Start).map(|r| r.unwrap().0.into_vec()).collect();
    assert_eq!(keys, vec![b"r1".to_vec(), b"r2".to_vec(), b"r4".to_vec(), b"r5".to_vec()]);
}

struct BogusCf;
impl AsColumnFamilyRef for BogusCf {
    fn cf_id(&self) -> u32 {
        4242
    }
}

#[test]
fn write_batch_across_column_families_is_atomic() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open_cf(&create_opts(), dir.path(), ["users", "index"]).unwrap();
    let users = db.cf_handle("users").unwrap();
    let index = db.cf_handle("index").unwrap();
    db.put_cf(users, b"old", b"gone soon").unwrap();

    let mut b = WriteBatch::default();
    b.put(b"meta", b"v1");
    b.put_cf(users, b"u1", b"alice");
    b.put_cf(index, b"alice", b"u1");
    b.delete_cf(users, b"old");
    b.delete_range_cf(index, b"b", b"z");
    assert_eq!(b.len(), 5);
    let before = db.latest_sequence_number();
    db.write(b).unwrap();
    // Each record takes one sequence number.
    assert_eq!(db.latest_sequence_number(), before + 5);
    assert_eq!(get(&db, b"meta"), Some(b"v1".to_vec()));
    assert_eq!(db.get_cf(users, b"u1").unwrap(), Some(b"alice".to_vec()));
    assert_eq!(db.get_cf(index, b"alice").unwrap(), Some(b"u1".to_vec()));
    assert_eq!(db.get_cf(users, b"old").unwrap(), None);
    // Families are separate key spaces.
    assert_eq!(get(&db, b"u1"), None);
    assert_eq!(db.get_cf(index, b"u1").unwrap(), None);

    // A batch naming a column family that does not exist fails as a whole.
    let mut bad = WriteBatch::default();
    bad.put(b"partial", b"must not appear");
    bad.put_cf(users, b"partial", b"must not appear");
    bad.put_cf(&BogusCf, b"k", b"v");
    let seq = db.latest_sequence_number();
    let e = db.write(bad).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("Invalid column family specified in write batch"), "{e}");
    assert_eq!(get(&db, b"partial"), None);
    assert_eq!(db.get_cf(users, b"partial").unwrap(), None);
    assert_eq!(db.latest_sequence_number(), seq);
    // And the database still takes writes.
    db.put(b"after", b"ok").unwrap();

    // The batch's effects survive reopen (from the WAL).
    drop(db);
    let db = DB::open_cf(&create_opts(), dir.path(), ["users", "index"]).unwrap();
    let users = db.cf_handle("users").unwrap();
    let index = db.cf_handle("index").unwrap();
    assert_eq!(get(&db, b"meta"), Some(b"v1".to_vec()));
    assert_eq!(db.get_cf(users, b"u1").unwrap(), Some(b"alice".to_vec()));
    assert_eq!(db.get_cf(index, b"alice").unwrap(), Some(b"u1".to_vec()));
    assert_eq!(db.get_cf(users, b"old").unwrap(), None);
    assert_eq!(get(&db, b"partial"), None);
    assert_eq!(get(&db, b"after"), Some(b"ok".to_vec()));
}

fn wal_syncs(db: &DB) -> u64 {
    let stats = db.property_value("rocksdb.stats").unwrap().unwrap();
    // RocksDB's `Cumulative WAL: W writes, S syncs, ...`.
    let line = stats.lines().find(|l| l.starts_with("Cumulative WAL:")).expect(&stats);
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| w.starts_with("syncs")).expect(line);
    words[at - 1].parse::<u64>().expect(line)
}

#[test]
fn write_options_sync_and_disable_wal() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&create_opts(), dir.path()).unwrap();
    let syncs = wal_syncs(&db);
    let mut sync = WriteOptions::default();
    sync.set_sync(true);
    db.put_opt(b"durable", b"1", &sync).unwrap();
    assert!(wal_syncs(&db) > syncs, "a sync write must fsync the WAL");
    let syncs = wal_syncs(&db);
    db.put(b"plain", b"1").unwrap();
    assert_eq!(wal_syncs(&db), syncs, "a plain write must not fsync");

    // sync together with disable_wal is refused, with RocksDB's message.
    let mut both = WriteOptions::default();
    both.set_sync(true);
    both.disable_wal(true);
    let e = db.put_opt(b"x", b"y", &both).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(e.into_string(), "Invalid argument: Sync writes has to enable WAL.");
    assert_eq!(get(&db, b"x"), None);

    // A write without the WAL is visible at once and adds nothing to the WAL.
    let wal_bytes = || -> u64 {
        util::files_ending(dir.path(), ".log")
            .iter()
            .map(|n| std::fs::metadata(dir.path().join(n)).unwrap().len())
            .sum()
    };
    let before = wal_bytes();
    let mut nowal = WriteOptions::default();
    nowal.disable_wal(true);
    db.put_opt(b"nowal", vec![7u8; 10_000], &nowal).unwrap();
    let mut b = WriteBatch::default();
    b.put(b"nowal2", b"v");
    db.write_without_wal(b).unwrap();
    assert!(get(&db, b"nowal") == Some(vec![7u8; 10_000]));
    assert_eq!(get(&db, b"nowal2"), Some(b"v".to_vec()));
    assert_eq!(wal_bytes(), before, "disable_wal wrote to the WAL");

    // RocksDB flushes unpersisted (WAL-less) writes when the database closes cleanly.
    drop(db);
    let db = DB::open(&create_opts(), dir.path()).unwrap();
    assert_eq!(get(&db, b"durable"), Some(b"1".to_vec()));
    assert_eq!(get(&db, b"plain"), Some(b"1".to_vec()));
    assert!(get(&db, b"nowal") == Some(vec![7u8; 10_000]), "WAL-less write lost at close");
    assert_eq!(get(&db, b"nowal2"), Some(b"v".to_vec()));
}

fn write_groups(db: &DB) -> (u64, u64) {
    let stats = db.property_value("rocksdb.stats").unwrap().unwrap();
    let line = stats.lines().find(|l| l.starts_with("Cumulative writes:")).expect(&stats);
    // RocksDB's `Cumulative writes: W writes, K keys, G commit groups, ...`.
    let nums: Vec<u64> = line.split_whitespace().filter_map(|w| w.parse::<u64>().ok()).collect();
    (nums[0], nums[2])
}

#[test]
fn concurrent_writers_group_commit() {
    const THREADS: usize = 8;
    const PER_THREAD: usize = 400;
    let dir = tempfile::tempdir().unwrap();
    let mut o = create_opts();
    o.set_write_buffer_size(256 << 10); // memtable switches and flushes happen too
    let db = Arc::new(DB::open(&o, dir.path()).unwrap());
    let (w0, g0) = write_groups(&db);
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut wo = WriteOptions::default();
                // Synced writes make followers queue up behind the leader's fsync.
                wo.set_sync(true);
                for i in 0..PER_THREAD {
                    let k = format!("t{t}-{i:05}");
                    let v = util::value((t * PER_THREAD + i) as u64, 100);
                    if i % 7 == 0 {
                        let mut b = WriteBatch::default();
                        b.put(&k, &v);
                        b.put(format!("{k}-b"), &v);
                        db.write_opt(b, &wo).unwrap();
                    } else {
                        db.put_opt(&k, &v, &wo).unwrap();
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let (w1, g1) = write_groups(&db);
    let writes = w1 - w0;
    let groups = g1 - g0;
    assert_eq!(writes, (THREADS * PER_THREAD) as u64);
    assert!(groups < writes, "no write was grouped: {groups} groups for {writes} writes");
    let check = |db: &DB| {
        for t in 0..THREADS {
            for i in 0..PER_THREAD {
                let k = format!("t{t}-{i:05}");
                let v = util::value((t * PER_THREAD + i) as u64, 100);
                assert_eq!(db.get(&k).unwrap().as_deref(), Some(&v[..]), "{k}");
                if i % 7 == 0 {
                    assert_eq!(db.get(format!("{k}-b")).unwrap().as_deref(), Some(&v[..]));
                }
            }
        }
    };
    check(&db);
    let n = db.iterator(shale::IteratorMode::Start).count();
    assert_eq!(n, THREADS * PER_THREAD + THREADS * PER_THREAD.div_ceil(7));
    let seq = db.latest_sequence_number();
    assert_eq!(seq, n as u64, "every record takes one sequence number");
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    check(&db);
    assert_eq!(db.latest_sequence_number(), seq);
}
