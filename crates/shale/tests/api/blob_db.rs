//! Integrated BlobDB in one database: values of `min_blob_size` and up go to blob files at
//! flush and compaction; gets, multi_gets, iterators both ways, snapshots and merges see
//! through blob indexes; garbage collection relocates old blobs and the blob files nothing
//! references any more are deleted; a damaged blob is Corruption naming the blob file and
//! its offset, never a wrong value.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;

use shale::{ErrorKind, IteratorMode, Options, DB};

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_enable_blob_files(true);
    o.set_min_blob_size(100);
    o.set_blob_file_size(16 << 10);
    o.set_enable_blob_gc(true);
    o.set_blob_gc_age_cutoff(1.0);
    o.set_merge_operator_associative("concat", |_k, base, ops| {
        let mut v = base.map(|b| b.to_vec()).unwrap_or_default();
        for op in ops {
            v.extend_from_slice(op);
        }
        Some(v)
    });
    o
}

fn blob_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".blob"))
        .collect();
    v.sort();
    v
}

fn big(i: u32, round: u32) -> Vec<u8> {
    format!("{round}:{i}:{}", "v".repeat(150 + (i as usize % 50))).into_bytes()
}

#[test]
fn reads_see_through_blob_indexes_and_gc_deletes_dead_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let db = DB::open(&opts(), dir).unwrap();
    for i in 0..300u32 {
        db.put(format!("k{i:04}"), big(i, 0)).unwrap();
    }
    db.put(b"small", b"tiny").unwrap();
    db.flush().unwrap();
    let first_files = blob_files(dir);
    assert!(first_files.len() > 1, "values went to blob files, rolled by size: {first_files:?}");
    let snap = db.snapshot();
    // Overwrite half, merge onto some, delete some.
    for i in (0..300u32).step_by(2) {
        db.put(format!("k{i:04}"), big(i, 1)).unwrap();
    }
    for i in (1..300u32).step_by(10) {
        db.merge(format!("k{i:04}"), b"+m").unwrap();
    }
    for i in (3..300u32).step_by(10) {
        db.delete(format!("k{i:04}")).unwrap();
    }
    db.flush().unwrap();
    let expect = |i: u32| -> Option<Vec<u8>> {
        if i % 10 == 3 {
            None
        } else if i.is_multiple_of(2) {
            Some(big(i, 1))
        } else if i % 10 == 1 {
            let mut v = big(i, 0);
            v.extend_from_slice(b"+m");
            Some(v)
        } else {
            Some(big(i, 0))
        }
    };
    let check = |db: &DB, ctx: &str| {
        for i in 0..300u32 {
            assert_eq!(db.get(format!("k{i:04}")).unwrap(), expect(i), "{ctx}: get k{i:04}");
        }
        let keys: Vec<String> = (0..300u32).map(|i| format!("k{i:04}")).collect();
        for (i, r) in db.multi_get(&keys).into_iter().enumerate() {
            assert_eq!(r.unwrap(), expect(i as u32), "{ctx}: multi_get k{i:04}");
        }
        let fwd: Vec<(Vec<u8>, Vec<u8>)> = db
            .iterator(IteratorMode::Start)
            .map(|r| r.unwrap())
            .map(|(k, v)| (k.to_vec(), v.to_vec()))
            .collect();
        let mut want: Vec<(Vec<u8>, Vec<u8>)> =
            (0..300u32).filter_map(|i| expect(i).map(|v| (format!("k{i:04}").into_bytes(), v))).collect();
        want.push((b"small".to_vec(), b"tiny".to_vec()));
        assert_eq!(fwd, want, "{ctx}: forward scan");
        let mut rev: Vec<(Vec<u8>, Vec<u8>)> = db
            .iterator(IteratorMode::End)
            .map(|r| r.unwrap())
            .map(|(k, v)| (k.to_vec(), v.to_vec()))
            .collect();
        rev.reverse();
        assert_eq!(rev, want, "{ctx}: reverse scan");
    };
    check(&db, "before compaction");
    // The snapshot still sees round 0.
    for i in (0..300u32).step_by(7) {
        assert_eq!(snap.get(format!("k{i:04}")).unwrap(), Some(big(i, 0)), "snapshot get k{i:04}");
    }
    drop(snap);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    check(&db, "after compaction");
    // Garbage collection (age cutoff 1.0) relocated every blob: the first files are gone.
    let now = blob_files(dir);
    assert!(
        first_files.iter().all(|f| !now.contains(f)),
        "old blob files deleted: {first_files:?} vs {now:?}"
    );
    drop(db);
    let db = DB::open(&opts(), dir).unwrap();
    check(&db, "after reopen");
    assert_eq!(blob_files(dir), now, "reopen keeps exactly the live blob files");
    assert_eq!(db.property_int_value("rocksdb.num-blob-files").unwrap(), Some(now.len() as u64));
    let on_disk: u64 = now.iter().map(|f| std::fs::metadata(dir.join(f)).unwrap().len()).sum();
    assert_eq!(db.property_int_value("rocksdb.total-blob-file-size").unwrap(), Some(on_disk));
}

#[test]
fn damaged_blob_is_corruption_naming_file_and_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    {
        let db = DB::open(&opts(), dir).unwrap();
        db.put(b"key", vec![b'z'; 500]).unwrap();
        db.flush().unwrap();
    }
    let files = blob_files(dir);
    assert_eq!(files.len(), 1);
    let path = dir.join(&files[0]);
    let mut data = std::fs::read(&path).unwrap();
    // Inside the value (header 30 + record header 32 + key 3 = 65).
    data[65 + 100] ^= 0x01;
    std::fs::write(&path, &data).unwrap();
    let db = DB::open(&opts(), dir).unwrap();
    let err = db.get(b"key").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    let msg = err.to_string();
    assert!(msg.contains(&files[0]) && msg.contains("offset"), "{msg}");
    let mut it = db.raw_iterator();
    it.seek_to_first();
    assert!(!it.valid());
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::Corruption);
}

#[test]
fn blob_cache_holds_what_reads_fetched() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = shale::Cache::new_lru_cache(1 << 20);
    let mut o = opts();
    o.set_blob_cache(&cache);
    let db = DB::open(&o, tmp.path()).unwrap();
    db.put(b"k1", vec![b'q'; 4000]).unwrap();
    db.flush().unwrap();
    assert_eq!(cache.get_usage(), 0);
    assert_eq!(db.get(b"k1").unwrap(), Some(vec![b'q'; 4000]));
    let used = cache.get_usage();
    assert!(used >= 4000, "the blob is cached: {used}");
    // A hit returns the same value; the blob file is not needed for it.
    assert_eq!(db.get(b"k1").unwrap(), Some(vec![b'q'; 4000]));
    let it = db.iterator(IteratorMode::Start).map(|r| r.unwrap()).next().unwrap();
    assert_eq!(&*it.1, &vec![b'q'; 4000][..]);
}

/// `blob_garbage_collection_force_threshold`: once the oldest blob files (the age cutoff's
/// share) hold that fraction of garbage, the tables linked to the oldest one are compacted
/// on their own (RocksDB's forced blob GC), their live blobs relocated and the old file
/// deleted; at the default 1.0 nothing is forced and the half-dead file stays.
#[test]
fn forced_blob_gc_compacts_the_tables_of_the_oldest_blob_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let base = |gc: bool, force: f64| {
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_enable_blob_files(true);
        o.set_min_blob_size(100);
        o.set_blob_file_size(64 << 20);
        o.set_enable_blob_gc(gc);
        o.set_blob_gc_age_cutoff(0.5);
        o.set_blob_gc_force_threshold(force);
        o.set_level_zero_file_num_compaction_trigger(100);
        o
    };
    let db = DB::open(&base(false, 1.0), dir).unwrap();
    for i in 0..200u32 {
        db.put(format!("k{i:04}"), big(i, 0)).unwrap();
    }
    db.flush().unwrap();
    let oldest = blob_files(dir);
    assert_eq!(oldest.len(), 1, "{oldest:?}");
    // Half the values are overwritten; a compaction without GC leaves them as garbage of
    // the first blob file, which the compacted table still links to.
    for i in (0..200u32).step_by(2) {
        db.put(format!("k{i:04}"), big(i, 1)).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(blob_files(dir).len(), 2);
    drop(db);
    let want = |i: u32| big(i, u32::from(i.is_multiple_of(2)));
    let check = |db: &DB, ctx: &str| {
        for i in 0..200u32 {
            assert_eq!(db.get(format!("k{i:04}")).unwrap(), Some(want(i)), "{ctx}: k{i:04}");
        }
    };

    // Default threshold: no forced compaction, the half-garbage file stays.
    let db = DB::open(&base(true, 1.0), dir).unwrap();
    db.wait_for_compact(&shale::WaitForCompactOptions::default()).unwrap();
    assert!(blob_files(dir).contains(&oldest[0]), "nothing forced at 1.0: {:?}", blob_files(dir));
    check(&db, "threshold 1.0");
    drop(db);

    // 50% garbage in the oldest half of the blob files reaches 0.4: the table is compacted,
    // its blobs relocated and the first blob file deleted.
    let db = DB::open(&base(true, 0.4), dir).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while blob_files(dir).contains(&oldest[0]) {
        assert!(std::time::Instant::now() < deadline, "forced GC never ran: {:?}", blob_files(dir));
        db.wait_for_compact(&shale::WaitForCompactOptions::default()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    check(&db, "after forced GC");
    drop(db);
    let db = DB::open(&base(true, 0.4), dir).unwrap();
    check(&db, "reopened");
}
