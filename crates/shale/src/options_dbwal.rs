//! DB-wide options of RocksDB 11.8.1 about the WAL chain, the MANIFEST and recovery that
//! rust-rocksdb 0.25 has no setter for, set by name (an options string, an OPTIONS file),
//! written to the OPTIONS file and the LOG, and acting as RocksDB's (their rows are the
//! `dbwal` block of `options_table.rs`):
//!
//! - `track_and_verify_wals` (default false, immutable): each WAL started by a memtable
//!   switch begins (after the compression-type record) with a predecessor-WAL record: the
//!   number, size and last batch sequence of the WAL before it (`wal::format`'s
//!   `PredecessorWalInfo`, record type 130; 131 with recycled WALs). The first WAL of an open
//!   records none, as RocksDB's `DBImpl::Open` (its TODO). On recovery each WAL's record is
//!   checked against the WAL replayed before it (`wal::LogReader::with_predecessor_check`):
//!   a missing or mismatched WAL is a Corruption, handled by `wal_recovery_mode` as any
//!   other damage (the open fails in TolerateCorruptedTailRecords and AbsoluteConsistency;
//!   replay stops there in PointInTime; nothing is checked in SkipAnyCorruptedRecords). An
//!   existing database with no WAL file at all fails the open with Corruption "Opening an
//!   existing DB with no WAL files" (not with `best_efforts_recovery`). A secondary does not
//!   check (RocksDB's `DBImplSecondary` reads WALs with the check off).

/// The options of this module, at RocksDB 11.8.1's defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct DbWalExtra {
    pub track_and_verify_wals: bool,
}
