//! Whole-file checksums of table and blob files (RocksDB's `file_checksum_gen_factory` with
//! its one built-in factory, `FileChecksumGenCrc32cFactory`, and its generator
//! `FileChecksumGenCrc32c`).
//!
//! The checksum covers every byte of the file, in the order written: a CRC32C (not masked),
//! started at 0 and extended by each append. The value recorded is its 4 bytes big-endian:
//!
//! ```text
//! file checksum        = crc32c(file bytes [0, size))           (u32)
//! recorded value       = [crc >> 24, crc >> 16, crc >> 8, crc]  (4 bytes, big-endian)
//! recorded func name   = "FileChecksumCrc32c"
//! ```
//!
//! A table records them in its MANIFEST NewFile4 entry (custom fields 7 `file_checksum` and
//! 8 `file_checksum_func_name`), a blob file in its BlobFileAddition (`checksum_value`,
//! `checksum_method`). Without a factory RocksDB records the empty checksum and the name
//! "Unknown" for a table, and nothing for a blob file.
//!
//! Files a writer makes get their checksum while they are written ([`ChecksummedFile`], as
//! RocksDB's `WritableFileWriter` updates its generator on each append); files that come
//! from elsewhere (ingestion) and checks of written files read the file back
//! ([`file_checksum_of`], RocksDB's `GenerateOneFileChecksum`).

use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use crate::error::Result;
use crate::fs::{FileSystem, WritableFile};

/// The name of RocksDB's built-in factory, as OPTIONS files and option strings give it.
pub const CRC32C_FACTORY_NAME: &str = "FileChecksumGenCrc32cFactory";
/// The name the built-in generator records with each checksum.
pub const CRC32C_FUNC_NAME: &str = "FileChecksumCrc32c";
/// What RocksDB records for a table written without a factory (`kUnknownFileChecksumFuncName`).
pub const UNKNOWN_FUNC_NAME: &str = "Unknown";

/// The recorded value of a CRC32C file checksum: its bytes big-endian.
pub fn crc32c_value(crc: u32) -> Vec<u8> {
    crc.to_be_bytes().to_vec()
}

/// The checksum a [`ChecksummedFile`] has gathered so far; read once the file is finished.
#[derive(Clone, Debug, Default)]
pub struct ChecksumTap(Arc<AtomicU32>);

impl ChecksumTap {
    /// The recorded value of the bytes appended so far.
    pub fn value(&self) -> Vec<u8> {
        crc32c_value(self.0.load(Ordering::Acquire))
    }
}

/// A writable file that checksums what is appended to it (the bytes that make the file:
/// padding and aligned writes are the inner file's business and do not change them).
pub struct ChecksummedFile {
    inner: Box<dyn WritableFile>,
    crc: u32,
    tap: ChecksumTap,
}

impl ChecksummedFile {
    /// `file` checksummed when `on` (the database has a file checksum factory); the tap
    /// reads the checksum back. Off: `file` as it is, and no tap.
    pub fn wrap(file: Box<dyn WritableFile>, on: bool) -> (Box<dyn WritableFile>, Option<ChecksumTap>) {
        if !on {
            return (file, None);
        }
        let tap = ChecksumTap::default();
        (Box::new(ChecksummedFile { inner: file, crc: 0, tap: tap.clone() }), Some(tap))
    }
}

impl WritableFile for ChecksummedFile {
    shale_base::forward_writable!(inner: flush, sync, size, range_sync, range_sync_strict, allocate, sync_handle);
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.inner.append(data)?;
        self.crc = crc32c::crc32c_append(self.crc, data);
        self.tap.0.store(self.crc, Ordering::Release);
        Ok(())
    }
}

/// The table's MANIFEST checksum fields: (value, function name) of a finished file's tap,
/// or RocksDB's empty value and "Unknown" without one.
pub fn recorded(tap: Option<&ChecksumTap>) -> (Vec<u8>, String) {
    match tap {
        Some(t) => (t.value(), CRC32C_FUNC_NAME.to_string()),
        None => (Vec::new(), UNKNOWN_FUNC_NAME.to_string()),
    }
}

/// How many bytes [`file_checksum_of`] reads at a time when not told (RocksDB's
/// `GenerateOneFileChecksum` default readahead, 2 MiB).
pub const DEFAULT_READ_SIZE: usize = 2 << 20;

/// The recorded CRC32C value of the whole file at `path`, read `chunk` bytes at a time (0:
/// [`DEFAULT_READ_SIZE`]).
pub fn file_checksum_of(fs: &dyn FileSystem, path: &Path, chunk: usize) -> Result<Vec<u8>> {
    let file = fs.new_random_access_file(path)?;
    let size = file.size()?;
    let chunk = if chunk == 0 { DEFAULT_READ_SIZE } else { chunk };
    let mut buf = vec![0u8; (chunk as u64).min(size.max(1)) as usize];
    let mut crc = 0u32;
    let mut off = 0u64;
    while off < size {
        let want = ((size - off) as usize).min(buf.len());
        let n = file.read_at(off, &mut buf[..want])?;
        if n == 0 {
            return Err(crate::error::Error::corruption(format!(
                "{}: file ends at offset {off}, {size} bytes expected",
                path.display()
            )));
        }
        crc = crc32c::crc32c_append(crc, &buf[..n]);
        off += n as u64;
    }
    Ok(crc32c_value(crc))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::fs::MemFileSystem;

    #[test]
    fn written_and_read_back_checksums_agree_and_are_big_endian_crc32c() {
        let fs = MemFileSystem::new();
        let path = Path::new("/f");
        let (mut f, tap) = ChecksummedFile::wrap(fs.new_writable_file(path).unwrap(), true);
        f.append(b"hello ").unwrap();
        f.append(b"world").unwrap();
        f.sync().unwrap();
        drop(f);
        let want = crc32c::crc32c(b"hello world").to_be_bytes().to_vec();
        assert_eq!(tap.unwrap().value(), want);
        assert_eq!(file_checksum_of(&fs, path, 3).unwrap(), want);
        // The empty file: crc32c of nothing is 0.
        let (mut f, tap) = ChecksummedFile::wrap(fs.new_writable_file(Path::new("/e")).unwrap(), true);
        f.sync().unwrap();
        assert_eq!(tap.unwrap().value(), vec![0, 0, 0, 0]);
        assert_eq!(file_checksum_of(&fs, Path::new("/e"), 0).unwrap(), vec![0, 0, 0, 0]);
        // Off: no tap, RocksDB's "Unknown".
        let (_, tap) = ChecksummedFile::wrap(fs.new_writable_file(Path::new("/o")).unwrap(), false);
        assert!(tap.is_none());
        assert_eq!(recorded(None), (Vec::new(), "Unknown".to_string()));
    }
}
