//! RocksDB's log format: the framing shared by write-ahead logs (`NNNNNN.log`) and
//! MANIFEST files (db/log_format.h, db/log_writer.cc, db/log_reader.cc of RocksDB 7.8.3).
//!
//! ```text
//! file   = block* (the last block may be short)
//! block  = 32768 bytes = physical record* | zero padding (< 7 bytes)
//! record = masked crc32c (fixed32) | length (fixed16 LE) | type (1) | payload   (7-byte header)
//!        | masked crc32c | length | type | log number (fixed32) | payload        (recyclable, 11 bytes)
//! ```
//! A logical record (a WriteBatch, a VersionEdit) is split into a FULL fragment or a
//! FIRST, MIDDLE*, LAST chain when it crosses blocks. See `docs/wal.md` for the details
//! and for how each [`WalRecoveryMode`] treats a damaged file.

pub mod format;
pub mod reader;
pub mod writer;

pub use format::{PredecessorWalInfo, BLOCK_SIZE, HEADER_SIZE, RECYCLABLE_HEADER_SIZE};
pub use reader::{LogReader, PredecessorCheck};
pub use writer::LogWriter;

/// How WAL replay treats damage, as RocksDB's `WALRecoveryMode` (same numeric values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WalRecoveryMode {
    /// A record cut short at the very end of the file (a crash mid-write) ends the log
    /// quietly; any other damage is a Corruption error.
    TolerateCorruptedTailRecords = 0,
    /// Any damage, including an incomplete tail, is a Corruption error.
    AbsoluteConsistency = 1,
    /// Replay stops quietly at the first damage, keeping a consistent prefix.
    #[default]
    PointInTime = 2,
    /// Damaged records and blocks are skipped; replay goes on after them.
    SkipAnyCorruptedRecord = 3,
}

impl WalRecoveryMode {
    /// The mode for RocksDB's numeric value (0..=3).
    pub fn from_i32(v: i32) -> Option<WalRecoveryMode> {
        Some(match v {
            0 => WalRecoveryMode::TolerateCorruptedTailRecords,
            1 => WalRecoveryMode::AbsoluteConsistency,
            2 => WalRecoveryMode::PointInTime,
            3 => WalRecoveryMode::SkipAnyCorruptedRecord,
            _ => return None,
        })
    }

    /// RocksDB's numeric value of the mode.
    pub fn as_i32(self) -> i32 {
        self as i32
    }
}

#[cfg(test)]
mod tests;
