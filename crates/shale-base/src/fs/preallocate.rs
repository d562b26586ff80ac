//! Space reserved ahead of a growing file, as RocksDB's `FSWritableFile::PrepareWrite`
//! (`include/rocksdb/file_system.h`), which its `WritableFileWriter` calls before each append:
//! the file is seen as a run of blocks of `preallocation_block_size` bytes, and an append that
//! reaches into blocks not yet reserved reserves all of them in one
//! [`WritableFile::allocate`] call.
//!
//! ```text
//!   block_size = B        reserved: [0, last * B)
//!   append [off, off+len) ──► new_last = ceil((off + len) / B)
//!                             new_last > last: allocate(last * B, (new_last - last) * B)
//! ```
//!
//! Without `fallocate` (RocksDB's `allow_fallocate` false) the blocks are still tracked and
//! [`WritableFile::allocate`] still told (reserving nothing): RocksDB's posix file then
//! makes no fallocate call, but is cut to its data at close all the same.
//!
//! A failed reservation is not an error of the append (RocksDB ignores `Allocate`'s status
//! there): the write itself reports a full disk.

use super::WritableFile;
use crate::error::Result;

/// A file's preallocation: RocksDB's `SetPreallocationBlockSize` and `allow_fallocate`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Preallocation {
    /// 0: none (the file is not wrapped).
    pub block_size: u64,
    /// Space is reserved (`fallocate`); else the blocks are only tracked.
    pub fallocate: bool,
}

/// A file that reserves space in steps of `block_size` bytes as it is appended to.
pub struct Preallocating {
    inner: Box<dyn WritableFile>,
    block_size: u64,
    fallocate: bool,
    /// Blocks reserved so far (RocksDB's `last_preallocated_block_`).
    last_block: u64,
}

impl Preallocating {
    /// `inner` with preallocation `p`; `inner` itself when its block size is 0 (RocksDB's
    /// "no preallocation").
    pub fn wrap(inner: Box<dyn WritableFile>, p: Preallocation) -> Box<dyn WritableFile> {
        if p.block_size == 0 {
            return inner;
        }
        Box::new(Preallocating { inner, block_size: p.block_size, fallocate: p.fallocate, last_block: 0 })
    }

    fn prepare_write(&mut self, offset: u64, len: u64) {
        let b = self.block_size;
        let new_last = offset.saturating_add(len).div_ceil(b);
        if new_last > self.last_block {
            let (Some(at), Some(n)) =
                (b.checked_mul(self.last_block), b.checked_mul(new_last - self.last_block))
            else {
                return;
            };
            // As RocksDB's PrepareWrite: the status is dropped; the append reports a full disk.
            let _ = self.inner.allocate(at, n, self.fallocate);
            self.last_block = new_last;
        }
    }
}

impl WritableFile for Preallocating {
    crate::forward_writable!(inner: flush, sync, size, range_sync, range_sync_strict, allocate, sync_handle);
    fn append(&mut self, data: &[u8]) -> Result<()> {
        let at = self.inner.size();
        self.prepare_write(at, data.len() as u64);
        self.inner.append(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::Mutex;

    struct Recording {
        size: u64,
        calls: Arc<Mutex<Vec<(u64, u64, bool)>>>,
    }

    impl WritableFile for Recording {
        fn append(&mut self, data: &[u8]) -> Result<()> {
            self.size += data.len() as u64;
            Ok(())
        }
        fn flush(&mut self) -> Result<()> {
            Ok(())
        }
        fn sync(&mut self) -> Result<()> {
            Ok(())
        }
        fn size(&self) -> u64 {
            self.size
        }
        fn allocate(&mut self, offset: u64, len: u64, reserve: bool) -> Result<()> {
            self.calls.lock().unwrap().push((offset, len, reserve));
            Ok(())
        }
    }

    #[test]
    fn reserves_whole_blocks_as_the_file_grows() {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let p = Preallocation { block_size: 100, fallocate: true };
        let mut f = Preallocating::wrap(Box::new(Recording { size: 0, calls: calls.clone() }), p);
        f.append(&[0; 10]).unwrap(); // [0, 10): block 1
        f.append(&[0; 80]).unwrap(); // [10, 90): within it
        f.append(&[0; 250]).unwrap(); // [90, 340): blocks 2..=4 at once
        f.append(&[0; 60]).unwrap(); // [340, 400): within block 4
        f.append(&[0; 1]).unwrap(); // 400: block 5
        assert_eq!(*calls.lock().unwrap(), vec![(0, 100, true), (100, 300, true), (400, 100, true)]);
        // Without fallocate the same blocks are told, reserving nothing.
        let calls = Arc::new(Mutex::new(Vec::new()));
        let p = Preallocation { block_size: 100, fallocate: false };
        let mut f = Preallocating::wrap(Box::new(Recording { size: 0, calls: calls.clone() }), p);
        f.append(&[0; 150]).unwrap();
        assert_eq!(*calls.lock().unwrap(), vec![(0, 200, false)]);
    }

    #[test]
    fn block_size_zero_reserves_nothing() {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let p = Preallocation { block_size: 0, fallocate: true };
        let mut f = Preallocating::wrap(Box::new(Recording { size: 0, calls: calls.clone() }), p);
        f.append(&[0; 1000]).unwrap();
        assert!(calls.lock().unwrap().is_empty());
    }
}
