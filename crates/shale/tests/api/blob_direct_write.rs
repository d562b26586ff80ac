//! Blob direct write (helper blobdw, issue 33): RocksDB 11.8.1's `enable_blob_direct_write`,
//! `blob_direct_write_partitions` and `blob_direct_write_partition_strategy`, each acting
//! as RocksDB's:
//! - large values go to blob files as they are written (the WAL and memtable hold blob
//!   indexes), and read back before and after the flush that adds the files to the
//!   MANIFEST, and after a reopen (a clean close flushes, even with
//!   `avoid_flush_during_shutdown`);
//! - with N partitions, N blob files are open at once, filled round robin;
//! - after a crash, as RocksDB's v1: the values whose files no flush had added are lost
//!   (their reads fail with Corruption), the rest reads back, and the footerless files stay;
//! - the write modes RocksDB refuses at open, its sanitizing (off without blob files, 0
//!   partitions is 1), the option strings (the strategy cannot be named) and statistics.

use std::path::Path;

use shale::statistics::Ticker;
use shale::{ErrorKind, Options, WriteBatch, WriteOptions, DB};

use crate::util;

fn opts(partitions: u32) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_enable_blob_files(true);
    o.set_enable_blob_direct_write(true);
    o.set_blob_direct_write_partitions(partitions);
    o.set_min_blob_size(100);
    o.set_allow_concurrent_memtable_write(false);
    o.set_disable_auto_compactions(true);
    o.enable_statistics();
    o
}

fn big(i: u32) -> Vec<u8> {
    util::value(u64::from(i), 300)
}

fn blob_files(dir: &Path) -> Vec<String> {
    let mut v = util::files_ending(dir, ".blob");
    v.sort();
    v
}

fn wal_bytes(dir: &Path) -> u64 {
    util::files_ending(dir, ".log").iter().map(|n| std::fs::metadata(dir.join(n)).unwrap().len()).sum()
}

fn check(db: &DB, n: u32, ctx: &str) {
    for i in 0..n {
        assert_eq!(db.get(format!("k{i:03}")).unwrap(), Some(big(i)), "{ctx}: k{i:03}");
    }
    assert_eq!(db.get("small").unwrap(), Some(b"tiny".to_vec()), "{ctx}: small");
    let mut it = db.raw_iterator();
    it.seek_to_first();
    let mut seen = 0;
    while it.valid() {
        if it.key().unwrap().starts_with(b"k") {
            let i: u32 = std::str::from_utf8(&it.key().unwrap()[1..]).unwrap().parse().unwrap();
            assert_eq!(it.value().unwrap(), &big(i)[..], "{ctx}: iterator k{i:03}");
            seen += 1;
        }
        it.next();
    }
    assert_eq!(seen, n, "{ctx}: iterator");
}

#[test]
fn values_go_to_blob_files_at_write_time_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let o = opts(1);
    let db = DB::open(&o, path).unwrap();
    assert!(blob_files(path).is_empty());
    for i in 0..20 {
        db.put(format!("k{i:03}"), big(i)).unwrap();
    }
    db.put("small", "tiny").unwrap();
    // The blob file exists before any flush, and the WAL holds indexes, not the values.
    assert_eq!(blob_files(path).len(), 1, "{:?}", blob_files(path));
    assert!(wal_bytes(path) < 20 * 300, "WAL holds {} bytes", wal_bytes(path));
    assert_eq!(util::int_prop(&db, "rocksdb.num-blob-files"), 0, "not in the MANIFEST yet");
    assert!(o.get_ticker_count(Ticker::BlobDbBlobFileBytesWritten) > 20 * 300);
    assert_eq!(o.get_ticker_count(Ticker::BlobDbBlobFileSynced), 0);
    check(&db, 20, "memtable");
    // A batch, and a sync write (which syncs the open blob file first).
    let mut b = WriteBatch::default();
    for i in 20..30 {
        b.put(format!("k{i:03}"), big(i));
    }
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    db.write_opt(b, &wo).unwrap();
    assert_eq!(o.get_ticker_count(Ticker::BlobDbBlobFileSynced), 1);
    check(&db, 30, "memtable after batch");
    db.flush().unwrap();
    // The flush seals the file (footer, sync) and adds it; the table holds the indexes.
    assert_eq!(util::int_prop(&db, "rocksdb.num-blob-files"), 1);
    assert_eq!(blob_files(path).len(), 1);
    assert_eq!(o.get_ticker_count(Ticker::BlobDbBlobFileSynced), 2);
    let on_disk: u64 = blob_files(path).iter().map(|n| std::fs::metadata(path.join(n)).unwrap().len()).sum();
    assert_eq!(o.get_ticker_count(Ticker::BlobDbBlobFileBytesWritten), on_disk);
    check(&db, 30, "after flush");
    // Written after the flush: a new file for the new memtable.
    db.put("k030", big(30)).unwrap();
    assert_eq!(blob_files(path).len(), 2);
    check(&db, 31, "new memtable");
    drop(db);
    let db = DB::open(&o, path).unwrap();
    check(&db, 31, "after reopen");
    assert_eq!(util::int_prop(&db, "rocksdb.num-blob-files"), 2);
}

#[test]
fn n_partitions_keep_n_blob_files_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let o = opts(4);
    let db = DB::open(&o, path).unwrap();
    for i in 0..2 {
        db.put(format!("k{i:03}"), big(i)).unwrap();
    }
    assert_eq!(blob_files(path).len(), 2);
    for i in 2..40 {
        db.put(format!("k{i:03}"), big(i)).unwrap();
    }
    db.put("small", "tiny").unwrap();
    assert_eq!(blob_files(path).len(), 4, "four partitions, round robin");
    // Round robin: each file holds 10 of the 40 values.
    let sizes: Vec<u64> =
        blob_files(path).iter().map(|n| std::fs::metadata(path.join(n)).unwrap().len()).collect();
    assert!(sizes.windows(2).all(|w| w[0] == w[1]), "{sizes:?}");
    check(&db, 40, "four partitions");
    db.flush().unwrap();
    assert_eq!(util::int_prop(&db, "rocksdb.num-blob-files"), 4);
    check(&db, 40, "flushed");
    drop(db);
    let db = DB::open(&o, path).unwrap();
    check(&db, 40, "reopened");
}

#[test]
fn blob_file_size_rolls_a_partition_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = opts(1);
    o.set_blob_file_size(2000);
    let db = DB::open(&o, path).unwrap();
    for i in 0..20 {
        db.put(format!("k{i:03}"), big(i)).unwrap();
    }
    db.put("small", "tiny").unwrap();
    let files = blob_files(path).len();
    assert!(files >= 3, "{files} files");
    check(&db, 20, "rolled");
    db.flush().unwrap();
    assert_eq!(util::int_prop(&db, "rocksdb.num-blob-files"), files as u64);
    check(&db, 20, "rolled, flushed");
}

#[test]
fn close_flushes_even_when_shutdown_flushes_are_avoided() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = opts(2);
    o.set_avoid_flush_during_shutdown(true);
    let db = DB::open(&o, path).unwrap();
    for i in 0..10 {
        db.put(format!("k{i:03}"), big(i)).unwrap();
    }
    db.put("small", "tiny").unwrap();
    drop(db);
    // The close flushed: the files are in the MANIFEST and the WAL is empty of them.
    let db = DB::open(&o, path).unwrap();
    assert_eq!(util::int_prop(&db, "rocksdb.num-blob-files"), 2);
    check(&db, 10, "after close");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() && e.file_name() != "LOCK" {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn after_a_crash_unflushed_direct_writes_are_lost_as_in_rocksdb() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let crashed = dir.path().join("crashed");
    let o = opts(1);
    let db = DB::open(&o, &path).unwrap();
    for i in 0..10 {
        db.put(format!("k{i:03}"), big(i)).unwrap();
    }
    db.flush().unwrap();
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    db.put_opt("late", big(99), &wo).unwrap();
    db.put_opt("small", "tiny", &wo).unwrap();
    // The files as a killed process leaves them: the open blob file has no footer.
    copy_dir(&path, &crashed);
    drop(db);
    // One sealed file (the flush's) and one still open.
    let before = blob_files(&crashed);
    assert_eq!(before.len(), 2, "{before:?}");
    let db = DB::open(&o, &crashed).unwrap();
    // Flushed values and inline ones read back; the WAL's blob index names a file no
    // flush added, as RocksDB 11.8.1's v1 leaves it: Corruption.
    check(&db, 10, "flushed before the crash");
    let e = db.get("late").unwrap_err();
    assert_eq!(e.to_string(), "Corruption: Invalid blob file number");
    // The open's purge keeps the footerless file (RocksDB's ShouldKeepFooterlessBlobFile).
    for n in &before {
        assert!(crashed.join(n).exists(), "{n} kept");
    }
    assert_eq!(util::int_prop(&db, "rocksdb.num-blob-files"), 1);
}

#[test]
fn write_modes_rocksdb_refuses_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let refused = |o: &Options, msg: &str| {
        let Err(e) = DB::open(o, path) else { panic!("accepted: {msg}") };
        assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
        assert!(e.to_string().ends_with(msg), "{e}");
    };
    let mut o = opts(1);
    o.set_allow_concurrent_memtable_write(true);
    refused(&o, "Blob direct write v1 does not support concurrent memtable writes.");
    // Judged before sanitizing: without blob files too.
    o.set_enable_blob_files(false);
    refused(&o, "Blob direct write v1 does not support concurrent memtable writes.");
    let mut o = opts(1);
    o.set_enable_pipelined_write(true);
    refused(&o, "Blob direct write v1 does not support pipelined writes.");
    let mut o = opts(1);
    o.set_unordered_write(true);
    refused(&o, "Blob direct write v1 does not support unordered writes.");
    let o = opts(1).get_options_from_string("two_write_queues=true").unwrap();
    refused(&o, "Blob direct write v1 does not support two write queues.");
    let mut o = opts(1);
    o.set_experimental_mempurge_threshold(1.0);
    refused(&o, "Blob direct write does not support MemPurge.");
    DB::open(&opts(1), path).unwrap();
}

#[test]
fn option_rows_parse_sanitize_and_serialize_as_rocksdb() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = Options::default()
        .get_options_from_string("enable_blob_direct_write=true;blob_direct_write_partitions=0")
        .unwrap();
    o.create_if_missing(true);
    o.set_allow_concurrent_memtable_write(false);
    // Without blob files it is turned off (and written so); 0 partitions is written as 1.
    let db = DB::open(&o, path).unwrap();
    let text = util::latest_options_text(path);
    assert!(text.contains("  enable_blob_direct_write=false\n"), "{text}");
    assert!(text.contains("  blob_direct_write_partitions=1\n"), "{text}");
    assert!(!text.contains("blob_direct_write_partition_strategy"), "never written");
    db.put("k000", big(0)).unwrap();
    assert!(blob_files(path).is_empty(), "off without blob files");
    // Immutable: set_options refuses them.
    for (name, v) in [("enable_blob_direct_write", "true"), ("blob_direct_write_partitions", "2")] {
        let e = db.set_options(&[(name, v)]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{name}: {e}");
    }
    drop(db);
    let o = opts(3);
    let db = DB::open(&o, path).unwrap();
    let text = util::latest_options_text(path);
    assert!(text.contains("  enable_blob_direct_write=true\n"), "{text}");
    assert!(text.contains("  blob_direct_write_partitions=3\n"), "{text}");
    drop(db);
    // An application callback in RocksDB: no text names it (RocksDB's exact refusal).
    for v in ["", "nullptr", "RoundRobin"] {
        let Err(e) =
            Options::default().get_options_from_string(format!("blob_direct_write_partition_strategy={v}"))
        else {
            panic!("{v}: accepted")
        };
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(e.to_string(), "Invalid argument: Error parsing:: blob_direct_write_partition_strategy");
    }
    let Err(e) = Options::default().get_options_from_string("blob_direct_write_partitions=x") else {
        panic!("accepted")
    };
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn a_checkpoint_without_a_flush_is_refused_while_blob_files_are_unflushed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = DB::open(&opts(2), &path).unwrap();
    for i in 0..10 {
        db.put(format!("k{i:03}"), big(i)).unwrap();
    }
    db.put("small", "tiny").unwrap();
    let cp = shale::checkpoint::Checkpoint::new(&db).unwrap();
    // The WAL is smaller than the size that would ask for a flush: RocksDB's
    // GetLiveFilesStorageInfo refuses, the blob files being in no MANIFEST yet.
    let e = cp.create_checkpoint_with_log_size(dir.path().join("cp1"), u64::MAX / 2).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert_eq!(
        e.to_string(),
        "Not implemented: Blob direct write requires flushing active blob files before capturing live \
         files. Retry with flush enabled."
    );
    // With a flush (log_size_for_flush 0) the checkpoint holds them.
    cp.create_checkpoint(dir.path().join("cp2")).unwrap();
    let copy = DB::open(&opts(2), dir.path().join("cp2")).unwrap();
    check(&copy, 10, "checkpoint");
    // Once flushed, a checkpoint without a flush is taken too.
    cp.create_checkpoint_with_log_size(dir.path().join("cp3"), u64::MAX / 2).unwrap();
}

#[test]
fn prepopulate_blob_cache_puts_direct_writes_into_the_blob_cache() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = opts(1).get_options_from_string("prepopulate_blob_cache=kFlushOnly").unwrap();
    let cache = shale::Cache::new_lru_cache(1 << 20);
    o.set_blob_cache(&cache);
    let db = DB::open(&o, path).unwrap();
    for i in 0..5 {
        db.put(format!("k{i:03}"), big(i)).unwrap();
    }
    // Put into the cache as written (RocksDB's MaybePrepopulateBlobCache counts no add).
    assert_eq!(o.get_ticker_count(Ticker::BlobDbCacheAdd), 0);
    for i in 0..5 {
        assert_eq!(db.get(format!("k{i:03}")).unwrap(), Some(big(i)));
    }
    assert_eq!(o.get_ticker_count(Ticker::BlobDbCacheHit), 5);
    assert_eq!(o.get_ticker_count(Ticker::BlobDbCacheMiss), 0);
    assert_eq!(o.get_ticker_count(Ticker::BlobDbBlobFileBytesRead), 0);
}
