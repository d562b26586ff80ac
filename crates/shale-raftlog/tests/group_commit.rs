//! Group commit: concurrent synced writers share syncs (fewer syncs than writes), and every
//! acknowledged write is there after a power loss.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use shale_base::fs::{FileLock, FileSystem, FileSystemRef, RandomAccessFile, SequentialFile, WritableFile};
use shale_base::Result;
use shale_raftlog::env::{FaultInjectionFs, MemFileSystem};
use shale_raftlog::{Config, Engine, LogBatch};

/// Syncs take 2 ms, as on a disk, so writers arrive while a sync is under way.
struct SlowSync(FileSystemRef, Arc<AtomicU64>);

struct SlowFile(Box<dyn WritableFile>, Arc<AtomicU64>);

impl WritableFile for SlowFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.0.append(data)
    }
    fn flush(&mut self) -> Result<()> {
        self.0.flush()
    }
    fn sync(&mut self) -> Result<()> {
        std::thread::sleep(Duration::from_millis(2));
        self.1.fetch_add(1, Ordering::Relaxed);
        self.0.sync()
    }
    fn size(&self) -> u64 {
        self.0.size()
    }
}

impl FileSystem for SlowSync {
    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        Ok(Box::new(SlowFile(self.0.new_writable_file(path)?, self.1.clone())))
    }
    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.0.new_random_access_file(path)
    }
    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        self.0.new_sequential_file(path)
    }
    fn file_exists(&self, path: &Path) -> bool {
        self.0.file_exists(path)
    }
    fn children(&self, dir: &Path) -> Result<Vec<String>> {
        self.0.children(dir)
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        self.0.file_size(path)
    }
    fn remove_file(&self, path: &Path) -> Result<()> {
        self.0.remove_file(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.0.rename(from, to)
    }
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        self.0.create_dir_all(dir)
    }
    fn remove_dir(&self, dir: &Path) -> Result<()> {
        self.0.remove_dir(dir)
    }
    fn sync_dir(&self, dir: &Path) -> Result<()> {
        self.0.sync_dir(dir)
    }
    fn lock_file(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        self.0.lock_file(path)
    }
}

#[test]
fn concurrent_synced_writers_share_syncs() {
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    let slow_syncs = Arc::new(AtomicU64::new(0));
    let slow = Arc::new(SlowSync(fs.clone(), slow_syncs.clone()));
    let cfg = Config { dir: "/raft".into(), ..Config::default() };
    let e = Arc::new(Engine::open_with_file_system(cfg.clone(), slow).unwrap());
    let syncs_before = slow_syncs.load(Ordering::Relaxed);
    const THREADS: u64 = 8;
    const WRITES: u64 = 200;
    let hs: Vec<_> = (0..THREADS)
        .map(|t| {
            let e = e.clone();
            std::thread::spawn(move || {
                for i in 0..WRITES {
                    let mut b = LogBatch::default();
                    b.add_raw_entries(t + 1, i + 1, &[format!("t{t} e{i}").into_bytes()]).unwrap();
                    e.write(&mut b, true).unwrap();
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let syncs = slow_syncs.load(Ordering::Relaxed) - syncs_before;
    assert!(syncs < THREADS * WRITES, "{syncs} syncs for {} synced writes", THREADS * WRITES);
    drop(e);
    fs.crash(true);
    let e = Engine::open_with_file_system(cfg, fs.clone()).unwrap();
    for t in 0..THREADS {
        assert_eq!((e.first_index(t + 1), e.last_index(t + 1)), (Some(1), Some(WRITES)));
        assert_eq!(
            e.get_raw_entry(t + 1, WRITES).unwrap(),
            Some(format!("t{t} e{}", WRITES - 1).into_bytes())
        );
    }
    println!("{syncs} syncs for {} synced writes", THREADS * WRITES);
}
