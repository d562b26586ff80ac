//! The database's file system with `writable_file_max_buffer_size` applied: every writable
//! file the database creates through it (table, blob, WAL, MANIFEST, OPTIONS files and the
//! info LOG) buffers at most that many bytes before its appends go to the file, as RocksDB's
//! `WritableFileWriter` with the option. Everything else is the wrapped file system's.
//!
//! With `bytes_per_sync` (RocksDB's DBOptions field, default 0: off), the table (`.sst`), blob
//! (`.blob`) and MANIFEST files it creates ask the file system to start writing back their
//! data as they grow, as RocksDB's `WritableFileWriter::Flush` does for every file opened
//! with `FileOptions::bytes_per_sync`: once the bytes more than 1 MiB behind the end
//! (rounded down to 4 KiB) are `bytes_per_sync` past where the last request ended, one
//! `range_sync` (Linux: `sync_file_range(SYNC_FILE_RANGE_WRITE)`) covers them. WALs have
//! their own `wal_bytes_per_sync` (`wal/writer.rs`). No durability promise: only `sync` is.
//!
//! With `use_direct_reads` or `allow_mmap_reads`, table and blob files are opened for reads
//! with O_DIRECT or through a mapping (`shale_base::fs::ReadFileOptions`). With
//! `use_direct_io_for_flush_and_compaction` or `allow_mmap_writes`, the table and blob files
//! it creates (the outputs of flushes and compactions, and of the database's other table
//! writers: ingestion copies, repair, checkpoint and backup copies of tables) are written with
//! O_DIRECT through an aligned buffer or through a mapping (`shale_base::fs::WriteFileOptions`);
//! direct files ask for no write-back, as RocksDB's writer does not for them. WALs and the
//! MANIFEST are never written either way (RocksDB's posix `OptimizeForLogWrite` and
//! `OptimizeForManifestWrite` turn both off).
//!
//! Each MANIFEST it creates has preallocation blocks of `manifest_preallocation_size`
//! (`shale_base::fs::Preallocating`), as RocksDB's `VersionSet` sets on its descriptor files:
//! space reserved as it grows with `allow_fallocate`, the file cut to its data at close. (WALs and compaction
//! outputs get theirs where they are made: their block sizes depend on the write buffer and
//! on the compaction's inputs.)
//!
//! `writable_file_max_buffer_size`, `bytes_per_sync`, `strict_bytes_per_sync` and
//! `manifest_preallocation_size` are read from [`LiveFileWrites`] each time a file is created,
//! so a `set_db_options` change reaches every file created after it (RocksDB's `SetDBOptions`
//! rebuilds `file_options_for_compaction_`, which new table and blob files take, and
//! `VersionSet::UpdatedMutableDbOptions`, which the next MANIFEST takes); files already open
//! keep the values they were created with, as RocksDB's `WritableFileWriter`s do.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::Result;
use crate::fs::{
    FileLock, FileSystem, FileSystemRef, RandomAccessFile, ReadFileOptions, SequentialFile, WritableFile,
    WriteFileOptions,
};

/// The file options a `set_db_options` call may change, read where each file is created
/// (relaxed atomics: each an independent setting). Shared by the database's file system
/// ([`BufferedWritesFs`]) and the WAL switch (`write.rs`), which reads the WAL's two.
pub struct LiveFileWrites {
    /// `writable_file_max_buffer_size`.
    max_buffer_size: AtomicU64,
    /// `bytes_per_sync` (sanitized).
    bytes_per_sync: AtomicU64,
    /// `wal_bytes_per_sync`.
    wal_bytes_per_sync: AtomicU64,
    /// `strict_bytes_per_sync`: each write-back waits for the one before and spans the file
    /// from its start (`WritableFile::range_sync_strict`).
    strict_bytes_per_sync: AtomicBool,
    /// `manifest_preallocation_size`.
    manifest_preallocation_size: AtomicU64,
    /// `allow_fallocate` (fixed at open).
    allow_fallocate: bool,
}

impl LiveFileWrites {
    pub fn new(c: &crate::config::DbConfig) -> Arc<LiveFileWrites> {
        Arc::new(LiveFileWrites {
            max_buffer_size: AtomicU64::new(c.writable_file_max_buffer_size),
            bytes_per_sync: AtomicU64::new(c.bytes_per_sync),
            wal_bytes_per_sync: AtomicU64::new(c.wal_bytes_per_sync),
            strict_bytes_per_sync: AtomicBool::new(c.strict_bytes_per_sync),
            manifest_preallocation_size: AtomicU64::new(c.manifest_preallocation_size),
            allow_fallocate: c.allow_fallocate,
        })
    }
    pub fn max_buffer_size(&self) -> usize {
        usize::try_from(self.max_buffer_size.load(Ordering::Relaxed)).unwrap_or(usize::MAX)
    }
    pub fn bytes_per_sync(&self) -> u64 {
        self.bytes_per_sync.load(Ordering::Relaxed)
    }
    pub fn wal_bytes_per_sync(&self) -> u64 {
        self.wal_bytes_per_sync.load(Ordering::Relaxed)
    }
    pub fn strict_bytes_per_sync(&self) -> bool {
        self.strict_bytes_per_sync.load(Ordering::Relaxed)
    }
    /// The next MANIFEST's preallocation.
    pub fn manifest_preallocation(&self) -> crate::fs::Preallocation {
        crate::fs::Preallocation {
            block_size: self.manifest_preallocation_size.load(Ordering::Relaxed),
            fallocate: self.allow_fallocate,
        }
    }
    pub fn set_max_buffer_size(&self, v: u64) {
        self.max_buffer_size.store(v, Ordering::Relaxed);
    }
    pub fn set_bytes_per_sync(&self, v: u64) {
        self.bytes_per_sync.store(v, Ordering::Relaxed);
    }
    /// Returns whether the value changed.
    pub fn set_wal_bytes_per_sync(&self, v: u64) -> bool {
        self.wal_bytes_per_sync.swap(v, Ordering::Relaxed) != v
    }
    pub fn set_strict_bytes_per_sync(&self, v: bool) {
        self.strict_bytes_per_sync.store(v, Ordering::Relaxed);
    }
    pub fn set_manifest_preallocation_size(&self, v: u64) {
        self.manifest_preallocation_size.store(v, Ordering::Relaxed);
    }
}

pub struct BufferedWritesFs {
    inner: FileSystemRef,
    /// `writable_file_max_buffer_size`, `bytes_per_sync`, `strict_bytes_per_sync` and
    /// `manifest_preallocation_size` in force.
    live: Arc<LiveFileWrites>,
    /// How table and blob files are opened for reads (`use_direct_reads`, `allow_mmap_reads`).
    table_reads: ReadFileOptions,
    /// How table and blob files are opened for writes (`use_direct_io_for_flush_and_compaction`,
    /// `allow_mmap_writes`; `max_buffer_size` unused here).
    table_writes: WriteFileOptions,
}

impl BufferedWritesFs {
    pub fn wrap(
        inner: FileSystemRef,
        live: Arc<LiveFileWrites>,
        table_reads: ReadFileOptions,
        table_writes: WriteFileOptions,
    ) -> FileSystemRef {
        Arc::new(BufferedWritesFs { inner, live, table_reads, table_writes })
    }

    /// The file wrapped for `bytes_per_sync` when it is a table, blob or MANIFEST file
    /// written through the page cache (RocksDB's writer asks no range sync of direct I/O).
    fn with_write_back(&self, path: &Path, file: Box<dyn WritableFile>) -> Box<dyn WritableFile> {
        let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        let direct = self.table_writes.direct && !self.table_writes.mmap;
        let wanted = name.starts_with("MANIFEST-") || (is_table_or_blob(&name) && !direct);
        let bytes_per_sync = self.live.bytes_per_sync();
        if bytes_per_sync == 0 || !wanted {
            return file;
        }
        Box::new(WriteBackFile {
            inner: file,
            bytes_per_sync,
            strict: self.live.strict_bytes_per_sync(),
            range_synced: 0,
        })
    }
}

/// RocksDB's `WritableFileWriter` leaves the last MiB out of a range sync (pages likely
/// written again soon) and aligns the end of the range down to 4 KiB.
const NOT_SYNCED_TAIL: u64 = 1 << 20;
const RANGE_SYNC_ALIGN: u64 = 4 << 10;

/// A writable file that asks for write-back every `bytes_per_sync` bytes.
struct WriteBackFile {
    inner: Box<dyn WritableFile>,
    bytes_per_sync: u64,
    /// `strict_bytes_per_sync`.
    strict: bool,
    /// The end of the range last asked for.
    range_synced: u64,
}

impl WriteBackFile {
    fn maybe_range_sync(&mut self) -> Result<()> {
        let size = self.inner.size();
        if size <= NOT_SYNCED_TAIL {
            return Ok(());
        }
        let mut to = size - NOT_SYNCED_TAIL;
        to -= to % RANGE_SYNC_ALIGN;
        if to > self.range_synced && to - self.range_synced >= self.bytes_per_sync {
            let from = self.range_synced;
            self.range_synced = to;
            if self.strict {
                self.inner.range_sync_strict(to)?;
            } else {
                self.inner.range_sync(from, to - from)?;
            }
        }
        Ok(())
    }
}

impl WritableFile for WriteBackFile {
    shale_base::forward_writable!(inner: sync, size, range_sync, range_sync_strict, allocate, sync_handle);
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.inner.append(data)?;
        self.maybe_range_sync()
    }
    fn flush(&mut self) -> Result<()> {
        self.inner.flush()?;
        self.maybe_range_sync()
    }
}

fn is_table_or_blob(name: &str) -> bool {
    name.ends_with(".sst") || name.ends_with(".blob")
}

impl BufferedWritesFs {
    /// A new file of `max_buffer_size` bytes of buffer: table and blob files as
    /// `table_writes` says.
    fn create(&self, path: &Path, max_buffer_size: usize) -> Result<Box<dyn WritableFile>> {
        let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        let f = if self.table_writes != WriteFileOptions::default() && is_table_or_blob(&name) {
            self.inner
                .new_writable_file_with(path, WriteFileOptions { max_buffer_size, ..self.table_writes })?
        } else {
            self.inner.new_writable_file_with_buffer(path, max_buffer_size)?
        };
        let f = if name.starts_with("MANIFEST-") {
            crate::fs::Preallocating::wrap(f, self.live.manifest_preallocation())
        } else {
            f
        };
        Ok(self.with_write_back(path, f))
    }
}

impl FileSystem for BufferedWritesFs {
    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.create(path, self.live.max_buffer_size())
    }
    fn new_writable_file_with_buffer(
        &self,
        path: &Path,
        max_buffer_size: usize,
    ) -> Result<Box<dyn WritableFile>> {
        self.create(path, max_buffer_size)
    }
    fn new_writable_file_with(&self, path: &Path, o: WriteFileOptions) -> Result<Box<dyn WritableFile>> {
        self.inner.new_writable_file_with(path, o)
    }
    fn reuse_writable_file(
        &self,
        path: &Path,
        old: &Path,
        max_buffer_size: usize,
    ) -> Result<Box<dyn WritableFile>> {
        let f = self.inner.reuse_writable_file(path, old, max_buffer_size)?;
        Ok(self.with_write_back(path, f))
    }
    /// The MANIFEST `reuse_manifest_on_open` appends to, with this file system's buffer,
    /// preallocation and write-back as a MANIFEST it creates.
    fn reopen_writable_file(&self, path: &Path, _max_buffer_size: usize) -> Result<Box<dyn WritableFile>> {
        let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        let f = self.inner.reopen_writable_file(path, self.live.max_buffer_size())?;
        let f = if name.starts_with("MANIFEST-") {
            crate::fs::Preallocating::wrap(f, self.live.manifest_preallocation())
        } else {
            f
        };
        Ok(self.with_write_back(path, f))
    }
    /// Table and blob files as `use_direct_reads` / `allow_mmap_reads` say (RocksDB's
    /// `FileOptions` of table readers and blob readers); other files read plainly.
    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        if self.table_reads != ReadFileOptions::default() && is_table_or_blob(&name) {
            return self.inner.new_random_access_file_with(path, self.table_reads);
        }
        self.inner.new_random_access_file(path)
    }
    fn new_random_access_file_with(
        &self,
        path: &Path,
        o: ReadFileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        self.inner.new_random_access_file_with(path, o)
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
    fn write_at_synced(&self, path: &Path, offset: u64, data: &[u8]) -> Result<()> {
        self.inner.write_at_synced(path, offset, data)
    }
    fn modified_time(&self, path: &Path) -> Result<u64> {
        self.inner.modified_time(path)
    }
}
