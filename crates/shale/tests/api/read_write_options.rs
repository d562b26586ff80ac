//! The read and write options RocksDB users set act as RocksDB 11.8.1's do (issue 33):
//! `verify_checksums(false)` reads a block whose checksum no longer matches; each
//! `read_tier` (block cache only: Incomplete; persisted: memtables skipped after a write
//! without the WAL, refused by iterators; memtable only); `deadline` and `io_timeout`
//! (TimedOut when a file read is due after the deadline or takes longer than the timeout);
//! `ignore_range_deletions`; `set_bloom_filter(bits, true)` (a full filter, the flag
//! ignored as since RocksDB 7.0); `ignore_missing_column_families`; `low_pri`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use shale::fs::{MemFileSystem, RandomAccessFile};
use shale::{
    BlockBasedOptions, DBCompressionType, DBWithThreadMode, ErrorKind, IteratorMode, MultiThreaded, Options,
    ReadOptions, ReadTier, WriteBatch, WriteOptions, DB,
};

fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(DBCompressionType::None);
    o
}

fn sst_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .collect();
    v.sort();
    v
}

fn kind<T: std::fmt::Debug>(r: shale::Result<T>) -> (ErrorKind, String) {
    let e = r.expect_err("must fail");
    (e.kind(), e.to_string())
}

#[test]
fn verify_checksums_false_reads_a_block_whose_checksum_no_longer_matches() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(), dir.path()).unwrap();
    db.put(b"key", b"value-MARKER-0123456789").unwrap();
    db.flush().unwrap();
    drop(db);
    // Flip one byte of the value inside its (uncompressed) data block.
    let sst = sst_files(dir.path()).pop().expect("a table");
    let mut bytes = std::fs::read(&sst).unwrap();
    let at = bytes.windows(6).position(|w| w == b"MARKER").expect("the value in the table");
    bytes[at] = b'N';
    std::fs::write(&sst, &bytes).unwrap();

    let db = DB::open(&options(), dir.path()).unwrap();
    let (k, msg) = kind(db.get(b"key"));
    assert_eq!(k, ErrorKind::Corruption, "{msg}");
    assert!(msg.contains("checksum mismatch"), "{msg}");
    let mut ro = ReadOptions::default();
    ro.set_verify_checksums(false);
    assert_eq!(db.get_opt(b"key", &ro).unwrap().as_deref(), Some(&b"value-NARKER-0123456789"[..]));
    let mut it = db.iterator_opt(IteratorMode::Start, ro);
    let (key, value) = it.next().expect("an entry").unwrap();
    assert_eq!((&*key, &*value), (&b"key"[..], &b"value-NARKER-0123456789"[..]));
}

#[test]
fn read_tier_block_cache_reads_only_what_is_cached() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(), dir.path()).unwrap();
    db.put(b"flushed", b"1").unwrap();
    db.flush().unwrap();
    drop(db);
    let db = DB::open(&options(), dir.path()).unwrap();
    db.put(b"in-memtable", b"2").unwrap();
    let mut cache_only = ReadOptions::default();
    cache_only.set_read_tier(ReadTier::BlockCache);
    // The memtable is read; the table's data block is not cached yet: Incomplete.
    assert_eq!(db.get_opt(b"in-memtable", &cache_only).unwrap().as_deref(), Some(&b"2"[..]));
    let (k, msg) = kind(db.get_opt(b"flushed", &cache_only));
    assert_eq!(k, ErrorKind::Incomplete, "{msg}");
    let mut it = db.iterator_opt(IteratorMode::Start, {
        let mut ro = ReadOptions::default();
        ro.set_read_tier(ReadTier::BlockCache);
        ro
    });
    let first = it.next().expect("the iterator reports its status");
    assert_eq!(first.unwrap_err().kind(), ErrorKind::Incomplete);
    drop(it);
    // A plain read puts the block in the cache: now the cache-only read finds it.
    assert_eq!(db.get(b"flushed").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get_opt(b"flushed", &cache_only).unwrap().as_deref(), Some(&b"1"[..]));
    let all: Vec<_> = db.iterator_opt(IteratorMode::Start, cache_only).map(Result::unwrap).collect();
    assert_eq!(all.len(), 2);
}

#[test]
fn read_tier_persisted_and_memtable() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(), dir.path()).unwrap();
    db.put(b"a", b"flushed").unwrap();
    db.flush().unwrap();
    db.put(b"b", b"logged").unwrap();
    let mut persisted = ReadOptions::default();
    persisted.set_read_tier(ReadTier::Persisted);
    // Every write so far went to the WAL: the memtable is persisted data.
    assert_eq!(db.get_opt(b"b", &persisted).unwrap().as_deref(), Some(&b"logged"[..]));
    let mut no_wal = WriteOptions::default();
    no_wal.disable_wal(true);
    db.put_opt(b"c", b"unlogged", &no_wal).unwrap();
    // After a write without the WAL, RocksDB's persisted tier skips the memtables.
    assert_eq!(db.get_opt(b"c", &persisted).unwrap(), None);
    assert_eq!(db.get_opt(b"b", &persisted).unwrap(), None);
    assert_eq!(db.get_opt(b"a", &persisted).unwrap().as_deref(), Some(&b"flushed"[..]));
    let mut it = db.iterator_opt(IteratorMode::Start, persisted);
    let (k, msg) = kind(it.next().expect("the iterator reports its status"));
    assert_eq!(k, ErrorKind::NotSupported, "{msg}");
    assert!(msg.contains("kPersistedData is not yet supported in iterators"), "{msg}");
    drop(it);

    let mut mem_only = ReadOptions::default();
    mem_only.set_read_tier(ReadTier::Memtable);
    assert_eq!(db.get_opt(b"a", &mem_only).unwrap(), None, "in a table only");
    assert_eq!(db.get_opt(b"c", &mem_only).unwrap().as_deref(), Some(&b"unlogged"[..]));
    let keys: Vec<Vec<u8>> =
        db.iterator_opt(IteratorMode::Start, mem_only).map(|r| r.unwrap().0.to_vec()).collect();
    assert_eq!(keys, vec![b"b".to_vec(), b"c".to_vec()]);
}

#[test]
fn a_deadline_passed_fails_file_reads_with_timed_out() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(), dir.path()).unwrap();
    db.put(b"flushed", b"1").unwrap();
    db.flush().unwrap();
    drop(db);
    let db = DB::open(&options(), dir.path()).unwrap();
    db.put(b"mem", b"2").unwrap();
    let mut past = ReadOptions::default();
    past.set_deadline(1);
    // Served from memory: no file read, no check (as RocksDB's, which checks before I/O).
    assert_eq!(db.get_opt(b"mem", &past).unwrap().as_deref(), Some(&b"2"[..]));
    let (k, msg) = kind(db.get_opt(b"flushed", &past));
    assert_eq!(k, ErrorKind::TimedOut, "{msg}");
    assert!(msg.contains("Deadline exceeded"), "{msg}");
    let mut it = db.iterator_opt(IteratorMode::From(b"flushed", shale::Direction::Forward), past);
    assert_eq!(it.next().expect("status").unwrap_err().kind(), ErrorKind::TimedOut);
    drop(it);
    let mut future = ReadOptions::default();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    future.set_deadline((now.as_micros() + 3_600_000_000) as u64);
    assert_eq!(db.get_opt(b"flushed", &future).unwrap().as_deref(), Some(&b"1"[..]));
}

/// A file system whose random reads of table files sleep `delay_ms` once `slow` is set.
struct SlowReads {
    slow: Arc<AtomicBool>,
    reads: Arc<AtomicU64>,
}

struct SlowFile {
    inner: Arc<dyn RandomAccessFile>,
    slow: Arc<AtomicBool>,
    reads: Arc<AtomicU64>,
}

impl util::FsHooks for SlowReads {
    fn random_access(&self, path: &Path, inner: Arc<dyn RandomAccessFile>) -> Arc<dyn RandomAccessFile> {
        if path.extension().is_some_and(|x| x == "sst") {
            return Arc::new(SlowFile { inner, slow: self.slow.clone(), reads: self.reads.clone() });
        }
        inner
    }
}

impl RandomAccessFile for SlowFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> shale::Result<usize> {
        if self.slow.load(Ordering::SeqCst) {
            self.reads.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        self.inner.read_at(offset, buf)
    }
    fn size(&self) -> shale::Result<u64> {
        self.inner.size()
    }
}

#[test]
fn io_timeout_fails_a_file_read_that_takes_longer() {
    let slow = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    let fs = util::HookedFs::new(
        Arc::new(MemFileSystem::new()),
        SlowReads { slow: slow.clone(), reads: reads.clone() },
    );
    let mut o = options();
    o.set_file_system(fs);
    let mut t = BlockBasedOptions::default();
    t.disable_cache();
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, "/db").unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    slow.store(true, Ordering::SeqCst);
    let mut ro = ReadOptions::default();
    ro.set_io_timeout(5_000);
    let (k, msg) = kind(db.get_opt(b"k", &ro));
    assert_eq!(k, ErrorKind::TimedOut, "{msg}");
    assert!(reads.load(Ordering::SeqCst) >= 1, "the read reached the file system");
    // Without a timeout the same slow read completes.
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    // A timeout longer than the read lets it complete.
    let mut ro = ReadOptions::default();
    ro.set_io_timeout(60_000_000);
    assert_eq!(db.get_opt(b"k", &ro).unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn ignore_range_deletions_returns_keys_a_range_deletion_covers() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(), dir.path()).unwrap();
    for k in [b"a", b"b", b"c"] {
        db.put(k, b"v").unwrap();
    }
    db.flush().unwrap();
    db.put(b"d", b"v").unwrap();
    db.delete_range(b"b", b"e").unwrap();
    let mut ignore = ReadOptions::default();
    ignore.set_ignore_range_deletions(true);
    let scan = |ro: ReadOptions| -> Vec<Vec<u8>> {
        db.iterator_opt(IteratorMode::Start, ro).map(|r| r.unwrap().0.to_vec()).collect()
    };
    // The tombstone in the memtable covers a table's keys and a memtable key.
    assert_eq!(db.get(b"b").unwrap(), None);
    assert_eq!(db.get_opt(b"b", &ignore).unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.get_opt(b"d", &ignore).unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(scan(ReadOptions::default()), vec![b"a".to_vec()]);
    assert_eq!(scan(ignore.clone()), vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec(), b"d".to_vec()]);
    // The tombstone in a table (the flush drops "d", which it covers in the same memtable,
    // as RocksDB's flush does).
    db.flush().unwrap();
    assert_eq!(db.get(b"c").unwrap(), None);
    assert_eq!(db.get_opt(b"c", &ignore).unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(scan(ignore), vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
}

#[test]
fn block_based_bloom_flag_builds_a_full_filter() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options();
    let mut t = BlockBasedOptions::default();
    t.set_bloom_filter(10.0, true);
    o.set_block_based_table_factory(&t);
    let db = DB::open(&o, dir.path()).unwrap();
    for i in 0..2000u32 {
        db.put(format!("key{:06}", i * 2), b"v").unwrap();
    }
    db.flush().unwrap();
    let blocks = || db.property_int_value("rocksdb.shale.data-blocks-read").unwrap().expect("property");
    let before = blocks();
    for i in 0..500u32 {
        assert_eq!(db.get(format!("key{:06}", i * 2 + 1)).unwrap(), None);
    }
    // A 10-bit Bloom filter passes about 1% of absent keys; without one, each would read a block.
    assert!(blocks() - before < 25, "{} data blocks read for 500 absent keys", blocks() - before);
    drop(db);
    let text = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("OPTIONS-"))
        .max()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .expect("an OPTIONS file");
    assert!(text.contains("filter_policy=bloomfilter:10:false"), "{text}");
}

#[test]
fn ignore_missing_column_families_skips_a_dropped_familys_records() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options();
    o.create_missing_column_families(true);
    let db: DBWithThreadMode<MultiThreaded> = DBWithThreadMode::open_cf(&o, dir.path(), ["gone"]).unwrap();
    let gone = db.cf_handle("gone").unwrap();
    db.drop_cf("gone").unwrap();
    let batch = || {
        let mut b = WriteBatch::default();
        b.put(b"kept", b"1");
        b.put_cf(&gone, b"lost", b"2");
        b
    };
    let (k, msg) = kind(db.write(batch()));
    assert_eq!(k, ErrorKind::InvalidArgument, "{msg}");
    assert_eq!(db.get(b"kept").unwrap(), None, "nothing of the refused batch was written");
    let mut wo = WriteOptions::default();
    wo.set_ignore_missing_column_families(true);
    let seq = db.latest_sequence_number();
    db.write_opt(batch(), &wo).unwrap();
    assert_eq!(db.get(b"kept").unwrap().as_deref(), Some(&b"1"[..]));
    // The skipped record used its sequence number, as in RocksDB.
    assert_eq!(db.latest_sequence_number(), seq + 2);
    db.put_cf_opt(&gone, b"x", b"y", &wo).unwrap();
}

#[test]
fn low_pri_writes_are_throttled_while_compaction_is_behind() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options();
    o.set_level_zero_file_num_compaction_trigger(2);
    o.set_level_zero_slowdown_writes_trigger(2);
    o.set_level_zero_stop_writes_trigger(100);
    // The compaction of the two level-0 files waits until the test releases it, so the
    // level-0 count stays at the slowdown trigger meanwhile.
    let gate = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
    let g = gate.clone();
    o.set_compaction_filter("gate", move |_level: u32, _k: &[u8], _v: &[u8]| {
        let (m, cv) = &*g;
        let open = m.lock().unwrap();
        let _open = cv.wait_timeout_while(open, std::time::Duration::from_secs(120), |o| !*o).unwrap();
        shale::CompactionDecision::Keep
    });
    let db = DB::open(&o, dir.path()).unwrap();
    let mut wo = WriteOptions::default();
    wo.set_low_pri(true);
    wo.set_no_slowdown(true);
    db.put_opt(b"k0", b"v", &wo).unwrap();
    for i in 0..2 {
        db.put(format!("f{i}"), b"v").unwrap();
        db.flush().unwrap();
    }
    // Two level-0 files reach the slowdown trigger: writes are delayed, compaction is behind.
    let (k, msg) = kind(db.put_opt(b"k1", b"v", &wo));
    assert_eq!(k, ErrorKind::Incomplete, "{msg}");
    assert!(msg.contains("Low priority write stall"), "{msg}");
    assert_eq!(db.get(b"k1").unwrap(), None);
    // Without no_slowdown the low-priority write waits for its bytes and is written.
    let mut slow = WriteOptions::default();
    slow.set_low_pri(true);
    db.put_opt(b"k2", b"v", &slow).unwrap();
    assert_eq!(db.get(b"k2").unwrap().as_deref(), Some(&b"v"[..]));
    *gate.0.lock().unwrap() = true;
    gate.1.notify_all();
    drop(db);
}
