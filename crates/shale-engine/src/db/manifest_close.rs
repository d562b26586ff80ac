//! `verify_manifest_content_on_close` (RocksDB 11.8.1's `VersionSet::Close`): once a
//! read-write database's background work has stopped, the MANIFEST in use is read back
//! whole and each record decoded; a damaged one is replaced by a new MANIFEST written from
//! the state in memory, which is checked in turn.
//!
//! The check reads the file as RocksDB's close does: the log format's checksums with its
//! `kAbsoluteConsistency` reader (a torn or damaged record anywhere, the tail included, is
//! damage), then every record decoded as a version edit. The rewrite is RocksDB's
//! `LogAndApply` of an empty edit after the old writer was closed: a new MANIFEST holding the
//! whole state, then that edit (with the next file number and last sequence), CURRENT
//! replaced to name it.

use super::DbInner;
use crate::config::LogLevel;
use crate::error::{Error, Result};
use crate::statistics::{record_tick, Ticker};
use crate::version::edit::VersionEdit;
use crate::version::manifest::descriptor_file_name;
use crate::wal::{LogReader, WalRecoveryMode};

/// RocksDB's `kMaxContentChecks`: the MANIFEST, then (if it was damaged) its replacement.
const MAX_CONTENT_CHECKS: usize = 2;

impl DbInner {
    /// Runs the close-time MANIFEST check when `verify_manifest_content_on_close` is set on a
    /// read-write database; see the module comment. Called once background work is over
    /// (no MANIFEST change can start any more), without the DB mutex.
    pub fn verify_manifest_on_close(&self) -> Result<()> {
        if !self.live_options.verify_manifest_content_on_close()
            || self.mode != super::readonly::DbMode::ReadWrite
        {
            return Ok(());
        }
        if self.halted.get().is_some() || self.versions.roll_pending() {
            // A poisoned lock halted the database (`halt.rs`): its state in memory is not
            // trusted to write a MANIFEST from. Or no MANIFEST was written since the open
            // (`optimize_manifest_for_recovery`): RocksDB's close has no writer to check.
            return Ok(());
        }
        for check in 0..MAX_CONTENT_CHECKS {
            let name = descriptor_file_name(self.versions.manifest_number());
            let path = self.path.join(&name);
            let damage = match self.manifest_damage(&path) {
                Ok(d) => d,
                Err(e) => {
                    self.info_log.log_at(
                        LogLevel::Error,
                        format_args!(
                            "MANIFEST content verification on Close: could not open {} for reading: {e}",
                            path.display()
                        ),
                    );
                    return Err(e);
                }
            };
            let Some(why) = damage else { return Ok(()) };
            record_tick(self.config.statistics.as_deref(), Ticker::ManifestValidationFailureCount, 1);
            if check == 0 {
                self.info_log.log_at(
                    LogLevel::Error,
                    format_args!(
                        "MANIFEST content verification on Close failed, filename {}, rewriting manifest ({why})",
                        path.display()
                    ),
                );
                self.versions.roll_manifest_next();
                let mut st = self.lock_state();
                self.log_and_apply(&mut st, vec![VersionEdit::default()], |_| {})?;
            } else {
                self.info_log.log_at(
                    LogLevel::Error,
                    format_args!(
                        "MANIFEST content verification on Close failed again after rewrite, filename {}",
                        path.display()
                    ),
                );
                return Err(Error::corruption(format!(
                    "MANIFEST content verification failed after rewrite: {}",
                    path.display()
                )));
            }
        }
        Ok(())
    }

    /// `optimize_manifest_for_recovery` at close (RocksDB 11.8.1's
    /// `MaybeWriteWalMarkersToManifestOnClose`, after the background work stopped and before
    /// the MANIFEST check): every family holding nothing in memtables gets the log number one
    /// past the current WAL (the next open then replays none of it), the file numbering is
    /// reserved past it, and when every family is empty (not with two-phase commit) the
    /// oldest WAL to keep (and, with `track_and_verify_wals_in_manifest`, the tracked WALs
    /// deleted below it) moves there too. Nothing is written when nothing advances.
    pub fn write_wal_markers_on_close(&self) -> Result<()> {
        if !self.live_options.optimize_manifest_for_recovery()
            || self.config.best_efforts_recovery
            || self.mode != super::readonly::DbMode::ReadWrite
            || self.halted.get().is_some()
        {
            return Ok(());
        }
        let mut st = self.lock_state();
        let Some(&current) = st.alive_wals.back() else { return Ok(()) };
        let new_log = current + 1;
        let mut edits = Vec::new();
        let mut all_empty = true;
        let mut moved = Vec::new();
        for (id, cf) in &st.cfs {
            if !(cf.mem.is_empty() && cf.mem.num_range_deletes() == 0 && cf.imm.is_empty()) {
                all_empty = false;
                continue;
            }
            if new_log > cf.log_number {
                edits.push(VersionEdit {
                    column_family: *id,
                    log_number: Some(new_log),
                    ..Default::default()
                });
                moved.push(*id);
            }
        }
        if !edits.is_empty() {
            // RocksDB reserves the number so that no file takes it.
            while self.versions.next_file_number() <= new_log {
                self.versions.new_file_number();
            }
        }
        let mut global = VersionEdit::default();
        if all_empty && !self.config.allow_2pc {
            global.min_log_number_to_keep = Some(new_log);
            if self.config.track_and_verify_wals_in_manifest && new_log > st.wals_deleted_before {
                global.wal_deletion = Some(new_log);
                st.wals_deleted_before = new_log;
            }
        }
        if global != VersionEdit::default() {
            edits.push(global);
        }
        if edits.is_empty() {
            return Ok(());
        }
        self.log_and_apply(&mut st, edits, |st| {
            for id in moved {
                if let Some(cf) = st.cfs.get_mut(&id) {
                    cf.log_number = new_log;
                }
            }
        })
    }

    /// What is wrong with the MANIFEST at `path` (None: every record whole and decodable).
    /// Err only when the file cannot be opened.
    fn manifest_damage(&self, path: &std::path::Path) -> Result<Option<String>> {
        let file = self.fs.new_sequential_file(path)?;
        let file = shale_base::fs::ReadaheadSequentialFile::wrap(file, self.config.log_readahead_size);
        let mut reader =
            LogReader::new(file, path.display().to_string(), 0, WalRecoveryMode::AbsoluteConsistency);
        let mut record = Vec::new();
        loop {
            match reader.read_record(&mut record) {
                Ok(true) => {
                    if let Err(e) = VersionEdit::decode(&record) {
                        return Ok(Some(format!("record at offset {}: {e}", reader.last_record_offset())));
                    }
                }
                Ok(false) => return Ok(None),
                Err(e) => return Ok(Some(e.to_string())),
            }
        }
    }
}
