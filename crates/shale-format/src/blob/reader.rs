//! Reading blobs (RocksDB's `BlobFileReader` and `BlobFileCache`); the layout is drawn in
//! format.rs.
//!
//! A blob file is opened once (header and footer checked: magic, version, column family,
//! no TTL) and kept in the database's `BlobFileCache` by number. A read takes the blob
//! index from the SST entry, checks the offset lies within the file, reads the record
//! (header, key, value), checks the header CRC, that the record's key is the entry's user
//! key, the value size and the blob CRC, then decompresses. Every failure is Corruption
//! naming the blob file and the offset, never a wrong value.
//!
//! Statistics, where RocksDB 11.8.1's integrated BlobDB counts them (`BlobFileReader`,
//! `BlobSource`): every read from a blob file adds its size to
//! `rocksdb.blobdb.blob.file.bytes.read` (the header and footer at open, a whole record
//! for each value: RocksDB reads the record when it verifies checksums, its default) and is
//! timed into `rocksdb.blobdb.blob.file.read.micros`; decompression is timed into
//! `rocksdb.blobdb.decompression.micros`. A family's blob cache (`set_blob_cache`) counts
//! `rocksdb.blobdb.cache.{hit,miss,add,add.failures,bytes.read,bytes.write}`, the bytes being
//! the value's (uncompressed) size. A read looks the cache up first and, with `fill_cache`,
//! adds what it read; a strict cache that refuses the value fails the read (`BlobFetcher`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::format::{
    valid_blob_offset, BlobFooter, BlobHeader, BlobIndex, RecordHeader, FOOTER_SIZE, HEADER_SIZE,
    RECORD_HEADER_SIZE,
};
use crate::error::{Error, ErrorKind, Result};
use crate::fs::{FileSystem, FileSystemRef, RandomAccessFile};
use crate::statistics::{record_tick, Histogram, Statistics, StopWatch, Ticker};
use shale_base::compression::{uncompress, CompressionType};

pub fn blob_file_name(number: u64) -> String {
    format!("{number:06}.blob")
}

pub fn blob_file_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(blob_file_name(number))
}

fn corrupt_at(number: u64, offset: u64, what: impl std::fmt::Display) -> Error {
    Error::corruption(format!("blob file {} offset {offset}: {what}", blob_file_name(number)))
}

/// Reads `len` bytes at `offset`, failing on a short read; counted and timed as RocksDB's
/// `BlobFileReader::ReadFromFile` (the bytes asked for, before the read).
fn read_exact(
    file: &dyn RandomAccessFile,
    stats: Option<&Statistics>,
    number: u64,
    offset: u64,
    len: usize,
) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    read_exact_into(file, stats, number, offset, &mut buf)?;
    Ok(buf)
}

/// `read_exact` into `buf` (its whole length).
fn read_exact_into(
    file: &dyn RandomAccessFile,
    stats: Option<&Statistics>,
    number: u64,
    offset: u64,
    buf: &mut [u8],
) -> Result<()> {
    let len = buf.len();
    record_tick(stats, Ticker::BlobDbBlobFileBytesRead, len as u64);
    let _t = StopWatch::new(stats, Histogram::BlobDbBlobFileReadMicros);
    let mut done = 0;
    while done < len {
        let n = file.read_at(offset + done as u64, &mut buf[done..])?;
        if n == 0 {
            return Err(corrupt_at(number, offset, format!("truncated: read {done} of {len} bytes")));
        }
        done += n;
    }
    Ok(())
}

/// The largest record read into the thread's scratch buffer (see [`with_record`]).
const SCRATCH_MAX: usize = 256 << 10;

/// Reads the `len` bytes of a record at `offset` and hands them to `f`, which makes the
/// value out of them. A record up to [`SCRATCH_MAX`] is read into this thread's scratch
/// buffer, kept from read to read, so a Get allocates only the value it returns (a buffer
/// allocated and zero-filled for each record was, with the value's copy out of it, about a
/// third of a 4 KiB blob read's instructions); larger ones get a buffer of their own.
fn with_record<R>(
    file: &dyn RandomAccessFile,
    stats: Option<&Statistics>,
    number: u64,
    offset: u64,
    len: usize,
    f: impl FnOnce(&[u8]) -> Result<R>,
) -> Result<R> {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let mut f = Some(f);
    if len <= SCRATCH_MAX {
        let done = SCRATCH.try_with(|cell| {
            // Taken already (a read made while another is under way on this thread): the
            // read below allocates.
            let mut scratch = cell.try_borrow_mut().ok()?;
            let f = f.take()?;
            if scratch.len() < len {
                scratch.resize(len, 0);
            }
            let rec = &mut scratch[..len];
            Some(read_exact_into(file, stats, number, offset, rec).and_then(|()| f(rec)))
        });
        if let Ok(Some(r)) = done {
            return r;
        }
    }
    // `f` is still here: the scratch path returned above whenever it took it.
    let Some(f) = f else { return Err(corrupt_at(number, offset, "blob record not read")) };
    let rec = read_exact(file, stats, number, offset, len)?;
    f(&rec)
}

/// One open blob file.
pub struct BlobFileReader {
    number: u64,
    file: Arc<dyn RandomAccessFile>,
    file_size: u64,
    header: BlobHeader,
    stats: Option<Arc<Statistics>>,
}

/// The header of blob file `number`, checked to belong to column family `cf_id`.
fn read_header(
    file: &dyn crate::fs::RandomAccessFile,
    st: Option<&Statistics>,
    number: u64,
    cf_id: u32,
) -> Result<BlobHeader> {
    let header = BlobHeader::decode(&read_exact(file, st, number, 0, HEADER_SIZE)?)
        .map_err(|e| corrupt_at(number, 0, crate::table::format::strip_prefix(&e)))?;
    if header.column_family_id != cf_id {
        return Err(corrupt_at(
            number,
            0,
            format!("Column family ID mismatch: {} in the file, {cf_id} expected", header.column_family_id),
        ));
    }
    Ok(header)
}

impl BlobFileReader {
    /// Opens blob file `number` of column family `cf_id` in `dir`.
    pub fn open(fs: &dyn FileSystem, dir: &Path, number: u64, cf_id: u32) -> Result<BlobFileReader> {
        Self::open_counted(fs, dir, number, cf_id, None)
    }

    /// `open`, counting its reads and those of its `get`s into `stats`.
    pub fn open_counted(
        fs: &dyn FileSystem,
        dir: &Path,
        number: u64,
        cf_id: u32,
        stats: Option<Arc<Statistics>>,
    ) -> Result<BlobFileReader> {
        let st = stats.as_deref();
        let path = blob_file_path(dir, number);
        let file = fs.new_random_access_file(&path).map_err(|e| {
            if e.kind() == ErrorKind::IOError && !fs.file_exists(&path) {
                Error::corruption(format!("blob file {} is missing", blob_file_name(number)))
            } else {
                e
            }
        })?;
        let file_size = file.size()?;
        if file_size < (HEADER_SIZE + FOOTER_SIZE) as u64 {
            return Err(corrupt_at(number, 0, format!("Malformed blob file: {file_size} bytes")));
        }
        let header = read_header(&*file, st, number, cf_id)?;
        if header.has_ttl || header.expiration_range != (0, 0) {
            return Err(corrupt_at(number, 0, "Unexpected TTL blob file"));
        }
        let at = file_size - FOOTER_SIZE as u64;
        let footer = BlobFooter::decode(&read_exact(&*file, st, number, at, FOOTER_SIZE)?)
            .map_err(|e| corrupt_at(number, at, crate::table::format::strip_prefix(&e)))?;
        if footer.expiration_range != (0, 0) {
            return Err(corrupt_at(number, at, "Unexpected TTL blob file"));
        }
        Ok(BlobFileReader { number, file, file_size, header, stats })
    }

    /// Opens blob file `number` while its writer still appends to it (blob direct write,
    /// RocksDB's `ResolveBlobDirectWriteIndex` with `allow_footer_skip_retry`): the header is
    /// checked, there is no footer yet, and the records written so far (the file's size now)
    /// are readable. Not cached: the next read sees the records appended meanwhile.
    pub fn open_unsealed(
        fs: &dyn FileSystem,
        dir: &Path,
        number: u64,
        cf_id: u32,
        stats: Option<Arc<Statistics>>,
    ) -> Result<BlobFileReader> {
        let st = stats.as_deref();
        let path = blob_file_path(dir, number);
        let file = fs.new_random_access_file(&path)?;
        let size = file.size()?;
        if size < HEADER_SIZE as u64 {
            return Err(corrupt_at(number, 0, format!("Malformed blob file: {size} bytes")));
        }
        let header = read_header(&*file, st, number, cf_id)?;
        // The records end where the file ends now: counted as if the footer followed, so
        // `valid_blob_offset` bounds a record by the bytes written.
        Ok(BlobFileReader { number, file, file_size: size + FOOTER_SIZE as u64, header, stats })
    }

    pub fn number(&self) -> u64 {
        self.number
    }

    pub fn file_size(&self) -> u64 {
        self.file_size
    }

    /// The value `index` points at, for `user_key`.
    pub fn get(&self, user_key: &[u8], index: &BlobIndex) -> Result<Vec<u8>> {
        self.get_with_readahead(user_key, index, 0)
    }

    /// `get`, first asking the file system to prefetch `readahead` bytes from the record
    /// (compactions, `blob_compaction_readahead_size`).
    pub fn get_with_readahead(&self, user_key: &[u8], index: &BlobIndex, readahead: u64) -> Result<Vec<u8>> {
        let n = self.number;
        if index.compression != self.header.compression {
            return Err(corrupt_at(
                n,
                index.offset,
                format!(
                    "Compression type mismatch when reading blob: index says {}, file has {}",
                    index.compression, self.header.compression
                ),
            ));
        }
        let key_size = user_key.len() as u64;
        if !valid_blob_offset(index.offset, key_size, index.size, self.file_size) {
            return Err(corrupt_at(
                n,
                index.offset,
                format!("Invalid blob offset (size {}, file size {})", index.size, self.file_size),
            ));
        }
        let start = index.offset - key_size - RECORD_HEADER_SIZE as u64;
        let len = RECORD_HEADER_SIZE + user_key.len() + index.size as usize;
        if readahead > len as u64 {
            self.file.prefetch(start, readahead.min(self.file_size - start))?;
        }
        let stats = self.stats.as_deref();
        with_record(&*self.file, stats, n, start, len, |rec| self.value_of(user_key, index, start, rec))
    }

    /// The value of the record `rec` (read at `start`) that `index` points at, for `user_key`:
    /// checked against the index and the key, and uncompressed.
    fn value_of(&self, user_key: &[u8], index: &BlobIndex, start: u64, rec: &[u8]) -> Result<Vec<u8>> {
        let (n, stats) = (self.number, self.stats.as_deref());
        let key_size = user_key.len() as u64;
        let h = RecordHeader::decode(&rec[..RECORD_HEADER_SIZE])
            .map_err(|e| corrupt_at(n, start, crate::table::format::strip_prefix(&e)))?;
        if h.key_size != key_size || h.value_size != index.size {
            return Err(corrupt_at(n, start, "Invalid blob record: sizes differ from the blob index"));
        }
        let (key, value) = rec[RECORD_HEADER_SIZE..].split_at(user_key.len());
        if key != user_key {
            return Err(corrupt_at(n, start, "Key mismatch in blob record"));
        }
        if super::format::blob_crc(key, value) != h.blob_crc {
            return Err(corrupt_at(n, start, "Blob CRC mismatch"));
        }
        match CompressionType::from_u8(index.compression) {
            Some(CompressionType::None) => Ok(value.to_vec()),
            Some(t) => {
                let _t = StopWatch::new(stats, Histogram::BlobDbDecompressionMicros);
                uncompress(t, value).map_err(|e| {
                    corrupt_at(
                        n,
                        index.offset,
                        format!("uncompressing blob: {}", crate::table::format::strip_prefix(&e)),
                    )
                })
            }
            None => {
                Err(corrupt_at(n, index.offset, format!("unknown compression type {}", index.compression)))
            }
        }
    }
}

/// Open blob files by number (RocksDB's `BlobFileCache`).
pub struct BlobFileCache {
    fs: FileSystemRef,
    dir: PathBuf,
    map: Mutex<HashMap<u64, Arc<BlobFileReader>>>,
    /// Blob files the write path still appends to (blob direct write): read without a
    /// footer and never cached.
    unsealed: Mutex<std::collections::HashSet<u64>>,
    /// Blob files on disk that no Version names and no writer owns (left by a process that
    /// stopped while blob direct write appended to them): a blob index naming one is
    /// Corruption, as RocksDB's `Version::GetBlob` finds no such file.
    unregistered: Mutex<std::collections::HashSet<u64>>,
    /// How many numbers `unsealed` and `unregistered` hold together, kept under their
    /// locks: at 0 (no blob direct write, no file left by a crash) a read takes neither.
    special: std::sync::atomic::AtomicUsize,
    /// This open's key base in blob caches (`set_blob_cache`), as tables have theirs in
    /// block caches (`cache/block_cache.rs`).
    session: u64,
    /// The database's statistics (`Options::enable_statistics`).
    stats: Option<Arc<Statistics>>,
}

impl BlobFileCache {
    pub fn new(fs: FileSystemRef, dir: PathBuf, stats: Option<Arc<Statistics>>) -> BlobFileCache {
        BlobFileCache {
            fs,
            dir,
            map: Mutex::new(HashMap::new()),
            unsealed: Mutex::new(std::collections::HashSet::new()),
            unregistered: Mutex::new(std::collections::HashSet::new()),
            special: std::sync::atomic::AtomicUsize::new(0),
            session: crate::cache::new_cache_session(),
            stats,
        }
    }

    /// This open's key base in blob caches (what a flush that warms the cache keys by).
    pub fn session(&self) -> u64 {
        self.session
    }

    /// Blob file `number` is being written by the write path (blob direct write): reads
    /// open it without a footer and do not cache the reader until [`Self::mark_sealed`].
    pub fn mark_unsealed(&self, number: u64) {
        let mut g = self.unsealed.lock();
        if g.insert(number) {
            self.special.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// Blob file `number` has its footer: from now on it is read (and cached) as any other.
    pub fn mark_sealed(&self, number: u64) {
        {
            let mut g = self.unsealed.lock();
            if g.remove(&number) {
                self.special.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
        self.evict(number);
    }

    /// Blob file `number` is kept on disk but belongs to no Version (see `unregistered`).
    pub fn mark_unregistered(&self, number: u64) {
        let mut g = self.unregistered.lock();
        if g.insert(number) {
            self.special.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    pub fn reader(&self, number: u64, cf_id: u32) -> Result<Arc<BlobFileReader>> {
        let special = self.special.load(std::sync::atomic::Ordering::SeqCst) != 0;
        if special && self.unregistered.lock().contains(&number) {
            return Err(Error::corruption("Invalid blob file number"));
        }
        if special && self.unsealed.lock().contains(&number) {
            return Ok(Arc::new(BlobFileReader::open_unsealed(
                &*self.fs,
                &self.dir,
                number,
                cf_id,
                self.stats.clone(),
            )?));
        }
        if let Some(r) = self.map.lock().get(&number) {
            return Ok(r.clone());
        }
        let r =
            Arc::new(BlobFileReader::open_counted(&*self.fs, &self.dir, number, cf_id, self.stats.clone())?);
        self.map.lock().insert(number, r.clone());
        Ok(r)
    }

    /// The value of the blob index `index_bytes` of `user_key` in family `cf_id`.
    pub fn fetch(&self, cf_id: u32, user_key: &[u8], index_bytes: &[u8]) -> Result<Vec<u8>> {
        self.fetch_with_readahead(cf_id, user_key, index_bytes, 0)
    }

    pub fn fetch_with_readahead(
        &self,
        cf_id: u32,
        user_key: &[u8],
        index_bytes: &[u8],
        readahead: u64,
    ) -> Result<Vec<u8>> {
        let index = BlobIndex::decode(index_bytes)?;
        if index.expiration.is_some() {
            return Err(Error::not_supported("blob indexes with TTL (stacked BlobDB) are not supported"));
        }
        self.reader(index.file_number, cf_id)?.get_with_readahead(user_key, &index, readahead)
    }

    pub fn evict(&self, number: u64) {
        self.map.lock().remove(&number);
    }
}

/// Resolves blob indexes of one column family (what iterators and compactions hold).
///
/// As RocksDB 11.8.1's `BlobSource::GetBlob`: the family's blob cache is looked up first; on a
/// miss the value is read from its file and, when `fill_cache` is set, added to the cache. A
/// strict-capacity cache that refuses the value fails the read with its MemoryLimit error
/// (`Aborted`), as block reads do. Compactions look the cache up without filling it
/// (`fill_cache = false`, as `CompactionJob::InitializeReadOptionsAndBoundaries`).
#[derive(Clone)]
pub struct BlobFetcher {
    pub cache: Arc<BlobFileCache>,
    pub cf_id: u32,
    /// The family's blob cache (`set_blob_cache`).
    pub value_cache: Option<Arc<crate::cache::BlockCache>>,
    /// `ReadOptions::fill_cache`: add values read from files to `value_cache`.
    pub fill_cache: bool,
    /// `ReadTier::BlockCache`: a value not in `value_cache` is not read from its file; the
    /// read fails with Incomplete, as RocksDB's `BlobSource::GetBlob` with `no_io`.
    pub no_io: bool,
}

impl BlobFetcher {
    pub fn fetch(&self, user_key: &[u8], index_bytes: &[u8]) -> Result<Vec<u8>> {
        self.fetch_via_cache(user_key, index_bytes, None)
    }

    /// `fetch` with a prefetch of `readahead` bytes (compactions).
    pub fn fetch_with_readahead(
        &self,
        user_key: &[u8],
        index_bytes: &[u8],
        readahead: u64,
    ) -> Result<Vec<u8>> {
        self.fetch_via_cache(user_key, index_bytes, Some(readahead))
    }

    fn fetch_via_cache(
        &self,
        user_key: &[u8],
        index_bytes: &[u8],
        readahead: Option<u64>,
    ) -> Result<Vec<u8>> {
        let from_file = || {
            if self.no_io {
                return Err(Error::new(ErrorKind::Incomplete, "Cannot read blob(s): no disk I/O allowed"));
            }
            match readahead {
                Some(r) => self.cache.fetch_with_readahead(self.cf_id, user_key, index_bytes, r),
                None => self.cache.fetch(self.cf_id, user_key, index_bytes),
            }
        };
        let Some(vc) = &self.value_cache else { return from_file() };
        let index = BlobIndex::decode(index_bytes)?;
        let key = crate::cache::OffsetableCacheKey::new(self.cache.session, index.file_number)
            .with_offset(index.offset);
        let stats = self.cache.stats.as_deref();
        if let Some(b) = vc.get(&key) {
            // A cached value is stored as a block without restarts: the value, then 0u32.
            let d = b.data();
            let value = d[..d.len().saturating_sub(4)].to_vec();
            if let Some(s) = stats {
                s.record_ticks(&[
                    (Ticker::BlobDbCacheHit, 1),
                    (Ticker::BlobDbCacheBytesRead, value.len() as u64),
                ]);
            }
            return Ok(value);
        }
        record_tick(stats, Ticker::BlobDbCacheMiss, 1);
        let value = from_file()?;
        if !self.fill_cache {
            return Ok(value);
        }
        let mut data = Vec::with_capacity(value.len() + 4);
        data.extend_from_slice(&value);
        data.extend_from_slice(&[0, 0, 0, 0]);
        let block = crate::table::block::Block::new(data)?;
        // A read's insert, which may give up on a lock another thread holds rather than wait
        // (as a block read's: `BlockCache::fill_block`).
        match vc.fill_block(key, Arc::new(block), crate::cache::Priority::Bottom) {
            Ok(true) => {}
            Ok(false) => {
                // It did not take place: an add failure, as RocksDB's `PutBlobIntoCache`
                // counts a non-OK `InsertEntryIntoCache`; the read goes on.
                record_tick(stats, Ticker::BlobDbCacheAddFailures, 1);
                return Ok(value);
            }
            Err(e) => {
                // RocksDB's strict_capacity_limit: `PutBlobIntoCache` fails and so does the read.
                record_tick(stats, Ticker::BlobDbCacheAddFailures, 1);
                return Err(e);
            }
        }
        if let Some(s) = stats {
            s.record_ticks(&[
                (Ticker::BlobDbCacheAdd, 1),
                (Ticker::BlobDbCacheBytesWrite, value.len() as u64),
            ]);
        }
        Ok(value)
    }
}
