//! Compaction: the level-0 trigger and level size targets push data to L1 and deeper under
//! sustained writes; compact_range drops overwritten and deleted entries; snapshots keep old
//! versions; range tombstones and what they cover are dropped at the bottom level.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use shale::{DBCompressionType, IteratorMode, Options, DB};

use util::{int_prop, value, wait_for_background};

fn manual_opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_compression_type(DBCompressionType::None);
    o
}

fn level_files(db: &DB) -> Vec<u64> {
    (0..7).map(|l| int_prop(db, &format!("rocksdb.num-files-at-level{l}"))).collect()
}

#[test]
fn sustained_writes_compact_into_deeper_levels() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(DBCompressionType::None);
    o.set_write_buffer_size(64 << 10);
    o.set_level_zero_file_num_compaction_trigger(2);
    o.set_target_file_size_base(64 << 10);
    o.set_max_bytes_for_level_base(256 << 10);
    o.set_max_bytes_for_level_multiplier(4.0);
    o.set_level_compaction_dynamic_level_bytes(false); // levels fill from level 1 down
    let db = DB::open(&o, dir.path()).unwrap();
    // ~4 MB in a scattered key order, with overwrites.
    let n = 4000u64;
    for i in 0..n {
        let k = (i * 7919) % 3000;
        db.put(format!("key{k:06}"), value(i, 1000)).unwrap();
    }
    wait_for_background(&db);
    let files = level_files(&db);
    assert!(files[0] < 2, "level 0 above its trigger after compactions: {files:?}");
    assert!(files[1] > 0, "nothing reached L1: {files:?}");
    assert!(files[2..].iter().sum::<u64>() > 0, "nothing went deeper than L1: {files:?}");
    let stats = db.property_value("rocksdb.stats").unwrap().unwrap();
    assert!(stats.contains("\nCumulative compaction: "), "{stats}");
    // Every key has its newest value.
    let mut newest = std::collections::BTreeMap::new();
    for i in 0..n {
        newest.insert(format!("key{:06}", (i * 7919) % 3000), i);
    }
    for (k, i) in &newest {
        assert_eq!(db.get(k).unwrap(), Some(value(*i, 1000)), "{k}");
    }
    let keys: Vec<String> = db
        .iterator(IteratorMode::Start)
        .map(|r| String::from_utf8(r.unwrap().0.into_vec()).unwrap())
        .collect();
    assert_eq!(keys, newest.keys().cloned().collect::<Vec<_>>());
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    for (k, i) in newest.iter().step_by(11) {
        assert_eq!(db.get(k).unwrap(), Some(value(*i, 1000)), "{k} after reopen");
    }
}

#[test]
fn compact_range_drops_overwritten_and_deleted_entries() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&manual_opts(), dir.path()).unwrap();
    for round in 0..3u64 {
        for i in 0..1000u64 {
            db.put(format!("k{i:05}"), value(i * 10 + round, 100)).unwrap();
        }
        db.flush().unwrap();
    }
    for i in (0..1000u64).filter(|i| i % 2 == 0) {
        db.delete(format!("k{i:05}")).unwrap();
    }
    db.flush().unwrap();
    assert_eq!(level_files(&db)[0], 4);
    let keys_before = int_prop(&db, "rocksdb.estimate-num-keys");
    let size_before = int_prop(&db, "rocksdb.total-sst-files-size");
    // 3000 puts and 500 deletions on disk: the estimate counts every entry (minus deletions).
    assert!(keys_before >= 2000, "estimate-num-keys {keys_before}");

    db.compact_range::<&[u8], &[u8]>(None, None);
    let files = level_files(&db);
    assert_eq!(files[0], 0, "{files:?}");
    // With dynamic level sizes (the default), RocksDB's CompactRange sends level 0 to the
    // base level, the last level of a database with nothing below level 0.
    assert!(files[6] > 0, "{files:?}");
    assert_eq!(int_prop(&db, "rocksdb.estimate-num-keys"), 500);
    let size_after = int_prop(&db, "rocksdb.total-sst-files-size");
    assert!(size_after * 4 < size_before, "sst bytes {size_before} -> {size_after}");
    assert_eq!(util::files_ending(dir.path(), ".sst").len() as u64, files.iter().sum::<u64>());
    for i in 0..1000u64 {
        let want = (i % 2 == 1).then(|| value(i * 10 + 2, 100));
        assert_eq!(db.get(format!("k{i:05}")).unwrap(), want);
    }
    assert_eq!(db.iterator(IteratorMode::Start).count(), 500);
    drop(db);
    let db = DB::open(&manual_opts(), dir.path()).unwrap();
    assert_eq!(db.get(b"k00000").unwrap(), None);
    assert_eq!(db.get(b"k00001").unwrap(), Some(value(12, 100)));
    assert_eq!(db.iterator(IteratorMode::Start).count(), 500);
}

#[test]
fn snapshot_keeps_old_versions_through_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&manual_opts(), dir.path()).unwrap();
    for i in 0..100u32 {
        db.put(format!("k{i:03}"), b"old").unwrap();
    }
    db.flush().unwrap();
    let snap = db.snapshot();
    for i in 0..100u32 {
        if i % 3 == 0 {
            db.delete(format!("k{i:03}")).unwrap();
        } else {
            db.put(format!("k{i:03}"), b"new").unwrap();
        }
    }
    db.delete_range(b"k090", b"k095").unwrap();
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
    assert_eq!(level_files(&db)[0], 0);
    for i in 0..100u32 {
        let k = format!("k{i:03}");
        assert_eq!(snap.get(&k).unwrap().as_deref(), Some(&b"old"[..]), "{k} at the snapshot");
        let now = db.get(&k).unwrap();
        if i % 3 == 0 || (90..95).contains(&i) {
            assert_eq!(now, None, "{k}");
        } else {
            assert_eq!(now.as_deref(), Some(&b"new"[..]), "{k}");
        }
    }
    assert_eq!(snap.iterator(IteratorMode::Start).count(), 100);
    // Once the snapshot is gone, another compaction drops the old versions.
    let size_with_snapshot = int_prop(&db, "rocksdb.total-sst-files-size");
    drop(snap);
    db.put(b"k000", b"newest").unwrap(); // something to compact
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
    let live = db.iterator(IteratorMode::Start).count();
    assert_eq!(live, 100 - 34 - 3 + 1);
    let size_after = int_prop(&db, "rocksdb.total-sst-files-size");
    assert!(size_after < size_with_snapshot, "old versions kept: {size_with_snapshot} -> {size_after}");
    assert_eq!(int_prop(&db, "rocksdb.estimate-num-keys"), live as u64);
}

#[test]
fn range_tombstones_are_dropped_at_the_bottom_level() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&manual_opts(), dir.path()).unwrap();
    for i in 0..2000u32 {
        db.put(format!("k{i:05}"), value(i as u64, 200)).unwrap();
    }
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
    let size_full = int_prop(&db, "rocksdb.total-sst-files-size");
    assert_eq!(level_files(&db)[0], 0);

    // Delete most of the keys with one range tombstone.
    db.delete_range(b"k00100", b"k01900").unwrap();
    for i in [50u32, 100, 1899, 1900, 1950] {
        let want = (!(100..1900).contains(&i)).then(|| value(i as u64, 200));
        assert_eq!(db.get(format!("k{i:05}")).unwrap(), want, "k{i:05} before flush");
    }
    db.flush().unwrap();
    assert_eq!(level_files(&db)[0], 1, "the tombstone's level-0 file");
    db.compact_range::<&[u8], &[u8]>(None, None);
    assert_eq!(level_files(&db)[0], 0);
    let size_after = int_prop(&db, "rocksdb.total-sst-files-size");
    assert!(size_after * 5 < size_full, "covered keys not dropped: {size_full} -> {size_after}");
    assert_eq!(int_prop(&db, "rocksdb.estimate-num-keys"), 200);
    assert_eq!(db.iterator(IteratorMode::Start).count(), 200);
    for i in [50u32, 100, 1000, 1899, 1900, 1950] {
        let want = (!(100..1900).contains(&i)).then(|| value(i as u64, 200));
        assert_eq!(db.get(format!("k{i:05}")).unwrap(), want, "k{i:05} after compaction");
    }

    // A tombstone covering everything leaves no table at all at the bottom.
    db.delete_range(b"k", b"l").unwrap();
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
    assert_eq!(level_files(&db).iter().sum::<u64>(), 0, "{:?}", level_files(&db));
    assert_eq!(int_prop(&db, "rocksdb.total-sst-files-size"), 0);
    assert!(util::files_ending(dir.path(), ".sst").is_empty());
    assert_eq!(db.iterator(IteratorMode::Start).count(), 0);

    // Deleted keys stay deleted after reopen; new writes into the range are visible.
    drop(db);
    let db = DB::open(&manual_opts(), dir.path()).unwrap();
    assert_eq!(db.get(b"k00050").unwrap(), None);
    assert_eq!(db.get(b"k01000").unwrap(), None);
    db.put(b"k01000", b"back").unwrap();
    assert_eq!(db.get(b"k01000").unwrap().as_deref(), Some(&b"back"[..]));
    assert_eq!(db.iterator(IteratorMode::Start).count(), 1);
}
