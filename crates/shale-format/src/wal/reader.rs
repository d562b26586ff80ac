//! Reads logical records back from RocksDB's block-framed log format, applying a
//! [`WalRecoveryMode`] to damage the way RocksDB 7.8.3's `log::Reader` and
//! `DBImpl::RecoverLogFiles` (with `paranoid_checks`, the default) do.
//!
//! ```text
//! read 32 KiB block -> parse header (crc | len | type [| log number]) -> check length,
//! crc -> FULL: return | FIRST, MIDDLE*, LAST: assemble, return
//! ```
//! Damage found while parsing, and what the modes make of it:
//!
//! | finding                                         | Tolerate | Absolute | PointInTime | Skip     |
//! |-------------------------------------------------|----------|----------|-------------|----------|
//! | partial header / record cut short at end of file| end      | error    | stop        | end      |
//! | file ends inside a fragmented record            | end      | error    | stop        | end      |
//! | checksum mismatch, bad length before the end     | error    | error    | stop        | skip     |
//! | fragment out of order, unknown record type       | error    | error    | stop        | skip     |
//! | record of an older log (recycled file)           | end      | end      | end         | skip     |
//!
//! "stop" ends the log without an error and sets [`LogReader::stopped_at_corruption`];
//! "skip" drops the damaged bytes (the rest of the block for a bad header) and goes on.
//! In a recycled file (its first logical record is a recyclable type), Tolerate treats a checksum
//! mismatch or bad length as the end of the log, as RocksDB does.
//!
//! A SetCompressionType record (type 9, payload `compression type fixed32`; RocksDB's WAL
//! compression) must come before any other record; after it, each logical record's
//! fragments together are one ZSTD stream, decompressed when the record is whole. A second
//! such record, one after a data record, an undecodable one, or a frame that does not
//! decompress is damage, handled by the mode as RocksDB's reader reports it.

use crate::error::{Error, Result};
use crate::fs::SequentialFile;

use super::format::{
    is_recyclable_type, unmask_crc, PredecessorWalInfo, BLOCK_SIZE, HEADER_SIZE, PREDECESSOR_WAL_INFO,
    RECORD_TYPE_SAFE_IGNORE_MASK, RECYCLABLE_HEADER_SIZE, RECYCLABLE_PREDECESSOR_WAL_INFO,
    RECYCLABLE_USER_DEFINED_TIMESTAMP_SIZE, SET_COMPRESSION_TYPE, USER_DEFINED_TIMESTAMP_SIZE,
};
use super::WalRecoveryMode;

/// What one step of physical parsing found.
enum Physical {
    /// A sound fragment: its type byte and payload range within the block buffer.
    Fragment { ty: u8, start: usize, len: usize, offset: u64 },
    /// Clean end of file.
    Eof,
    /// Fewer than a header's bytes left at the end of the file.
    BadHeader { offset: u64 },
    /// A zero-filled (preallocated) header: the rest of the block was dropped.
    ZeroRecord { offset: u64 },
    /// A recyclable record written for an older log number.
    OldRecord { offset: u64 },
    /// The length runs past the end of the file: a record cut short by a crash.
    TruncatedBody { offset: u64 },
    /// A bad length before the last block, or a checksum mismatch; the rest of the block
    /// was dropped.
    Damaged { offset: u64, reason: &'static str },
}

/// What the mode says to do about a reported corruption.
enum Verdict {
    Continue,
    Stop,
}

/// Reads records from a WAL or MANIFEST file front to back.
pub struct LogReader {
    file: Box<dyn SequentialFile>,
    file_name: String,
    log_number: u64,
    mode: WalRecoveryMode,
    /// One block of file data; `block[pos..end]` is not consumed yet.
    block: Vec<u8>,
    pos: usize,
    end: usize,
    /// The last read returned less than a whole block: no more data follows `end`.
    eof: bool,
    /// File offset just past `block[end - 1]`.
    end_of_buffer_offset: u64,
    /// The file's first logical record is in the recyclable format.
    recycled: bool,
    last_record_offset: u64,
    /// File offset just past the last record returned (RocksDB's `LastRecordEnd`).
    last_record_end: u64,
    /// The reader returned its end (or an error) and will not read further.
    finished: bool,
    stopped_at_corruption: bool,
    skipped_corruptions: u64,
    /// The first [`MAX_SKIPPED_REPORTS`] corruptions SkipAnyCorruptedRecord stepped over:
    /// (reason, file offset).
    skipped_reports: Vec<(String, u64)>,
    /// The timestamp sizes recorded so far (RocksDB 8+'s record type 10): family id, size.
    recorded_ts: Vec<(u32, u16)>,
    /// A SetCompressionType record was read; `compressed`: it named ZSTD.
    compression_record_read: bool,
    compressed: bool,
    /// A logical record was returned (RocksDB's `first_record_read_`).
    first_record_read: bool,
    /// `track_and_verify_wals`: how a predecessor-WAL record is checked.
    predecessor_check: Option<PredecessorCheck>,
    /// The log number a failed predecessor check named (RocksDB's reporter's
    /// `corrupted_log_number`): the WAL found missing or mismatched.
    corrupted_log_number: Option<u64>,
}

/// What recovery knows when it opens a WAL with `track_and_verify_wals` (RocksDB's
/// `log::Reader` arguments `min_wal_number_to_keep` and `observed_predecessor_wal_info`).
#[derive(Debug, Clone, Copy)]
pub struct PredecessorCheck {
    /// The WAL replayed before this one, as recovery saw it: its number, its size on disk,
    /// the starting sequence number of its last batch. None: this is the first WAL replayed.
    pub observed: Option<PredecessorWalInfo>,
    /// The oldest WAL recovery needs: a first WAL whose recorded predecessor is at least
    /// this one is missing a WAL.
    pub min_wal_number_to_keep: u64,
}

/// How many skipped corruptions a reader remembers the place of.
const MAX_SKIPPED_REPORTS: usize = 16;

/// The largest record a compressed WAL may decompress to (a write batch is below 4 GiB).
const MAX_WAL_RECORD: usize = u32::MAX as usize;

impl LogReader {
    /// A reader over `file`, named `file_name` in error messages, for log `log_number`.
    pub fn new(
        file: Box<dyn SequentialFile>,
        file_name: String,
        log_number: u64,
        mode: WalRecoveryMode,
    ) -> LogReader {
        LogReader {
            file,
            file_name,
            log_number,
            mode,
            block: vec![0u8; BLOCK_SIZE],
            pos: 0,
            end: 0,
            eof: false,
            end_of_buffer_offset: 0,
            recycled: false,
            last_record_offset: 0,
            last_record_end: 0,
            finished: false,
            stopped_at_corruption: false,
            skipped_corruptions: 0,
            skipped_reports: Vec::new(),
            recorded_ts: Vec::new(),
            compression_record_read: false,
            compressed: false,
            first_record_read: false,
            predecessor_check: None,
            corrupted_log_number: None,
        }
    }

    /// RocksDB's `track_and_verify_wals` on recovery: a predecessor-WAL record this log
    /// holds is compared with `check` (RocksDB's `MaybeVerifyPredecessorWALInfo`); a
    /// missing or mismatched WAL is a Corruption the mode handles as any other damage
    /// (an error in TolerateCorruptedTailRecords and AbsoluteConsistency, the end of replay
    /// in PointInTime). None, or SkipAnyCorruptedRecord: not checked.
    pub fn with_predecessor_check(mut self, check: Option<PredecessorCheck>) -> LogReader {
        self.predecessor_check = check;
        self
    }

    /// The WAL a failed predecessor check found missing or mismatched.
    pub fn corrupted_log_number(&self) -> Option<u64> {
        self.corrupted_log_number
    }

    /// RocksDB's `MaybeVerifyPredecessorWALInfo`: the reason `recorded` fails the check.
    fn predecessor_mismatch(&self, recorded: &PredecessorWalInfo) -> Option<String> {
        let check = self.predecessor_check.as_ref()?;
        if self.mode == WalRecoveryMode::SkipAnyCorruptedRecord {
            return None;
        }
        let n = recorded.log_number;
        let Some(observed) = check.observed else {
            return (n >= check.min_wal_number_to_keep).then(|| format!("Missing WAL of log number {n}"));
        };
        if observed.log_number != n {
            Some(format!(
                "Mismatched predecessor log number of WAL file {} Recorded {n}. Observed {}",
                self.file_name, observed.log_number
            ))
        } else if observed.last_seqno_recorded != recorded.last_seqno_recorded {
            Some(format!(
                "Mismatched last sequence number recorded in the WAL of log number {n}. Recorded {}. \
                 Observed {}. (Last sequence number equal to 0 indicates no WAL records)",
                recorded.last_seqno_recorded, observed.last_seqno_recorded
            ))
        } else if observed.size_bytes != recorded.size_bytes {
            Some(format!(
                "Mismatched size of the WAL of log number {n}. Recorded {} bytes. Observed {} bytes.",
                recorded.size_bytes, observed.size_bytes
            ))
        } else {
            None
        }
    }

    /// The user-defined timestamp sizes the log recorded before the last record read:
    /// (column family id, size); families not listed have none.
    pub fn recorded_timestamp_sizes(&self) -> &[(u32, u16)] {
        &self.recorded_ts
    }

    /// Reads the next logical record into `record`. Ok(true): a whole record is there.
    /// Ok(false): the log ended (clean end, or a stop the mode allows). Err: damage the
    /// mode does not allow (a Corruption naming file and offset), an IO error, or a WAL
    /// written with compression (NotSupported). After false or an error, every later call
    /// returns Ok(false).
    pub fn read_record(&mut self, record: &mut Vec<u8>) -> Result<bool> {
        record.clear();
        if self.finished {
            return Ok(false);
        }
        let result = self.read_logical(record);
        if matches!(result, Ok(true)) {
            self.last_record_end = self.offset_of_pos();
        } else {
            self.finished = true;
            record.clear();
        }
        result
    }

    /// File offset of the first header of the last record returned.
    pub fn last_record_offset(&self) -> u64 {
        self.last_record_offset
    }

    /// File offset just past the last record returned (RocksDB's `LastRecordEnd`): where a
    /// writer appending to the file would continue after its last whole record.
    pub fn last_record_end(&self) -> u64 {
        self.last_record_end
    }

    /// True when PointInTime replay stopped early because of damage (including a cut-short
    /// tail). RocksDB then replays a later WAL only if its first batch continues the
    /// sequence numbers exactly; the simple, safe rule is to replay no later WAL.
    pub fn stopped_at_corruption(&self) -> bool {
        self.stopped_at_corruption
    }

    /// How many corruptions SkipAnyCorruptedRecord mode stepped over.
    pub fn skipped_corruptions(&self) -> u64 {
        self.skipped_corruptions
    }

    /// The first corruptions SkipAnyCorruptedRecord stepped over: (reason, file offset).
    pub fn skipped_corruption_reports(&self) -> &[(String, u64)] {
        &self.skipped_reports
    }

    pub fn log_number(&self) -> u64 {
        self.log_number
    }

    fn report(&mut self, reason: &str, offset: u64) -> Result<Verdict> {
        match self.mode {
            WalRecoveryMode::TolerateCorruptedTailRecords | WalRecoveryMode::AbsoluteConsistency => {
                Err(Error::corruption(format!("{reason} in {} at offset {offset}", self.file_name)))
            }
            WalRecoveryMode::PointInTime => {
                self.stopped_at_corruption = true;
                Ok(Verdict::Stop)
            }
            WalRecoveryMode::SkipAnyCorruptedRecord => {
                self.skipped_corruptions += 1;
                if self.skipped_reports.len() < MAX_SKIPPED_REPORTS {
                    self.skipped_reports.push((reason.to_string(), offset));
                }
                Ok(Verdict::Continue)
            }
        }
    }

    /// Modes in which damage at the very end of the file is reported, not ignored.
    fn strict_tail(&self) -> bool {
        matches!(self.mode, WalRecoveryMode::AbsoluteConsistency | WalRecoveryMode::PointInTime)
    }

    fn read_logical(&mut self, record: &mut Vec<u8>) -> Result<bool> {
        macro_rules! report {
            ($reason:expr, $offset:expr) => {
                if let Verdict::Stop = self.report($reason, $offset)? {
                    return Ok(false);
                }
            };
        }
        let mut in_fragmented = false;
        let mut record_offset = 0u64;
        loop {
            match self.read_physical()? {
                Physical::Fragment { ty, start, len, offset } => match ty {
                    1 | 5 => {
                        if in_fragmented && !record.is_empty() {
                            report!("partial record without end", record_offset);
                        }
                        record.clear();
                        record.extend_from_slice(&self.block[start..start + len]);
                        if !self.uncompress(record)? {
                            report!("could not uncompress the record", offset);
                            record.clear();
                            continue;
                        }
                        self.last_record_offset = offset;
                        self.first_record_read = true;
                        return Ok(true);
                    }
                    2 | 6 => {
                        if in_fragmented && !record.is_empty() {
                            report!("partial record without end", record_offset);
                        }
                        record.clear();
                        record.extend_from_slice(&self.block[start..start + len]);
                        record_offset = offset;
                        in_fragmented = true;
                    }
                    3 | 7 => {
                        if in_fragmented {
                            record.extend_from_slice(&self.block[start..start + len]);
                        } else {
                            report!("missing start of fragmented record", offset);
                        }
                    }
                    4 | 8 => {
                        if in_fragmented {
                            record.extend_from_slice(&self.block[start..start + len]);
                            if !self.uncompress(record)? {
                                report!("could not uncompress the record", record_offset);
                                in_fragmented = false;
                                record.clear();
                                continue;
                            }
                            self.last_record_offset = record_offset;
                            self.first_record_read = true;
                            return Ok(true);
                        }
                        report!("missing start of fragmented record", offset);
                    }
                    SET_COMPRESSION_TYPE => {
                        if self.compression_record_read {
                            report!("read multiple SetCompressionType records", offset);
                        }
                        if self.first_record_read {
                            report!("SetCompressionType not the first record", offset);
                        }
                        in_fragmented = false;
                        record.clear();
                        let payload = &self.block[start..start + len];
                        let t = (len >= 4)
                            .then(|| u32::from_le_bytes([payload[0], payload[1], payload[2], payload[3]]));
                        match t {
                            // RocksDB's StreamingCompressionTypeSupported: none, or ZSTD.
                            Some(0) => {
                                self.compression_record_read = true;
                                self.compressed = false;
                            }
                            Some(7) => {
                                self.compression_record_read = true;
                                self.compressed = true;
                            }
                            _ => {
                                report!("could not decode SetCompressionType record", offset);
                            }
                        }
                    }
                    USER_DEFINED_TIMESTAMP_SIZE | RECYCLABLE_USER_DEFINED_TIMESTAMP_SIZE => {
                        if in_fragmented && !record.is_empty() {
                            report!("user-defined timestamp size record interspersed partial record", offset);
                        }
                        in_fragmented = false;
                        record.clear();
                        let payload = &self.block[start..start + len];
                        if len % 6 != 0 {
                            report!("could not decode user-defined timestamp size record", offset);
                            continue;
                        }
                        for c in payload.chunks(6) {
                            let cf = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                            let size = u16::from_le_bytes([c[4], c[5]]);
                            match self.recorded_ts.iter_mut().find(|(id, _)| *id == cf) {
                                Some(e) => e.1 = size,
                                None => self.recorded_ts.push((cf, size)),
                            }
                        }
                    }
                    PREDECESSOR_WAL_INFO | RECYCLABLE_PREDECESSOR_WAL_INFO => {
                        in_fragmented = false;
                        record.clear();
                        match PredecessorWalInfo::decode(&self.block[start..start + len]) {
                            None => report!("could not decode PredecessorWALInfoType record", offset),
                            Some(recorded) => {
                                if let Some(reason) = self.predecessor_mismatch(&recorded) {
                                    self.corrupted_log_number = Some(recorded.log_number);
                                    report!(&reason, offset);
                                }
                            }
                        }
                    }
                    _ if ty & RECORD_TYPE_SAFE_IGNORE_MASK != 0 => {
                        in_fragmented = false;
                        record.clear();
                    }
                    _ => {
                        report!(&format!("unknown record type {ty}"), offset);
                        in_fragmented = false;
                        record.clear();
                    }
                },
                Physical::BadHeader { offset } => {
                    if self.strict_tail() {
                        report!("truncated header", offset);
                    }
                    return self.end_inside(in_fragmented, record_offset);
                }
                Physical::Eof => return self.end_inside(in_fragmented, record_offset),
                Physical::OldRecord { offset } => {
                    if self.mode != WalRecoveryMode::SkipAnyCorruptedRecord {
                        return self.end_inside(in_fragmented, record_offset);
                    }
                    if in_fragmented {
                        report!("error in middle of record", offset);
                        in_fragmented = false;
                        record.clear();
                    }
                }
                Physical::ZeroRecord { offset } => {
                    if in_fragmented {
                        report!("error in middle of record", offset);
                        in_fragmented = false;
                        record.clear();
                    }
                }
                Physical::TruncatedBody { offset } => {
                    if self.strict_tail() {
                        report!("truncated record body", offset);
                    }
                    return Ok(false);
                }
                Physical::Damaged { offset, reason } => {
                    if self.recycled && self.mode == WalRecoveryMode::TolerateCorruptedTailRecords {
                        return Ok(false);
                    }
                    report!(reason, offset);
                    if in_fragmented {
                        report!("error in middle of record", record_offset);
                        in_fragmented = false;
                        record.clear();
                    }
                }
            }
        }
    }

    /// In a compressed log, replaces `record` (one record's fragments) by its decompressed
    /// bytes. False: the stream is damaged.
    fn uncompress(&self, record: &mut Vec<u8>) -> Result<bool> {
        if !self.compressed {
            return Ok(true);
        }
        match shale_base::compression::uncompress_wal_record(record, MAX_WAL_RECORD) {
            Ok(raw) => {
                *record = raw;
                Ok(true)
            }
            Err(_) => Ok(false),
        }
    }

    /// The end of the log was reached; a record left unfinished there is dropped (and
    /// reported in the strict-tail modes).
    fn end_inside(&mut self, in_fragmented: bool, record_offset: u64) -> Result<bool> {
        if in_fragmented && self.strict_tail() {
            if let Verdict::Stop = self.report("error reading trailing data", record_offset)? {
                return Ok(false);
            }
        }
        Ok(false)
    }

    /// File offset of `block[pos]`.
    fn offset_of_pos(&self) -> u64 {
        self.end_of_buffer_offset - (self.end - self.pos) as u64
    }

    /// Parses the next physical record, reading blocks as needed.
    fn read_physical(&mut self) -> Result<Physical> {
        loop {
            let avail = self.end - self.pos;
            if avail < HEADER_SIZE {
                if let Some(p) = self.read_more()? {
                    return Ok(p);
                }
                continue;
            }
            let offset = self.offset_of_pos();
            let header = &self.block[self.pos..self.end];
            let len = u16::from_le_bytes([header[4], header[5]]) as usize;
            let ty = header[6];
            let mut header_size = HEADER_SIZE;
            if is_recyclable_type(ty) {
                // RocksDB's reader: a recyclable record before any logical record (after a
                // compression-type record, which has the legacy header) marks the file
                // recycled.
                if !self.first_record_read {
                    self.recycled = true;
                }
                header_size = RECYCLABLE_HEADER_SIZE;
                if avail < RECYCLABLE_HEADER_SIZE {
                    if let Some(p) = self.read_more()? {
                        return Ok(p);
                    }
                    continue;
                }
                let log_num = u32::from_le_bytes([header[7], header[8], header[9], header[10]]);
                if log_num != self.log_number as u32 {
                    // Stale data from the file's previous use fills the rest of the block.
                    self.pos = self.end;
                    return Ok(Physical::OldRecord { offset });
                }
            }
            if header_size + len > avail {
                self.pos = self.end;
                return Ok(if self.eof {
                    Physical::TruncatedBody { offset }
                } else {
                    Physical::Damaged { offset, reason: "bad record length" }
                });
            }
            if ty == 0 && len == 0 {
                // Preallocated, zero-filled space: skip the rest of the block.
                self.pos = self.end;
                return Ok(Physical::ZeroRecord { offset });
            }
            let expected = unmask_crc(u32::from_le_bytes([header[0], header[1], header[2], header[3]]));
            let actual = crc32c::crc32c(&header[6..header_size + len]);
            if actual != expected {
                // The length itself may be wrong, so nothing after it in this block is
                // trusted.
                self.pos = self.end;
                return Ok(Physical::Damaged { offset, reason: "checksum mismatch" });
            }
            let start = self.pos + header_size;
            self.pos += header_size + len;
            return Ok(Physical::Fragment { ty, start, len, offset });
        }
    }

    /// Loads the next block. None: a block was read (it may be empty at end of file).
    /// Some: the file has ended, cleanly or with a partial header left over.
    fn read_more(&mut self) -> Result<Option<Physical>> {
        if self.eof {
            let left = self.end - self.pos;
            let offset = self.offset_of_pos();
            self.pos = self.end;
            return Ok(Some(if left > 0 { Physical::BadHeader { offset } } else { Physical::Eof }));
        }
        // Whatever is left of a whole block is its zero padding.
        self.pos = 0;
        self.end = 0;
        let mut filled = 0;
        while filled < BLOCK_SIZE {
            let n = self.file.read(&mut self.block[filled..])?;
            if n == 0 {
                break;
            }
            filled += n.min(BLOCK_SIZE - filled);
        }
        self.end = filled;
        self.end_of_buffer_offset += filled as u64;
        if filled < BLOCK_SIZE {
            self.eof = true;
        }
        Ok(None)
    }
}
