//! Helpers shared by the fuzz targets and the seed generator: files over a byte slice
//! (the engine's `RandomAccessFile` / `SequentialFile` traits) and the flag byte that
//! opens some inputs.

use std::sync::Arc;

use shale::fs::{RandomAccessFile, SequentialFile};
use shale::Result;

/// A read-only file holding `data`.
pub struct BytesFile(pub Arc<Vec<u8>>);

impl RandomAccessFile for BytesFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let len = self.0.len() as u64;
        if offset >= len {
            return Ok(0);
        }
        let start = offset as usize;
        let n = buf.len().min(self.0.len() - start);
        buf[..n].copy_from_slice(&self.0[start..start + n]);
        Ok(n)
    }

    fn size(&self) -> Result<u64> {
        Ok(self.0.len() as u64)
    }
}

/// A front-to-back reader over `data`.
pub struct BytesSeqFile {
    data: Arc<Vec<u8>>,
    pos: usize,
}

impl BytesSeqFile {
    pub fn new(data: Arc<Vec<u8>>) -> BytesSeqFile {
        BytesSeqFile { data, pos: 0 }
    }
}

impl SequentialFile for BytesSeqFile {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let n = buf.len().min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Block-target input layout: `flags | body`.
pub mod block_input {
    /// bits 0-1 of the flag byte: how the body is read.
    pub const KIND_DATA: u8 = 0; // a data block, internal keys
    pub const KIND_META: u8 = 1; // a meta block, bytewise keys
    pub const KIND_INDEX: u8 = 2; // an index block; bits 2-4 give its IndexFormat
    pub const KIND_BUILD: u8 = 3; // entries to build a block from, then check the decode
    /// bits 2-4 for KIND_INDEX.
    pub const INDEX_USER_KEY: u8 = 1 << 2;
    pub const INDEX_DELTA: u8 = 1 << 3;
    pub const INDEX_FIRST_KEY: u8 = 1 << 4;
    /// bit 5: the body is `contents | type byte | checksum` (a block as stored in a
    /// table) and goes through the read + decompress path first; the byte after the
    /// flags names the checksum type (checked unless it is 0 = none).
    pub const WITH_TRAILER: u8 = 1 << 5;
}
