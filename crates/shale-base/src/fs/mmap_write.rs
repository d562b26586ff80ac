//! Writes through a shared mapping: RocksDB's `allow_mmap_writes` (its `PosixMmapFile`) for
//! the table and blob files the database writes.
//!
//! The file is grown (`ftruncate`) one window at a time and the window mapped read-write
//! (`MAP_SHARED`); appends are copies into the mapping, the kernel writes the pages back.
//! A window starts at a page boundary and is 64 KiB at first, doubling up to 1 MiB per
//! remap, as RocksDB's `map_size_`:
//!
//! ```text
//!   file:  | written ...            | window (mapped, grown with zeros)       |
//!                                   ^ page-aligned start   ^ size   ^ window end
//! ```
//! RocksDB cuts the file back to its size at `Close`; Shale's files have no close (they
//! are dropped after `sync`), so a flush or sync unmaps the window and truncates the file to
//! its size, and the next append maps a new window from the page holding the end. A sync
//! then makes the pages and the size durable (`fdatasync`, or `fsync` with `use_fsync`).

use std::fs::{File, OpenOptions};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

const FIRST_WINDOW: usize = 64 << 10;
const MAX_WINDOW: usize = 1 << 20;

fn page_size() -> usize {
    // SAFETY: sysconf reads a system constant; no memory of ours is involved.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).ok().filter(|&p| p > 0).unwrap_or(4096)
}

/// A file written through a mapping (see the module comment).
pub(crate) struct MmapWritableFile {
    file: File,
    path: PathBuf,
    /// The mapped window: `len` bytes of the file from `offset`; null when none.
    map: *mut u8,
    map_len: usize,
    map_offset: u64,
    next_window: usize,
    /// Bytes appended (the file's size once flushed).
    size: u64,
    page: usize,
    use_fsync: bool,
    failed: bool,
}

// SAFETY: the mapping belongs to this value alone (no pointer into it escapes but borrows of
// `self`); moving the value to another thread moves the only access to it.
unsafe impl Send for MmapWritableFile {}

impl MmapWritableFile {
    /// Creates (or truncates) `path` for writing through mappings (read-write: a shared
    /// writable mapping needs it, as RocksDB opens with O_RDWR).
    pub(crate) fn create(path: &Path, use_fsync: bool) -> Result<MmapWritableFile> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| Error::io(format!("While open a file for appending: {}", path.display()), e))?;
        Ok(MmapWritableFile {
            file,
            path: path.to_path_buf(),
            map: std::ptr::null_mut(),
            map_len: 0,
            map_offset: 0,
            next_window: FIRST_WINDOW,
            size: 0,
            page: page_size(),
            use_fsync,
            failed: false,
        })
    }

    /// The open descriptor (to clear its close-on-exec flag).
    pub(crate) fn file(&self) -> &File {
        &self.file
    }

    fn err(&mut self, what: &str, e: std::io::Error) -> Error {
        self.failed = true;
        Error::io(format!("While {what}: {}", self.path.display()), e)
    }

    fn unmap(&mut self) -> Result<()> {
        if self.map.is_null() {
            return Ok(());
        }
        // SAFETY: unmaps exactly the window `map_window` mapped, once; no reference into it
        // outlives this call (copies in `append` end before it).
        let rc = unsafe { libc::munmap(self.map.cast(), self.map_len) };
        self.map = std::ptr::null_mut();
        self.map_len = 0;
        if rc != 0 {
            return Err(self.err("munmap", std::io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Maps a new window from the page holding the end of the data, growing the file to it.
    fn map_window(&mut self) -> Result<()> {
        self.unmap()?;
        let page = self.page as u64;
        let offset = self.size - self.size % page;
        let len = self.next_window.max(self.page);
        self.next_window = (self.next_window * 2).min(MAX_WINDOW);
        let end = offset + len as u64;
        if let Err(e) = self.file.set_len(end) {
            return Err(self.err("ftruncate", e));
        }
        let off = libc::off_t::try_from(offset).map_err(|_| {
            Error::invalid_argument(format!("{}: offset {offset} too large", self.path.display()))
        })?;
        // SAFETY: a fresh shared read-write mapping of `len` bytes of a descriptor open for
        // reading and writing, within the file (grown to `end` above); the kernel picks the
        // address.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                self.file.as_raw_fd(),
                off,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(self.err("mmap", std::io::Error::last_os_error()));
        }
        self.map = p.cast();
        self.map_len = len;
        self.map_offset = offset;
        Ok(())
    }

    /// Unmaps the window and cuts the file back to its size.
    fn settle(&mut self) -> Result<()> {
        if self.failed {
            return Err(Error::io_msg(format!(
                "an earlier write to {} failed; not writing",
                self.path.display()
            )));
        }
        if self.map.is_null() {
            return Ok(());
        }
        self.unmap()?;
        let size = self.size;
        if let Err(e) = self.file.set_len(size) {
            return Err(self.err("ftruncate", e));
        }
        Ok(())
    }
}

impl super::WritableFile for MmapWritableFile {
    fn append(&mut self, mut data: &[u8]) -> Result<()> {
        if self.failed {
            return Err(Error::io_msg(format!(
                "an earlier write to {} failed; not writing",
                self.path.display()
            )));
        }
        while !data.is_empty() {
            let window_end = self.map_offset + self.map_len as u64;
            if self.map.is_null() || self.size >= window_end {
                self.map_window()?;
            }
            let at = (self.size - self.map_offset) as usize;
            let n = data.len().min(self.map_len - at);
            // SAFETY: `[at, at + n)` lies within the `map_len` bytes mapped writable at `map`,
            // which nothing else references; `data` is a separate buffer.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.map.add(at), n) };
            self.size += n as u64;
            data = &data[n..];
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.settle()
    }

    fn sync(&mut self) -> Result<()> {
        super::db_mutex_check::assert_not_held(&self.path);
        self.settle()?;
        let r = if self.use_fsync { self.file.sync_all() } else { self.file.sync_data() };
        r.map_err(|e| Error::io(format!("While fsync file: {}", self.path.display()), e))
    }

    fn size(&self) -> u64 {
        self.size
    }
}

impl Drop for MmapWritableFile {
    fn drop(&mut self) {
        // What the mapping holds is in the page cache already; the size is cut best-effort.
        if !self.failed {
            let _ = self.settle();
        } else {
            let _ = self.unmap();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::fs::WritableFile;

    fn mapped(path: &Path) -> bool {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let p = path.to_string_lossy();
        maps.lines().any(|l| l.ends_with(p.as_ref()) && l.split_whitespace().nth(1) == Some("rw-s"))
    }

    /// Appends of odd sizes across windows, flushes between them and a sync give exactly the
    /// bytes appended, through a writable shared mapping of the file.
    #[test]
    fn mmap_writes_give_the_bytes_appended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sst");
        let mut f = MmapWritableFile::create(&path, false).unwrap();
        let mut want = Vec::new();
        let mut seed = 7u32;
        let mut seen_mapped = false;
        for round in 0..60 {
            let n = (seed % 30_000) as usize;
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let chunk: Vec<u8> = (0..n).map(|i| (i as u32 ^ seed) as u8).collect();
            f.append(&chunk).unwrap();
            want.extend_from_slice(&chunk);
            seen_mapped |= n > 0 && mapped(&path);
            if round % 11 == 5 {
                f.flush().unwrap();
                assert!(!mapped(&path));
                assert_eq!(std::fs::read(&path).unwrap(), want, "after a flush, round {round}");
            }
        }
        assert!(seen_mapped, "the file was never mapped writable");
        f.sync().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), want);
        f.append(b"tail").unwrap();
        want.extend_from_slice(b"tail");
        drop(f);
        assert_eq!(std::fs::read(&path).unwrap(), want);
    }
}
