//! `ReadOptions::set_async_io` (RocksDB 11.8.1's `async_io`): an iterator's readahead reads
//! the next window in the background while the scan consumes the current one, counted in
//! `rocksdb.async.read.bytes`; a long scan returns the same keys and values with it as
//! without, and without it there is no background read.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::statistics::{Histogram, Ticker};
use std::sync::atomic::{AtomicUsize, Ordering};

use shale::{Options, ReadOptions, DB};

type Entries = Vec<(Box<[u8]>, Box<[u8]>)>;

fn scan(db: &DB, async_io: bool, readahead: usize) -> Entries {
    let mut r = ReadOptions::default();
    r.set_async_io(async_io);
    r.set_readahead_size(readahead);
    r.fill_cache(false);
    db.iterator_opt(shale::IteratorMode::Start, r).map(|kv| kv.unwrap()).collect()
}

#[test]
fn a_long_scan_with_async_io_reads_ahead_in_the_background() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.enable_statistics();
    o.set_compression_type(shale::DBCompressionType::None);
    let db = DB::open(&o, tmp.path()).unwrap();
    for i in 0..20_000u32 {
        db.put(format!("key{i:08}"), format!("value {i} ").repeat(10)).unwrap();
    }
    db.flush().unwrap();

    for readahead in [0, 128 << 10] {
        o.get_statistics().unwrap();
        let before = o.get_histogram_data(Histogram::AsyncReadBytes);
        let plain = scan(&db, false, readahead);
        let after_plain = o.get_histogram_data(Histogram::AsyncReadBytes);
        assert_eq!(after_plain.count(), before.count(), "no background read without async_io");
        assert_eq!(plain.len(), 20_000);

        let prefetch_before = o.get_ticker_count(Ticker::PrefetchBytes);
        let with = scan(&db, true, readahead);
        let after = o.get_histogram_data(Histogram::AsyncReadBytes);
        assert_eq!(with, plain, "the same keys and values");
        let reads = after.count() - after_plain.count();
        let bytes = after.sum() - after_plain.sum();
        assert!(reads > 3, "readahead {readahead}: {reads} background reads");
        // More than a third of the ~2.4 MB table was read in the background.
        assert!(bytes > 800_000, "readahead {readahead}: {bytes} bytes in the background");
        assert!(o.get_ticker_count(Ticker::PrefetchBytes) - prefetch_before >= bytes);
    }
    let text = o.get_statistics().unwrap();
    assert!(text.contains("\nrocksdb.prefetched.bytes.discarded P50 : "), "{text}");
    assert!(!text.contains(
        "\nrocksdb.async.read.bytes P50 : 0.000000 P95 : 0.000000 P99 : 0.000000 P100 : 0.000000 COUNT : 0 "
    ));
}

/// Background reads of `shale-prefetch` threads wait while the gate is shut; `waiting`
/// counts them.
#[derive(Clone, Default)]
struct Gate(std::sync::Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>, std::sync::Arc<AtomicUsize>);

impl Gate {
    fn set_open(&self, open: bool) {
        *self.0 .0.lock().unwrap() = open;
        self.0 .1.notify_all();
    }
}

struct OpenAtExit(Gate);

impl Drop for OpenAtExit {
    fn drop(&mut self) {
        self.0.set_open(true);
    }
}

struct GatedFile {
    inner: std::sync::Arc<dyn shale::fs::RandomAccessFile>,
    gate: Gate,
}

impl shale::fs::RandomAccessFile for GatedFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> shale::Result<usize> {
        if std::thread::current().name() == Some("shale-prefetch") {
            let mut open = self.gate.0 .0.lock().unwrap();
            if !*open {
                self.gate.1.fetch_add(1, Ordering::SeqCst);
                while !*open {
                    open = self.gate.0 .1.wait(open).unwrap();
                }
                self.gate.1.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.inner.read_at(offset, buf)
    }
    fn size(&self) -> shale::Result<u64> {
        self.inner.size()
    }
}

impl crate::util::FsHooks for Gate {
    fn random_access(
        &self,
        _path: &std::path::Path,
        file: std::sync::Arc<dyn shale::fs::RandomAccessFile>,
    ) -> std::sync::Arc<dyn shale::fs::RandomAccessFile> {
        std::sync::Arc::new(GatedFile { inner: file, gate: self.clone() })
    }
}

/// Threads of this process named `shale-prefetch` (RocksDB reads through io_uring; Shale's
/// background reads run on the database's small pool, `table/read_pool.rs`).
fn prefetch_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read_to_string(e.path().join("comm")).is_ok_and(|c| c.trim() == "shale-prefetch")
        })
        .count()
}

/// Many iterators with async_io, each with a background read in flight (held at a gate),
/// share the database's few read threads instead of starting one each; every scan still
/// returns every entry once the reads go on, and the threads are joined when the database
/// closes.
#[test]
fn many_async_io_iterators_share_a_few_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let gate = Gate::default();
    gate.set_open(true);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.enable_statistics();
    o.set_compression_type(shale::DBCompressionType::None);
    o.set_file_system(crate::util::HookedFs::new(shale::fs::default_fs(), gate.clone()));
    let db = DB::open(&o, tmp.path()).unwrap();
    for i in 0..5_000u32 {
        db.put(format!("key{i:08}"), format!("value {i} ").repeat(10)).unwrap();
    }
    db.flush().unwrap();

    let mut iters = Vec::new();
    // Declared after `iters`, so dropped first: a failed assertion opens the gate before
    // the iterators wait for their reads.
    let _open_at_exit = OpenAtExit(gate.clone());
    gate.set_open(false);
    for _ in 0..32 {
        let mut r = ReadOptions::default();
        r.set_async_io(true);
        r.set_readahead_size(64 << 10);
        r.fill_cache(false);
        let mut it = db.raw_iterator_opt(r);
        // The first block read reads ahead and starts the background read of the next half.
        it.seek_to_first();
        assert!(it.valid());
        iters.push(it);
    }
    // The reads reach the gate as their threads start (a loaded machine may take a while).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while gate.1.load(Ordering::SeqCst) < 4 {
        assert!(std::time::Instant::now() < deadline, "{} reads at the gate", gate.1.load(Ordering::SeqCst));
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // A thread per read would bring up to 32 to the gate; the pool's 4 hold the rest queued.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let waiting = gate.1.load(Ordering::SeqCst);
    assert_eq!(waiting, 4, "{waiting} background reads in flight for 32 iterators");
    // Other tests of this binary may run a pool of their own at the same time.
    let threads = prefetch_threads();
    assert!((4..=8).contains(&threads), "{threads} read threads for 32 iterators");
    gate.set_open(true);
    for it in &mut iters {
        let mut n = 0;
        while it.valid() {
            n += 1;
            it.next();
        }
        it.status().unwrap();
        assert_eq!(n, 5_000);
    }
    let bytes = o.get_histogram_data(Histogram::AsyncReadBytes);
    assert!(bytes.count() >= 32, "{} background reads", bytes.count());
    drop(iters);
    drop(db);
}
