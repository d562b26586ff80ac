//! DB-wide options of RocksDB 11.8.1 about the MANIFEST at open and close that rust-rocksdb
//! 0.25 has no setter for, set by name (an options string, an OPTIONS file), written to the
//! OPTIONS file and the LOG, and acting as RocksDB's (their rows are the `mfst` block of
//! `options_table.rs`):
//!
//! - `verify_manifest_content_on_close` (default false; mutable in RocksDB through
//!   `SetDBOptions`, which rust-rocksdb lacks, so fixed at open as every DB-wide option in
//!   Shale): when a read-write database closes (after its background work stopped), the
//!   MANIFEST in use is read back whole, checksums checked as RocksDB's
//!   `kAbsoluteConsistency` reader does and every record decoded as a version edit
//!   (RocksDB's `VersionSet::Close`). A damaged MANIFEST is replaced: a new one is written
//!   from the state in memory (the whole state, then an empty change, as RocksDB's
//!   `LogAndApply` of an empty edit after the old writer was closed), CURRENT names it, and
//!   it is checked once more; damaged again, the close reports Corruption "MANIFEST content
//!   verification failed after rewrite: <file>" (to the LOG: rust-rocksdb's close is `Drop`).
//!   A database that wrote no MANIFEST since it opened has nothing to check (RocksDB's
//!   `descriptor_log_` is null then).
//! - `reuse_manifest_on_open` (default false, immutable): a read-write open appends what it
//!   records (each family's new log number and the tables written from the WALs, the oldest
//!   WAL to keep, the WALs no longer tracked, the next file number and last sequence) to the
//!   MANIFEST it recovered from instead of starting a new one, under RocksDB's conditions
//!   (`VersionSet::ReopenManifestForAppend`): not with `best_efforts_recovery`; the file
//!   must end where its last whole record (or whole atomic group) ends, not in a torn tail;
//!   the file system must reopen it for appending (`FileSystem::reopen_writable_file`). Else
//!   the open writes a new MANIFEST as without the option. The reused MANIFEST then rolls
//!   over at `max_manifest_file_size` (RocksDB keeps no compacted size for it, so
//!   `max_manifest_space_amp_pct` has nothing to scale until the next roll).
//! - `async_wal_precreate` (default false, immutable; sanitized to false, in the OPTIONS file
//!   and the LOG too, when `recycle_log_file_num` is in force, as RocksDB's
//!   `SanitizeOptions`): the next WAL's file is created ahead by a background thread, after
//!   the open and after each memtable switch, with a file number taken then; a switch that
//!   starts a new WAL takes it (waiting if it is being made) and writes its first records
//!   (`db/wal_precreate.rs`). The `rocksdb.wal.precreate.*` tickers count hits, misses,
//!   waits and failures. An unused file is left empty at close, as RocksDB leaves it.
//! - `background_close_inactive_wals` (default false, immutable; deprecated in RocksDB as a
//!   kill switch): an inactive WAL (one a memtable switch left) that a sync finds synced
//!   whole keeps its file open until the next purge (after a flush or compaction, or a
//!   scheduled purge) closes it, instead of being closed by that sync (RocksDB's
//!   `SyncWalImpl`/`MarkLogsSynced` and `wals_to_free_`). Not with `recycle_log_file_num`,
//!   whose WALs are closed at their last sync so the file can be reused.
//! - `optimize_manifest_for_recovery` (default false; mutable in RocksDB through
//!   `SetDBOptions`, fixed at open in Shale; not with `best_efforts_recovery`): the open
//!   records only the recovery edits that change something (RocksDB 11.8.1's
//!   `ShouldEmitPerColumnFamilyRecoveryEdit` and the checks of `MaybeUpdateNextFileNumber`
//!   and the WAL-deletion edit; `engine::db::open::recovery_edits`), and with none it writes
//!   no MANIFEST: CURRENT keeps naming the recovered one and the first change writes a new
//!   one (RocksDB's `LogAndApply` with no writer); with `reuse_manifest_on_open`, nothing is
//!   appended. A close (after the background work stopped) records the WAL markers
//!   (`MaybeWriteWalMarkersToManifestOnClose`): each family holding nothing in memtables gets
//!   the log number one past the current WAL, and when all are empty (not with two-phase
//!   commit) the oldest WAL to keep moves there too, so a warm reopen has nothing to record.

/// The options of this module, at RocksDB 11.8.1's defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct MfstExtra {
    pub verify_manifest_content_on_close: bool,
    pub reuse_manifest_on_open: bool,
    pub async_wal_precreate: bool,
    pub background_close_inactive_wals: bool,
    pub optimize_manifest_for_recovery: bool,
}
