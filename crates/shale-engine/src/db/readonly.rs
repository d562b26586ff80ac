//! Read-only and secondary opens, as RocksDB's `DBImplReadOnly` and `DBImplSecondary`.
//!
//! A read-only open reads CURRENT, the MANIFEST it names and every WAL the MANIFEST does
//! not cover, and replays those WALs (by the read-write open's rules, `open::replay_wals`)
//! into memtables kept in memory (they are never written
//! to tables, however large). It creates, changes and deletes no file: no LOCK is taken
//! (RocksDB's read-only instances take none, so they open beside a running primary), no
//! LOG, no new WAL or MANIFEST, no OPTIONS file, no IDENTITY; no background thread runs.
//! Writes, flushes, compactions, family changes and `set_options` return NotSupported
//! with RocksDB's message, "Not supported operation in read only mode.".
//!
//! A secondary instance opens the primary's directory the same way, keeps its info log in
//! its own directory (`secondary_path`), and follows the primary with
//! `try_catch_up_with_primary`: it reads CURRENT and the MANIFEST again, makes each open
//! family's Version the one the MANIFEST now records, replays the WALs the primary has not
//! yet flushed into fresh memtables (a torn record at the tail of the WAL being written
//! ends the replay; any other damage fails the call, as RocksDB's secondary), and
//! publishes the result with new
//! SuperVersions. Unlike RocksDB, which remembers its position in the MANIFEST and in each
//! WAL, Shale re-reads them whole at every catch-up: the result is the same state, at a
//! cost that grows with the primary's unflushed WAL bytes.
//!
//! The order of the reads keeps every view a prefix of the primary's writes: the WAL
//! directory is listed *before* the MANIFEST is read. The primary deletes a WAL only after
//! the MANIFEST records the flush that covers it, so a WAL missing from the listing is
//! covered by the MANIFEST read after it; a WAL created after the listing holds only
//! writes newer than every listed one, and leaving it out leaves a prefix. (Read in the
//! other order, a flush installed between the two reads removes a WAL whose writes neither
//! the MANIFEST read nor the listing holds: a hole.) When a file named by these reads is
//! gone by the time it is opened (a WAL flushed meanwhile, a table compacted away, a new
//! MANIFEST), the catch-up starts over and installs nothing; after 64 such attempts it
//! returns the last error. Families the primary drops keep their last state.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::cf::CfHandle;
use super::info_log::InfoLog;
use super::open::{self, RecoveryCtx};
use super::{CfState, DbInner};
use crate::config::DbConfig;
use crate::error::{Error, ErrorKind, Result};
use crate::fs::{FileLock, FileSystem, WritableFile};
use crate::memtable::MemTable;
use crate::version::manifest::{self, RecoveredManifest};
use crate::version::Version;
use crate::wal::WalRecoveryMode;

/// How a database was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbMode {
    ReadWrite,
    ReadOnly,
    Secondary,
}

impl DbMode {
    fn refusal(self) -> Option<&'static str> {
        match self {
            DbMode::ReadWrite => None,
            DbMode::ReadOnly => Some("Not supported operation in read only mode."),
            DbMode::Secondary => Some("Not supported operation in secondary mode."),
        }
    }
}

impl DbInner {
    /// NotSupported with RocksDB's message when the database was opened read-only or as a
    /// secondary instance.
    pub fn check_writable(&self) -> Result<()> {
        match self.mode.refusal() {
            None => Ok(()),
            Some(msg) => Err(Error::not_supported(msg)),
        }
    }
}

/// The WAL and MANIFEST "file" of a read-only or secondary instance: every write is refused,
/// so nothing can reach the disk even by a path that forgot to check the mode.
pub struct RefusingFile(pub DbMode);

impl WritableFile for RefusingFile {
    fn append(&mut self, _data: &[u8]) -> Result<()> {
        Err(Error::not_supported(self.0.refusal().unwrap_or("no file to write")))
    }

    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        Err(Error::not_supported(self.0.refusal().unwrap_or("no file to write")))
    }

    fn size(&self) -> u64 {
        0
    }
}

/// A read-only instance holds no LOCK.
pub struct NoLock;

impl FileLock for NoLock {}

/// Replays `wals` into the families' memtables, in memory only, through the read-write
/// open's replay (`open::replay_wals`). Returns the last sequence.
///
/// Read-only: the `wal_recovery_mode` given, as RocksDB's `DBImplReadOnly` (its `Recover`
/// runs the same RecoverLogFiles as a read-write open). Secondary: RocksDB's
/// `DBImplSecondary::RecoverLogFiles` reads through a `FragmentBufferedReader` whose
/// reporter fails the open (or catch-up) on any damage it reports, whatever the mode, and
/// takes a cut-short tail for a record the primary is still writing: that is
/// TolerateCorruptedTailRecords' rule, so a secondary replays with it (`paranoid_checks`
/// plays no part there).
#[allow(clippy::too_many_arguments)]
pub fn replay(
    fs: &dyn FileSystem,
    path: &Path,
    config: &DbConfig,
    mode: DbMode,
    wals: &[u64],
    recovered: &RecoveredManifest,
    cfs: &mut BTreeMap<u32, CfState>,
    info_log: &InfoLog,
) -> Result<u64> {
    let mut last_sequence = recovered.last_sequence;
    let mut next_file_number = 0;
    let mut new_files = Vec::new();
    let wal_dir = config.wal_dir.clone();
    let mut ctx = RecoveryCtx {
        fs,
        path,
        wal_dir: &wal_dir,
        next_file_number: &mut next_file_number,
        new_files: &mut new_files,
        read_only: true,
        prepared: Default::default(),
        min_wal_number: open::replay_floor(recovered, cfs, config.allow_2pc),
        verify_timestamp_sizes_only: mode == DbMode::Secondary,
        repair: false,
    };
    let mut secondary;
    let config = if mode == DbMode::Secondary {
        secondary = config.clone();
        secondary.wal_recovery_mode = WalRecoveryMode::TolerateCorruptedTailRecords;
        secondary.paranoid_checks = true;
        // RocksDB's secondary reads WALs with no predecessor check.
        secondary.track_and_verify_wals = false;
        &secondary
    } else {
        config
    };
    open::replay_wals(&mut ctx, config, wals, cfs, &mut last_sequence, info_log)?;
    Ok(last_sequence)
}

impl DbInner {
    /// RocksDB's TryCatchUpWithPrimary (see the module comment).
    pub fn try_catch_up_with_primary(&self) -> Result<()> {
        if self.mode != DbMode::Secondary {
            return Err(Error::not_supported("Supported only by secondary instance"));
        }
        let mut attempt = 0;
        loop {
            match self.catch_up_once() {
                // A file the primary removed while it was being read: read again.
                Err(e) if attempt < 64 && vanished(&e) => {
                    attempt += 1;
                    self.info_log.log(format_args!("Catch-up retried: {e}"));
                }
                r => return r,
            }
        }
    }

    /// One catch-up: the WALs listed, then the MANIFEST read (this order keeps the view a
    /// prefix, see the module comment), then the listed WALs it does not cover replayed.
    /// A file gone meanwhile fails it before anything is installed.
    fn catch_up_once(&self) -> Result<()> {
        let fs = &*self.fs;
        let listed = open::wal_numbers(fs, &self.config.wal_dir)?;
        let recovered = manifest::recover(fs, &self.path)?;
        let handles: Vec<Arc<CfHandle>> = self.lock_state().cfs.values().map(|c| c.handle.clone()).collect();
        let mut cfs = BTreeMap::new();
        for h in handles {
            // A family the primary dropped keeps the state last read.
            let Some(rc) = recovered.column_families.get(&h.id) else { continue };
            // Tables recorded without timestamps get their boundaries padded, as at open
            // (RocksDB's VersionEditHandler on the secondary's MANIFEST tail).
            let mark_no_udt = match &rc.comparator {
                Some(stored) => super::timestamps::validate_udt_options(
                    &**h.icmp.user_comparator(),
                    stored,
                    h.config().persist_user_defined_timestamps,
                    rc.persist_user_defined_timestamps.unwrap_or(true),
                )?,
                None => false,
            };
            let ts = h.icmp.timestamp_size();
            let files = rc
                .files
                .iter()
                .map(|(l, f)| {
                    let mut f = f.clone();
                    super::timestamps::pad_file_boundaries(&mut f, ts, mark_no_udt);
                    (*l, Arc::new(f))
                })
                .collect();
            // The primary's `full_history_ts_low` as last recorded (RocksDB's secondary
            // applies the edits, so its reads below it are refused).
            if !rc.full_history_ts_low.is_empty() {
                *h.full_history_ts_low.lock() = rc.full_history_ts_low.clone();
            }
            let version = Arc::new(
                Version::new(h.icmp.clone(), h.config().num_levels, files)
                    .with_blob_files(&rc.blob_files)
                    .with_compact_cursors(&rc.compact_cursors),
            );
            version.check_consistency_with(h.config().force_consistency_checks)?;
            let mem = Arc::new(MemTable::for_write_buffer(
                h.icmp.clone(),
                0,
                h.config().memtable.arena_block_size,
                None,
            ));
            cfs.insert(h.id, CfState::new(h, mem, version, rc.log_number));
        }
        open::load_tables(&self.table_cache, &cfs, &self.config)?;
        let wals = open::wals_to_replay(&listed, &recovered, &cfs, self.config.allow_2pc);
        let last_sequence =
            replay(fs, &self.path, &self.config, self.mode, &wals, &recovered, &mut cfs, &self.info_log)?;
        let mut st = self.lock_state();
        for (id, new) in cfs {
            let Some(cf) = st.cfs.get_mut(&id) else { continue };
            cf.mem = new.mem;
            cf.log_number = new.log_number;
            cf.set_current(new.current);
            cf.install_super_version();
            self.publish_active_memtable(id, Some(cf));
        }
        if last_sequence > self.versions.last_sequence() {
            self.versions.set_last_sequence(last_sequence);
        }
        drop(st);
        self.info_log.log(format_args!("Caught up with the primary: last sequence {last_sequence}"));
        Ok(())
    }
}

/// A file that was named and is gone (the primary deleted it meanwhile).
fn vanished(e: &Error) -> bool {
    e.os_code() == Some(libc::ENOENT)
        || e.kind() == ErrorKind::NotFound
        || (e.kind() == ErrorKind::Corruption && e.to_string().contains("No such file"))
}
