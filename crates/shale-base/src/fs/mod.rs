//! The file-system layer. Every file and directory operation of the engine goes through a
//! [`FileSystem`], so tests can swap in an in-memory or fault-injecting one.
//!
//! Durability contract (what callers rely on, as RocksDB's `FileSystem`):
//! - data appended to a [`WritableFile`] is durable only after `sync` returns Ok;
//! - a created, renamed or removed name is durable only after `sync_dir` of its directory.

mod direct_io;
mod fault;
mod mem;
mod mmap_write;
mod posix;
mod preallocate;
mod readahead;

/// Debug builds: whether this thread holds a database's DB mutex, so that the file system
/// layer's syncs can check that no file is fsynced under it (nothing under the DB mutex may
/// wait on file I/O). The engine counts its DB mutex acquisitions and releases here; in
/// release builds all of it is empty.
pub mod db_mutex_check {
    #[cfg(debug_assertions)]
    thread_local! {
        static HELD: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    }

    /// This thread took the DB mutex.
    #[inline]
    pub fn enter() {
        #[cfg(debug_assertions)]
        HELD.with(|h| h.set(h.get() + 1));
    }

    /// This thread released the DB mutex.
    #[inline]
    pub fn exit() {
        #[cfg(debug_assertions)]
        HELD.with(|h| h.set(h.get().saturating_sub(1)));
    }

    /// Whether this thread holds the DB mutex (always false in release builds).
    #[inline]
    pub fn held() -> bool {
        #[cfg(debug_assertions)]
        return HELD.with(|h| h.get() > 0);
        #[cfg(not(debug_assertions))]
        false
    }

    /// Debug builds: panics (failing the test) if this thread holds the DB mutex while it
    /// syncs `what`.
    #[inline]
    pub fn assert_not_held(what: &std::path::Path) {
        debug_assert!(!held(), "{} synced while the DB mutex is held", what.display());
    }

    /// Debug builds: panics (failing the test) if this thread holds the DB mutex while it
    /// opens table `what` (an open reads the table's footer, properties, index and filter).
    #[inline]
    pub fn assert_not_held_opening(what: &str) {
        debug_assert!(!held(), "table {what} opened while the DB mutex is held");
    }
}

use std::path::Path;
use std::sync::Arc;

use crate::error::Result;

pub use direct_io::DIRECT_IO_ALIGNMENT;
pub use fault::{FaultInjectionFs, FaultMode, OpKind};
pub use mem::MemFileSystem;
pub use posix::{PosixFileSystem, PosixFsyncFileSystem, PosixInheritableFileSystem};
pub use preallocate::{Preallocating, Preallocation};
pub use readahead::ReadaheadSequentialFile;

/// A file being written, append-only.
pub trait WritableFile: Send {
    fn append(&mut self, data: &[u8]) -> Result<()>;
    /// Hands buffered data to the OS (no durability promise).
    fn flush(&mut self) -> Result<()>;
    /// Makes everything appended so far durable.
    fn sync(&mut self) -> Result<()>;
    /// Bytes appended so far.
    fn size(&self) -> u64;
    /// Asks the OS to start writing back `len` bytes at `offset`, already handed to it by
    /// `flush` (RocksDB's `RangeSync`; `sync_file_range(SYNC_FILE_RANGE_WRITE)` on Linux).
    /// Not a durability promise: only `sync` is. The default does nothing, which is what it
    /// means for a file system without write-back (in memory) or that cannot ask for it.
    fn range_sync(&mut self, _offset: u64, _len: u64) -> Result<()> {
        Ok(())
    }
    /// `range_sync` under RocksDB's `strict_bytes_per_sync`: waits for the write-back asked
    /// for before to finish, then asks for write-back of every byte up to `end`
    /// (`sync_file_range(0, end, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE)` on
    /// Linux, as RocksDB's `PosixWritableFile::RangeSync`), so the file never has more than
    /// about `bytes_per_sync` bytes in write-back. The default is `range_sync(0, end)`.
    fn range_sync_strict(&mut self, end: u64) -> Result<()> {
        self.range_sync(0, end)
    }
    /// The file reached a new preallocation block, `len` bytes at `offset` ([`Preallocating`]
    /// calls it as the file grows, RocksDB's `PrepareWrite`). With `reserve` (RocksDB's
    /// `allow_fallocate`) the space is reserved without changing the file's size
    /// (`FSWritableFile::Allocate`: `fallocate(FALLOC_FL_KEEP_SIZE)` on Linux). Either way
    /// the file is cut to the bytes written when it is closed, as RocksDB's posix `Close`
    /// does for a file that had a preallocation block. The default does nothing, which is
    /// what it means for a file system that cannot reserve space.
    fn allocate(&mut self, _offset: u64, _len: u64, _reserve: bool) -> Result<()> {
        Ok(())
    }
    /// A handle that makes durable what `flush` handed to the OS so far, usable by another
    /// thread while the owner goes on appending (RocksDB's `SyncWAL` fsyncs the current WAL
    /// outside its locks while the write leader appends to it). None: this file cannot give
    /// one, and its owner syncs it through `sync` (the default).
    fn sync_handle(&self) -> Option<Arc<dyn SyncHandle>> {
        None
    }
}

/// Writes `WritableFile` methods that pass straight through to the file in the field
/// `$inner`, one per name listed: a wrapper (checksum tap, preallocation, write-back, rate
/// limit) writes the methods it changes and forwards the rest with
/// `forward_writable!(inner: flush, sync, size, ...)`, so no method falls back to the trait's
/// default (which does nothing) by being forgotten.
#[macro_export]
macro_rules! forward_writable {
    ($inner:ident: $($method:ident),+ $(,)?) => {
        $($crate::forward_writable!(@one $inner $method);)+
    };
    (@one $inner:ident append) => {
        fn append(&mut self, data: &[u8]) -> $crate::error::Result<()> {
            self.$inner.append(data)
        }
    };
    (@one $inner:ident flush) => {
        fn flush(&mut self) -> $crate::error::Result<()> {
            self.$inner.flush()
        }
    };
    (@one $inner:ident sync) => {
        fn sync(&mut self) -> $crate::error::Result<()> {
            self.$inner.sync()
        }
    };
    (@one $inner:ident size) => {
        fn size(&self) -> u64 {
            self.$inner.size()
        }
    };
    (@one $inner:ident range_sync) => {
        fn range_sync(&mut self, offset: u64, len: u64) -> $crate::error::Result<()> {
            self.$inner.range_sync(offset, len)
        }
    };
    (@one $inner:ident range_sync_strict) => {
        fn range_sync_strict(&mut self, end: u64) -> $crate::error::Result<()> {
            self.$inner.range_sync_strict(end)
        }
    };
    (@one $inner:ident allocate) => {
        fn allocate(&mut self, offset: u64, len: u64, reserve: bool) -> $crate::error::Result<()> {
            self.$inner.allocate(offset, len, reserve)
        }
    };
    (@one $inner:ident sync_handle) => {
        fn sync_handle(&self) -> Option<std::sync::Arc<dyn $crate::fs::SyncHandle>> {
            self.$inner.sync_handle()
        }
    };
}

/// See [`WritableFile::sync_handle`].
pub trait SyncHandle: Send + Sync {
    /// Makes durable every byte the file's `flush` had handed to the OS when it was called.
    fn sync(&self) -> Result<()>;
}

/// How a file is opened for reads at offsets: RocksDB's `FileOptions::use_direct_reads`
/// (O_DIRECT: the page cache is bypassed; reads are made in aligned blocks) and
/// `use_mmap_reads` (the file is mapped and read from the mapping). Direct reads are not
/// made when mmap reads are asked for, as in RocksDB's PosixFileSystem.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadFileOptions {
    pub direct: bool,
    pub mmap: bool,
    /// The file is advised for random access, as RocksDB's table cache and blob file reader
    /// hint each file they open with `advise_random_on_open` (`FSRandomAccessFile::Hint
    /// (kRandom)`): a plain file `POSIX_FADV_RANDOM` (no readahead), a mapping `MADV_RANDOM`
    /// (a fault reads only its page, no read-around); a direct-read file takes no hint.
    pub advise_random: bool,
}

/// How a file is opened for writing: RocksDB's `FileOptions::use_direct_writes` (O_DIRECT
/// through an aligned buffer; `use_direct_io_for_flush_and_compaction` for table and blob
/// files) and `use_mmap_writes` (`allow_mmap_writes`: written through a mapping), with the
/// buffer of `writable_file_max_buffer_size`. Direct writes are not made when mmap writes
/// are asked for, as in RocksDB's PosixFileSystem (the database refuses both at open).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteFileOptions {
    pub max_buffer_size: usize,
    pub direct: bool,
    pub mmap: bool,
}

/// A file read at offsets, shared by readers.
pub trait RandomAccessFile: Send + Sync {
    /// Reads up to `buf.len()` bytes at `offset`; returns how many were read (fewer only at
    /// end of file).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize>;
    fn size(&self) -> Result<u64>;
    /// A hint that `len` bytes at `offset` will be read soon (RocksDB's `Prefetch`): the
    /// file system may start reading them in the background. No effect on what is read;
    /// the default does nothing.
    fn prefetch(&self, _offset: u64, _len: u64) -> Result<()> {
        Ok(())
    }
    /// Whether [`RandomAccessFile::prefetch`] makes the file system read ahead on its own
    /// (RocksDB's `FSSupportedOps::kFSPrefetch`, for a file read through the page cache). A
    /// compaction's input then leaves `compaction_readahead_size` to the file system and
    /// holds only a small buffer of its own, as RocksDB's `BlockPrefetcher` holds none
    /// (`table/prefetch.rs`). The default: no.
    fn supports_prefetch(&self) -> bool {
        false
    }
    /// Lends the `len` bytes at `offset` (fewer only at the end of the file) to `f` where
    /// they already lie in memory the file holds: a mapping (`allow_mmap_reads`, RocksDB's
    /// `PosixMmapReadableFile::Read` gives a slice of the mapping) or the aligned buffer a
    /// direct read went into (RocksDB's `AlignedBuffer`), so a block is checked and
    /// uncompressed where it lies instead of being copied into the caller's buffer first.
    /// Returns `Ok(false)`, `f` not called, for a file that cannot lend (the caller then
    /// reads with [`RandomAccessFile::read_at`]). The default cannot.
    fn read_lent(&self, _offset: u64, _len: usize, _f: &mut dyn FnMut(&[u8])) -> Result<bool> {
        Ok(false)
    }
}

/// A file read front to back (WAL and MANIFEST replay).
pub trait SequentialFile: Send {
    /// Reads up to `buf.len()` bytes; 0 means end of file.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize>;
}

/// A held lock on a file; released when dropped.
pub trait FileLock: Send + Sync {}

pub trait FileSystem: Send + Sync {
    /// Creates (or truncates) `path` for writing.
    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>>;
    /// Creates (or truncates) `path` for writing, its appends held in a buffer of at most
    /// `max_buffer_size` bytes before they go to the file (RocksDB's
    /// `writable_file_max_buffer_size`, its `WritableFileWriter` buffer; 0: every append
    /// goes to the file). The default is `new_writable_file`: right only for a file system
    /// whose writable files do not buffer (each append reaches the file at once, as
    /// `MemFileSystem`'s). A file system that buffers, or wraps one that does, overrides it.
    fn new_writable_file_with_buffer(
        &self,
        path: &Path,
        max_buffer_size: usize,
    ) -> Result<Box<dyn WritableFile>> {
        let _ = max_buffer_size;
        self.new_writable_file(path)
    }
    /// Creates (or truncates) `path` for writing as `o` says. The default, for a file system
    /// without direct I/O or mappings (in memory): direct writes are NotSupported, as
    /// RocksDB's MockFileSystem says; mmap writes are plain writes (its files are memory
    /// already).
    fn new_writable_file_with(&self, path: &Path, o: WriteFileOptions) -> Result<Box<dyn WritableFile>> {
        if o.direct && !o.mmap {
            return Err(crate::error::Error::not_supported(format!(
                "Direct I/O Not Supported: {}",
                path.display()
            )));
        }
        self.new_writable_file_with_buffer(path, o.max_buffer_size)
    }
    /// Renames `old` to `path` and opens it for writing from its first byte, with a write
    /// buffer as [`new_writable_file_with_buffer`](Self::new_writable_file_with_buffer)'s
    /// (RocksDB's `ReuseWritableFile`, what WAL recycling reuses an obsolete WAL with). The
    /// file reports size 0 and is overwritten as it is appended to; the real file system
    /// leaves the old bytes past the write point in place (the blocks stay allocated, which
    /// is the point of recycling). The default renames and then creates the file anew,
    /// truncated, as RocksDB's `FileSystem::ReuseWritableFile` default does.
    fn reuse_writable_file(
        &self,
        path: &Path,
        old: &Path,
        max_buffer_size: usize,
    ) -> Result<Box<dyn WritableFile>> {
        self.rename(old, path)?;
        self.new_writable_file_with_buffer(path, max_buffer_size)
    }
    /// Opens the existing `path` to append to, its size the file's, with a write buffer as
    /// [`new_writable_file_with_buffer`](Self::new_writable_file_with_buffer)'s (RocksDB's
    /// `ReopenWritableFile`: what `reuse_manifest_on_open` reopens the MANIFEST with). The
    /// default is NotSupported, as RocksDB's `FileSystem` default: the caller does without.
    fn reopen_writable_file(&self, path: &Path, max_buffer_size: usize) -> Result<Box<dyn WritableFile>> {
        let _ = max_buffer_size;
        Err(crate::error::Error::not_supported(format!("reopening a file to append ({})", path.display())))
    }
    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>>;
    /// Opens `path` for reads at offsets as `o` says. The default, for a file system without
    /// direct I/O (in memory): direct reads are NotSupported, as RocksDB's MockFileSystem
    /// says; mmap reads are plain reads (its files are memory already).
    fn new_random_access_file_with(
        &self,
        path: &Path,
        o: ReadFileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        if o.direct && !o.mmap {
            return Err(crate::error::Error::not_supported(format!(
                "Direct I/O Not Supported: {}",
                path.display()
            )));
        }
        self.new_random_access_file(path)
    }
    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>>;
    fn file_exists(&self, path: &Path) -> bool;
    /// Names (not paths) of the entries of `dir`.
    fn children(&self, dir: &Path) -> Result<Vec<String>>;
    fn file_size(&self, path: &Path) -> Result<u64>;
    fn remove_file(&self, path: &Path) -> Result<()>;
    /// Atomically replaces `to` with `from`.
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;
    fn create_dir_all(&self, dir: &Path) -> Result<()>;
    fn remove_dir(&self, dir: &Path) -> Result<()>;
    /// Makes the directory's entries (creations, renames, removals) durable.
    fn sync_dir(&self, dir: &Path) -> Result<()>;
    /// Takes an exclusive lock on `path` (created if missing), failing with an IO error if
    /// this or another process holds it.
    fn lock_file(&self, path: &Path) -> Result<Box<dyn FileLock>>;
    /// Makes `to` a hard link to `from` (checkpoints and backups share table files this
    /// way). File systems without links, or a link across file systems, fail with
    /// NotSupported; callers then copy the file.
    fn link_file(&self, from: &Path, to: &Path) -> Result<()> {
        let _ = from;
        Err(crate::error::Error::not_supported(format!("hard links ({})", to.display())))
    }
    /// Makes an existing file's data durable (a file another writer made, such as one
    /// hard-linked by `link_file`). NotSupported where `link_file` is.
    fn sync_file(&self, path: &Path) -> Result<()> {
        Err(crate::error::Error::not_supported(format!("syncing an existing file ({})", path.display())))
    }
    /// Overwrites `data` at `offset` of an existing file in place and makes it durable
    /// (RocksDB's `NewRandomRWFile`, `Write`, `Sync`: ingestion's `write_global_seqno`).
    /// NotSupported by file systems without random writes; the caller then leaves the file
    /// as it is, as RocksDB does.
    fn write_at_synced(&self, path: &Path, offset: u64, data: &[u8]) -> Result<()> {
        let _ = (offset, data);
        Err(crate::error::Error::not_supported(format!("random writes ({})", path.display())))
    }
    /// The file's last modification time, in seconds since the Unix epoch (RocksDB's
    /// `GetFileModificationTime`; the WAL archive's TTL). NotSupported by default.
    fn modified_time(&self, path: &Path) -> Result<u64> {
        Err(crate::error::Error::not_supported(format!("modification times ({})", path.display())))
    }
    /// This file system with the descriptors of the files it opens left without
    /// close-on-exec (RocksDB's `is_fd_close_on_exec = false`: no O_CLOEXEC), or None for a
    /// file system whose files have no descriptors a child process could inherit (in
    /// memory). The default is None.
    fn without_close_on_exec(&self) -> Option<FileSystemRef> {
        None
    }
}

pub type FileSystemRef = Arc<dyn FileSystem>;

/// The real file system.
pub fn default_fs() -> FileSystemRef {
    Arc::new(PosixFileSystem::new())
}

/// Reads a whole file through `fs`.
pub fn read_file(fs: &dyn FileSystem, path: &Path) -> Result<Vec<u8>> {
    let mut f = fs.new_sequential_file(path)?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(&buf[..n]);
    }
}

/// Copies `src` to `dst` (created or truncated), the first `size` bytes when given (the
/// source must have them), and syncs it; returns the bytes copied.
pub fn copy_file(fs: &dyn FileSystem, src: &Path, dst: &Path, size: Option<u64>) -> Result<u64> {
    copy_file_with(fs, src, dst, size, true, |_| {})
}

/// `copy_file` with a choice of sync and a look at every chunk copied (backups checksum it).
pub fn copy_file_with(
    fs: &dyn FileSystem,
    src: &Path,
    dst: &Path,
    size: Option<u64>,
    sync: bool,
    mut each: impl FnMut(&[u8]),
) -> Result<u64> {
    let from = fs.new_random_access_file(src)?;
    let total = match size {
        Some(n) => n,
        None => from.size()?,
    };
    let mut to = fs.new_writable_file(dst)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut off = 0u64;
    while off < total {
        let want = ((total - off) as usize).min(buf.len());
        let n = from.read_at(off, &mut buf[..want])?;
        if n == 0 {
            return Err(crate::error::Error::corruption(format!(
                "{}: file ends at {off} bytes, {total} expected",
                src.display()
            )));
        }
        each(&buf[..n]);
        to.append(&buf[..n])?;
        off += n as u64;
    }
    if sync {
        to.sync()?;
    } else {
        to.flush()?;
    }
    Ok(total)
}

/// Writes `data` to a new file at `path` and syncs it.
pub fn write_file_synced(fs: &dyn FileSystem, path: &Path, data: &[u8]) -> Result<()> {
    let mut f = fs.new_writable_file(path)?;
    f.append(data)?;
    f.sync()
}
