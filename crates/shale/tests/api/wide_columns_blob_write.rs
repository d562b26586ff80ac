//! Shale writes wide-column entities with their large column values in blob files (issue
//! 33), as RocksDB 11.8.1: with `enable_blob_files`, flush and compaction move each column
//! value of at least `min_blob_size` of an entity without blob columns to a blob file and
//! write the entity as version 2 (`ExtractLargeColumnValuesIfNeeded`); the blob garbage
//! meter counts entity blob columns, so a blob file whose entities are gone is freed; blob
//! garbage collection relocates entity blob columns of old files
//! (`GarbageCollectEntityBlobsIfNeeded`), or puts them inline when they no longer qualify.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;

use shale::table::reader::{Table, TableReaderOptions};
use shale::{BottommostLevelCompaction, CompactOptions, Options, ReadOptions, WriteOptions, DB};

/// A full compaction that rewrites the last level too (no trivial move keeps a table).
fn compact(db: &DB) {
    let mut c = CompactOptions::default();
    c.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &c);
}

type Cols = Vec<(Vec<u8>, Vec<u8>)>;

fn blob_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".blob"))
        .collect();
    v.sort();
    v
}

/// Every (user key, type, value) of every table in `dir`.
fn table_entries(dir: &Path) -> Vec<(Vec<u8>, u8, Vec<u8>)> {
    let mut out = Vec::new();
    let mut ssts: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect();
    ssts.sort();
    for f in ssts {
        let size = std::fs::metadata(&f).unwrap().len();
        let file = shale::fs::default_fs().new_random_access_file(&f).unwrap();
        let opts = TableReaderOptions {
            icmp: shale::key::bytewise_internal_comparator(),
            block_cache: None,
            verify_checksums: true,
            file_name: f.display().to_string(),
            cache_key: shale::cache::OffsetableCacheKey::unique(),
            statistics: None,
            block_protection_bytes_per_key: 0,
            timestamps_persisted: true,
        };
        let t = Table::open(file, size, opts).unwrap();
        let mut it = t.iter(false);
        it.seek_to_first();
        while it.valid() {
            let k = it.key();
            out.push((k[..k.len() - 8].to_vec(), k[k.len() - 8], it.value().to_vec()));
            it.next();
        }
    }
    out
}

fn opts(min_blob_size: u64) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_enable_blob_files(true);
    o.set_min_blob_size(min_blob_size);
    o
}

/// "big": a default column of 40 bytes, a short "a", a 50-byte "b"; "small": nothing large;
/// "nodef": no default column, one large column.
fn entities() -> Vec<(&'static [u8], Cols)> {
    vec![
        (
            b"big",
            vec![
                (Vec::new(), vec![b'd'; 40]),
                (b"a".to_vec(), b"short".to_vec()),
                (b"b".to_vec(), vec![b'b'; 50]),
            ],
        ),
        (b"nodef", vec![(b"x".to_vec(), vec![b'x'; 30])]),
        (b"small", vec![(Vec::new(), b"tiny".to_vec()), (b"c".to_vec(), b"also tiny".to_vec())]),
    ]
}

fn put_all(db: &DB) {
    let cf = db.cf_handle("default").unwrap();
    for (k, cols) in entities() {
        let c: Vec<(&[u8], &[u8])> = cols.iter().map(|(n, v)| (&n[..], &v[..])).collect();
        db.put_entity_cf(&cf, k, &c, &WriteOptions::default()).unwrap();
    }
}

fn check(db: &DB, stage: &str) {
    let cf = db.cf_handle("default").unwrap();
    for (k, cols) in entities() {
        let got = db.get_entity_cf_opt(&cf, k, &ReadOptions::default()).unwrap();
        assert_eq!(got.as_ref(), Some(&cols), "{stage}: get_entity {k:?}");
        let default = cols.iter().find(|c| c.0.is_empty()).map(|c| c.1.clone()).unwrap_or_default();
        assert_eq!(db.get(k).unwrap(), Some(default), "{stage}: get {k:?}");
    }
    let mut it = db.raw_iterator();
    it.seek_to_first();
    for (k, cols) in entities() {
        assert!(it.valid(), "{stage}");
        assert_eq!(it.key(), Some(k), "{stage}");
        assert_eq!(it.columns().unwrap().unwrap(), cols, "{stage}: columns()");
        it.next();
    }
    assert!(!it.valid(), "{stage}");
}

/// The entity type and version each table entry of `key` has: (0x16, 2) is a version-2
/// entity.
fn versions(dir: &Path, key: &[u8]) -> Vec<(u8, u8)> {
    table_entries(dir).into_iter().filter(|e| e.0 == key).map(|e| (e.1, e.2[0])).collect()
}

fn int(db: &DB, p: &str) -> u64 {
    db.property_int_value(p).unwrap().unwrap()
}

#[test]
fn flush_moves_large_entity_columns_to_blob_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    {
        let db = DB::open(&opts(20), dir).unwrap();
        put_all(&db);
        check(&db, "memtable");
        db.flush().unwrap();
        // Three column values of at least 20 bytes: one blob file holding them.
        assert_eq!(blob_files(dir).len(), 1);
        assert_eq!(int(&db, "rocksdb.num-blob-files"), 1);
        let on_disk = std::fs::metadata(dir.join(&blob_files(dir)[0])).unwrap().len();
        assert_eq!(int(&db, "rocksdb.live-blob-file-size"), on_disk);
        // The blob file holds the three values with their keys (32-byte record headers).
        let records = [(3, 40), (3, 50), (5, 30)].iter().map(|(k, v)| 32 + k + v).sum::<u64>();
        assert_eq!(on_disk, 30 + records + 32);
        assert_eq!(versions(dir, b"big"), [(0x16, 2)]);
        assert_eq!(versions(dir, b"nodef"), [(0x16, 2)]);
        assert_eq!(versions(dir, b"small"), [(0x16, 1)], "nothing large: version 1 as written");
        check(&db, "flushed");
        compact(&db);
        check(&db, "compacted");
        assert_eq!(blob_files(dir).len(), 1, "compaction keeps the entities' blob file");
        assert_eq!(versions(dir, b"big"), [(0x16, 2)]);
    }
    let db = DB::open(&opts(20), dir).unwrap();
    check(&db, "reopened");
}

#[test]
fn compaction_moves_large_entity_columns_when_blob_files_are_turned_on() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut o = opts(20);
    o.set_enable_blob_files(false);
    let db = DB::open(&o, dir).unwrap();
    put_all(&db);
    db.flush().unwrap();
    assert!(blob_files(dir).is_empty());
    assert_eq!(versions(dir, b"big"), [(0x16, 1)]);
    db.set_options(&[("enable_blob_files", "true")]).unwrap();
    compact(&db);
    assert_eq!(blob_files(dir).len(), 1);
    assert_eq!(versions(dir, b"big"), [(0x16, 2)]);
    assert_eq!(versions(dir, b"small"), [(0x16, 1)]);
    check(&db, "compacted");
}

#[test]
fn blob_file_of_dropped_entities_is_freed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let db = DB::open(&opts(20), dir).unwrap();
    put_all(&db);
    db.flush().unwrap();
    let first = blob_files(dir);
    assert_eq!(first.len(), 1);
    // Half the entities' blob records become garbage: counted, the file stays.
    db.delete(b"big").unwrap();
    db.flush().unwrap();
    compact(&db);
    assert_eq!(blob_files(dir), first);
    let garbage = int(&db, "rocksdb.live-blob-file-garbage-size");
    assert_eq!(garbage, (32 + 3 + 40) + (32 + 3 + 50), "the two blob columns of 'big'");
    // The last entity with blob columns goes: the file is all garbage and deleted.
    db.put(b"nodef", b"plain").unwrap();
    db.flush().unwrap();
    compact(&db);
    assert!(blob_files(dir).is_empty(), "{:?}", blob_files(dir));
    assert_eq!(int(&db, "rocksdb.num-blob-files"), 0);
    assert_eq!(int(&db, "rocksdb.live-blob-file-size"), 0);
    assert_eq!(db.get(b"nodef").unwrap().as_deref(), Some(&b"plain"[..]));
    let cf = db.cf_handle("default").unwrap();
    assert_eq!(db.get_entity_cf_opt(&cf, b"big", &ReadOptions::default()).unwrap(), None);
}

#[test]
fn blob_gc_relocates_entity_columns_and_deletes_the_old_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut o = opts(20);
    o.set_enable_blob_gc(true);
    o.set_blob_gc_age_cutoff(1.0);
    let db = DB::open(&o, dir).unwrap();
    put_all(&db);
    db.flush().unwrap();
    let first = blob_files(dir);
    assert_eq!(first.len(), 1);
    compact(&db);
    // Every blob column was read and written to a new blob file; the old file is gone.
    let second = blob_files(dir);
    assert_eq!(second.len(), 1);
    assert_ne!(second, first);
    assert_eq!(versions(dir, b"big"), [(0x16, 2)]);
    check(&db, "relocated");
    // With min_blob_size raised past every value, garbage collection puts them inline:
    // version 1 again, no blob file left.
    db.set_options(&[("min_blob_size", "1000")]).unwrap();
    compact(&db);
    assert!(blob_files(dir).is_empty(), "{:?}", blob_files(dir));
    assert_eq!(versions(dir, b"big"), [(0x16, 1)]);
    assert_eq!(versions(dir, b"nodef"), [(0x16, 1)]);
    check(&db, "inline again");
    drop(db);
    let db = DB::open(&o, dir).unwrap();
    check(&db, "reopened");
}

/// The blob file numbers an entity's blob columns point into, in column order.
fn blob_column_files(entity: &[u8]) -> Vec<u64> {
    shale::wide_columns::deserialize(entity)
        .unwrap()
        .iter()
        .filter(|c| c.blob)
        .map(|c| shale::blob::BlobIndex::decode(c.value).unwrap().file_number)
        .collect()
}

#[test]
fn blob_direct_write_puts_entity_columns_in_blob_files_at_write_time() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut o = opts(20);
    o.set_enable_blob_direct_write(true);
    o.set_blob_direct_write_partitions(2);
    o.set_allow_concurrent_memtable_write(false);
    {
        let db = DB::open(&o, dir).unwrap();
        put_all(&db);
        // Written at once: "big" (two large columns, both in one partition's file) and
        // "nodef" (the next partition's); "small" stays inline.
        assert_eq!(blob_files(dir).len(), 2);
        assert_eq!(int(&db, "rocksdb.num-blob-files"), 0, "not in the MANIFEST before the flush");
        check(&db, "memtable");
        db.flush().unwrap();
        assert_eq!(int(&db, "rocksdb.num-blob-files"), 2);
        check(&db, "flushed");
        let entries = table_entries(dir);
        let of = |k: &[u8]| entries.iter().find(|e| e.0 == k).map(|e| e.2.clone()).unwrap();
        let big = blob_column_files(&of(b"big"));
        let nodef = blob_column_files(&of(b"nodef"));
        assert_eq!(big.len(), 2);
        assert_eq!(big[0], big[1], "an entity's columns go to one partition");
        assert_eq!(nodef.len(), 1);
        assert_ne!(nodef[0], big[0], "the next entity goes to the next partition");
        assert_eq!(of(b"small")[0], 1, "nothing large: version 1");
        // The flush leaves entities that have blob columns as they are.
        assert_eq!(blob_files(dir).len(), 2);
    }
    let db = DB::open(&o, dir).unwrap();
    check(&db, "reopened");
    // Blob direct write refuses a pre-serialized entity that already points into blob files
    // (RocksDB's BlobWriteBatchTransformer::PutEntityCF); without it the same batch is
    // written.
    let entity = table_entries(dir).into_iter().find(|e| e.0 == b"big").unwrap().2;
    let mut rep = vec![0u8; 8];
    rep.extend_from_slice(&1u32.to_le_bytes());
    rep.push(0x16);
    // The key is the one the blob records hold (a blob read checks it).
    rep.push(3);
    rep.extend_from_slice(b"big");
    assert!(entity.len() < 128);
    rep.push(entity.len() as u8);
    rep.extend_from_slice(&entity);
    let err = db.write(shale::WriteBatch::from_data(&rep)).unwrap_err();
    assert_eq!(err.kind(), shale::ErrorKind::NotSupported);
    assert!(
        err.to_string()
            .contains("Blob direct write does not support pre-serialized wide entities with blob references"),
        "{err}"
    );
    check(&db, "after the refused write");
    let seq = db.latest_sequence_number();
    drop(db);
    o.set_enable_blob_direct_write(false);
    let db = DB::open(&o, dir).unwrap();
    db.write(shale::WriteBatch::from_data(&rep)).unwrap();
    assert_eq!(db.latest_sequence_number(), seq + 1);
    check(&db, "the same entity written again without direct write");
}

fn concat(_key: &[u8], existing: Option<&[u8]>, ops: &shale::MergeOperands) -> Option<Vec<u8>> {
    let mut v = existing.map(<[u8]>::to_vec).unwrap_or_default();
    for o in ops {
        v.extend_from_slice(o);
    }
    Some(v)
}

#[test]
fn flush_merges_onto_a_direct_written_entity_with_blob_columns() {
    // The flush reads the entity's blob columns from the memtable's own (unsealed) blob
    // file, as RocksDB's flush does with its blob fetcher; the merge result is an entity
    // whose large columns go to the flush's blob file.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut o = opts(20);
    o.set_enable_blob_direct_write(true);
    o.set_allow_concurrent_memtable_write(false);
    o.set_merge_operator_associative("concat", concat);
    let db = DB::open(&o, dir).unwrap();
    put_all(&db);
    db.merge(b"big", b"+m").unwrap();
    db.merge(b"nodef", b"+n").unwrap();
    let mut want = entities();
    want[0].1[0].1.extend_from_slice(b"+m");
    want[1].1.insert(0, (Vec::new(), b"+n".to_vec()));
    let cf = db.cf_handle("default").unwrap();
    let read = |stage: &str| {
        for (k, cols) in &want {
            let got = db.get_entity_cf_opt(&cf, k, &ReadOptions::default()).unwrap();
            assert_eq!(got.as_ref(), Some(cols), "{stage}: {k:?}");
        }
    };
    read("memtable");
    db.flush().unwrap();
    read("flushed");
    assert_eq!(versions(dir, b"big"), [(0x16, 2)], "the merge result's large columns in a blob file");
    compact(&db);
    read("compacted");
}
