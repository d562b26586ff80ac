//! Integrated BlobDB between RocksDB 11.8.1 and Shale, both ways (11.8.1's release tools;
//! skipped with a printed reason when they cannot run, see tools/mod.rs):
//! - RocksDB -> Shale: `db_bench fillrandom,overwrite --enable_blob_files=1
//!   --min_blob_size=256` with garbage collection, small blob files and LZ4 blob compression:
//!   Shale's scans and gets equal `ldb scan`; Shale then writes (values to blob files),
//!   flushes and compacts with garbage collection, and `ldb scan` shows the result;
//! - Shale -> RocksDB: a database Shale writes with blob files (overwrites, deletes, a merge
//!   onto a blob value, GC compactions) is read by `ldb scan` exactly, RocksDB writes and
//!   compacts over it, and Shale reopens it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeMap;
use std::path::Path;

use shale::{DBCompressionType, Options, WriteBatch, DB};
use tools::*;

fn blob_options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_enable_blob_files(true);
    o.set_min_blob_size(256);
    o.set_blob_file_size(64 << 10);
    o.set_blob_compression_type(DBCompressionType::Lz4);
    o.set_enable_blob_gc(true);
    o.set_blob_gc_age_cutoff(0.5);
    o.set_write_buffer_size(128 << 10);
    o.set_target_file_size_base(128 << 10);
    o
}

fn blob_files(dir: &Path) -> usize {
    files_with_suffix(dir, ".blob").len()
}

fn check_shale(db: &DB, want: &BTreeMap<Vec<u8>, Vec<u8>>, ctx: &str) {
    let want_pairs: Pairs = want.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_same_pairs(&shale_scan(db, "default"), &want_pairs, &format!("{ctx}: forward scan"));
    let mut rev = want_pairs.clone();
    rev.reverse();
    assert_same_pairs(&shale_scan_reverse(db, "default"), &rev, &format!("{ctx}: reverse scan"));
    for (k, v) in want.iter().step_by(7) {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_slice()), "{ctx}: get {}", encode_hex(k));
    }
    let keys: Vec<&Vec<u8>> = want.keys().step_by(11).collect();
    for (r, k) in db.multi_get(keys.iter()).into_iter().zip(&keys) {
        assert_eq!(r.unwrap().as_deref(), want.get(*k).map(|v| v.as_slice()), "{ctx}: multi_get");
    }
}

#[test]
fn rocksdb_11_blob_db_read_and_extended_by_shale() {
    let test = "rocksdb_11_blob_db_read_and_extended_by_shale";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    db_bench_fill(
        &dir,
        3000,
        &[
            "--enable_blob_files=1",
            "--min_blob_size=256",
            "--value_size=1024",
            "--enable_blob_garbage_collection=1",
            "--blob_garbage_collection_age_cutoff=0.5",
            "--blob_file_size=262144",
            "--blob_compression_type=lz4",
            "--compression_type=none",
            "--write_buffer_size=65536",
            "--target_file_size_base=131072",
            "--max_bytes_for_level_base=524288",
        ],
    );
    assert!(blob_files(&dir) > 1, "db_bench wrote blob files");
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = ldb_scan(&dir, None).into_iter().collect();
    assert!(model.len() > 1000);
    {
        let db = open_all(&dir, &blob_options());
        check_shale(&db, &model, "first open");
        let old: Vec<Vec<u8>> = model.keys().step_by(5).cloned().collect();
        for (i, k) in old.iter().enumerate() {
            if i.is_multiple_of(2) {
                db.delete(k).unwrap();
                model.remove(k);
            } else {
                let v = vec![b'a' + (i % 26) as u8; 300 + i];
                db.put(k, &v).unwrap();
                model.insert(k.clone(), v);
            }
        }
        let mut b = WriteBatch::default();
        for i in 0..200u32 {
            let k = format!("shale-{i:04}").into_bytes();
            let v = if i % 3 == 0 { b"small".to_vec() } else { format!("{i:0>2000}").into_bytes() };
            b.put(&k, &v);
            model.insert(k, v);
        }
        db.write(b).unwrap();
        db.flush().unwrap();
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        check_shale(&db, &model, "after Shale's writes and compaction");
    }
    assert_same_pairs(
        &ldb_scan(&dir, None),
        &model.iter().map(|(k, v)| (k.clone(), v.clone())).collect::<Pairs>(),
        "ldb after Shale wrote",
    );
    let db = open_all(&dir, &blob_options());
    check_shale(&db, &model, "Shale reopen");
}

#[test]
fn shale_blob_db_read_by_rocksdb_11() {
    let test = "shale_blob_db_read_by_rocksdb_11";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    {
        let mut o = blob_options();
        o.set_merge_operator_associative("concat", |_k, base, ops| {
            let mut v = base.map(|b| b.to_vec()).unwrap_or_default();
            for op in ops {
                v.extend_from_slice(op);
            }
            Some(v)
        });
        let db = DB::open(&o, &dir).unwrap();
        for round in 0..4u32 {
            for i in 0..400u32 {
                let k = format!("key-{:05}", (i * 7 + round * 13) % 600).into_bytes();
                let v =
                    format!("round {round} value {i} {}", "x".repeat((i as usize * 13) % 900)).into_bytes();
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
            for i in (0..600u32).step_by(17 + round as usize) {
                let k = format!("key-{i:05}").into_bytes();
                db.delete(&k).unwrap();
                model.remove(&k);
            }
            db.flush().unwrap();
        }
        // A merge onto a value that lives in a blob file.
        let k = b"key-00001".to_vec();
        db.put(&k, vec![b'b'; 1000]).unwrap();
        db.flush().unwrap();
        db.merge(&k, b"-tail").unwrap();
        let mut v = vec![b'b'; 1000];
        v.extend_from_slice(b"-tail");
        model.insert(k, v);
        check_shale(&db, &model, "Shale before compaction");
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        check_shale(&db, &model, "Shale after compaction");
        assert!(blob_files(&dir) >= 1);
    }
    let want: Pairs = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_same_pairs(&ldb_scan(&dir, None), &want, "ldb scan of Shale's blob DB");
    // RocksDB writes over it with its own blob settings and compacts.
    db_bench_run(
        &dir,
        "overwrite",
        500,
        &[
            "--use_existing_db=1",
            "--enable_blob_files=1",
            "--min_blob_size=256",
            "--value_size=600",
            "--blob_compression_type=lz4",
            "--enable_blob_garbage_collection=1",
        ],
    );
    let after: BTreeMap<Vec<u8>, Vec<u8>> = ldb_scan(&dir, None).into_iter().collect();
    assert!(after.len() > model.len());
    let db = open_all(&dir, &blob_options());
    check_shale(&db, &after, "Shale reopens what RocksDB wrote over");
}
