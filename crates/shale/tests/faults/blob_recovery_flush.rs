//! Integrated BlobDB at recovery: the tables an open writes from the WALs put their large
//! values in blob files, as RocksDB's recovery flush does, both the memtables that fill
//! while a WAL is replayed and what is left at the end; the reopened database reads every
//! value, and RocksDB 11.8.1's `ldb scan` reads the same.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use shale::{Options, DB};
use tools::*;

fn opts(write_buffer_size: usize) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(write_buffer_size);
    o.set_enable_blob_files(true);
    o.set_min_blob_size(256);
    o
}

#[test]
fn tables_written_at_recovery_put_large_values_in_blob_files() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("db");
    let want;
    {
        // A large write buffer: everything stays in the WAL.
        let db = DB::open(&opts(64 << 20), &dir).expect("open");
        for i in 0..600u32 {
            let v = if i % 4 == 0 { format!("small{i}") } else { format!("v{i}-").repeat(100) };
            db.put(format!("key{i:05}"), v).expect("put");
        }
        want = shale_scan_default(&db);
    }
    assert!(files_with_suffix(&dir, ".blob").is_empty(), "nothing flushed before the reopen");
    let inline_bytes: u64 = 600 * 3 / 4 * 500;
    {
        // A write buffer of 64 KiB: the replay fills several memtables. No automatic
        // compaction, so the tables listed below are not deleted while they are measured.
        let mut o = opts(64 << 10);
        o.set_disable_auto_compactions(true);
        let db = DB::open(&o, &dir).expect("reopen");
        assert_same_pairs(&shale_scan_default(&db), &want, "after recovery");
        let blobs = files_with_suffix(&dir, ".blob");
        assert!(blobs.len() >= 2, "recovery wrote blob files: {blobs:?}");
        let table_bytes: u64 =
            sst_files(&dir).iter().map(|p| std::fs::metadata(p).expect("meta").len()).sum();
        assert!(
            table_bytes < inline_bytes / 4,
            "the tables hold blob indexes, not the values: {table_bytes} bytes"
        );
        assert!(db.property_int_value("rocksdb.num-blob-files").expect("prop").expect("value") >= 2);
    }
    let db = DB::open(&opts(64 << 10), &dir).expect("reopen again");
    assert_same_pairs(&shale_scan_default(&db), &want, "after a second reopen");
    drop(db);
    if use_rocksdb_11("recovery blob files read by ldb 11.8.1") {
        assert_same_pairs(&ldb_scan(&dir, None), &want, "RocksDB 11.8.1 ldb scan");
    }
}
