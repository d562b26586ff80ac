//! A poisoned lock is an error, never a guess (`src/poison.rs`): a file system whose append
//! panics (user code running under the active file's lock) poisons that lock and the write
//! group; every later write fails with a Corruption naming the lock, reads serve only what
//! was acknowledged (never the batch that panicked), and a reopen brings back every
//! acknowledged entry and takes writes again.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use shale_base::fs::{FileLock, FileSystem, FileSystemRef, RandomAccessFile, SequentialFile, WritableFile};
use shale_base::Result;
use shale_raftlog::env::MemFileSystem;
use shale_raftlog::{Config, Engine, Error, LogBatch};

/// Appends panic while `armed` is set.
struct PanicFs(FileSystemRef, Arc<AtomicBool>);

struct PanicFile(Box<dyn WritableFile>, Arc<AtomicBool>);

impl WritableFile for PanicFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        if self.1.load(Ordering::SeqCst) {
            panic!("an append that panics (on purpose)");
        }
        self.0.append(data)
    }
    fn flush(&mut self) -> Result<()> {
        self.0.flush()
    }
    fn sync(&mut self) -> Result<()> {
        self.0.sync()
    }
    fn size(&self) -> u64 {
        self.0.size()
    }
}

impl FileSystem for PanicFs {
    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        Ok(Box::new(PanicFile(self.0.new_writable_file(path)?, self.1.clone())))
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

fn entry(region: u64, i: u64) -> Vec<u8> {
    format!("region {region} entry {i}").into_bytes()
}

fn write(e: &Engine<PanicFs>, region: u64, i: u64) -> shale_raftlog::Result<usize> {
    let mut b = LogBatch::default();
    b.add_raw_entries(region, i, &[entry(region, i)]).unwrap();
    e.write(&mut b, true)
}

fn poisoned(r: &shale_raftlog::Result<usize>) -> bool {
    matches!(r, Err(Error::Corruption(m)) if m.contains("lock is poisoned"))
}

#[test]
fn a_panic_under_an_engine_lock_makes_writes_fail_and_reads_serve_only_acknowledged_entries() {
    let mem: FileSystemRef = Arc::new(MemFileSystem::new());
    let armed = Arc::new(AtomicBool::new(false));
    let fs = Arc::new(PanicFs(mem.clone(), armed.clone()));
    let cfg = Config { dir: "/raft".into(), ..Config::default() };
    let e = Arc::new(Engine::open_with_file_system(cfg.clone(), fs.clone()).unwrap());
    for i in 1..=10 {
        write(&e, 1, i).unwrap();
        write(&e, 2, i).unwrap();
    }

    armed.store(true, Ordering::SeqCst);
    let e2 = e.clone();
    assert!(std::thread::spawn(move || write(&e2, 1, 11)).join().is_err(), "the append panics");
    armed.store(false, Ordering::SeqCst);

    // Writes: the poisoned-lock error, every time, for every region.
    for region in [1, 2, 3] {
        let r = write(&e, region, 11);
        assert!(poisoned(&r), "region {region}: {r:?}");
    }
    // Reads: what was acknowledged, never the batch that panicked.
    assert_eq!((e.first_index(1), e.last_index(1)), (Some(1), Some(10)));
    assert_eq!(e.get_raw_entry(1, 11).unwrap(), None);
    assert_eq!(e.get_raw_entry(2, 10).unwrap(), Some(entry(2, 10)));
    // Purging needs the active file: an error, not a purge on a guess.
    let p = e.purge_expired_files();
    assert!(matches!(&p, Err(Error::Corruption(m)) if m.contains("lock is poisoned")), "{p:?}");

    drop(e);
    let e = Engine::open_with_file_system(cfg, fs).unwrap();
    for region in [1, 2] {
        assert_eq!((e.first_index(region), e.last_index(region)), (Some(1), Some(10)));
        for i in 1..=10 {
            assert_eq!(e.get_raw_entry(region, i).unwrap(), Some(entry(region, i)));
        }
    }
    write(&e, 1, 11).unwrap();
    assert_eq!(e.get_raw_entry(1, 11).unwrap(), Some(entry(1, 11)));
}
