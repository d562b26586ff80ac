//! The database's file system with `writable_file_max_buffer_size` applied: every writable
//! file the database creates through it (table, blob, WAL, MANIFEST, OPTIONS files and the
//! info LOG) buffers at most that many bytes before its appends go to the file, as RocksDB's
//! `WritableFileWriter` with the option. Everything else is the wrapped file system's.

use std::path::Path;
use std::sync::Arc;

use crate::error::Result;
use crate::fs::{FileLock, FileSystem, FileSystemRef, RandomAccessFile, SequentialFile, WritableFile};

pub(crate) struct BufferedWritesFs {
    inner: FileSystemRef,
    max_buffer_size: usize,
}

impl BufferedWritesFs {
    pub(crate) fn wrap(inner: FileSystemRef, max_buffer_size: u64) -> FileSystemRef {
        let max_buffer_size = usize::try_from(max_buffer_size).unwrap_or(usize::MAX);
        Arc::new(BufferedWritesFs { inner, max_buffer_size })
    }
}

impl FileSystem for BufferedWritesFs {
    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.inner.new_writable_file_with_buffer(path, self.max_buffer_size)
    }
    fn new_writable_file_with_buffer(
        &self,
        path: &Path,
        max_buffer_size: usize,
    ) -> Result<Box<dyn WritableFile>> {
        self.inner.new_writable_file_with_buffer(path, max_buffer_size)
    }
    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.inner.new_random_access_file(path)
    }
    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        self.inner.new_sequential_file(path)
    }
    fn file_exists(&self, path: &Path) -> bool {
        self.inner.file_exists(path)
    }
    fn children(&self, dir: &Path) -> Result<Vec<String>> {
        self.inner.children(dir)
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        self.inner.file_size(path)
    }
    fn remove_file(&self, path: &Path) -> Result<()> {
        self.inner.remove_file(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.inner.rename(from, to)
    }
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn remove_dir(&self, dir: &Path) -> Result<()> {
        self.inner.remove_dir(dir)
    }
    fn sync_dir(&self, dir: &Path) -> Result<()> {
        self.inner.sync_dir(dir)
    }
    fn lock_file(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        self.inner.lock_file(path)
    }
    fn link_file(&self, from: &Path, to: &Path) -> Result<()> {
        self.inner.link_file(from, to)
    }
    fn sync_file(&self, path: &Path) -> Result<()> {
        self.inner.sync_file(path)
    }
}
