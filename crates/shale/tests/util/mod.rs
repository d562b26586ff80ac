//! Helpers shared by the scenario tests (each test file includes this module).
#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::collections::BTreeMap;

use shale::fs::{
    FileLock, FileSystem, FileSystemRef, RandomAccessFile, ReadFileOptions, SequentialFile, WritableFile,
};
use shale::{IteratorMode, DB};

/// Names of the files in `dir` whose names end with `suffix`.
pub fn files_ending(dir: &Path, suffix: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(suffix))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// `Options::default()` with `create_if_missing`: the start of most tests' options.
pub fn create_options() -> shale::Options {
    let mut o = shale::Options::default();
    o.create_if_missing(true);
    o
}

/// The error of a call that must fail (panics when it succeeds).
pub fn expect_err<T>(r: shale::Result<T>) -> shale::Error {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

/// The text of the newest OPTIONS file in `dir` (by its number; `.dbtmp` files left aside).
pub fn latest_options_text(dir: &Path) -> String {
    let name = files_ending(dir, "")
        .into_iter()
        .filter(|n| n.starts_with("OPTIONS-") && !n.ends_with(".dbtmp"))
        .max_by_key(|n| n["OPTIONS-".len()..].parse::<u64>().unwrap_or(0))
        .unwrap_or_else(|| panic!("no OPTIONS file in {}", dir.display()));
    std::fs::read_to_string(dir.join(&name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// An integer property of the default column family (panics when unknown).
pub fn int_prop(db: &DB, name: &str) -> u64 {
    db.property_int_value(name).unwrap().unwrap_or_else(|| panic!("property {name} unknown"))
}

/// Polls `cond` until it holds; panics with `what` after `secs` seconds.
pub fn wait_until(secs: u64, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits until background flushes and compactions have nothing left to do: RocksDB's
/// `WaitForCompact` (which checks the queues and running jobs together, under the DB mutex),
/// then the properties. The properties alone are read one call at a time: a compaction
/// finishing between two reads while the next one is queued made them all look idle with
/// level 0 still over its trigger (`compaction.rs`, two suites at once on 2 cores).
/// `rocksdb.compaction-pending` answers whether a compaction is due even with automatic
/// compactions off (RocksDB's `NeedsCompaction`): then nothing will run it, and it is not
/// waited for.
pub fn wait_for_background(db: &DB) {
    db.wait_for_compact(&shale::WaitForCompactOptions::default()).unwrap();
    // The newest OPTIONS file says (a database written without one is taken as on).
    let has_options = files_ending(db.path(), "").iter().any(|n| n.starts_with("OPTIONS-"));
    let auto_off = has_options && latest_options_text(db.path()).contains("disable_auto_compactions=true");
    wait_until(180, "background work to finish", || {
        int_prop(db, "rocksdb.num-immutable-mem-table") == 0
            && (auto_off || int_prop(db, "rocksdb.compaction-pending") == 0)
            && int_prop(db, "rocksdb.num-running-compactions") == 0
            && int_prop(db, "rocksdb.num-running-flushes") == 0
    });
}

/// A value of `len` bytes derived from `seed` that compresses poorly.
pub fn value(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// The expected contents of a DB: every acknowledged key and its value.
pub type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Asserts that `db` holds exactly `model`: every key by `get`, and full scans forward
/// and backward with nothing missing, extra or different.
pub fn check_model(db: &DB, model: &Model, ctx: &str) {
    for (k, v) in model {
        let got = db.get(k).unwrap_or_else(|e| panic!("{ctx}: get failed: {e}"));
        assert_eq!(got.as_ref(), Some(v), "{ctx}: get {}", String::from_utf8_lossy(k));
    }
    let scan = |mode| -> Model {
        db.iterator(mode)
            .map(|r| r.unwrap_or_else(|e| panic!("{ctx}: iterator failed: {e}")))
            .map(|(k, v)| (k.to_vec(), v.to_vec()))
            .collect()
    };
    let forward = scan(IteratorMode::Start);
    assert!(forward == *model, "{ctx}: a full scan differs ({} vs {} keys)", forward.len(), model.len());
    let back: Vec<Vec<u8>> = db.iterator(IteratorMode::End).map(|r| r.unwrap().0.to_vec()).collect();
    assert!(back.iter().rev().eq(model.keys()), "{ctx}: a reverse scan differs from the model");
}

/// What a test changes in a file system it wraps in [`HookedFs`]: each hook sees a call
/// before (or the file after) the wrapped file system serves it; the defaults change nothing.
pub trait FsHooks: Send + Sync {
    /// A file just opened for writing (with or without a write buffer).
    fn writable(&self, _path: &Path, file: Box<dyn WritableFile>) -> Box<dyn WritableFile> {
        file
    }
    /// A file just opened for reads at offsets.
    fn random_access(&self, _path: &Path, file: Arc<dyn RandomAccessFile>) -> Arc<dyn RandomAccessFile> {
        file
    }
    /// A file just opened for reads at offsets with file options `o` (direct, mmap); the
    /// default is [`Self::random_access`].
    fn random_access_with(
        &self,
        path: &Path,
        _o: ReadFileOptions,
        file: Arc<dyn RandomAccessFile>,
    ) -> Arc<dyn RandomAccessFile> {
        self.random_access(path, file)
    }
    /// A file about to be opened for writing with a write buffer of `max_buffer_size` bytes
    /// (`writable_file_max_buffer_size`).
    fn before_buffered(&self, _path: &Path, _max_buffer_size: usize) {}
    /// A file about to be removed.
    fn before_remove(&self, _path: &Path) {}
    /// The file `old` about to be renamed to `path` and reused for writing.
    fn before_reuse(&self, _path: &Path, _old: &Path) {}
}

/// A file system that passes every call to `base`, through the test's [`FsHooks`].
pub struct HookedFs<H> {
    pub base: FileSystemRef,
    pub hooks: H,
}

impl<H: FsHooks> HookedFs<H> {
    pub fn new(base: FileSystemRef, hooks: H) -> Arc<Self> {
        Arc::new(HookedFs { base, hooks })
    }
}

impl<H: FsHooks> FileSystem for HookedFs<H> {
    fn new_writable_file(&self, path: &Path) -> shale::Result<Box<dyn WritableFile>> {
        Ok(self.hooks.writable(path, self.base.new_writable_file(path)?))
    }
    fn new_writable_file_with_buffer(&self, path: &Path, max: usize) -> shale::Result<Box<dyn WritableFile>> {
        self.hooks.before_buffered(path, max);
        Ok(self.hooks.writable(path, self.base.new_writable_file_with_buffer(path, max)?))
    }
    fn new_writable_file_with(
        &self,
        path: &Path,
        o: shale::fs::WriteFileOptions,
    ) -> shale::Result<Box<dyn WritableFile>> {
        Ok(self.hooks.writable(path, self.base.new_writable_file_with(path, o)?))
    }
    fn reuse_writable_file(
        &self,
        path: &Path,
        old: &Path,
        max: usize,
    ) -> shale::Result<Box<dyn WritableFile>> {
        self.hooks.before_reuse(path, old);
        Ok(self.hooks.writable(path, self.base.reuse_writable_file(path, old, max)?))
    }
    fn new_random_access_file(&self, path: &Path) -> shale::Result<Arc<dyn RandomAccessFile>> {
        Ok(self.hooks.random_access(path, self.base.new_random_access_file(path)?))
    }
    fn new_random_access_file_with(
        &self,
        path: &Path,
        o: ReadFileOptions,
    ) -> shale::Result<Arc<dyn RandomAccessFile>> {
        Ok(self.hooks.random_access_with(path, o, self.base.new_random_access_file_with(path, o)?))
    }
    fn new_sequential_file(&self, path: &Path) -> shale::Result<Box<dyn SequentialFile>> {
        self.base.new_sequential_file(path)
    }
    fn file_exists(&self, path: &Path) -> bool {
        self.base.file_exists(path)
    }
    fn children(&self, dir: &Path) -> shale::Result<Vec<String>> {
        self.base.children(dir)
    }
    fn file_size(&self, path: &Path) -> shale::Result<u64> {
        self.base.file_size(path)
    }
    fn remove_file(&self, path: &Path) -> shale::Result<()> {
        self.hooks.before_remove(path);
        self.base.remove_file(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> shale::Result<()> {
        self.base.rename(from, to)
    }
    fn create_dir_all(&self, dir: &Path) -> shale::Result<()> {
        self.base.create_dir_all(dir)
    }
    fn remove_dir(&self, dir: &Path) -> shale::Result<()> {
        self.base.remove_dir(dir)
    }
    fn sync_dir(&self, dir: &Path) -> shale::Result<()> {
        self.base.sync_dir(dir)
    }
    fn lock_file(&self, path: &Path) -> shale::Result<Box<dyn FileLock>> {
        self.base.lock_file(path)
    }
    fn link_file(&self, from: &Path, to: &Path) -> shale::Result<()> {
        self.base.link_file(from, to)
    }
    fn sync_file(&self, path: &Path) -> shale::Result<()> {
        self.base.sync_file(path)
    }
}

/// A compaction service whose worker runs in this process: each call opens the database at
/// `db` as RocksDB's `OpenAndCompact` does, into a new directory `job<n>` under `out`.
pub struct LocalCompactionWorker {
    pub db: std::path::PathBuf,
    pub out: std::path::PathBuf,
    pub calls: std::sync::atomic::AtomicUsize,
}

impl LocalCompactionWorker {
    pub fn new(db: &Path, out: &Path) -> LocalCompactionWorker {
        LocalCompactionWorker { db: db.to_path_buf(), out: out.to_path_buf(), calls: Default::default() }
    }
}

impl shale::db::CompactionService for LocalCompactionWorker {
    fn compact(&self, input: &[u8]) -> shale::Result<Vec<u8>> {
        let n = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let out = self.out.join(format!("job{n}"));
        std::fs::create_dir_all(&out).map_err(|e| shale::Error::io(out.display(), e))?;
        shale::db::open_and_compact(&self.db, &out, input)
    }
}
