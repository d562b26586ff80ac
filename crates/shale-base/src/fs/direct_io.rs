//! Reads that bypass the page cache (O_DIRECT) or go through a memory mapping: RocksDB's
//! `use_direct_reads` and `allow_mmap_reads` (its `PosixRandomAccessFile` with
//! `use_direct_io()`, and `PosixMmapReadableFile`).
//!
//! A file system without O_DIRECT refuses the open with EINVAL (tmpfs before Linux 6.6), an
//! IO error "While open a file for random read: <path>: Invalid argument", as RocksDB's.
//!
//! Direct reads: the kernel moves data straight between the device and the buffer, which
//! must start at an aligned address and cover whole aligned blocks of the file. A read of
//! `[offset, offset + len)` reads the aligned span around it,
//!
//! ```text
//!   file:  |  block k  |  block k+1 |  block k+2 |
//!                 ^offset                ^offset+len
//!          ^aligned start                         ^aligned end (rounded up)
//! ```
//!
//! into a buffer at that alignment (each thread keeps one for spans up to 256 KiB, see
//! `READ_BUF`), then copies the asked bytes out, as RocksDB's
//! `RandomAccessFileReader` does for a direct-I/O file. The alignment is the logical block
//! size of the device the file is on, read at open from sysfs
//! (`/sys/dev/block/MAJOR:MINOR/../queue/logical_block_size`, the whole disk's queue for a
//! partition), as RocksDB's `PosixHelper::GetLogicalBlockSizeOfFd`; [`DIRECT_IO_ALIGNMENT`]
//! (4096) when it cannot tell (no device number, no such file, not a power of two). On a
//! disk of 512-byte sectors a 2.5 KiB block is read as 5 or 6 sectors, not as one or two
//! pages: RocksDB 11.8.1 reads 2560 or 3072 bytes per data block of db_bench's defaults
//! where 4096-byte alignment read 4096 or 8192 (`strace`), over twice the bytes per Get.
//!
//! Mmap reads: the whole file is mapped read-only at open (`MAP_SHARED`; tables never change
//! once written) and each read copies from the mapping.
//!
//! Direct writes (`use_direct_io_for_flush_and_compaction`: RocksDB's `PosixWritableFile`
//! with O_DIRECT behind a `WritableFileWriter` with an aligned buffer): appends gather in an
//! aligned buffer of up to `writable_file_max_buffer_size` bytes (rounded up to the
//! alignment); a full buffer is written whole at its aligned file offset. A flush or sync
//! writes what the buffer holds padded with zeros to the alignment, then truncates the file
//! to its real size; the unaligned tail stays in the buffer and is written again, with what
//! follows it, at the same aligned offset next time:
//!
//! ```text
//!   file:   | written blocks ...   | tail block (padded on disk, truncated to size) |
//!   buffer:                        [ tail bytes | next appends ...               ]
//!                                  ^ file offset of buf[0] (aligned)
//! ```
//! No range sync is asked for (RocksDB's writer skips `bytes_per_sync` for direct I/O).

use std::alloc::{self, Layout};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use super::RandomAccessFile;
use crate::error::{Error, Result};

/// The alignment of direct writes, and of direct reads where the device's logical block
/// size cannot be read (RocksDB's `kDefaultPageSize`).
pub const DIRECT_IO_ALIGNMENT: usize = 4096;

/// The logical block size of the device `file` is on (see the module comment), or
/// [`DIRECT_IO_ALIGNMENT`] when it cannot be told. Remembered per device: a table opens
/// without re-reading sysfs.
pub(crate) fn logical_block_size(file: &File) -> usize {
    use std::collections::HashMap;
    use std::os::unix::fs::MetadataExt;
    use std::sync::{Mutex, OnceLock};
    static BY_DEVICE: OnceLock<Mutex<HashMap<u64, usize>>> = OnceLock::new();
    let Ok(meta) = file.metadata() else { return DIRECT_IO_ALIGNMENT };
    let dev = meta.dev();
    let known = BY_DEVICE.get_or_init(Default::default);
    // A poisoned map is only a lost memo: the size is read again.
    if let Some(&n) = known.lock().ok().as_ref().and_then(|m| m.get(&dev)) {
        return n;
    }
    let n = read_logical_block_size(dev).unwrap_or(DIRECT_IO_ALIGNMENT);
    if let Ok(mut m) = known.lock() {
        m.insert(dev, n);
    }
    n
}

/// `queue/logical_block_size` of device `dev` from sysfs: a power of two, or None.
fn read_logical_block_size(dev: u64) -> Option<usize> {
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    // Unnamed devices (tmpfs, overlay) have no entry under /sys/dev/block.
    if major == 0 {
        return None;
    }
    let dir = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    // A partition (sda3, nvme0n1p1) has no queue/ of its own: its parent disk's counts.
    // The path ends .../block/sda or .../sda/sda3 or .../nvme0/nvme0n1/nvme0n1p1.
    let child = dir.file_name()?.to_str()?.to_string();
    let parent = dir.parent()?.file_name()?.to_str()?.to_string();
    let is_partition = parent != "block" && (!child.starts_with("nvme") || child.contains('p'));
    let queue = if is_partition { dir.parent()?.join("queue") } else { dir.join("queue") };
    let text = std::fs::read_to_string(queue.join("logical_block_size")).ok()?;
    let n: usize = text.trim().parse().ok()?;
    n.is_power_of_two().then_some(n)
}

fn open_error(path: &Path, e: std::io::Error) -> Error {
    Error::io(format!("While open a file for random read: {}", path.display()), e)
}

/// A heap buffer aligned to a power of two (a direct read's or write's alignment).
struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

impl AlignedBuf {
    fn new(len: usize, align: usize) -> Result<AlignedBuf> {
        let layout = Layout::from_size_align(len.max(align), align)
            .map_err(|e| Error::invalid_argument(format!("direct read buffer of {len} bytes: {e}")))?;
        // SAFETY: the layout has a non-zero size (at least the alignment).
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            alloc::handle_alloc_error(layout);
        }
        Ok(AlignedBuf { ptr, layout })
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` points to `layout.size()` initialised (zeroed) bytes owned by `self`,
        // borrowed mutably through `&mut self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

// SAFETY: the buffer owns its allocation alone (no other pointer to it escapes but borrows
// of `self`), so moving it to another thread moves the only access to it.
unsafe impl Send for AlignedBuf {}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: `ptr` was allocated with `layout` by `alloc_zeroed` and is freed once.
        unsafe { alloc::dealloc(self.ptr, self.layout) }
    }
}

/// A file opened with O_DIRECT.
pub(crate) struct DirectReadFile {
    file: File,
    path: PathBuf,
    /// Reads' alignment: the device's logical block size (`logical_block_size`).
    align: usize,
}

impl DirectReadFile {
    pub(crate) fn open(path: &Path) -> Result<DirectReadFile> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)
            .map_err(|e| open_error(path, e))?;
        let align = logical_block_size(&file);
        Ok(DirectReadFile { file, path: path.to_path_buf(), align })
    }

    /// The open descriptor (to clear its close-on-exec flag).
    pub(crate) fn file(&self) -> &File {
        &self.file
    }
}

impl RandomAccessFile for DirectReadFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let (start, span) = self.span(offset, buf.len())?;
        // The thread's kept buffer when it is free and the span fits (see `READ_BUF`); else
        // one of its own for this read.
        READ_BUF.with(|cell| match cell.try_borrow_mut() {
            Ok(mut kept) if self.fits_kept(span) => {
                let mut b = take_kept(&mut kept, span)?;
                let r = self.read_aligned(offset, buf, start, &mut b.as_mut_slice()[..span]);
                *kept = Some(b);
                r
            }
            _ => {
                let mut own = AlignedBuf::new(span, self.align)?;
                self.read_aligned(offset, buf, start, &mut own.as_mut_slice()[..span])
            }
        })
    }

    /// The asked bytes straight from the thread's kept aligned buffer the span was read
    /// into (no copy out of it); not lent when that buffer is busy (a read inside `f`) or
    /// the span is longer than it serves.
    fn read_lent(&self, offset: u64, len: usize, f: &mut dyn FnMut(&[u8])) -> Result<bool> {
        if len == 0 {
            return Ok(false);
        }
        let (start, span) = self.span(offset, len)?;
        if !self.fits_kept(span) {
            return Ok(false);
        }
        READ_BUF.with(|cell| {
            let Ok(mut kept) = cell.try_borrow_mut() else { return Ok(false) };
            let mut b = take_kept(&mut kept, span)?;
            let r = self.read_span(offset, len, start, &mut b.as_mut_slice()[..span]);
            let r = r.map(|done| {
                let skip = (offset - start) as usize;
                let got = done.saturating_sub(skip).min(len);
                f(&b.as_mut_slice()[skip..skip + got]);
                true
            });
            *kept = Some(b);
            r
        })
    }

    fn size(&self) -> Result<u64> {
        Ok(self
            .file
            .metadata()
            .map_err(|e| Error::io(format!("While stat a file: {}", self.path.display()), e))?
            .len())
    }
}

/// The largest span a thread's kept direct-read buffer serves; longer reads (compaction
/// readahead) allocate a buffer of their own.
const READ_BUF_MAX: usize = 256 << 10;
/// The kept buffer's smallest size and its alignment (the largest logical block size it
/// serves; every smaller power of two divides it).
const READ_BUF_MIN: usize = 16 << 10;
const READ_BUF_ALIGN: usize = DIRECT_IO_ALIGNMENT;

thread_local! {
    /// Each thread's aligned buffer for direct reads, kept between reads: a Get that misses
    /// the block cache reads a few KiB, and an aligned allocation and its zero-filling at
    /// every read cost more than the copy out of it (RocksDB's `RandomAccessFileReader`
    /// allocates one per read, not zero-filled). Under callgrind, `readrandom
    /// --use_direct_reads=1` (20000 Gets) spent 94M of its 632M instructions in `read_at`,
    /// 80M of them allocating and zero-filling; with the kept buffer 13M of 553M.
    static READ_BUF: std::cell::RefCell<Option<AlignedBuf>> = const { std::cell::RefCell::new(None) };
}

impl DirectReadFile {
    /// The aligned span around `[offset, offset + len)`: its start and length.
    fn span(&self, offset: u64, len: usize) -> Result<(u64, usize)> {
        let a = self.align as u64;
        let start = offset - offset % a;
        let end = (offset + len as u64).div_ceil(a) * a;
        let span = usize::try_from(end - start)
            .map_err(|_| Error::invalid_argument(format!("read of {len} bytes at {offset}: too long")))?;
        Ok((start, span))
    }

    /// Whether the thread's kept buffer serves a span of `span` bytes at this alignment.
    fn fits_kept(&self, span: usize) -> bool {
        span <= READ_BUF_MAX && self.align <= READ_BUF_ALIGN
    }

    /// Reads the aligned span at `start` into `tmp` (its length), for the asked
    /// `[offset, offset + len)`: the bytes read (short only at the end of the file).
    fn read_span(&self, offset: u64, len: usize, start: u64, tmp: &mut [u8]) -> Result<usize> {
        let span = tmp.len();
        let mut done = 0usize;
        while done < span {
            match self.file.read_at(&mut tmp[done..], start + done as u64) {
                Ok(0) => break,
                Ok(n) => {
                    done += n;
                    // A short read that is not block-sized is the end of the file.
                    if n % self.align != 0 {
                        break;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(Error::io(
                        format!("While pread offset {offset} len {len}: {}", self.path.display()),
                        e,
                    ))
                }
            }
        }
        Ok(done)
    }

    /// Reads the aligned span at `start` into `tmp` (its length) and copies the asked
    /// `[offset, offset + buf.len())` out into `buf`.
    fn read_aligned(&self, offset: u64, buf: &mut [u8], start: u64, tmp: &mut [u8]) -> Result<usize> {
        let done = self.read_span(offset, buf.len(), start, tmp)?;
        let skip = (offset - start) as usize;
        let got = done.saturating_sub(skip).min(buf.len());
        buf[..got].copy_from_slice(&tmp[skip..skip + got]);
        Ok(got)
    }
}

/// The thread's kept buffer out of its cell, at least `span` bytes: the one kept, or a
/// larger one in its place (the smaller freed first).
fn take_kept(kept: &mut Option<AlignedBuf>, span: usize) -> Result<AlignedBuf> {
    match kept.take() {
        Some(b) if b.layout.size() >= span => Ok(b),
        small => {
            drop(small);
            AlignedBuf::new(span.next_power_of_two().max(READ_BUF_MIN), READ_BUF_ALIGN)
        }
    }
}

fn append_open_error(path: &Path, e: std::io::Error) -> Error {
    Error::io(format!("While open a file for appending: {}", path.display()), e)
}

/// A file written with O_DIRECT through an aligned buffer (see the module comment).
pub(crate) struct DirectWritableFile {
    file: File,
    path: PathBuf,
    buf: AlignedBuf,
    /// Bytes in `buf`; `buf[0]` belongs at `buf_offset` (aligned) in the file.
    len: usize,
    buf_offset: u64,
    /// Bytes appended so far (the file's real size once flushed).
    size: u64,
    /// A write failed: the tail is unknown, later writes are refused and drop writes nothing.
    failed: bool,
    use_fsync: bool,
}

impl DirectWritableFile {
    /// Creates (or truncates) `path` with O_DIRECT, buffering up to `max_buffer_size` bytes
    /// (at least one aligned block).
    pub(crate) fn create(path: &Path, max_buffer_size: usize, use_fsync: bool) -> Result<DirectWritableFile> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)
            .map_err(|e| append_open_error(path, e))?;
        let cap =
            max_buffer_size.max(DIRECT_IO_ALIGNMENT).div_ceil(DIRECT_IO_ALIGNMENT) * DIRECT_IO_ALIGNMENT;
        Ok(DirectWritableFile {
            file,
            path: path.to_path_buf(),
            buf: AlignedBuf::new(cap, DIRECT_IO_ALIGNMENT)?,
            len: 0,
            buf_offset: 0,
            size: 0,
            failed: false,
            use_fsync,
        })
    }

    /// The open descriptor (to clear its close-on-exec flag).
    pub(crate) fn file(&self) -> &File {
        &self.file
    }

    fn refuse_after_failure(&self) -> Result<()> {
        if self.failed {
            return Err(Error::io_msg(format!(
                "an earlier direct write to {} failed; not writing",
                self.path.display()
            )));
        }
        Ok(())
    }

    /// Writes the buffer, padded with zeros to the alignment, at its offset; keeps the
    /// unaligned tail at the buffer's start for the next write. Returns whether a padded
    /// tail went to the file (the file is then longer than `size`).
    fn write_buffer(&mut self) -> Result<bool> {
        if self.len == 0 {
            return Ok(false);
        }
        let a = DIRECT_IO_ALIGNMENT;
        let padded = self.len.div_ceil(a) * a;
        let (len, off) = (self.len, self.buf_offset);
        let slice = self.buf.as_mut_slice();
        slice[len..padded].fill(0);
        let mut done = 0usize;
        while done < padded {
            match self.file.write_at(&slice[done..padded], off + done as u64) {
                Ok(0) => {
                    self.failed = true;
                    let e = std::io::Error::new(std::io::ErrorKind::WriteZero, "write returned 0 bytes");
                    return Err(Error::io(format!("While appending to file: {}", self.path.display()), e));
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.failed = true;
                    return Err(Error::io(format!("While appending to file: {}", self.path.display()), e));
                }
            }
        }
        let advance = len - len % a;
        let tail = len - advance;
        slice.copy_within(advance..len, 0);
        self.len = tail;
        self.buf_offset += advance as u64;
        Ok(tail > 0)
    }

    /// Writes everything buffered and cuts the zero padding off the file's end (RocksDB's
    /// `WritableFileWriter` flush of a direct-I/O file, then `PosixWritableFile::Truncate`).
    fn write_all_buffered(&mut self) -> Result<()> {
        self.refuse_after_failure()?;
        if self.write_buffer()? {
            self.file.set_len(self.size).map_err(|e| {
                self.failed = true;
                Error::io(format!("While ftruncate file: {}", self.path.display()), e)
            })?;
        }
        Ok(())
    }
}

impl super::WritableFile for DirectWritableFile {
    fn append(&mut self, mut data: &[u8]) -> Result<()> {
        self.refuse_after_failure()?;
        while !data.is_empty() {
            let cap = self.buf.layout.size();
            let n = data.len().min(cap - self.len);
            let len = self.len;
            self.buf.as_mut_slice()[len..len + n].copy_from_slice(&data[..n]);
            self.len += n;
            self.size += n as u64;
            data = &data[n..];
            if self.len == cap {
                self.write_buffer()?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.write_all_buffered()
    }

    fn sync(&mut self) -> Result<()> {
        super::db_mutex_check::assert_not_held(&self.path);
        self.write_all_buffered()?;
        let r = if self.use_fsync { self.file.sync_all() } else { self.file.sync_data() };
        r.map_err(|e| Error::io(format!("While fsync file: {}", self.path.display()), e))
    }

    fn size(&self) -> u64 {
        self.size
    }
}

impl Drop for DirectWritableFile {
    fn drop(&mut self) {
        // Best effort, as a plain file's drop: what was not flushed was never promised.
        if !self.failed {
            let _ = self.write_all_buffered();
        }
    }
}

/// A file read through a read-only mapping of all of it.
pub(crate) struct MmapFile {
    ptr: *const u8,
    len: usize,
}

// SAFETY: the mapping is read-only and never changed through this handle; it is unmapped
// only on drop, when no other reference exists. Reads from several threads are plain loads.
unsafe impl Send for MmapFile {}
// SAFETY: as above: shared access only reads.
unsafe impl Sync for MmapFile {}

impl MmapFile {
    /// Maps all of `path`; `advise_random`: the mapping is advised `MADV_RANDOM`, as
    /// RocksDB's `PosixMmapReadableFile::Hint(kRandom)` (whose result it ignores: the advice
    /// changes no byte read).
    pub(crate) fn open(path: &Path, advise_random: bool) -> Result<MmapFile> {
        let file = File::open(path).map_err(|e| open_error(path, e))?;
        let len = file.metadata().map_err(|e| open_error(path, e))?.len();
        let len = usize::try_from(len)
            .map_err(|_| Error::invalid_argument(format!("{}: too large to map", path.display())))?;
        if len == 0 {
            return Ok(MmapFile { ptr: std::ptr::null(), len: 0 });
        }
        // SAFETY: a fresh read-only shared mapping of `len` bytes of an open descriptor; the
        // kernel picks the address. The descriptor may close afterwards: the mapping stays.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0)
        };
        if p == libc::MAP_FAILED {
            return Err(Error::io(
                format!("While mmap file for read: {}", path.display()),
                std::io::Error::last_os_error(),
            ));
        }
        if advise_random {
            // SAFETY: advice on exactly the mapping just made; it reads or writes no memory.
            unsafe {
                libc::madvise(p, len, libc::MADV_RANDOM);
            }
        }
        Ok(MmapFile { ptr: p as *const u8, len })
    }
}

impl RandomAccessFile for MmapFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let Ok(off) = usize::try_from(offset) else { return Ok(0) };
        if off >= self.len {
            return Ok(0);
        }
        let n = buf.len().min(self.len - off);
        // SAFETY: `[off, off + n)` lies within the `len` mapped bytes, alive until drop.
        let src = unsafe { std::slice::from_raw_parts(self.ptr.add(off), n) };
        buf[..n].copy_from_slice(src);
        Ok(n)
    }

    /// A slice of the mapping itself, as RocksDB's `PosixMmapReadableFile::Read`.
    fn read_lent(&self, offset: u64, len: usize, f: &mut dyn FnMut(&[u8])) -> Result<bool> {
        let off = usize::try_from(offset).unwrap_or(usize::MAX).min(self.len);
        let n = len.min(self.len - off);
        if n == 0 {
            f(&[]);
            return Ok(true);
        }
        // SAFETY: `[off, off + n)` lies within the `len` mapped bytes, alive until drop,
        // which cannot happen while `&self` is borrowed.
        f(unsafe { std::slice::from_raw_parts(self.ptr.add(off), n) });
        Ok(true)
    }

    fn size(&self) -> Result<u64> {
        Ok(self.len as u64)
    }
}

impl Drop for MmapFile {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: unmaps exactly the mapping made in `open`, once.
            unsafe {
                libc::munmap(self.ptr as *mut libc::c_void, self.len);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn file_with(len: usize) -> (tempfile::TempDir, PathBuf, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        (dir, path, data)
    }

    #[test]
    fn mmap_reads_match_the_file() {
        let (_d, path, data) = file_with(10_000);
        let f = MmapFile::open(&path, true).unwrap();
        let mut b = vec![0u8; 300];
        assert_eq!(f.read_at(4000, &mut b).unwrap(), 300);
        assert_eq!(b, data[4000..4300]);
        assert_eq!(f.read_at(9_900, &mut b).unwrap(), 100);
        assert_eq!(b[..100], data[9_900..]);
        assert_eq!(f.read_at(20_000, &mut b).unwrap(), 0);
        assert_eq!(f.size().unwrap(), 10_000);
    }

    /// A directory on the disk the build is on (a tmpfs /tmp may refuse O_DIRECT).
    fn disk_dir() -> tempfile::TempDir {
        let exe = std::env::current_exe().unwrap();
        tempfile::tempdir_in(exe.parent().unwrap()).unwrap()
    }

    /// The open flags of this process's descriptor of `path`.
    fn open_flags(path: &Path) -> Option<i32> {
        for e in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
            if std::fs::read_link(e.path()).ok().as_deref() == Some(path) {
                let fd = e.file_name().to_string_lossy().into_owned();
                let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).ok()?;
                let flags = info.lines().find_map(|l| l.strip_prefix("flags:"))?.trim().to_string();
                return i32::from_str_radix(&flags, 8).ok();
            }
        }
        None
    }

    /// Direct writes: the file is opened with O_DIRECT; appends of odd sizes across buffer
    /// fills, flushes mid-block (padded, then cut back to size) and a sync give exactly the
    /// bytes appended, the file always its real size after a flush.
    #[test]
    fn direct_writes_give_the_bytes_appended() {
        use crate::fs::WritableFile;
        let dir = disk_dir();
        let path = dir.path().join("t.sst");
        let mut f = DirectWritableFile::create(&path, 10_000, false).unwrap();
        let flags = open_flags(&path).unwrap();
        assert_ne!(flags & libc::O_DIRECT, 0, "{flags:o}");
        let mut want = Vec::new();
        let mut seed = 1u32;
        for round in 0..40 {
            let n = (seed % 7000) as usize;
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let chunk: Vec<u8> = (0..n).map(|i| (i as u32 ^ seed) as u8).collect();
            f.append(&chunk).unwrap();
            want.extend_from_slice(&chunk);
            assert_eq!(f.size(), want.len() as u64);
            if round % 9 == 4 {
                f.flush().unwrap();
                assert_eq!(std::fs::read(&path).unwrap(), want, "after a flush, round {round}");
            }
        }
        f.append(b"end").unwrap();
        want.extend_from_slice(b"end");
        f.sync().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), want);
        drop(f);
        assert_eq!(std::fs::read(&path).unwrap(), want);
        // Dropped without a flush: the buffered bytes still reach the file, cut to size.
        let p2 = dir.path().join("u.sst");
        let mut g = DirectWritableFile::create(&p2, 1 << 20, true).unwrap();
        g.append(&[5u8; 5000]).unwrap();
        drop(g);
        assert_eq!(std::fs::read(&p2).unwrap(), vec![5u8; 5000]);
    }

    /// Direct reads are aligned to the device's logical block size, read from sysfs as
    /// RocksDB reads it; reads across those blocks (and past the end) give the file's bytes.
    #[test]
    fn direct_reads_align_to_the_logical_block_size() {
        use std::os::unix::fs::MetadataExt;
        let dir = disk_dir();
        let path = dir.path().join("t.sst");
        let data: Vec<u8> = (0..20_000usize).map(|i| (i * 13 + i / 509) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let f = DirectReadFile::open(&path).unwrap();
        let dev = std::fs::metadata(&path).unwrap().dev();
        let want = read_logical_block_size(dev);
        match want {
            Some(n) => assert_eq!(f.align, n),
            None => assert_eq!(f.align, DIRECT_IO_ALIGNMENT),
        }
        assert!(f.align.is_power_of_two() && f.align >= 512, "{}", f.align);
        // The queue file of the device (or, for a partition, of its disk) read by hand.
        if let Some(n) = want {
            let text = std::fs::read_to_string(format!(
                "/sys/dev/block/{}:{}/queue/logical_block_size",
                libc::major(dev),
                libc::minor(dev)
            ))
            .or_else(|_| {
                std::fs::read_to_string(format!(
                    "/sys/dev/block/{}:{}/../queue/logical_block_size",
                    libc::major(dev),
                    libc::minor(dev)
                ))
            })
            .unwrap();
            assert_eq!(text.trim().parse::<usize>().unwrap(), n);
        }
        let a = f.align as u64;
        for (off, len) in [(0u64, 10usize), (a - 1, 2), (a + 7, 3 * a as usize), (19_990, 50), (25_000, 10)] {
            let mut b = vec![0u8; len];
            let n = f.read_at(off, &mut b).unwrap();
            let want = &data[(off as usize).min(data.len())..(off as usize + len).min(data.len())];
            assert_eq!(&b[..n], want, "read at {off} of {len}");
        }
    }

    #[test]
    fn direct_reads_match_the_file_or_are_refused_at_open() {
        let (_d, path, data) = file_with(20_000);
        let f = match DirectReadFile::open(&path) {
            Ok(f) => f,
            Err(e) => {
                // A file system without O_DIRECT refuses it (EINVAL), as RocksDB reports
                // (tmpfs did before Linux 6.6).
                let s = e.to_string();
                assert!(
                    s.contains("While open a file for random read") && s.contains("Invalid argument"),
                    "{s}"
                );
                return;
            }
        };
        for (off, len) in [(0u64, 10usize), (4095, 2), (5000, 9000), (19_990, 50), (25_000, 10)] {
            let mut b = vec![0u8; len];
            let n = f.read_at(off, &mut b).unwrap();
            let want = &data[(off as usize).min(data.len())..(off as usize + len).min(data.len())];
            assert_eq!(&b[..n], want, "read at {off} of {len}");
        }
    }

    /// Lent reads: a mapping lends slices of itself, a direct file its aligned buffer; both
    /// give the file's bytes (fewer at the end, none past it). A direct read asked for while
    /// the kept buffer is lent (inside `f`) is not lent and reads through a buffer of its
    /// own, still the file's bytes.
    #[test]
    fn lent_reads_give_the_file_bytes() {
        let dir = disk_dir();
        let path = dir.path().join("t.sst");
        let data: Vec<u8> = (0..50_000usize).map(|i| (i * 17 + i / 311) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let mmap = MmapFile::open(&path, true).unwrap();
        let direct = DirectReadFile::open(&path).unwrap();
        let files: [&dyn RandomAccessFile; 2] = [&mmap, &direct];
        for f in files {
            for (off, len) in [(0u64, 10usize), (4095, 2), (5000, 9000), (49_990, 50), (60_000, 10)] {
                let mut got = None;
                assert!(f.read_lent(off, len, &mut |b| got = Some(b.to_vec())).unwrap());
                let lo = (off as usize).min(data.len());
                let hi = (off as usize + len).min(data.len());
                assert_eq!(got.unwrap(), &data[lo..hi], "lent read at {off} of {len}");
            }
        }
        let mut inner = Vec::new();
        assert!(direct
            .read_lent(100, 3000, &mut |outer| {
                assert!(!direct.read_lent(7000, 10, &mut |_| panic!("lent twice")).unwrap());
                let mut b = vec![0u8; 10];
                assert_eq!(direct.read_at(7000, &mut b).unwrap(), 10);
                inner = b;
                assert_eq!(outer, &data[100..3100]);
            })
            .unwrap());
        assert_eq!(inner, &data[7000..7010]);
        // A span longer than the kept buffer serves is not lent.
        assert!(!direct.read_lent(0, READ_BUF_MAX + 1, &mut |_| panic!("lent")).unwrap());
    }

    /// The thread's kept read buffer: reads that grow it, reads longer than it serves (their
    /// own buffer), and short reads at the end of the file after long ones (no bytes left
    /// from an earlier read), from several threads at once, all give the file's bytes.
    #[test]
    fn direct_reads_through_the_kept_buffer_give_the_file_bytes() {
        let dir = disk_dir();
        let path = dir.path().join("t.sst");
        let size = READ_BUF_MAX * 2 + 12_345;
        let data: Vec<u8> = (0..size).map(|i| (i * 31 + i / 4093) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let f = DirectReadFile::open(&path).unwrap();
        let reads = [
            (7u64, 100usize),
            (3_000, 5_000),
            (1, READ_BUF_MIN * 3),
            (11, READ_BUF_MAX + 9_000),
            (size as u64 - 40, 4_000),
            (size as u64 - 5_000, 4_990),
            (size as u64 + 10, 30),
            (4_096 * 5, 4_096),
            (READ_BUF_MAX as u64 - 3, READ_BUF_MAX),
        ];
        std::thread::scope(|s| {
            for t in 0..4usize {
                let (f, data) = (&f, &data);
                s.spawn(move || {
                    for round in 0..3 {
                        for i in 0..reads.len() {
                            let (off, len) = reads[(i + t + round) % reads.len()];
                            let mut b = vec![0xAAu8; len];
                            let n = f.read_at(off, &mut b).unwrap();
                            let lo = (off as usize).min(data.len());
                            let hi = (off as usize + len).min(data.len());
                            assert_eq!(n, hi - lo, "read at {off} of {len}");
                            assert!(b[..n] == data[lo..hi], "read at {off} of {len}");
                        }
                    }
                });
            }
        });
    }
}
