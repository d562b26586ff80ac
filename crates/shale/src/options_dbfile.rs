//! DB-wide options of RocksDB 11.8.1 about the files the database writes that rust-rocksdb
//! 0.25 has no setter for, set by name (an options string, an OPTIONS file), written to the
//! OPTIONS file and the LOG, and acting as RocksDB's (their rows are the `dbfile` block of
//! `options_table.rs`):
//!
//! - `file_checksum_gen_factory` (default nullptr, immutable): RocksDB's one built-in
//!   factory, `FileChecksumGenCrc32cFactory`, by that name (`nullptr` or an empty value: none;
//!   another name, which RocksDB's registry does not hold, is accepted as none, as RocksDB's
//!   `ignore_unsupported_options` default has it). With it, every table and blob file the
//!   database writes records its whole-file checksum in the MANIFEST: the CRC32C of all its
//!   bytes, 4 bytes big-endian, function name "FileChecksumCrc32c"
//!   (`shale_format::file_checksum`), gathered as the file is written by a flush, a table
//!   written at recovery, a compaction (local or as a compaction service's
//!   worker) and read back from an ingested file once placed. Without it tables record the
//!   empty checksum and "Unknown", blob files nothing (so do the tables repair scans, as
//!   RocksDB's repairer). A compaction whose
//!   `verify_output_flags` hold kVerifyFileChecksum reads each output back and compares.
//!   RocksDB's `ldb file_checksum_dump` lists what was recorded. The OPTIONS file writes
//!   `file_checksum_gen_factory=FileChecksumGenCrc32cFactory` (or `nullptr`); the LOG,
//!   `Options.file_checksum_gen_factory: FileChecksumGenCrc32cFactory` (or `Unknown`).
//! - `use_direct_io_for_compaction_reads` (default false, immutable; new in RocksDB 11):
//!   a compaction reads its input tables with O_DIRECT while every other read stays
//!   buffered. As RocksDB's `CompactionJob`, each input table is opened anew for the
//!   compaction (an ephemeral reader, not the table cache's, counted in `NO_FILE_OPENS` and
//!   `TABLE_OPEN_IO_MICROS`) with direct reads (`TableCache::open_ephemeral`). No effect
//!   with `use_direct_reads` (every read is direct already). With `allow_mmap_reads` the
//!   open is NotSupported (RocksDB's `ValidateOptions`); the open probes the file system
//!   for O_DIRECT as it does for `use_direct_reads` (InvalidArgument "Direct I/O is not
//!   supported by the specified DB." where it has none). Blob files and the checks of
//!   compaction outputs read through the buffered path, as RocksDB's.
//! - `enforce_write_buffer_manager_during_recovery` (default true, immutable): while the
//!   open replays the WALs, each batch replayed asks the database's write buffer manager
//!   (`set_write_buffer_manager`, or the one `db_write_buffer_size` makes) whether to flush
//!   (RocksDB's `ShouldFlush`); when it says so, every family whose memtable holds replayed
//!   data is written to a level-0 table and starts a new memtable, as RocksDB's
//!   `InsertLogRecordToMemtable` schedules them. A flush made so also overrides
//!   `avoid_flush_during_recovery`: the memtables left at the end are flushed too. False:
//!   only a memtable reaching `write_buffer_size` is flushed during replay. A read-only
//!   open flushes nothing either way.

/// The options of this module, at RocksDB 11.8.1's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DbFileExtra {
    /// `file_checksum_gen_factory` is `FileChecksumGenCrc32cFactory` (false: nullptr).
    pub file_checksum_crc32c: bool,
    /// `use_direct_io_for_compaction_reads`.
    pub use_direct_io_for_compaction_reads: bool,
    /// `enforce_write_buffer_manager_during_recovery`.
    pub enforce_write_buffer_manager_during_recovery: bool,
}

impl Default for DbFileExtra {
    fn default() -> Self {
        DbFileExtra {
            file_checksum_crc32c: false,
            use_direct_io_for_compaction_reads: false,
            enforce_write_buffer_manager_during_recovery: true,
        }
    }
}
