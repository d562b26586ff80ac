//! External SST files and integrated BlobDB, as in RocksDB: SstFileWriter writes values
//! inline (it has no blob files), ingestion into a database with `enable_blob_files` takes
//! them as they are, and the first compaction moves the large ones to blob files; reads see
//! the same values before and after, with blob indexes over them from the database's own
//! flushes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use shale::{IteratorMode, Options, SstFileWriter, DB};
use tools::*;

#[test]
fn ingested_values_move_to_blob_files_at_compaction() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("db");
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_enable_blob_files(true);
    o.set_min_blob_size(256);
    let db = DB::open(&o, &dir).expect("open");
    // The database's own writes: blob files at flush.
    for i in (0..400u32).step_by(2) {
        db.put(format!("key{i:05}"), format!("db-{i}-").repeat(60)).expect("put");
    }
    db.flush().expect("flush");
    let own_blobs = files_with_suffix(&dir, ".blob").len();
    assert!(own_blobs >= 1);
    // An external file of the odd keys, large and small values, written inline.
    let sst = tmp.path().join("ext.sst");
    let wo = Options::default();
    let mut w = SstFileWriter::create(&wo);
    w.open(&sst).expect("open writer");
    for i in (1..400u32).step_by(2) {
        let v = if i % 5 == 0 { format!("small{i}") } else { format!("ext-{i}-").repeat(60) };
        w.put(format!("key{i:05}"), v).expect("put");
    }
    w.finish().expect("finish");
    db.ingest_external_file(vec![&sst]).expect("ingest");
    assert_eq!(files_with_suffix(&dir, ".blob").len(), own_blobs, "ingestion writes no blob file");
    let want: Pairs = db
        .iterator(IteratorMode::Start)
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).expect("iterate"))
        .collect();
    assert_eq!(want.len(), 400);
    assert_eq!(db.get("key00003").expect("get").expect("found"), "ext-3-".repeat(60).into_bytes());
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert!(files_with_suffix(&dir, ".blob").len() > own_blobs, "compaction moved the ingested values");
    let got: Pairs = db
        .iterator(IteratorMode::Start)
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).expect("iterate"))
        .collect();
    assert_same_pairs(&got, &want, "after compaction");
    drop(db);
    if use_rocksdb_11("ingestion into a BlobDB database, read by ldb 11.8.1") {
        assert_same_pairs(&ldb_scan(&dir, None), &want, "RocksDB 11.8.1 ldb scan");
    }
}
