//! The real file system: std::fs plus `pread`, `fdatasync` (or `fsync`, with RocksDB's
//! `use_fsync`), directory fsync and fcntl locks.
//!
//! Lock semantics follow RocksDB's PosixFileSystem: fcntl record locks exclude other
//! processes, and a process-wide set of locked paths excludes a second open in this
//! process (fcntl locks would not).

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use super::{FileLock, FileSystem, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::{Error, Result};

/// The buffer of a file made by `new_writable_file`; `new_writable_file_with_buffer` takes
/// its own maximum.
const WRITE_BUFFER: usize = 64 * 1024;

/// The real file system; file syncs are fdatasync calls. A unit struct, as raft-engine's
/// `DefaultFileSystem` (which the Raft log engine re-exports it as).
#[derive(Debug, Default, Clone, Copy)]
pub struct PosixFileSystem;

/// The real file system with file syncs made by fsync (data and all metadata), RocksDB's
/// `use_fsync = true`. Everything but `new_writable_file` is `PosixFileSystem`'s.
#[derive(Debug, Default, Clone, Copy)]
pub struct PosixFsyncFileSystem;

impl PosixFileSystem {
    pub fn new() -> PosixFileSystem {
        PosixFileSystem
    }

    fn open_writable(&self, path: &Path, use_fsync: bool, max_buf: usize) -> Result<Box<dyn WritableFile>> {
        self.open_writable_with(path, use_fsync, max_buf, true)
    }

    fn open_writable_with(
        &self,
        path: &Path,
        use_fsync: bool,
        max_buf: usize,
        close_on_exec: bool,
    ) -> Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| Error::io(ctx("open a file for appending", path), e))?;
        Self::writable_from(file, path, use_fsync, max_buf, close_on_exec)
    }

    /// RocksDB's `PosixFileSystem::NewWritableFile` with its `FileOptions`: through a mapping
    /// (`mmap_write::MmapWritableFile`, mmap wins over direct as in RocksDB), O_DIRECT through
    /// an aligned buffer (`direct_io::DirectWritableFile`), or a plain buffered file.
    fn open_writable_opts(
        &self,
        path: &Path,
        use_fsync: bool,
        o: super::WriteFileOptions,
        close_on_exec: bool,
    ) -> Result<Box<dyn WritableFile>> {
        if o.mmap {
            let f = super::mmap_write::MmapWritableFile::create(path, use_fsync)?;
            if !close_on_exec {
                inheritable(f.file(), path)?;
            }
            return Ok(Box::new(f));
        }
        if o.direct {
            let f = super::direct_io::DirectWritableFile::create(path, o.max_buffer_size, use_fsync)?;
            if !close_on_exec {
                inheritable(f.file(), path)?;
            }
            return Ok(Box::new(f));
        }
        self.open_writable_with(path, use_fsync, o.max_buffer_size, close_on_exec)
    }

    /// RocksDB's `PosixFileSystem::ReuseWritableFile`: `old` opened for writing (not
    /// truncated), renamed to `path`, written from its first byte.
    fn reuse_writable_with(
        &self,
        path: &Path,
        old: &Path,
        use_fsync: bool,
        max_buf: usize,
        close_on_exec: bool,
    ) -> Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .write(true)
            .open(old)
            .map_err(|e| Error::io(ctx("reopen file for write", old), e))?;
        fs::rename(old, path).map_err(|e| {
            Error::io(format!("While rename file to {}: {}", path.display(), old.display()), e)
        })?;
        Self::writable_from(file, path, use_fsync, max_buf, close_on_exec)
    }

    /// RocksDB's `PosixFileSystem::ReopenWritableFile`: `path` opened for writing (created
    /// if missing, not truncated), appends going to its end.
    fn reopen_writable_with(
        &self,
        path: &Path,
        use_fsync: bool,
        max_buf: usize,
        close_on_exec: bool,
    ) -> Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| Error::io(ctx("open a file to reopen for appending", path), e))?;
        let size = file.metadata().map_err(|e| Error::io(ctx("stat a reopened file", path), e))?.len();
        let mut w = Self::posix_writable_from(file, path, use_fsync, max_buf, close_on_exec)?;
        w.size = size;
        Ok(Box::new(w))
    }

    fn writable_from(
        file: File,
        path: &Path,
        use_fsync: bool,
        max_buf: usize,
        close_on_exec: bool,
    ) -> Result<Box<dyn WritableFile>> {
        Ok(Box::new(Self::posix_writable_from(file, path, use_fsync, max_buf, close_on_exec)?))
    }

    fn posix_writable_from(
        file: File,
        path: &Path,
        use_fsync: bool,
        max_buf: usize,
        close_on_exec: bool,
    ) -> Result<PosixWritableFile> {
        if !close_on_exec {
            inheritable(&file, path)?;
        }
        Ok(PosixWritableFile {
            file,
            path: path.to_path_buf(),
            // Grows up to `max_buf` as appends need, as RocksDB's buffer (64 KiB at first).
            buf: Vec::with_capacity(max_buf.min(WRITE_BUFFER)),
            max_buf,
            size: 0,
            failed: false,
            use_fsync,
            allocated_end: 0,
            preallocated: false,
        })
    }
}

/// The methods the posix file system's variants take from it unchanged: names, sizes,
/// directories, renames, links, locks (RocksDB's LockFile sets close-on-exec on the lock
/// whatever `is_fd_close_on_exec` says) and syncs by path.
macro_rules! same_as_posix {
    () => {
        fn file_exists(&self, path: &Path) -> bool {
            PosixFileSystem.file_exists(path)
        }
        fn children(&self, dir: &Path) -> Result<Vec<String>> {
            PosixFileSystem.children(dir)
        }
        fn file_size(&self, path: &Path) -> Result<u64> {
            PosixFileSystem.file_size(path)
        }
        fn remove_file(&self, path: &Path) -> Result<()> {
            PosixFileSystem.remove_file(path)
        }
        fn rename(&self, from: &Path, to: &Path) -> Result<()> {
            PosixFileSystem.rename(from, to)
        }
        fn create_dir_all(&self, dir: &Path) -> Result<()> {
            PosixFileSystem.create_dir_all(dir)
        }
        fn remove_dir(&self, dir: &Path) -> Result<()> {
            PosixFileSystem.remove_dir(dir)
        }
        fn sync_dir(&self, dir: &Path) -> Result<()> {
            PosixFileSystem.sync_dir(dir)
        }
        fn lock_file(&self, path: &Path) -> Result<Box<dyn FileLock>> {
            PosixFileSystem.lock_file(path)
        }
        fn link_file(&self, from: &Path, to: &Path) -> Result<()> {
            PosixFileSystem.link_file(from, to)
        }
        fn sync_file(&self, path: &Path) -> Result<()> {
            PosixFileSystem.sync_file(path)
        }
        fn write_at_synced(&self, path: &Path, offset: u64, data: &[u8]) -> Result<()> {
            PosixFileSystem.write_at_synced(path, offset, data)
        }
        fn modified_time(&self, path: &Path) -> Result<u64> {
            PosixFileSystem.modified_time(path)
        }
    };
}

impl FileSystem for PosixFsyncFileSystem {
    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        PosixFileSystem.open_writable(path, true, WRITE_BUFFER)
    }
    fn new_writable_file_with_buffer(
        &self,
        path: &Path,
        max_buffer_size: usize,
    ) -> Result<Box<dyn WritableFile>> {
        PosixFileSystem.open_writable(path, true, max_buffer_size)
    }
    fn reopen_writable_file(&self, path: &Path, max_buffer_size: usize) -> Result<Box<dyn WritableFile>> {
        PosixFileSystem.reopen_writable_with(path, true, max_buffer_size, true)
    }
    fn reuse_writable_file(
        &self,
        path: &Path,
        old: &Path,
        max_buffer_size: usize,
    ) -> Result<Box<dyn WritableFile>> {
        PosixFileSystem.reuse_writable_with(path, old, true, max_buffer_size, true)
    }
    fn new_writable_file_with(
        &self,
        path: &Path,
        o: super::WriteFileOptions,
    ) -> Result<Box<dyn WritableFile>> {
        PosixFileSystem.open_writable_opts(path, true, o, true)
    }
    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        PosixFileSystem.new_random_access_file(path)
    }
    fn new_random_access_file_with(
        &self,
        path: &Path,
        o: super::ReadFileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        PosixFileSystem.new_random_access_file_with(path, o)
    }
    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        PosixFileSystem.new_sequential_file(path)
    }
    same_as_posix!();
    fn without_close_on_exec(&self) -> Option<super::FileSystemRef> {
        Some(Arc::new(PosixInheritableFileSystem { use_fsync: true }))
    }
}

/// The real file system whose files' descriptors have no close-on-exec flag, as RocksDB's
/// PosixFileSystem opens them with `is_fd_close_on_exec = false` (std opens every file with
/// O_CLOEXEC; the flag is cleared right after the open). Made by
/// `FileSystem::without_close_on_exec` of [`PosixFileSystem`] and [`PosixFsyncFileSystem`];
/// everything but the opens is theirs.
#[derive(Debug, Default, Clone, Copy)]
pub struct PosixInheritableFileSystem {
    /// File syncs are fsync calls (`PosixFsyncFileSystem`), else fdatasync.
    pub use_fsync: bool,
}

/// Clears FD_CLOEXEC on `file`'s descriptor.
fn inheritable(file: &File, path: &Path) -> Result<()> {
    // SAFETY: F_GETFD/F_SETFD on a descriptor owned by `file`, open for the whole call; no
    // memory of ours is read or written.
    let rc = unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFD);
        if flags == -1 {
            -1
        } else {
            libc::fcntl(file.as_raw_fd(), libc::F_SETFD, flags & !libc::FD_CLOEXEC)
        }
    };
    if rc == -1 {
        return Err(Error::io(ctx("fcntl F_SETFD", path), std::io::Error::last_os_error()));
    }
    Ok(())
}

impl FileSystem for PosixInheritableFileSystem {
    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        PosixFileSystem.open_writable_with(path, self.use_fsync, WRITE_BUFFER, false)
    }
    fn new_writable_file_with_buffer(
        &self,
        path: &Path,
        max_buffer_size: usize,
    ) -> Result<Box<dyn WritableFile>> {
        PosixFileSystem.open_writable_with(path, self.use_fsync, max_buffer_size, false)
    }
    fn reopen_writable_file(&self, path: &Path, max_buffer_size: usize) -> Result<Box<dyn WritableFile>> {
        PosixFileSystem.reopen_writable_with(path, self.use_fsync, max_buffer_size, false)
    }
    fn reuse_writable_file(
        &self,
        path: &Path,
        old: &Path,
        max_buffer_size: usize,
    ) -> Result<Box<dyn WritableFile>> {
        PosixFileSystem.reuse_writable_with(path, old, self.use_fsync, max_buffer_size, false)
    }
    fn new_writable_file_with(
        &self,
        path: &Path,
        o: super::WriteFileOptions,
    ) -> Result<Box<dyn WritableFile>> {
        PosixFileSystem.open_writable_opts(path, self.use_fsync, o, false)
    }
    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        Ok(Arc::new(PosixRandomAccessFile::open(path, true, false)?))
    }
    fn new_random_access_file_with(
        &self,
        path: &Path,
        o: super::ReadFileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        if o.mmap {
            // The mapping outlives no descriptor: the file is closed once mapped.
            return Ok(Arc::new(super::direct_io::MmapFile::open(path, o.advise_random)?));
        }
        if o.direct {
            let f = super::direct_io::DirectReadFile::open(path)?;
            inheritable(f.file(), path)?;
            return Ok(Arc::new(f));
        }
        Ok(Arc::new(PosixRandomAccessFile::open(path, true, o.advise_random)?))
    }
    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        let file =
            File::open(path).map_err(|e| Error::io(ctx("open a file for sequential reading", path), e))?;
        inheritable(&file, path)?;
        Ok(Box::new(PosixSequentialFile { file, path: path.to_path_buf() }))
    }
    same_as_posix!();
    fn without_close_on_exec(&self) -> Option<super::FileSystemRef> {
        Some(Arc::new(*self))
    }
}

fn ctx(op: &str, path: &Path) -> String {
    format!("While {op} file: {}", path.display())
}

/// [`WritableFile::sync_handle`] of a posix file.
struct PosixSyncHandle {
    file: File,
    path: PathBuf,
    use_fsync: bool,
}

impl super::SyncHandle for PosixSyncHandle {
    fn sync(&self) -> Result<()> {
        super::db_mutex_check::assert_not_held(&self.path);
        if self.use_fsync {
            self.file.sync_all().map_err(|e| Error::io(ctx("fsync", &self.path), e))
        } else {
            self.file.sync_data().map_err(|e| Error::io(ctx("fdatasync", &self.path), e))
        }
    }
}

struct PosixWritableFile {
    file: File,
    path: PathBuf,
    buf: Vec<u8>,
    /// Appends are held until the buffer would pass this many bytes.
    max_buf: usize,
    size: u64,
    /// A write failed: dropping the file then discards the buffer rather than writing it
    /// late (the caller has given up on this file, e.g. a WAL after a full disk).
    failed: bool,
    use_fsync: bool,
    /// The end of the space reserved by `allocate` (0: none); what lies past the data is
    /// released when the file is dropped, as RocksDB's `PosixWritableFile::Close`.
    allocated_end: u64,
    /// A preallocation block was reached (RocksDB's `last_preallocated_block_ > 0`): the
    /// file is cut to its data when dropped.
    preallocated: bool,
}

impl PosixWritableFile {
    /// Writes the buffer out. On a failure part-way (a full disk), the bytes that did reach
    /// the file leave the buffer, so a later retry appends exactly the rest.
    fn write_buffered(&mut self) -> Result<()> {
        let mut done = 0;
        let mut result = Ok(());
        while done < self.buf.len() {
            match self.file.write(&self.buf[done..]) {
                Ok(0) => {
                    let e = std::io::Error::new(std::io::ErrorKind::WriteZero, "write returned 0 bytes");
                    result = Err(Error::io(ctx("appending to", &self.path), e));
                    break;
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    result = Err(Error::io(ctx("appending to", &self.path), e));
                    break;
                }
            }
        }
        self.buf.drain(..done);
        self.failed |= result.is_err();
        result
    }

    /// Hands the buffer to the OS, then `sync_file_range` of `len` bytes at `offset`, with
    /// `SYNC_FILE_RANGE_WAIT_BEFORE` when `wait_before`. A file system that cannot do it
    /// (ENOSYS, EOPNOTSUPP) gets nothing, as RocksDB's fallback when it finds the call
    /// unsupported; other errors are I/O errors.
    fn sync_file_range(&mut self, offset: u64, len: u64, wait_before: bool) -> Result<()> {
        self.write_buffered()?;
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let (Ok(off), Ok(n)) = (libc::off64_t::try_from(offset), libc::off64_t::try_from(len)) else {
                return Err(Error::invalid_argument(format!(
                    "range sync of {len} bytes at {offset}: out of range ({})",
                    self.path.display()
                )));
            };
            let flags = if wait_before {
                libc::SYNC_FILE_RANGE_WAIT_BEFORE | libc::SYNC_FILE_RANGE_WRITE
            } else {
                libc::SYNC_FILE_RANGE_WRITE
            };
            // SAFETY: the descriptor belongs to `self.file`, open for the whole call; the
            // call reads no memory of ours.
            let r = unsafe { libc::sync_file_range(self.file.as_raw_fd(), off, n, flags) };
            if r != 0 {
                let e = std::io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) => {}
                    _ => return Err(Error::io(ctx("sync_file_range of", &self.path), e)),
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (offset, len, wait_before);
        Ok(())
    }
}

impl WritableFile for PosixWritableFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        if self.buf.len() + data.len() > self.max_buf {
            self.write_buffered()?;
        }
        if data.len() >= self.max_buf && self.buf.is_empty() {
            // Large appends go through the buffer's error handling too: copying them is
            // cheap next to the write itself.
            self.buf.extend_from_slice(data);
            self.write_buffered()?;
        } else {
            self.buf.extend_from_slice(data);
        }
        self.size += data.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.write_buffered()
    }

    fn sync(&mut self) -> Result<()> {
        super::db_mutex_check::assert_not_held(&self.path);
        self.write_buffered()?;
        if self.use_fsync {
            self.file.sync_all().map_err(|e| Error::io(ctx("fsync", &self.path), e))
        } else {
            self.file.sync_data().map_err(|e| Error::io(ctx("fdatasync", &self.path), e))
        }
    }

    fn size(&self) -> u64 {
        self.size
    }

    /// The file's descriptor, duplicated: an fsync through it covers what was written
    /// through this file (the same open file description).
    fn sync_handle(&self) -> Option<Arc<dyn super::SyncHandle>> {
        let file = self.file.try_clone().ok()?;
        Some(Arc::new(PosixSyncHandle { file, path: self.path.clone(), use_fsync: self.use_fsync }))
    }

    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)`, as RocksDB's `PosixWritableFile::RangeSync`:
    /// starts write-back of the range without waiting. A file system that cannot do it
    /// (ENOSYS, EOPNOTSUPP) gets nothing, as RocksDB's fallback when it finds the call
    /// unsupported; other errors are I/O errors.
    fn range_sync(&mut self, offset: u64, len: u64) -> Result<()> {
        self.sync_file_range(offset, len, false)
    }

    /// `sync_file_range(0, end, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE)`, as
    /// RocksDB's `RangeSync` with `strict_bytes_per_sync`.
    fn range_sync_strict(&mut self, end: u64) -> Result<()> {
        self.sync_file_range(0, end, true)
    }

    /// `fallocate(FALLOC_FL_KEEP_SIZE)` with `reserve`, as RocksDB's
    /// `PosixWritableFile::Allocate` with `allow_fallocate` and `fallocate_with_keep_size`:
    /// blocks are reserved, the size the file reports stays what was written.
    fn allocate(&mut self, offset: u64, len: u64, reserve: bool) -> Result<()> {
        self.preallocated = true;
        if !reserve {
            return Ok(());
        }
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let (Ok(off), Ok(n)) = (libc::off64_t::try_from(offset), libc::off64_t::try_from(len)) else {
                return Err(Error::invalid_argument(format!(
                    "allocating {len} bytes at {offset}: out of range ({})",
                    self.path.display()
                )));
            };
            // SAFETY: the descriptor belongs to `self.file`, open for the whole call; the
            // call reads no memory of ours.
            let r = unsafe { libc::fallocate64(self.file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, off, n) };
            if r != 0 {
                return Err(Error::io(ctx("fallocate of", &self.path), std::io::Error::last_os_error()));
            }
            self.allocated_end = self.allocated_end.max(offset.saturating_add(len));
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (offset, len);
        Ok(())
    }
}

impl Drop for PosixWritableFile {
    fn drop(&mut self) {
        // Best effort: data not flushed before drop was never promised durable.
        if !self.failed {
            let _ = self.write_buffered();
        }
        // A file that had a preallocation block is cut to its data, as RocksDB's Close does
        // (ftruncate to the size written: a reused WAL loses its old tail; ext4 frees the
        // reserved blocks past the end so), then a hole is punched over what was reserved,
        // for the file systems where that leaves them allocated. Not after a failed write:
        // the size counted then is more than the file holds.
        if self.preallocated && !self.failed {
            let _ = self.file.set_len(self.size);
        }
        #[cfg(target_os = "linux")]
        if self.allocated_end > self.size && !self.failed {
            use std::os::fd::AsRawFd;
            if let (Ok(off), Ok(n)) =
                (libc::off64_t::try_from(self.size), libc::off64_t::try_from(self.allocated_end - self.size))
            {
                // SAFETY: the descriptor belongs to `self.file`, still open; no memory of
                // ours is read or written. A failure only leaves the space reserved.
                unsafe {
                    libc::fallocate64(
                        self.file.as_raw_fd(),
                        libc::FALLOC_FL_KEEP_SIZE | libc::FALLOC_FL_PUNCH_HOLE,
                        off,
                        n,
                    )
                };
            }
        }
    }
}

struct PosixRandomAccessFile {
    file: File,
    path: PathBuf,
}

impl PosixRandomAccessFile {
    /// Opens `path` for reads at offsets; `inheritable`: the descriptor survives `exec`;
    /// `advise_random`: the file is advised `POSIX_FADV_RANDOM` (no kernel readahead, a read
    /// brings in only its own pages), as RocksDB's table cache and blob file reader hint each
    /// file they open under `advise_random_on_open` (`PosixRandomAccessFile::Hint(kRandom)`).
    /// As RocksDB's `Fadvise`, a refused hint is not an error: reads are the same without it.
    fn open(path: &Path, inheritable_fd: bool, advise_random: bool) -> Result<PosixRandomAccessFile> {
        let file = File::open(path).map_err(|e| Error::io(ctx("open a file for random read", path), e))?;
        if inheritable_fd {
            inheritable(&file, path)?;
        }
        if advise_random {
            // SAFETY: a valid open descriptor owned by `file`; fadvise reads no memory of ours.
            let _ = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM) };
        }
        Ok(PosixRandomAccessFile { file, path: path.to_path_buf() })
    }
}

impl RandomAccessFile for PosixRandomAccessFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(ctx("reading", &self.path), e)),
            }
        }
        Ok(done)
    }

    fn size(&self) -> Result<u64> {
        Ok(self.file.metadata().map_err(|e| Error::io(ctx("stat", &self.path), e))?.len())
    }

    /// `posix_fadvise(WILLNEED)`: the kernel queues the reads and returns; the pages land in
    /// the page cache, where the following `read_at`s find them.
    fn prefetch(&self, offset: u64, len: u64) -> Result<()> {
        let (Ok(off), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
            return Ok(()); // beyond what the call can name: nothing to hint
        };
        // SAFETY: a valid open descriptor owned by `self.file`; fadvise reads no memory of ours.
        let rc = unsafe { libc::posix_fadvise(self.file.as_raw_fd(), off, len, libc::POSIX_FADV_WILLNEED) };
        if rc != 0 {
            return Err(Error::io(
                ctx("fadvise(WILLNEED)", &self.path),
                std::io::Error::from_raw_os_error(rc),
            ));
        }
        Ok(())
    }

    fn supports_prefetch(&self) -> bool {
        true
    }
}

struct PosixSequentialFile {
    file: File,
    path: PathBuf,
}

impl SequentialFile for PosixSequentialFile {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        loop {
            match self.file.read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(ctx("reading", &self.path), e)),
            }
        }
    }
}

/// Paths locked by this process (fcntl locks do not exclude the owning process).
fn locked_paths() -> &'static Mutex<HashSet<PathBuf>> {
    static LOCKED: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    LOCKED.get_or_init(|| Mutex::new(HashSet::new()))
}

struct PosixFileLock {
    _file: File, // closing the descriptor releases the fcntl lock
    path: PathBuf,
}

impl FileLock for PosixFileLock {}

impl Drop for PosixFileLock {
    fn drop(&mut self) {
        if let Ok(mut set) = locked_paths().lock() {
            set.remove(&self.path);
        }
    }
}

fn fcntl_lock(file: &File) -> std::io::Result<()> {
    // SAFETY: `flock` is a plain C struct that zeroed memory initialises validly, and the
    // descriptor is owned by `file`, alive for the duration of the call.
    let rc = unsafe {
        let mut fl: libc::flock = std::mem::zeroed();
        fl.l_type = libc::F_WRLCK as libc::c_short;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &fl)
    };
    if rc == -1 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

impl FileSystem for PosixFileSystem {
    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.open_writable(path, false, WRITE_BUFFER)
    }

    fn new_writable_file_with_buffer(
        &self,
        path: &Path,
        max_buffer_size: usize,
    ) -> Result<Box<dyn WritableFile>> {
        self.open_writable(path, false, max_buffer_size)
    }

    fn reopen_writable_file(&self, path: &Path, max_buffer_size: usize) -> Result<Box<dyn WritableFile>> {
        PosixFileSystem.reopen_writable_with(path, false, max_buffer_size, true)
    }
    fn reuse_writable_file(
        &self,
        path: &Path,
        old: &Path,
        max_buffer_size: usize,
    ) -> Result<Box<dyn WritableFile>> {
        self.reuse_writable_with(path, old, false, max_buffer_size, true)
    }

    fn new_writable_file_with(
        &self,
        path: &Path,
        o: super::WriteFileOptions,
    ) -> Result<Box<dyn WritableFile>> {
        self.open_writable_opts(path, false, o, true)
    }

    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        Ok(Arc::new(PosixRandomAccessFile::open(path, false, false)?))
    }

    /// As RocksDB's `PosixFileSystem::NewRandomAccessFile`: mmap reads map the whole file
    /// (`direct_io::MmapFile`); otherwise direct reads open it with O_DIRECT, which a file
    /// system without direct I/O (tmpfs) refuses at open with EINVAL, an IO error "While
    /// open a file for random read".
    fn new_random_access_file_with(
        &self,
        path: &Path,
        o: super::ReadFileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        if o.mmap {
            return Ok(Arc::new(super::direct_io::MmapFile::open(path, o.advise_random)?));
        }
        if o.direct {
            return Ok(Arc::new(super::direct_io::DirectReadFile::open(path)?));
        }
        Ok(Arc::new(PosixRandomAccessFile::open(path, false, o.advise_random)?))
    }

    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        let file =
            File::open(path).map_err(|e| Error::io(ctx("open a file for sequential reading", path), e))?;
        Ok(Box::new(PosixSequentialFile { file, path: path.to_path_buf() }))
    }

    fn file_exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn children(&self, dir: &Path) -> Result<Vec<String>> {
        let rd = fs::read_dir(dir).map_err(|e| Error::io(ctx("opendir", dir), e))?;
        let mut out = Vec::new();
        for entry in rd {
            let entry = entry.map_err(|e| Error::io(ctx("readdir", dir), e))?;
            out.push(entry.file_name().to_string_lossy().into_owned());
        }
        Ok(out)
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        Ok(fs::metadata(path).map_err(|e| Error::io(ctx("stat", path), e))?.len())
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        fs::remove_file(path).map_err(|e| Error::io(ctx("unlink", path), e))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        fs::rename(from, to).map_err(|e| {
            Error::io(format!("While renaming a file to {}: {}", to.display(), from.display()), e)
        })
    }

    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        fs::create_dir_all(dir).map_err(|e| Error::io(ctx("mkdir", dir), e))
    }

    fn without_close_on_exec(&self) -> Option<super::FileSystemRef> {
        Some(Arc::new(PosixInheritableFileSystem { use_fsync: false }))
    }

    fn modified_time(&self, path: &Path) -> Result<u64> {
        let m = fs::metadata(path)
            .and_then(|m| m.modified())
            .map_err(|e| Error::io(ctx("get the modification time of", path), e))?;
        // A time before the epoch (a clock set back) reads as 0.
        Ok(m.duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0))
    }

    fn write_at_synced(&self, path: &Path, offset: u64, data: &[u8]) -> Result<()> {
        let f = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| Error::io(ctx("open for random writes", path), e))?;
        f.write_all_at(data, offset)
            .and_then(|()| f.sync_all())
            .map_err(|e| Error::io(ctx("write in place", path), e))
    }

    fn sync_file(&self, path: &Path) -> Result<()> {
        File::open(path)
            .and_then(|f| f.sync_all())
            .map_err(|e| Error::io(ctx("sync an existing file", path), e))
    }

    fn link_file(&self, from: &Path, to: &Path) -> Result<()> {
        fs::hard_link(from, to).map_err(|e| {
            // EXDEV (another file system), EPERM / ENOTSUP (no links there): the caller copies.
            if matches!(e.raw_os_error(), Some(18) | Some(1) | Some(95)) {
                Error::not_supported(format!("hard link {} -> {}: {e}", to.display(), from.display()))
            } else {
                Error::io(format!("While linking {} to {}", to.display(), from.display()), e)
            }
        })
    }

    fn remove_dir(&self, dir: &Path) -> Result<()> {
        fs::remove_dir(dir).map_err(|e| Error::io(ctx("rmdir", dir), e))
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        super::db_mutex_check::assert_not_held(dir);
        let d = File::open(dir).map_err(|e| Error::io(ctx("open directory", dir), e))?;
        d.sync_all().map_err(|e| Error::io(ctx("fsync directory", dir), e))
    }

    fn lock_file(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        let key = fs::canonicalize(path.parent().unwrap_or(Path::new(".")))
            .map(|p| p.join(path.file_name().unwrap_or_default()))
            .unwrap_or_else(|_| path.to_path_buf());
        {
            let mut set = crate::poison::lock(locked_paths(), "file lock table")?;
            if !set.insert(key.clone()) {
                return Err(Error::io_msg(format!(
                    "lock hold by current process, acquire time {} acquiring thread 0: {}: No locks available",
                    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
                    path.display()
                )));
            }
        }
        let release = |key: &PathBuf| {
            if let Ok(mut set) = locked_paths().lock() {
                set.remove(key);
            }
        };
        let file = match OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path) {
            Ok(f) => f,
            Err(e) => {
                release(&key);
                return Err(Error::io(ctx("open lock", path), e));
            }
        };
        if let Err(e) = fcntl_lock(&file) {
            release(&key);
            return Err(Error::io(format!("While lock file: {}", path.display()), e));
        }
        Ok(Box::new(PosixFileLock { _file: file, path: key }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages of `path` in the page cache (`mincore` over a mapping of the file).
    fn resident_pages(path: &Path) -> usize {
        let file = File::open(path).unwrap();
        let len = file.metadata().unwrap().len() as usize;
        let pages = len.div_ceil(4096);
        // SAFETY: a read-only shared mapping of `len` bytes of an open file; unmapped below.
        let addr = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0)
        };
        assert_ne!(addr, libc::MAP_FAILED);
        let mut vec = vec![0u8; pages];
        // SAFETY: `addr` is the mapping of `len` bytes just made; `vec` has a byte per page.
        let rc = unsafe { libc::mincore(addr, len, vec.as_mut_ptr()) };
        // SAFETY: the mapping made above, unmapped once.
        unsafe { libc::munmap(addr, len) };
        assert_eq!(rc, 0);
        vec.iter().filter(|b| *b & 1 == 1).count()
    }

    /// `advise_random` turns the kernel's readahead off (`POSIX_FADV_RANDOM`, as RocksDB's
    /// `Hint(kRandom)` under `advise_random_on_open`): three reads of the first pages of a
    /// file not in the page cache bring in those three pages with it, and more without it.
    #[test]
    fn advise_random_turns_readahead_off() {
        let dir = tempfile::tempdir().unwrap();
        for (fs, name) in [
            (&PosixFileSystem as &dyn FileSystem, "plain"),
            (&PosixInheritableFileSystem { use_fsync: false } as &dyn FileSystem, "inheritable"),
        ] {
            for advise in [false, true] {
                let path = dir.path().join(format!("{name}-{advise}"));
                std::fs::write(&path, vec![7u8; 256 * 4096]).unwrap();
                let f = File::open(&path).unwrap();
                f.sync_all().unwrap();
                // SAFETY: a valid descriptor owned by `f`; fadvise reads no memory of ours.
                let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
                assert_eq!(rc, 0);
                assert_eq!(resident_pages(&path), 0, "{name}: the page cache let go of the file (not tmpfs)");
                let o = super::super::ReadFileOptions { advise_random: advise, ..Default::default() };
                let r = fs.new_random_access_file_with(&path, o).unwrap();
                let mut buf = [0u8; 4096];
                for page in 0..3u64 {
                    assert_eq!(r.read_at(page * 4096, &mut buf).unwrap(), 4096);
                }
                let resident = resident_pages(&path);
                if advise {
                    assert_eq!(resident, 3, "{name}: advised random, only the pages read");
                } else {
                    assert!(resident > 3, "{name}: the kernel reads ahead ({resident} pages)");
                }
            }
        }
    }

    /// `new_writable_file_with_buffer`'s maximum decides when appends reach the file: with
    /// a 4 KiB maximum, 10,000 bytes of small appends are on disk before any flush; with
    /// 1 MiB they all wait in the buffer; with 0 each append goes to the file at once.
    #[test]
    fn buffer_maximum_decides_when_appends_reach_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let fs = PosixFileSystem;
        let on_disk = |name: &str| std::fs::metadata(dir.path().join(name)).unwrap().len();
        for (name, max) in [("small", 4096usize), ("large", 1 << 20), ("none", 0)] {
            let mut f = fs.new_writable_file_with_buffer(&dir.path().join(name), max).unwrap();
            for _ in 0..100 {
                f.append(&[7u8; 100]).unwrap();
            }
            assert_eq!(f.size(), 10_000);
            match max {
                0 => assert_eq!(on_disk(name), 10_000, "{name}"),
                4096 => {
                    assert!((10_000 - 4096..10_000).contains(&on_disk(name)), "{name}: {}", on_disk(name))
                }
                _ => assert_eq!(on_disk(name), 0, "{name}"),
            }
            // One append larger than the maximum goes to the file before any flush.
            f.append(&vec![8u8; 5000]).unwrap();
            if max == 4096 {
                assert_eq!(on_disk(name), 15_000, "{name}");
            } else if max > 5000 {
                assert_eq!(on_disk(name), 0, "{name}");
            }
            f.flush().unwrap();
            assert_eq!(on_disk(name), 15_000, "{name}");
        }
    }

    /// `write_at_synced` overwrites bytes in place (same length, the rest kept), through
    /// every POSIX file system; a missing file is an error, not created.
    #[test]
    fn write_at_overwrites_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let systems: [&dyn FileSystem; 3] =
            [&PosixFileSystem, &PosixFsyncFileSystem, &PosixInheritableFileSystem { use_fsync: false }];
        for fs in systems {
            std::fs::write(&p, b"0123456789").unwrap();
            fs.write_at_synced(&p, 3, b"abc").unwrap();
            assert_eq!(std::fs::read(&p).unwrap(), b"012abc6789");
        }
        assert!(PosixFileSystem.write_at_synced(&dir.path().join("missing"), 0, b"x").is_err());
        assert!(!dir.path().join("missing").exists());
    }

    /// `reuse_writable_file` renames the old file (same inode) and overwrites it from its
    /// first byte, leaving its old bytes past the write point, as RocksDB's
    /// `ReuseWritableFile`; the fsync variant does the same.
    #[test]
    fn reuse_overwrites_the_renamed_file_in_place() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let fses: [(&str, Box<dyn FileSystem>); 3] = [
            ("plain", Box::new(PosixFileSystem)),
            ("fsync", Box::new(PosixFsyncFileSystem)),
            ("inheritable", Box::new(PosixInheritableFileSystem { use_fsync: false })),
        ];
        for (name, fs) in fses {
            let old = dir.path().join(format!("{name}-old"));
            let new = dir.path().join(format!("{name}-new"));
            std::fs::write(&old, [9u8; 10_000]).unwrap();
            let ino = std::fs::metadata(&old).unwrap().ino();
            let mut f = fs.reuse_writable_file(&new, &old, 4096).unwrap();
            assert!(!old.exists(), "{name}");
            assert_eq!(f.size(), 0, "{name}");
            f.append(b"abc").unwrap();
            f.sync().unwrap();
            assert_eq!(f.size(), 3, "{name}");
            let m = std::fs::metadata(&new).unwrap();
            assert_eq!(m.ino(), ino, "{name}");
            let bytes = std::fs::read(&new).unwrap();
            assert_eq!(bytes.len(), 10_000, "{name}");
            assert_eq!(&bytes[..3], b"abc", "{name}");
            assert!(bytes[3..].iter().all(|&b| b == 9), "{name}");
        }
        let e = PosixFileSystem
            .reuse_writable_file(&dir.path().join("x"), &dir.path().join("missing"), 0)
            .err()
            .unwrap();
        assert!(e.to_string().contains("reopen file for write"), "{e}");
    }

    /// Write-back of a written range is asked for without error (sync_file_range on Linux).
    #[test]
    fn range_sync_of_written_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let fs = PosixFileSystem;
        let mut f = fs.new_writable_file(&dir.path().join("f")).unwrap();
        f.append(&vec![1u8; 3 << 20]).unwrap();
        f.range_sync(0, 2 << 20).unwrap();
        f.append(b"tail").unwrap();
        // The buffered tail reaches the file first.
        f.range_sync(0, (3 << 20) + 4).unwrap();
        // The strict form (RocksDB's strict_bytes_per_sync): from the start, waiting first.
        f.range_sync_strict(3 << 20).unwrap();
        assert_eq!(std::fs::metadata(dir.path().join("f")).unwrap().len(), (3 << 20) + 4);
    }

    /// `allocate` reserves blocks past the data without changing the size; dropping the file
    /// releases them again (RocksDB's Close punches a hole there).
    #[test]
    fn allocate_reserves_then_drop_releases() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut f = PosixFileSystem.new_writable_file(&path).unwrap();
        f.append(b"abc").unwrap();
        f.flush().unwrap();
        match f.allocate(0, 4 << 20, true) {
            Ok(()) => {}
            // A file system without fallocate (some overlay or network ones): nothing to see.
            Err(e) if e.to_string().contains("Operation not supported") => return,
            Err(e) => panic!("{e}"),
        }
        let m = std::fs::metadata(&path).unwrap();
        assert_eq!(m.len(), 3, "the size stays what was written");
        assert!(m.blocks() * 512 >= 4 << 20, "4 MiB reserved: {} blocks", m.blocks());
        drop(f);
        let m = std::fs::metadata(&path).unwrap();
        assert_eq!(m.len(), 3);
        assert!(m.blocks() * 512 < 1 << 20, "released at drop: {} blocks", m.blocks());
        assert_eq!(std::fs::read(&path).unwrap(), b"abc");
    }

    /// /dev/full fails every write with ENOSPC: appends and flushes report a no-space IO
    /// error (small appends at flush, large ones at once), and dropping the file is quiet.
    #[test]
    fn full_device_gives_no_space_errors() {
        let p = Path::new("/dev/full");
        if !p.exists() {
            eprintln!("skipped: no /dev/full");
            return;
        }
        let fs = PosixFileSystem::new();
        let mut w = fs.new_writable_file(p).unwrap();
        w.append(b"small").unwrap();
        let e = w.flush().unwrap_err();
        assert!(e.is_no_space(), "{e}");
        assert!(e.to_string().contains("/dev/full"), "{e}");
        let e = w.append(&vec![0u8; WRITE_BUFFER * 2]).unwrap_err();
        assert!(e.is_no_space(), "{e}");
        assert_eq!(w.size(), 5);
        drop(w);
    }

    #[test]
    fn write_sync_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let fs = PosixFileSystem::new();
        let p = dir.path().join("f");
        let mut w = fs.new_writable_file(&p).unwrap();
        w.append(b"hello ").unwrap();
        w.append(&vec![b'x'; WRITE_BUFFER + 10]).unwrap();
        w.sync().unwrap();
        assert_eq!(w.size(), 6 + WRITE_BUFFER as u64 + 10);
        let r = fs.new_random_access_file(&p).unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(r.read_at(0, &mut buf).unwrap(), 8);
        assert_eq!(&buf, b"hello xx");
        let mut tail = [0u8; 100];
        assert_eq!(r.read_at(w.size() - 4, &mut tail).unwrap(), 4);
        assert_eq!(super::super::read_file(&fs, &p).unwrap().len() as u64, w.size());
    }

    #[test]
    fn second_lock_in_process_fails_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let fs = PosixFileSystem::new();
        let p = dir.path().join("LOCK");
        let l = fs.lock_file(&p).unwrap();
        let e = fs.lock_file(&p).err().expect("second lock must fail");
        assert_eq!(e.kind(), crate::ErrorKind::IOError);
        assert!(e.to_string().contains("lock hold by current process"), "{e}");
        drop(l);
        fs.lock_file(&p).unwrap();
    }
}
