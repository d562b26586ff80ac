//! rust-rocksdb's `checkpoint` module: an openable copy of a live database in another
//! directory, made as RocksDB's `Checkpoint::CreateCheckpoint` makes it.
//!
//! ```text
//! <dir>.tmp/            staging directory (a leftover one is cleaned first)
//!   000123.sst ...      every live table: hard link, or a copy when links fail
//!                       (another file system)
//!   000125.blob ...     every live blob file (BlobDB): hard link, or a whole copy
//!   MANIFEST-000045     the MANIFEST's first N bytes (N = synced size at the capture)
//!   CURRENT             "MANIFEST-000045\n"
//!   OPTIONS-000047      copy of the newest OPTIONS file
//!   000124.log ...      copies of the WALs a family still needs, the last one cut at its
//!                       size at the capture (empty after a flush)
//! rename <dir>.tmp -> <dir>, fsync of the files, of <dir> and of its parent
//! ```
//!
//! `log_size_for_flush`: 0 flushes every memtable first (so the WAL copied is empty);
//! otherwise the memtables are flushed only when the live WALs hold at least that many
//! bytes, and the WALs are copied for the checkpoint to replay (u64::MAX never flushes).
//! File deletions are held off from the capture until the copy is done
//! (`db/live_files.rs`). A checkpoint of a transaction database is made the same way
//! (`TransactionDBCheckpoint`).

use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::db::live_files::LiveFiles;
use crate::db::thread_mode::ThreadMode;
use crate::db::{DBCommon, DBInner, DbInner};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::FileSystem;
use crate::transactions::TransactionDB;

/// A checkpoint maker borrowing its database, as rust-rocksdb's `Checkpoint`.
pub struct Checkpoint<'db> {
    inner: Arc<DbInner>,
    _db: PhantomData<&'db ()>,
}

impl<'db> Checkpoint<'db> {
    pub fn new<T: ThreadMode, I: DBInner>(db: &'db DBCommon<T, I>) -> Result<Self> {
        Ok(Checkpoint { inner: db.inner.clone(), _db: PhantomData })
    }

    /// Makes a checkpoint at `path` (which must not exist), flushing the memtables first.
    pub fn create_checkpoint<P: AsRef<Path>>(&self, path: P) -> Result<()> {
        create_checkpoint(&self.inner, path.as_ref(), 0)
    }

    /// Makes a checkpoint at `path`, flushing first only when the live WALs hold at least
    /// `log_size_for_flush` bytes (0: always); see the module comment.
    pub fn create_checkpoint_with_log_size<P: AsRef<Path>>(
        &self,
        path: P,
        log_size_for_flush: u64,
    ) -> Result<()> {
        create_checkpoint(&self.inner, path.as_ref(), log_size_for_flush)
    }
}

/// A checkpoint maker of a transaction database, as rust-rocksdb's `TransactionDBCheckpoint`.
pub struct TransactionDBCheckpoint<'db> {
    inner: Arc<DbInner>,
    _db: PhantomData<&'db ()>,
}

impl<'db> TransactionDBCheckpoint<'db> {
    pub fn new<T: ThreadMode>(db: &'db TransactionDB<T>) -> Result<Self> {
        Ok(TransactionDBCheckpoint { inner: db.db.inner.clone(), _db: PhantomData })
    }

    /// Makes a checkpoint at `path` (which must not exist), flushing the memtables first.
    pub fn create_checkpoint<P: AsRef<Path>>(&self, path: P) -> Result<()> {
        create_checkpoint(&self.inner, path.as_ref(), 0)
    }

    /// Makes a checkpoint at `path`, flushing first only when the live WALs hold at least
    /// `log_size_for_flush` bytes (0: always); see the module comment.
    pub fn create_checkpoint_with_log_size<P: AsRef<Path>>(
        &self,
        path: P,
        log_size_for_flush: u64,
    ) -> Result<()> {
        create_checkpoint(&self.inner, path.as_ref(), log_size_for_flush)
    }
}

/// Whether a checkpoint or backup flushes first: RocksDB's rule on `log_size_for_flush`.
pub(crate) fn should_flush(inner: &DbInner, log_size_for_flush: u64) -> bool {
    match log_size_for_flush {
        0 => true,
        u64::MAX => false,
        n => inner.alive_wal_bytes() >= n,
    }
}

fn create_checkpoint(inner: &Arc<DbInner>, path: &Path, log_size_for_flush: u64) -> Result<()> {
    let fs = inner.fs.clone();
    let path = strip_trailing_slash(path);
    if fs.file_exists(&path) {
        return Err(Error::invalid_argument(format!("Directory exists: {}", path.display())));
    }
    let mut staging = path.clone().into_os_string();
    staging.push(".tmp");
    let staging = PathBuf::from(staging);
    if fs.file_exists(&staging) {
        clean_dir(&*fs, &staging)?;
    }
    let live = inner.capture_live_files(should_flush(inner, log_size_for_flush))?;
    let r = write_checkpoint(inner, &live, &staging).and_then(|_| {
        fs.rename(&staging, &path)?;
        fs.sync_dir(&path)?;
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs.sync_dir(parent)?;
        }
        Ok(())
    });
    drop(live);
    if r.is_err() && fs.file_exists(&staging) {
        let _ = clean_dir(&*fs, &staging);
    }
    inner.info_log.log(format_args!(
        "Checkpoint {}: {}",
        path.display(),
        match &r {
            Ok(()) => "done".to_string(),
            Err(e) => format!("failed: {e}"),
        }
    ));
    r
}

fn write_checkpoint(inner: &DbInner, live: &LiveFiles, dir: &Path) -> Result<()> {
    let fs = &*inner.fs;
    fs.create_dir_all(dir)?;
    let mut link = true;
    // Tables and blob files are immutable: hard links, as RocksDB's checkpoint makes them.
    for t in live.tables.iter().chain(&live.blobs) {
        let (src, dst) = (t.dir.join(&t.name), dir.join(&t.name));
        if link {
            match fs.link_file(&src, &dst) {
                Ok(()) => continue,
                Err(e) if e.kind() == ErrorKind::NotSupported => link = false,
                Err(e) => return Err(e),
            }
        }
        copy_file(fs, &src, &dst, Some(t.size))?;
    }
    for w in &live.wals {
        copy_file(fs, &w.dir.join(&w.name), &dir.join(&w.name), Some(w.size))?;
    }
    crate::fs::write_file_synced(fs, &dir.join(&live.manifest_name), &live.manifest)?;
    if let Some((name, data)) = &live.options {
        crate::fs::write_file_synced(fs, &dir.join(name), data)?;
    }
    crate::fs::write_file_synced(fs, &dir.join("CURRENT"), format!("{}\n", live.manifest_name).as_bytes())?;
    fs.sync_dir(dir)
}

fn strip_trailing_slash(p: &Path) -> PathBuf {
    let s = p.as_os_str().to_string_lossy();
    let t = s.trim_end_matches('/');
    if t.is_empty() {
        p.to_path_buf()
    } else {
        PathBuf::from(t)
    }
}

/// Removes the files of `dir` and the directory itself.
pub(crate) fn clean_dir(fs: &dyn FileSystem, dir: &Path) -> Result<()> {
    for name in fs.children(dir)? {
        fs.remove_file(&dir.join(name))?;
    }
    fs.remove_dir(dir)
}

/// The file copies of checkpoints, backups and ingestion are the file system layer's.
pub(crate) use crate::fs::{copy_file, copy_file_with};
