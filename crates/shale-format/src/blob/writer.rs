//! Writing blob files during flush and compaction (RocksDB's `BlobFileBuilder`); the layout
//! is drawn in format.rs.
//!
//! `BlobFileBuilder::add` takes an entry's user key and value: a value shorter than
//! `min_blob_size` stays in the SST (None); a longer one is compressed with
//! `blob_compression_type` (always, as RocksDB: the index names the compression), appended
//! as a record to the open blob file (opened on first use with a fresh file number), and the
//! blob index for the SST entry is returned. A file is closed (footer written, synced) once
//! it reaches `blob_file_size`, and by `finish`. Each closed file yields a
//! `BlobFileAddition` for the MANIFEST: count and bytes (record header + key + value summed).
//!
//! Statistics, as RocksDB 11.8.1's `BlobLogWriter` and `BlobFileBuilder` count them: every
//! byte appended (header, records, footer) in `rocksdb.blobdb.blob.file.bytes.written` (each
//! append timed into `rocksdb.blobdb.blob.file.write.micros`, as RocksDB's
//! `WritableFileWriter::Append`), one
//! `rocksdb.blobdb.blob.file.synced` per closed file (its sync timed into
//! `rocksdb.blobdb.blob.file.sync.micros`), compression timed into
//! `rocksdb.blobdb.compression.micros`.

use std::path::Path;
use std::sync::Arc;

use super::format::{BlobFooter, BlobHeader, BlobIndex, RecordHeader, RECORD_HEADER_SIZE};
use super::reader::blob_file_path;
use crate::cache::BlockCache;
use crate::error::Result;
use crate::fs::{FileSystem, WritableFile};
use crate::statistics::{record_tick, Histogram, Statistics, StopWatch, Ticker};
use crate::version::edit::BlobFileAddition;
use shale_base::compression::{compress_forced, CodecOpts, CompressionType};

/// Appends `data`, timed as RocksDB's `WritableFileWriter::Append` of a blob file.
fn append(stats: Option<&Statistics>, file: &mut dyn WritableFile, data: &[u8]) -> Result<()> {
    let _t = StopWatch::new(stats, Histogram::BlobDbBlobFileWriteMicros);
    file.append(data)
}

/// What a flush or compaction needs to write blob files.
#[derive(Clone, Copy)]
pub struct BlobWriteOptions {
    pub min_blob_size: u64,
    pub blob_file_size: u64,
    pub compression: CompressionType,
    /// `blob_compression_opts`: the codec's settings every blob is compressed with
    /// ([`compress_forced`]).
    pub codec: CodecOpts,
    pub column_family_id: u32,
    /// The database's `file_checksum_gen_factory` is the built-in CRC32C one: each file's
    /// whole-file checksum is recorded in its addition (`crate::file_checksum`), as
    /// RocksDB's `BlobLogWriter::AppendFooter` takes it from the file's writer.
    pub file_checksum: bool,
}

struct OpenBlob {
    number: u64,
    file: Box<dyn WritableFile>,
    count: u64,
    bytes: u64,
    checksum: Option<crate::file_checksum::ChecksumTap>,
}

pub struct BlobFileBuilder<'a> {
    fs: &'a dyn FileSystem,
    dir: &'a Path,
    opts: BlobWriteOptions,
    new_file_number: &'a dyn Fn() -> u64,
    current: Option<OpenBlob>,
    /// Closed files.
    pub additions: Vec<BlobFileAddition>,
    /// Every file number this builder created (closed or not), for cleanup on failure.
    pub created: Vec<u64>,
    stats: Option<&'a Statistics>,
    /// `prepopulate_blob_cache` kFlushOnly: the blob cache each blob written goes into, and
    /// the open's key base there (`BlobFileCache::session`).
    warm: Option<(Arc<BlockCache>, u64)>,
}

impl<'a> BlobFileBuilder<'a> {
    pub fn new(
        fs: &'a dyn FileSystem,
        dir: &'a Path,
        opts: BlobWriteOptions,
        new_file_number: &'a dyn Fn() -> u64,
    ) -> BlobFileBuilder<'a> {
        BlobFileBuilder {
            fs,
            dir,
            opts,
            new_file_number,
            current: None,
            additions: Vec::new(),
            created: Vec::new(),
            stats: None,
            warm: None,
        }
    }

    /// Counts what this builder writes into `stats` (the database's statistics).
    pub fn counted(mut self, stats: Option<&'a Statistics>) -> Self {
        self.stats = stats;
        self
    }

    /// RocksDB's `PutBlobIntoCacheIfNeeded` (a flush with `prepopulate_blob_cache`
    /// kFlushOnly): each blob written is put, uncompressed, into `cache` under the key reads
    /// look it up by (open `session`, file number, offset).
    pub fn warm_cache(mut self, cache: Arc<BlockCache>, session: u64) -> Self {
        self.warm = Some((cache, session));
        self
    }

    pub fn min_blob_size(&self) -> u64 {
        self.opts.min_blob_size
    }

    /// Writes `value` to a blob file when it is at least `min_blob_size` (and not empty);
    /// returns the blob index to store instead.
    pub fn add(&mut self, user_key: &[u8], value: &[u8]) -> Result<Option<Vec<u8>>> {
        if value.is_empty() || (value.len() as u64) < self.opts.min_blob_size {
            return Ok(None);
        }
        let stored;
        let blob: &[u8] = if self.opts.compression == CompressionType::None {
            value
        } else {
            let _t = StopWatch::new(self.stats, Histogram::BlobDbCompressionMicros);
            stored = compress_forced(self.opts.compression, &self.opts.codec, value)?;
            &stored
        };
        if self.current.is_none() {
            let number = (self.new_file_number)();
            self.created.push(number);
            let file = self.fs.new_writable_file(&blob_file_path(self.dir, number))?;
            let (mut file, checksum) =
                crate::file_checksum::ChecksummedFile::wrap(file, self.opts.file_checksum);
            let header = BlobHeader {
                column_family_id: self.opts.column_family_id,
                compression: self.opts.compression as u8,
                has_ttl: false,
                expiration_range: (0, 0),
            };
            let header = header.encode();
            append(self.stats, &mut *file, &header)?;
            record_tick(self.stats, Ticker::BlobDbBlobFileBytesWritten, header.len() as u64);
            self.current = Some(OpenBlob { number, file, count: 0, bytes: 0, checksum });
        }
        let Some(cur) = self.current.as_mut() else { return Ok(None) };
        let record_offset = cur.file.size();
        // Header, key and blob appended one after the other (the file buffers them), as
        // RocksDB's `BlobLogWriter::EmitPhysicalRecord`: no copy of the record is built.
        let header = RecordHeader::encode_array(user_key, blob, 0);
        append(self.stats, &mut *cur.file, &header)?;
        append(self.stats, &mut *cur.file, user_key)?;
        append(self.stats, &mut *cur.file, blob)?;
        let rec_len = (RECORD_HEADER_SIZE + user_key.len() + blob.len()) as u64;
        record_tick(self.stats, Ticker::BlobDbBlobFileBytesWritten, rec_len);
        cur.count += 1;
        cur.bytes += rec_len;
        let index = BlobIndex {
            file_number: cur.number,
            offset: record_offset + (RECORD_HEADER_SIZE + user_key.len()) as u64,
            size: blob.len() as u64,
            compression: self.opts.compression as u8,
            expiration: None,
        };
        if cur.file.size() >= self.opts.blob_file_size {
            self.close_current()?;
        }
        self.put_into_cache(value, &index);
        Ok(Some(index.encode()))
    }

    /// Warms the blob cache with `value` (see [`Self::warm_cache`]). A refusal (a strict
    /// cache that is full) is counted and otherwise ignored: RocksDB logs it and the flush
    /// goes on.
    fn put_into_cache(&self, value: &[u8], index: &BlobIndex) {
        let Some((cache, session)) = &self.warm else { return };
        let key =
            crate::cache::OffsetableCacheKey::new(*session, index.file_number).with_offset(index.offset);
        // A cached value is stored as a block without restarts: the value, then 0u32 (as
        // `BlobFetcher` reads it back).
        let mut data = Vec::with_capacity(value.len() + 4);
        data.extend_from_slice(value);
        data.extend_from_slice(&[0, 0, 0, 0]);
        let inserted = crate::table::block::Block::new(data)
            .and_then(|b| cache.insert_block(key, Arc::new(b), crate::cache::Priority::Bottom));
        match inserted {
            Ok(()) => {
                record_tick(self.stats, Ticker::BlobDbCacheAdd, 1);
                record_tick(self.stats, Ticker::BlobDbCacheBytesWrite, value.len() as u64);
            }
            Err(_) => record_tick(self.stats, Ticker::BlobDbCacheAddFailures, 1),
        }
    }

    fn close_current(&mut self) -> Result<()> {
        let Some(mut cur) = self.current.take() else { return Ok(()) };
        let footer = BlobFooter { blob_count: cur.count, expiration_range: (0, 0) }.encode();
        append(self.stats, &mut *cur.file, &footer)?;
        cur.file.flush()?;
        {
            let _t = StopWatch::new(self.stats, Histogram::BlobDbBlobFileSyncMicros);
            cur.file.sync()?;
        }
        // RocksDB's AppendFooter: the sync, then the footer's bytes once the file is closed.
        record_tick(self.stats, Ticker::BlobDbBlobFileSynced, 1);
        record_tick(self.stats, Ticker::BlobDbBlobFileBytesWritten, footer.len() as u64);
        // With a checksum factory, the file's name and value; without, none (RocksDB keeps
        // "Unknown" out of a blob file's addition).
        let (checksum_method, checksum_value) = match &cur.checksum {
            Some(tap) => (crate::file_checksum::CRC32C_FUNC_NAME.as_bytes().to_vec(), tap.value()),
            None => (Vec::new(), Vec::new()),
        };
        self.additions.push(BlobFileAddition {
            number: cur.number,
            total_blob_count: cur.count,
            total_blob_bytes: cur.bytes,
            checksum_method,
            checksum_value,
        });
        Ok(())
    }

    /// Closes the open file, if any. The caller syncs the directory.
    pub fn finish(&mut self) -> Result<()> {
        self.close_current()
    }

    /// Removes every file this builder created (after a failure).
    pub fn abandon(&mut self) {
        self.current = None;
        for n in &self.created {
            let _ = self.fs.remove_file(&blob_file_path(self.dir, *n));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blob::reader::BlobFileReader;
    use crate::fs::MemFileSystem;
    use std::cell::Cell;

    #[test]
    fn written_blobs_read_back_and_damage_is_corruption() {
        let fs = MemFileSystem::new();
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        let next = Cell::new(10u64);
        let alloc = || {
            let n = next.get();
            next.set(n + 1);
            n
        };
        let opts = BlobWriteOptions {
            min_blob_size: 8,
            blob_file_size: 300,
            compression: CompressionType::None,
            codec: CodecOpts::default(),
            column_family_id: 0,
            file_checksum: true,
        };
        let mut b = BlobFileBuilder::new(&fs, dir, opts, &alloc);
        assert_eq!(b.add(b"k", b"short").unwrap(), None);
        let mut idx = Vec::new();
        for i in 0..6u8 {
            let key = vec![b'k', i];
            let value = vec![i; 100];
            idx.push((key.clone(), value.clone(), b.add(&key, &value).unwrap().unwrap()));
        }
        b.finish().unwrap();
        assert!(b.additions.len() >= 2, "blob_file_size rolls files");
        assert_eq!(b.additions.iter().map(|a| a.total_blob_count).sum::<u64>(), 6);
        // Each addition carries the CRC32C of its whole file, big-endian.
        for a in &b.additions {
            let bytes = crate::fs::read_file(&fs, &blob_file_path(dir, a.number)).unwrap();
            assert_eq!(a.checksum_method, b"FileChecksumCrc32c");
            assert_eq!(a.checksum_value, crc32c::crc32c(&bytes).to_be_bytes());
        }
        for (key, value, index) in &idx {
            let bi = BlobIndex::decode(index).unwrap();
            let r = BlobFileReader::open(&fs, dir, bi.file_number, 0).unwrap();
            assert_eq!(&r.get(key, &bi).unwrap(), value);
            // A wrong key is refused.
            assert!(r.get(b"kx", &bi).is_err());
        }
        // Damage one byte of a value: Corruption naming the file and offset.
        let bi = BlobIndex::decode(&idx[0].2).unwrap();
        let path = blob_file_path(dir, bi.file_number);
        let mut data = crate::fs::read_file(&fs, &path).unwrap();
        data[bi.offset as usize + 3] ^= 0x40;
        crate::fs::write_file_synced(&fs, &path, &data).unwrap();
        let r = BlobFileReader::open(&fs, dir, bi.file_number, 0).unwrap();
        let err = r.get(&idx[0].0, &bi).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Corruption);
        let msg = err.to_string();
        assert!(
            msg.contains("000010.blob") && msg.contains("offset") && msg.contains("Blob CRC mismatch"),
            "{msg}"
        );
        // Another column family's reader refuses the file.
        assert!(BlobFileReader::open(&fs, dir, bi.file_number, 3).is_err());
    }

    /// Records up to the reader's scratch size are read into one buffer kept by the thread,
    /// larger ones into their own: values of mixed sizes read in turn (a short one after a
    /// long one, one past the scratch size between) come back exact, and damage is still
    /// found in either path.
    #[test]
    fn reads_of_mixed_sizes_return_exact_values() {
        let fs = MemFileSystem::new();
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        let alloc = || 7u64;
        let opts = BlobWriteOptions {
            min_blob_size: 0,
            blob_file_size: 1 << 30,
            compression: CompressionType::None,
            codec: CodecOpts::default(),
            column_family_id: 0,
            file_checksum: false,
        };
        let mut b = BlobFileBuilder::new(&fs, dir, opts, &alloc);
        let sizes = [4096usize, 10, (256 << 10) + 1, 3, 100_000, 1];
        let mut idx = Vec::new();
        for (i, &n) in sizes.iter().enumerate() {
            let key = format!("key{i}").into_bytes();
            let value: Vec<u8> = (0..n).map(|j| (j * 31 + i) as u8).collect();
            idx.push((key.clone(), value.clone(), b.add(&key, &value).unwrap().unwrap()));
        }
        b.finish().unwrap();
        let r = BlobFileReader::open(&fs, dir, 7, 0).unwrap();
        for _ in 0..2 {
            for (key, value, index) in &idx {
                let bi = BlobIndex::decode(index).unwrap();
                assert_eq!(&r.get(key, &bi).unwrap(), value, "value of {}", value.len());
            }
        }
        // A damaged byte in a record past the scratch size, then in a short one.
        let path = blob_file_path(dir, 7);
        let mut data = crate::fs::read_file(&fs, &path).unwrap();
        for i in [2, 1] {
            let bi = BlobIndex::decode(&idx[i].2).unwrap();
            data[bi.offset as usize] ^= 1;
        }
        crate::fs::write_file_synced(&fs, &path, &data).unwrap();
        let r = BlobFileReader::open(&fs, dir, 7, 0).unwrap();
        for (i, (key, value, index)) in idx.iter().enumerate() {
            let bi = BlobIndex::decode(index).unwrap();
            match r.get(key, &bi) {
                Ok(v) => assert!(i != 1 && i != 2 && &v == value),
                Err(e) => {
                    assert!(i == 1 || i == 2, "record {i}: {e}");
                    assert!(e.to_string().contains("Blob CRC mismatch"), "{e}");
                }
            }
        }
    }

    #[test]
    fn compressed_blobs_round_trip() {
        let fs = MemFileSystem::new();
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        let alloc = || 5u64;
        let opts = BlobWriteOptions {
            min_blob_size: 0,
            blob_file_size: 1 << 20,
            compression: CompressionType::Lz4,
            codec: CodecOpts::default(),
            column_family_id: 2,
            file_checksum: false,
        };
        let mut b = BlobFileBuilder::new(&fs, dir, opts, &alloc);
        let value = vec![b'z'; 5000];
        let index = b.add(b"key", &value).unwrap().unwrap();
        b.finish().unwrap();
        // Without a checksum factory, none is recorded.
        assert!(b.additions[0].checksum_method.is_empty() && b.additions[0].checksum_value.is_empty());
        let bi = BlobIndex::decode(&index).unwrap();
        assert!(bi.size < 5000);
        let r = BlobFileReader::open(&fs, dir, 5, 2).unwrap();
        assert_eq!(r.get(b"key", &bi).unwrap(), value);
    }

    /// A blob read's insert into a HyperClock blob cache gives up on a stripe another thread
    /// holds, as a block read's does, rather than wait: the read returns its value and counts
    /// `rocksdb.blobdb.cache.add.failures` and no add (RocksDB's `PutBlobIntoCache` on a
    /// non-OK `InsertEntryIntoCache`).
    #[test]
    fn a_blob_fill_insert_that_gives_up_counts_an_add_failure() {
        use crate::blob::reader::{BlobFetcher, BlobFileCache};
        use crate::cache::BlockCache;
        use crate::statistics::{Statistics, Ticker};
        let fs = Arc::new(MemFileSystem::new());
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        let alloc = || 7u64;
        let opts = BlobWriteOptions {
            min_blob_size: 0,
            blob_file_size: 1 << 20,
            compression: CompressionType::None,
            codec: CodecOpts::default(),
            column_family_id: 0,
            file_checksum: false,
        };
        let mut b = BlobFileBuilder::new(&*fs, dir, opts, &alloc);
        let index = b.add(b"key", &[9u8; 300]).unwrap().unwrap();
        b.finish().unwrap();
        let stats = Arc::new(Statistics::new());
        let cache = Arc::new(BlockCache::new_hyper_clock(1 << 20, 0, false));
        let fetcher = BlobFetcher {
            cache: Arc::new(BlobFileCache::new(fs.clone(), dir.to_path_buf(), Some(stats.clone()))),
            cf_id: 0,
            value_cache: Some(cache.clone()),
            fill_cache: true,
            no_io: false,
        };
        let held = cache.hold_all();
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = {
            let (fetcher, index) = (fetcher.clone(), index.clone());
            std::thread::spawn(move || {
                let got = fetcher.fetch(b"key", &index);
                let _ = tx.send(());
                got
            })
        };
        let finished = rx.recv_timeout(std::time::Duration::from_secs(5)).is_ok();
        drop(held);
        assert_eq!(reader.join().unwrap().unwrap(), vec![9u8; 300]);
        assert!(finished, "the read's insert waited for the held stripe");
        assert_eq!(stats.ticker_count(Ticker::BlobDbCacheAddFailures), 1);
        assert_eq!(stats.ticker_count(Ticker::BlobDbCacheAdd), 0);
        assert_eq!(cache.usage(), 0);
        // Once free, the same read adds the value.
        assert_eq!(fetcher.fetch(b"key", &index).unwrap(), vec![9u8; 300]);
        assert_eq!(stats.ticker_count(Ticker::BlobDbCacheAdd), 1);
        assert_eq!(stats.ticker_count(Ticker::BlobDbCacheAddFailures), 1);
    }
}
