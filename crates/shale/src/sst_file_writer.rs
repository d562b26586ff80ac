//! rust-rocksdb's `SstFileWriter`. Writing external SSTs for ingestion is issue 17's: every
//! call that would write returns NotSupported (nothing is ever written).

use std::path::Path;

use crate::error::{Error, Result};
use crate::options::Options;

/// Writes a sorted table file for ingestion, as rust-rocksdb's `SstFileWriter`.
pub struct SstFileWriter<'a> {
    _opts: &'a Options,
}

fn unsupported() -> Error {
    Error::not_supported("SstFileWriter is not supported by Shale yet (issue 17)")
}

impl<'a> SstFileWriter<'a> {
    pub fn create(opts: &'a Options) -> Self {
        SstFileWriter { _opts: opts }
    }

    pub fn open<P: AsRef<Path>>(&'a self, path: P) -> Result<()> {
        let _ = path;
        Err(unsupported())
    }

    pub fn finish(&mut self) -> Result<()> {
        Err(unsupported())
    }

    /// Nothing has been written.
    pub fn file_size(&self) -> u64 {
        0
    }

    pub fn put<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, key: K, value: V) -> Result<()> {
        let _ = (key, value);
        Err(unsupported())
    }

    pub fn put_with_ts<K: AsRef<[u8]>, V: AsRef<[u8]>, S: AsRef<[u8]>>(
        &mut self,
        key: K,
        ts: S,
        value: V,
    ) -> Result<()> {
        let _ = (key, ts, value);
        Err(unsupported())
    }

    pub fn merge<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, key: K, value: V) -> Result<()> {
        let _ = (key, value);
        Err(unsupported())
    }

    pub fn delete<K: AsRef<[u8]>>(&mut self, key: K) -> Result<()> {
        let _ = key;
        Err(unsupported())
    }

    pub fn delete_range<K: AsRef<[u8]>>(&mut self, begin_key: K, end_key: K) -> Result<()> {
        let _ = (begin_key, end_key);
        Err(unsupported())
    }

    pub fn delete_with_ts<K: AsRef<[u8]>, S: AsRef<[u8]>>(&mut self, key: K, ts: S) -> Result<()> {
        let _ = (key, ts);
        Err(unsupported())
    }
}
