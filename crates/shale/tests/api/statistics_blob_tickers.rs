//! Integrated BlobDB's tickers, counted where RocksDB 11.8.1 counts them: bytes written to
//! blob files (header, records, footer) and their syncs at flush, bytes read from them
//! (header and footer at open, one whole record per value), the blob cache's misses, adds,
//! hits and bytes, a strict blob cache's refusals (the read fails, as in RocksDB),
//! `fill_cache` and compactions (looked up, not filled), and garbage collection's relocated
//! blobs and bytes. The legacy stacked BlobDB's `rocksdb.blobdb.*` tickers stay 0, as in
//! RocksDB with the integrated BlobDB.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;

use shale::statistics::{why_not_counted, Ticker, COUNTED_TICKERS};
use shale::{Cache, LruCacheOptions, Options, DB};

const N: u64 = 10;
const VALUE: usize = 200;
/// Blob file layout sizes (docs/blob-format.md): header, footer, record header.
const HEADER: u64 = 30;
const FOOTER: u64 = 32;
const RECORD_HEADER: u64 = 32;

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_enable_blob_files(true);
    o.set_min_blob_size(100);
    o.enable_statistics();
    o
}

fn key(i: u64) -> String {
    format!("key{i:03}")
}

fn value(i: u64, round: u8) -> Vec<u8> {
    let mut v = vec![b'a' + round; VALUE];
    v[0] = b'0' + i as u8;
    v
}

fn blob_bytes_on_disk(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".blob"))
        .map(|e| e.metadata().unwrap().len())
        .sum()
}

fn listed(tickers: &[Ticker]) {
    for t in tickers {
        assert!(COUNTED_TICKERS.contains(t), "{} is counted but not listed", t.name());
        assert!(why_not_counted(*t).is_none(), "{}", t.name());
    }
}

#[test]
fn blob_files_and_the_blob_cache_count_bytes_syncs_hits_and_misses() {
    use Ticker::*;
    let tmp = tempfile::tempdir().unwrap();
    let cache = Cache::new_lru_cache(1 << 20);
    let mut o = opts();
    o.set_blob_cache(&cache);
    let db = DB::open(&o, tmp.path()).unwrap();
    for i in 0..N {
        db.put(key(i), value(i, 0)).unwrap();
    }
    db.put(b"small", b"stays in the table").unwrap();
    db.flush().unwrap();
    // One blob file: every byte of it counted, one sync.
    let on_disk = blob_bytes_on_disk(tmp.path());
    let record = RECORD_HEADER + key(0).len() as u64 + VALUE as u64;
    assert_eq!(on_disk, HEADER + N * record + FOOTER);
    assert_eq!(o.get_ticker_count(BlobDbBlobFileBytesWritten), on_disk);
    assert_eq!(o.get_ticker_count(BlobDbBlobFileSynced), 1);
    assert_eq!(o.get_ticker_count(BlobDbBlobFileBytesRead), 0);

    // First reads: cache misses, the file opened (header and footer read) and one whole
    // record read per value, each value added to the cache.
    for i in 0..N {
        assert_eq!(db.get(key(i)).unwrap(), Some(value(i, 0)));
    }
    assert_eq!(db.get(b"small").unwrap().as_deref(), Some(&b"stays in the table"[..]));
    assert_eq!(o.get_ticker_count(BlobDbCacheMiss), N);
    assert_eq!(o.get_ticker_count(BlobDbCacheHit), 0);
    assert_eq!(o.get_ticker_count(BlobDbCacheAdd), N);
    assert_eq!(o.get_ticker_count(BlobDbCacheBytesWrite), N * VALUE as u64);
    assert_eq!(o.get_ticker_count(BlobDbCacheBytesRead), 0);
    assert_eq!(o.get_ticker_count(BlobDbBlobFileBytesRead), HEADER + FOOTER + N * record);

    // Again, and through an iterator: every value from the cache, no file read.
    for i in 0..N {
        assert_eq!(db.get(key(i)).unwrap(), Some(value(i, 0)));
    }
    let scanned: Vec<_> = db.iterator(shale::IteratorMode::Start).collect::<Result<_, _>>().unwrap();
    assert_eq!(scanned.len() as u64, N + 1);
    assert_eq!(&*scanned[0].1, &value(0, 0)[..]);
    assert_eq!(o.get_ticker_count(BlobDbCacheHit), 2 * N);
    assert_eq!(o.get_ticker_count(BlobDbCacheBytesRead), 2 * N * VALUE as u64);
    assert_eq!(o.get_ticker_count(BlobDbCacheMiss), N);
    assert_eq!(o.get_ticker_count(BlobDbBlobFileBytesRead), HEADER + FOOTER + N * record);
    // Nothing was relocated yet.
    assert_eq!(o.get_ticker_count(BlobDbGcNumKeysRelocated), 0);

    // The legacy stacked BlobDB's tickers stay 0 (RocksDB's integrated BlobDB never counts them).
    for t in
        [BlobDbNumPut, BlobDbNumGet, BlobDbBytesWritten, BlobDbBytesRead, BlobDbWriteBlob, BlobDbGcNumFiles]
    {
        assert_eq!(o.get_ticker_count(t), 0, "{}", t.name());
        assert!(why_not_counted(t).unwrap().contains("stacked BlobDB"), "{}", t.name());
    }
    // The text prints the same numbers.
    let text = o.get_statistics().unwrap();
    assert!(
        text.contains(&format!("\nrocksdb.blobdb.blob.file.bytes.written COUNT : {on_disk}\n")),
        "{text}"
    );
    assert!(text.contains(&format!("\nrocksdb.blobdb.cache.hit COUNT : {}\n", 2 * N)), "{text}");
    listed(&[
        BlobDbBlobFileBytesWritten,
        BlobDbBlobFileBytesRead,
        BlobDbBlobFileSynced,
        BlobDbCacheMiss,
        BlobDbCacheHit,
        BlobDbCacheAdd,
        BlobDbCacheBytesRead,
        BlobDbCacheBytesWrite,
    ]);
}

#[test]
fn a_strict_blob_cache_that_refuses_a_value_fails_the_read() {
    let tmp = tempfile::tempdir().unwrap();
    let mut lru = LruCacheOptions::default();
    lru.set_capacity(64);
    lru.set_strict_capacity_limit(true);
    let cache = Cache::new_lru_cache_opts(&lru);
    let mut o = opts();
    o.set_blob_cache(&cache);
    let db = DB::open(&o, tmp.path()).unwrap();
    db.put(key(1), value(1, 0)).unwrap();
    db.flush().unwrap();
    // As RocksDB 11.8.1's BlobSource::GetBlob: the refused insert fails the read.
    let err = db.get(key(1)).unwrap_err();
    assert_eq!(err.kind(), shale::ErrorKind::Aborted, "{err}");
    assert!(err.to_string().contains("Insert failed due to LRU cache being full."), "{err}");
    assert_eq!(o.get_ticker_count(Ticker::BlobDbCacheMiss), 1);
    assert_eq!(o.get_ticker_count(Ticker::BlobDbCacheAddFailures), 1);
    assert_eq!(o.get_ticker_count(Ticker::BlobDbCacheAdd), 0);
    listed(&[Ticker::BlobDbCacheAddFailures]);
    // Without fill_cache nothing is inserted, so the same read succeeds.
    let mut ro = shale::ReadOptions::default();
    ro.fill_cache(false);
    assert_eq!(db.get_opt(key(1), &ro).unwrap(), Some(value(1, 0)));
    assert_eq!(o.get_ticker_count(Ticker::BlobDbCacheMiss), 2);
    assert_eq!(o.get_ticker_count(Ticker::BlobDbCacheAddFailures), 1);
}

#[test]
fn reads_without_fill_cache_and_compactions_look_the_blob_cache_up_without_filling_it() {
    use Ticker::*;
    let tmp = tempfile::tempdir().unwrap();
    let cache = Cache::new_lru_cache(1 << 24);
    let mut o = opts();
    o.set_blob_cache(&cache);
    o.set_enable_blob_gc(true);
    o.set_blob_gc_age_cutoff(1.0);
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, tmp.path()).unwrap();
    for i in 0..N {
        db.put(key(i), value(i, 0)).unwrap();
    }
    db.flush().unwrap();
    // fill_cache(false): every read misses and nothing is added.
    let mut ro = shale::ReadOptions::default();
    ro.fill_cache(false);
    for i in 0..N {
        assert_eq!(db.get_opt(key(i), &ro).unwrap(), Some(value(i, 0)));
    }
    assert_eq!(o.get_ticker_count(BlobDbCacheMiss), N);
    assert_eq!(o.get_ticker_count(BlobDbCacheAdd), 0);
    assert_eq!(cache.get_usage(), 0);
    // The default reads fill it for the first half of the keys.
    for i in 0..N / 2 {
        assert_eq!(db.get(key(i)).unwrap(), Some(value(i, 0)));
    }
    assert_eq!(o.get_ticker_count(BlobDbCacheMiss), N + N / 2);
    assert_eq!(o.get_ticker_count(BlobDbCacheAdd), N / 2);
    // A second table whose keys fall between the first's, so the compaction rewrites both.
    // With an age cutoff of 1.0 it relocates every blob: it finds the cached half of the
    // first file's blobs in the cache, reads the rest from the files, and adds nothing.
    for i in 0..N {
        db.put(format!("{}x", key(i)), value(i, 1)).unwrap();
    }
    db.flush().unwrap();
    let (hits, misses) = (o.get_ticker_count(BlobDbCacheHit), o.get_ticker_count(BlobDbCacheMiss));
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(o.get_ticker_count(BlobDbGcNumKeysRelocated), 2 * N);
    assert_eq!(o.get_ticker_count(BlobDbCacheHit) - hits, N / 2);
    assert_eq!(o.get_ticker_count(BlobDbCacheMiss) - misses, N / 2 + N);
    assert_eq!(o.get_ticker_count(BlobDbCacheAdd), N / 2, "compaction added to the blob cache");
}

#[test]
fn garbage_collection_counts_the_blobs_it_relocates() {
    use Ticker::*;
    let tmp = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.set_enable_blob_gc(true);
    o.set_blob_gc_age_cutoff(1.0);
    let db = DB::open(&o, tmp.path()).unwrap();
    // Two overlapping tables (a real compaction, not a move): half the keys overwritten.
    for i in 0..N {
        db.put(key(i), value(i, 0)).unwrap();
    }
    db.flush().unwrap();
    for i in 0..N / 2 {
        db.put(key(i), value(i, 1)).unwrap();
    }
    db.flush().unwrap();
    let written = o.get_ticker_count(BlobDbBlobFileBytesWritten);
    assert_eq!(written, blob_bytes_on_disk(tmp.path()));
    assert_eq!(o.get_ticker_count(BlobDbBlobFileSynced), 2);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    // With an age cutoff of 1.0 every live blob moves to a new file; the overwritten ones
    // are dropped, not relocated.
    assert_eq!(o.get_ticker_count(BlobDbGcNumKeysRelocated), N);
    assert_eq!(o.get_ticker_count(BlobDbGcBytesRelocated), N * VALUE as u64);
    assert_eq!(o.get_ticker_count(BlobDbBlobFileSynced), 3);
    let record = RECORD_HEADER + key(0).len() as u64 + VALUE as u64;
    assert_eq!(o.get_ticker_count(BlobDbBlobFileBytesWritten), written + HEADER + N * record + FOOTER);
    // Each old file opened once (header, footer) and each live record read once.
    assert_eq!(o.get_ticker_count(BlobDbBlobFileBytesRead), 2 * (HEADER + FOOTER) + N * record);
    for i in 0..N {
        assert_eq!(db.get(key(i)).unwrap(), Some(value(i, u8::from(i < N / 2))));
    }
    listed(&[BlobDbGcNumKeysRelocated, BlobDbGcBytesRelocated]);
}
