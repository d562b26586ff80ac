//! Writes logical records into RocksDB's block-framed log format (see `format.rs`).
//!
//! ```text
//! | block 0 (32768)                          | block 1 ...
//! | hdr FULL a | hdr FIRST b ....... |pad<7| | hdr MIDDLE b ...| hdr LAST b | ...
//! ```
//! A record that does not fit in what is left of a block is cut into FIRST / MIDDLE* /
//! LAST fragments; when fewer than 7 bytes are left the tail is zero-filled and the next
//! fragment starts a new block. An empty record is one FULL fragment with no payload.
//!
//! With WAL compression (RocksDB's `wal_compression = kZSTD`) the file starts with a
//! SetCompressionType record (type 9, legacy header, payload `compression type fixed32`)
//! and every later logical record is replaced by one ZSTD frame of it before it is cut
//! into fragments (RocksDB's `log::Writer::AddRecord` with `StreamingCompress`: the
//! reader decompresses the fragments of a record as one stream).
//!
//! ```text
//! | hdr SETCOMPRESSION | 07 00 00 00 | hdr FULL | zstd frame of record 1 | hdr FIRST | frame ...
//! ```

use crate::error::{Error, Result};
use crate::fs::WritableFile;

use super::format::{
    record_crc, type_crcs, PredecessorWalInfo, RecordType, BLOCK_SIZE, HEADER_SIZE, MAX_RECORD_TYPE,
    PREDECESSOR_WAL_INFO, RECYCLABLE_HEADER_SIZE, RECYCLABLE_PREDECESSOR_WAL_INFO,
};

/// Appends records to a WAL or MANIFEST file.
pub struct LogWriter {
    file: Box<dyn WritableFile>,
    log_number: u64,
    /// Bytes used in the current block.
    block_offset: usize,
    /// CRC of each lone type byte, so each fragment costs one CRC pass over its payload.
    type_crc: [u32; MAX_RECORD_TYPE as usize + 1],
    /// Writes recyclable records (types 5..=8, 11 and 131 with the log number), as RocksDB
    /// does for every WAL when `recycle_log_file_num > 0` ([`LogWriter::with_recycling`]).
    recycle: bool,
    /// Set after a failed append: the file's tail is unknown, so later writes are refused.
    failed: bool,
    /// Column families whose timestamp size this file already records (RocksDB's
    /// `recorded_cf_to_ts_sz_`).
    recorded_ts: Vec<u32>,
    /// Set once a SetCompressionType record for ZSTD was written: records are compressed.
    compressor: Option<shale_base::compression::WalCompressor>,
    /// `wal_bytes_per_sync` (0: off) and the offset write-back was last asked up to.
    bytes_per_sync: u64,
    /// `strict_bytes_per_sync`: write-back asked for with `range_sync_strict`.
    strict_range_sync: bool,
    range_synced: u64,
    /// `track_and_verify_wals`: batch sequence numbers are noted in `last_seqno_recorded`.
    track_wals: bool,
    /// The largest starting sequence number of the batches added (RocksDB's
    /// `last_seqno_recorded_`).
    last_seqno_recorded: u64,
    /// The file's size after its leading compression-type and predecessor records: up to
    /// there the log holds no logical record.
    prelude_end: u64,
}

/// RocksDB's `WritableFileWriter` leaves the last MiB out of a range sync (pages written
/// again soon), and aligns the end of the range down to 4 KiB.
const NOT_SYNCED_TAIL: u64 = 1 << 20;
const RANGE_SYNC_ALIGN: u64 = 4 << 10;

impl LogWriter {
    /// A writer appending to `file` (normally new and empty) for log `log_number`.
    pub fn new(file: Box<dyn WritableFile>, log_number: u64) -> LogWriter {
        let block_offset = (file.size() % BLOCK_SIZE as u64) as usize;
        LogWriter {
            file,
            log_number,
            block_offset,
            type_crc: type_crcs(),
            recycle: false,
            failed: false,
            recorded_ts: Vec::new(),
            compressor: None,
            bytes_per_sync: 0,
            strict_range_sync: false,
            range_synced: 0,
            track_wals: false,
            last_seqno_recorded: 0,
            prelude_end: 0,
        }
    }

    /// With `nbytes > 0`, each [`flush`](Self::flush) asks the file system to start writing
    /// back what lies more than 1 MiB behind the end, once that is `nbytes` past the last
    /// such request (RocksDB's `wal_bytes_per_sync`, `WritableFile::range_sync`).
    /// With RocksDB's `strict_bytes_per_sync` each request waits for the write-back asked
    /// before and spans the file from its start (`WritableFile::range_sync_strict`).
    pub fn with_strict_range_sync(mut self, strict: bool) -> LogWriter {
        self.strict_range_sync = strict;
        self
    }

    pub fn with_bytes_per_sync(mut self, nbytes: u64) -> LogWriter {
        self.bytes_per_sync = nbytes;
        self
    }

    /// RocksDB's `AddCompressionTypeRecord`: on a new, empty file, records that the log's
    /// records are compressed with `t` and compresses every later record. `None` writes
    /// nothing; only ZSTD streams (RocksDB's `StreamingCompressionTypeSupported`).
    pub fn add_compression_type_record(
        &mut self,
        t: crate::table::compression::CompressionType,
    ) -> Result<()> {
        use crate::table::compression::CompressionType;
        match t {
            CompressionType::None => return Ok(()),
            CompressionType::Zstd => {}
            other => {
                return Err(Error::not_supported(format!(
                    "WAL compression {} (only ZSTD streams)",
                    other.name()
                )))
            }
        }
        if self.block_offset != 0 || self.file.size() != 0 {
            return Err(Error::invalid_argument("the WAL compression record must be a log's first record"));
        }
        let compressor = shale_base::compression::WalCompressor::new()?;
        let payload = (t as u32).to_le_bytes();
        let result = self.emit_legacy(super::format::SET_COMPRESSION_TYPE, &payload);
        if result.is_err() {
            self.failed = true;
            return result;
        }
        self.compressor = Some(compressor);
        self.prelude_end = self.file.size();
        Ok(())
    }

    /// True when records are compressed (a SetCompressionType record was written).
    pub fn is_compressed(&self) -> bool {
        self.compressor.is_some()
    }

    /// Emits one unfragmented physical record with the 7-byte header (RocksDB's
    /// EmitPhysicalRecord for the types that never carry a log number).
    fn emit_legacy(&mut self, t: u8, payload: &[u8]) -> Result<()> {
        let mut header = [0u8; HEADER_SIZE];
        header[4..6].copy_from_slice(&(payload.len() as u16).to_le_bytes());
        header[6] = t;
        let crc = crc32c::crc32c_append(self.type_crc[t as usize], payload);
        header[..4].copy_from_slice(&super::format::mask_crc(crc).to_le_bytes());
        self.file.append(&header)?;
        self.file.append(payload)?;
        self.block_offset += HEADER_SIZE + payload.len();
        Ok(())
    }

    /// A writer that emits the recyclable record types, to test the reader with them.
    #[cfg(test)]
    pub fn new_recyclable(file: Box<dyn WritableFile>, log_number: u64) -> LogWriter {
        LogWriter::new(file, log_number).with_recycling(true)
    }

    /// With `on`, records carry the log number in an 11-byte header (RocksDB's recyclable
    /// format, written for every WAL when `recycle_log_file_num > 0`), so a reader of a
    /// reused file stops at the first record left from the file's earlier life instead of
    /// taking it for this log's. Set before the first record.
    pub fn with_recycling(mut self, on: bool) -> LogWriter {
        self.recycle = on;
        self
    }

    /// Appends one logical record. The data reaches the file through `append` only; call
    /// [`flush`](Self::flush) or [`sync`](Self::sync) to push it further.
    pub fn add_record(&mut self, payload: &[u8]) -> Result<()> {
        if self.failed {
            return Err(Error::io_msg("log writer saw an earlier write error; not writing"));
        }
        if self.track_wals {
            // A WAL record is a write batch: its starting sequence number comes first.
            if let Some(seq) = payload.get(..8).and_then(|b| <[u8; 8]>::try_from(b).ok()) {
                self.last_seqno_recorded = self.last_seqno_recorded.max(u64::from_le_bytes(seq));
            }
        }
        let result = match self.compressor.as_mut() {
            Some(c) => match c.compress_record(payload) {
                Ok(frame) => self.write_fragments(&frame),
                Err(e) => Err(e),
            },
            None => self.write_fragments(payload),
        };
        if result.is_err() {
            self.failed = true;
        }
        result
    }

    /// RocksDB 8+'s `MaybeAddUserDefinedTimestampSizeRecord`: before a batch, records the
    /// timestamp size of each family with timestamps that this file does not record yet,
    /// as one physical record of type 10 (11 recyclable): `{ cf id fixed32 | size fixed16 }*`,
    /// never split across blocks. RocksDB's recovery reads keys of those families with it.
    pub fn maybe_add_timestamp_sizes(&mut self, cf_ts_sizes: &[(u32, u16)]) -> Result<()> {
        let new: Vec<(u32, u16)> = cf_ts_sizes
            .iter()
            .copied()
            .filter(|(cf, sz)| *sz != 0 && !self.recorded_ts.contains(cf))
            .collect();
        if new.is_empty() {
            return Ok(());
        }
        if self.failed {
            return Err(Error::io_msg("log writer saw an earlier write error; not writing"));
        }
        let mut payload = Vec::with_capacity(new.len() * 6);
        for (cf, sz) in &new {
            payload.extend_from_slice(&cf.to_le_bytes());
            payload.extend_from_slice(&sz.to_le_bytes());
        }
        let header_size = if self.recycle { RECYCLABLE_HEADER_SIZE } else { HEADER_SIZE };
        let result = if header_size + payload.len() > BLOCK_SIZE {
            Err(Error::invalid_argument("too many column families with timestamps for one WAL record"))
        } else {
            self.emit_whole(
                super::format::USER_DEFINED_TIMESTAMP_SIZE,
                super::format::RECYCLABLE_USER_DEFINED_TIMESTAMP_SIZE,
                &payload,
            )
        };
        match result {
            Ok(()) => {
                self.recorded_ts.extend(new.iter().map(|(cf, _)| *cf));
                Ok(())
            }
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }

    /// Emits one physical record that is never split (RocksDB's `MaybeSwitchToNewBlock`
    /// then `EmitPhysicalRecord`): the rest of the block is zero-filled when the record does
    /// not fit; `legacy` or, when recycling, `recyclable` (with the log number) is its type.
    /// The caller keeps `payload` within a block.
    fn emit_whole(&mut self, legacy: u8, recyclable: u8, payload: &[u8]) -> Result<()> {
        let header_size = if self.recycle { RECYCLABLE_HEADER_SIZE } else { HEADER_SIZE };
        let left_in_block = BLOCK_SIZE - self.block_offset;
        if left_in_block < header_size + payload.len() {
            self.file.append(&vec![0u8; left_in_block])?;
            self.block_offset = 0;
        }
        let t = if self.recycle { recyclable } else { legacy };
        let mut header = [0u8; RECYCLABLE_HEADER_SIZE];
        header[4..6].copy_from_slice(&(payload.len() as u16).to_le_bytes());
        header[6] = t;
        let log = self.recycle.then_some(self.log_number as u32);
        if let Some(n) = log {
            header[7..11].copy_from_slice(&n.to_le_bytes());
        }
        header[..4].copy_from_slice(&record_crc(t, log, payload).to_le_bytes());
        self.file.append(&header[..header_size])?;
        self.file.append(payload)?;
        self.block_offset += header_size + payload.len();
        Ok(())
    }

    /// RocksDB's `track_and_verify_wals`: the writer notes the largest starting sequence
    /// number of the write batches it is given ([`predecessor_info`](Self::predecessor_info))
    /// and [`add_predecessor_wal_info`](Self::add_predecessor_wal_info) writes the record.
    /// Set before the first record.
    pub fn with_track_and_verify_wals(mut self, on: bool) -> LogWriter {
        self.track_wals = on;
        self
    }

    /// What the next WAL records of this one (RocksDB's `PredecessorWALInfo` made in
    /// `SwitchMemtable`): its number, every byte appended so far, the largest batch
    /// sequence number added (0: none; noted only with `track_and_verify_wals`).
    pub fn predecessor_info(&self) -> PredecessorWalInfo {
        PredecessorWalInfo {
            log_number: self.log_number,
            size_bytes: self.file.size(),
            last_seqno_recorded: self.last_seqno_recorded,
        }
    }

    /// RocksDB's `MaybeAddPredecessorWALInfo`: with `track_and_verify_wals`, records `info`
    /// (the WAL before this one) as a type 130 record (131 when recycling), right after the
    /// compression-type record. Without it, nothing is written.
    pub fn add_predecessor_wal_info(&mut self, info: &PredecessorWalInfo) -> Result<()> {
        if !self.track_wals {
            return Ok(());
        }
        if self.failed {
            return Err(Error::io_msg("log writer saw an earlier write error; not writing"));
        }
        let result = self.emit_whole(PREDECESSOR_WAL_INFO, RECYCLABLE_PREDECESSOR_WAL_INFO, &info.encode());
        match result {
            Ok(()) => {
                self.prelude_end = self.file.size();
                Ok(())
            }
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }

    fn write_fragments(&mut self, payload: &[u8]) -> Result<()> {
        let header_size = if self.recycle { RECYCLABLE_HEADER_SIZE } else { HEADER_SIZE };
        let mut rest = payload;
        let mut first = true;
        loop {
            let left_in_block = BLOCK_SIZE - self.block_offset;
            if left_in_block < header_size {
                if left_in_block > 0 {
                    const ZEROS: [u8; RECYCLABLE_HEADER_SIZE] = [0; RECYCLABLE_HEADER_SIZE];
                    self.file.append(&ZEROS[..left_in_block])?;
                }
                self.block_offset = 0;
            }
            let avail = BLOCK_SIZE - self.block_offset - header_size;
            let n = rest.len().min(avail);
            let last = n == rest.len();
            let record_type = match (first, last) {
                (true, true) => RecordType::Full,
                (true, false) => RecordType::First,
                (false, false) => RecordType::Middle,
                (false, true) => RecordType::Last,
            };
            let (fragment, tail) = rest.split_at(n);
            self.emit(record_type, fragment)?;
            rest = tail;
            first = false;
            if last {
                return Ok(());
            }
        }
    }

    fn emit(&mut self, record_type: RecordType, fragment: &[u8]) -> Result<()> {
        let mut header = [0u8; RECYCLABLE_HEADER_SIZE];
        let len = fragment.len() as u16; // a fragment never exceeds BLOCK_SIZE - 7
        header[4..6].copy_from_slice(&len.to_le_bytes());
        let header_size = if self.recycle {
            let t = record_type as u8 + (RecordType::RecyclableFull as u8 - 1);
            header[6] = t;
            // Only the low 32 bits of the log number are stored, as RocksDB does.
            header[7..11].copy_from_slice(&(self.log_number as u32).to_le_bytes());
            header[..4].copy_from_slice(&record_crc(t, Some(self.log_number as u32), fragment).to_le_bytes());
            RECYCLABLE_HEADER_SIZE
        } else {
            let t = record_type as u8;
            header[6] = t;
            let crc = crc32c::crc32c_append(self.type_crc[t as usize], fragment);
            header[..4].copy_from_slice(&super::format::mask_crc(crc).to_le_bytes());
            HEADER_SIZE
        };
        self.file.append(&header[..header_size])?;
        self.file.append(fragment)?;
        self.block_offset += header_size + fragment.len();
        Ok(())
    }

    /// Hands buffered bytes to the OS, then (with `bytes_per_sync`) starts their write-back
    /// as RocksDB's `WritableFileWriter::Flush`.
    pub fn flush(&mut self) -> Result<()> {
        self.file.flush()?;
        if self.bytes_per_sync > 0 {
            let size = self.file.size();
            if size > NOT_SYNCED_TAIL {
                let mut to = size - NOT_SYNCED_TAIL;
                to -= to % RANGE_SYNC_ALIGN;
                if to > self.range_synced && to - self.range_synced >= self.bytes_per_sync {
                    let from = self.range_synced;
                    self.range_synced = to;
                    if self.strict_range_sync {
                        self.file.range_sync_strict(to)?;
                    } else {
                        self.file.range_sync(from, to - from)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Makes every record added so far durable.
    pub fn sync(&mut self) -> Result<()> {
        self.file.sync()
    }

    /// The file's sync handle (`WritableFile::sync_handle`): it makes durable what
    /// `flush` handed to the OS, from another thread while records go on being added.
    pub fn sync_handle(&self) -> Option<std::sync::Arc<dyn shale_base::fs::SyncHandle>> {
        self.file.sync_handle()
    }

    /// Bytes written to the file so far (including padding).
    pub fn file_size(&self) -> u64 {
        self.file.size()
    }

    /// True when no logical record was added (the compression-type and predecessor records
    /// alone do not count).
    pub fn is_empty_log(&self) -> bool {
        self.file.size() <= self.prelude_end
    }

    /// True once an append failed (the writer refuses further records).
    pub fn has_failed(&self) -> bool {
        self.failed
    }

    pub fn log_number(&self) -> u64 {
        self.log_number
    }
}

#[cfg(test)]
mod range_sync_tests {
    use std::sync::{Arc, Mutex};

    use super::LogWriter;
    use crate::error::Result;
    use crate::fs::WritableFile;

    /// Counts bytes and records the write-back requests.
    #[derive(Default)]
    struct Recorder {
        size: u64,
        ranges: Arc<Mutex<Vec<(u64, u64)>>>,
    }

    impl WritableFile for Recorder {
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
        fn range_sync(&mut self, offset: u64, len: u64) -> Result<()> {
            self.ranges.lock().map_err(|_| crate::error::Error::io_msg("poisoned"))?.push((offset, len));
            Ok(())
        }
    }

    /// The write-back requests after `records` records (a flush after each), and the size.
    fn ranges_after(bytes_per_sync: u64, records: usize, record_len: usize) -> (Vec<(u64, u64)>, u64) {
        let f = Recorder::default();
        let ranges = f.ranges.clone();
        let mut w = LogWriter::new(Box::new(f), 1).with_bytes_per_sync(bytes_per_sync);
        for _ in 0..records {
            w.add_record(&vec![7u8; record_len]).unwrap();
            w.flush().unwrap();
        }
        let r = ranges.lock().unwrap().clone();
        (r, w.file_size())
    }

    #[test]
    fn write_back_follows_rocksdb_rule() {
        // Off: never.
        assert!(ranges_after(0, 300, 10_000).0.is_empty());
        // 3 MB written, 64 KiB steps: contiguous 4 KiB-aligned ranges, each at least 64 KiB,
        // ending at least 1 MiB behind the end, the last within 64 KiB + 1 MiB + a record.
        let (r, size) = ranges_after(64 << 10, 300, 10_000);
        assert!(!r.is_empty());
        let mut next = 0;
        for &(off, len) in &r {
            assert_eq!(off, next);
            assert!(len >= 64 << 10, "{r:?}");
            assert_eq!((off + len) % 4096, 0);
            next = off + len;
        }
        assert!(next + (1 << 20) <= size, "{next} {size}");
        assert!(size - next < (1 << 20) + (64 << 10) + 20_000 + 4096, "{next} {size}");
        // Under 1 MiB written: nothing.
        assert!(ranges_after(8 << 10, 50, 10_000).0.is_empty());
    }
}
