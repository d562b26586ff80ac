//! Blob direct write: RocksDB 11.8.1's `enable_blob_direct_write`,
//! `blob_direct_write_partitions` and its default round-robin partition strategy
//! (db/blob/blob_file_partition_manager.cc, blob_write_batch_transformer.cc).
//!
//! A family opened with blob files and direct write has a [`DirectBlobWriter`]. The write
//! leader, after any memtable switch and before the WAL write (RocksDB's WriteImpl defers
//! the transformation to that point so the blob files' generation matches the memtable),
//! turns every Put of the group whose value is at least `min_blob_size` into a PutBlobIndex
//! record: the value is appended to one of `blob_direct_write_partitions` open blob files
//! (chosen round robin), and the WAL and memtable get the blob index. The file layout is
//! docs/blob-format.md's (header, records, footer once sealed):
//!
//! ```text
//! write ──value >= min_blob_size──> partition (n % partitions) ──> NNNNNN.blob (no footer yet)
//!   │                                                                    │
//!   └─ WAL + memtable: 0x11 key BlobIndex(file, offset, size, compression)
//!
//! memtable switch: the open files go with the memtable (no I/O): `Generation`
//! flush of that memtable: each file gets its footer and is synced (sealed), and the
//!                         flush's VersionEdit adds it (BlobFileAddition) with the table
//! ```
//!
//! A file is also sealed when the next record would take it past `blob_file_size` (or the
//! blob compression changed); it then waits in the current generation. Each record reaches
//! the OS at once (RocksDB's `kDoFlushEachRecord`), so reads of a value whose file has no
//! footer yet open the file without one (`BlobFileCache::mark_unsealed`). A sync write
//! syncs the open files first (RocksDB's `SyncAllOpenFiles`).
//!
//! Recovery, as RocksDB 11.8.1's v1: a blob file is named in the MANIFEST only by the flush
//! of its memtable. After a crash the WAL's blob indexes name files the MANIFEST does not
//! hold; they are replayed as they are (the recovery flush keeps them in its table), and
//! the files, footerless, are kept by the open's purge (`should_keep_footerless_blob`) but
//! never registered: reading such an index is `Corruption: Invalid blob file number`, as
//! RocksDB's `Version::GetBlob` answers. A clean close flushes first (`open.rs::close`).
//!
//! With `prepopulate_blob_cache` kFlushOnly and a blob cache, each value written also goes
//! into the blob cache (RocksDB's `MaybePrepopulateBlobCache`).
//!
//! Statistics as RocksDB's `BlobLogWriter`: every byte appended in
//! `rocksdb.blobdb.blob.file.bytes.written` (each append timed in
//! `rocksdb.blobdb.blob.file.write.micros`), each sync counted in
//! `rocksdb.blobdb.blob.file.synced` and timed in `rocksdb.blobdb.blob.file.sync.micros`.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use crate::blob::format::{BlobFooter, BlobHeader, BlobIndex, RecordHeader, FOOTER_SIZE, RECORD_HEADER_SIZE};
use crate::blob::{blob_file_path, BlobFileCache};
use crate::config::BlobSettings;
use crate::error::Result;
use crate::fs::{FileSystem, WritableFile};
use crate::statistics::{record_tick, Histogram, Statistics, StopWatch, Ticker};
use crate::version::edit::BlobFileAddition;
use shale_base::compression::{compress_forced, CompressionType};

/// One blob file the write path appends to.
pub struct OpenBlobFile {
    number: u64,
    file: Box<dyn WritableFile>,
    count: u64,
    /// Record headers, keys and stored values (the MANIFEST's total blob bytes).
    bytes: u64,
    compression: CompressionType,
    /// Appended to since the last sync.
    unsynced: bool,
}

/// The direct-write blob files of one memtable: handed to it when it becomes immutable,
/// sealed and added to the MANIFEST by its flush.
#[derive(Default)]
pub struct Generation {
    open: Vec<OpenBlobFile>,
    sealed: Vec<BlobFileAddition>,
}

impl Generation {
    pub fn is_empty(&self) -> bool {
        self.open.is_empty() && self.sealed.is_empty()
    }
}

/// What writing a blob needs from the database.
pub struct BlobIo<'a> {
    pub fs: &'a dyn FileSystem,
    pub dir: &'a Path,
    pub new_file_number: &'a dyn Fn() -> u64,
    pub cache: &'a BlobFileCache,
    pub stats: Option<&'a Statistics>,
}

struct State {
    /// One slot per partition: its open file, if any.
    slots: Vec<Option<OpenBlobFile>>,
    /// Files sealed (rolled at `blob_file_size`) while the active memtable is current.
    sealed: Vec<BlobFileAddition>,
}

/// A family's write-path blob files (RocksDB's `BlobFilePartitionManager`).
pub struct DirectBlobWriter {
    cf_id: u32,
    /// `blob_file_size` when the family was opened (RocksDB's manager keeps it so).
    blob_file_size: u64,
    /// The default strategy's round-robin counter.
    next: AtomicU64,
    state: Mutex<State>,
}

fn append(stats: Option<&Statistics>, file: &mut dyn WritableFile, data: &[u8]) -> Result<()> {
    {
        let _t = StopWatch::new(stats, Histogram::BlobDbBlobFileWriteMicros);
        file.append(data)?;
    }
    record_tick(stats, Ticker::BlobDbBlobFileBytesWritten, data.len() as u64);
    Ok(())
}

fn sync(stats: Option<&Statistics>, file: &mut dyn WritableFile) -> Result<()> {
    {
        let _t = StopWatch::new(stats, Histogram::BlobDbBlobFileSyncMicros);
        file.sync()?;
    }
    record_tick(stats, Ticker::BlobDbBlobFileSynced, 1);
    Ok(())
}

/// Writes the footer of `f`, syncs it, and gives its MANIFEST addition (RocksDB's
/// `FinalizeBlobFile`); reads from now on open it as any sealed file.
fn seal(f: &mut OpenBlobFile, cache: &BlobFileCache, stats: Option<&Statistics>) -> Result<BlobFileAddition> {
    let footer = BlobFooter { blob_count: f.count, expiration_range: (0, 0) }.encode();
    {
        let _t = StopWatch::new(stats, Histogram::BlobDbBlobFileWriteMicros);
        f.file.append(&footer)?;
    }
    f.file.flush()?;
    sync(stats, &mut *f.file)?;
    // RocksDB's AppendFooter counts the footer's bytes once the file is synced.
    record_tick(stats, Ticker::BlobDbBlobFileBytesWritten, footer.len() as u64);
    cache.mark_sealed(f.number);
    Ok(BlobFileAddition {
        number: f.number,
        total_blob_count: f.count,
        total_blob_bytes: f.bytes,
        checksum_method: Vec::new(),
        checksum_value: Vec::new(),
    })
}

impl DirectBlobWriter {
    pub fn new(cf_id: u32, partitions: u32, blob_file_size: u64) -> DirectBlobWriter {
        let n = partitions.max(1) as usize;
        DirectBlobWriter {
            cf_id,
            blob_file_size,
            next: AtomicU64::new(0),
            state: Mutex::new(State { slots: (0..n).map(|_| None).collect(), sealed: Vec::new() }),
        }
    }

    /// How many partitions (open-file slots) the family has.
    pub fn partitions(&self) -> usize {
        self.state.lock().slots.len()
    }

    /// Whether files of the active memtable exist (open, or rolled and waiting).
    pub fn has_files(&self) -> bool {
        let st = self.state.lock();
        st.slots.iter().any(Option::is_some) || !st.sealed.is_empty()
    }

    /// The numbers of the files open for writing now.
    pub fn open_file_numbers(&self) -> Vec<u64> {
        self.state.lock().slots.iter().flatten().map(|f| f.number).collect()
    }

    /// RocksDB's `PutCF` of the transformer: None when `value` stays in the batch (shorter
    /// than `min_blob_size`), else the blob index of `value` appended to the next partition's
    /// file (compressed with the family's current blob compression).
    pub fn write_blob(
        &self,
        io: &BlobIo<'_>,
        blob: &BlobSettings,
        key: &[u8],
        value: &[u8],
        warm: Option<(&std::sync::Arc<crate::cache::BlockCache>, u64)>,
    ) -> Result<Option<Vec<u8>>> {
        self.write_blob_in(io, blob, key, value, warm, &mut None)
    }

    /// RocksDB's `PutEntityCF` of the transformer (`MaybePreprocessWideColumns`): `entity`
    /// (a PutEntity's value) with each column value of at least `min_blob_size` appended to
    /// one partition's file (the round robin's next, chosen at the first such column, as
    /// `SelectWideColumnPartition`) and the entity re-serialized as version 2 with those
    /// columns as blob indexes; None when no column qualifies. An entity that already holds
    /// blob references is refused with RocksDB's NotSupported.
    pub fn write_entity(
        &self,
        io: &BlobIo<'_>,
        blob: &BlobSettings,
        key: &[u8],
        entity: &[u8],
        warm: Option<(&std::sync::Arc<crate::cache::BlockCache>, u64)>,
    ) -> Result<Option<Vec<u8>>> {
        if crate::wide_columns::has_blob_columns(entity)? {
            return Err(crate::error::Error::not_supported(
                "Blob direct write does not support pre-serialized wide entities with blob references",
            ));
        }
        let mut partition = None;
        crate::wide_columns::extract_large_columns(entity, |value| {
            self.write_blob_in(io, blob, key, value, warm, &mut partition)
        })
    }

    /// `write_blob` into `partition`, or the round robin's next (then kept in `partition`).
    fn write_blob_in(
        &self,
        io: &BlobIo<'_>,
        blob: &BlobSettings,
        key: &[u8],
        value: &[u8],
        warm: Option<(&std::sync::Arc<crate::cache::BlockCache>, u64)>,
        partition: &mut Option<usize>,
    ) -> Result<Option<Vec<u8>>> {
        if (value.len() as u64) < blob.min_blob_size {
            return Ok(None);
        }
        let stored;
        let data: &[u8] = if blob.compression == CompressionType::None {
            value
        } else {
            stored = compress_forced(blob.compression, &blob.compression_opts, value)?;
            &stored
        };
        let mut st = self.state.lock();
        let partitions = st.slots.len() as u64;
        let idx = match *partition {
            Some(p) => p % partitions as usize,
            None => (self.next.fetch_add(1, Ordering::Relaxed) % partitions) as usize,
        };
        *partition = Some(idx);
        let State { slots, sealed } = &mut *st;
        let slot = &mut slots[idx];
        let record_size = (RECORD_HEADER_SIZE + key.len() + data.len()) as u64;
        let roll = slot.as_ref().is_some_and(|f| {
            f.compression != blob.compression
                || (f.count > 0 && f.file.size() + record_size + FOOTER_SIZE as u64 > self.blob_file_size)
        });
        if roll {
            if let Some(mut f) = slot.take() {
                sealed.push(seal(&mut f, io.cache, io.stats)?);
            }
        }
        if slot.is_none() {
            let number = (io.new_file_number)();
            let mut file = io.fs.new_writable_file(&blob_file_path(io.dir, number))?;
            let header = BlobHeader {
                column_family_id: self.cf_id,
                compression: blob.compression as u8,
                has_ttl: false,
                expiration_range: (0, 0),
            }
            .encode();
            append(io.stats, &mut *file, &header)?;
            file.flush()?;
            io.cache.mark_unsealed(number);
            *slot = Some(OpenBlobFile {
                number,
                file,
                count: 0,
                bytes: 0,
                compression: blob.compression,
                unsynced: true,
            });
        }
        let Some(f) = slot.as_mut() else { return Ok(None) };
        let record_offset = f.file.size();
        let mut rec = RecordHeader::encode(key, data, 0);
        rec.extend_from_slice(key);
        rec.extend_from_slice(data);
        append(io.stats, &mut *f.file, &rec)?;
        // Each record reaches the OS at once, for reads before the file is sealed.
        f.file.flush()?;
        f.count += 1;
        f.bytes += record_size;
        f.unsynced = true;
        let index = BlobIndex {
            file_number: f.number,
            offset: record_offset + (RECORD_HEADER_SIZE + key.len()) as u64,
            size: data.len() as u64,
            compression: blob.compression as u8,
            expiration: None,
        };
        drop(st);
        // `prepopulate_blob_cache` kFlushOnly (RocksDB's MaybePrepopulateBlobCache): the
        // value, uncompressed, goes into the blob cache under the key reads look it up by. A
        // refusal is only logged there (no ticker): the write goes on.
        if let Some((cache, session)) = warm {
            let ck =
                crate::cache::OffsetableCacheKey::new(session, index.file_number).with_offset(index.offset);
            // A cached value is stored as a block without restarts: the value, then 0u32.
            let mut data = Vec::with_capacity(value.len() + 4);
            data.extend_from_slice(value);
            data.extend_from_slice(&[0, 0, 0, 0]);
            if let Ok(b) = crate::table::block::Block::new(data) {
                let _ = cache.insert_block(ck, std::sync::Arc::new(b), crate::cache::Priority::Bottom);
            }
        }
        Ok(Some(index.encode()))
    }

    /// Syncs the open files appended to since their last sync (before a sync write's WAL
    /// record; RocksDB's `SyncAllOpenFiles`).
    pub fn sync_open_files(&self, stats: Option<&Statistics>) -> Result<()> {
        let mut st = self.state.lock();
        for f in st.slots.iter_mut().flatten().filter(|f| f.unsynced) {
            sync(stats, &mut *f.file)?;
            f.unsynced = false;
        }
        Ok(())
    }

    /// The memtable is switched: its files (open and rolled) leave with it, and the next
    /// write opens new ones (RocksDB's `RotateCurrentGeneration`). No I/O.
    pub fn rotate(&self) -> Generation {
        let mut st = self.state.lock();
        let open = st.slots.iter_mut().filter_map(Option::take).collect();
        Generation { open, sealed: std::mem::take(&mut st.sealed) }
    }
}

/// Seals the open files of `gens` (the memtables a flush writes) in place and gives every
/// file of theirs for the flush's VersionEdit (RocksDB's `PrepareFlushAdditions`). A failed
/// flush leaves them sealed in their memtables, for the next attempt.
pub fn seal_for_flush(
    gens: &mut [&mut Generation],
    cache: &BlobFileCache,
    stats: Option<&Statistics>,
) -> Result<Vec<BlobFileAddition>> {
    let mut out = Vec::new();
    for g in gens.iter_mut() {
        while let Some(mut f) = g.open.pop() {
            match seal(&mut f, cache, stats) {
                Ok(a) => g.sealed.push(a),
                Err(e) => {
                    g.open.push(f);
                    return Err(e);
                }
            }
        }
        out.extend(g.sealed.iter().cloned());
    }
    Ok(out)
}

/// RocksDB 11.8.1's `ShouldKeepFooterlessBlobFile`: the open's purge keeps a blob file no
/// Version names when it has no valid footer (one the write path was still appending to
/// when the process stopped), or when it cannot be read.
pub fn should_keep_footerless_blob(fs: &dyn FileSystem, path: &Path) -> bool {
    let Ok(file) = fs.new_random_access_file(path) else { return fs.file_exists(path) };
    let Ok(size) = file.size() else { return true };
    if size < (crate::blob::format::HEADER_SIZE + FOOTER_SIZE) as u64 {
        return true;
    }
    let mut buf = vec![0u8; FOOTER_SIZE];
    match file.read_at(size - FOOTER_SIZE as u64, &mut buf) {
        Ok(n) if n == FOOTER_SIZE => BlobFooter::decode(&buf).is_err(),
        _ => true,
    }
}
