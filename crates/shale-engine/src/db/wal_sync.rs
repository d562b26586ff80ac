//! Lazy WAL sync, as RocksDB's (`DBImpl::logs_`, `SyncWalImpl`, `MarkLogsSynced`,
//! `SyncClosedWals`): a memtable switch closes the current WAL without syncing it.
//!
//! ```text
//!  WalState::closed (oldest first)          WalState::writer (current)
//!  | 000007.log unsynced | 000009.log unsynced |  000011.log  (unsynced, dir_synced = false)
//!
//!  sync write / flush_wal(true) / SyncWAL:  fsync 7, 9, then 11, then the directory
//!                                            (once per new WAL); 7 and 9 leave the list
//!  flush, more than one family or 2PC:      fsync 7, 9 (and the directory) before the flush
//!                                            picks memtables, and only memtables whose data
//!                                            lies in WALs below the current one then
//!  flush making 7 obsolete:                 7 leaves the list unsynced and is deleted
//! ```
//!
//! What this keeps (the guarantees RocksDB gives):
//! - An acknowledged sync write survives power loss with every write before it: the sync
//!   of WAL N first syncs every older WAL still alive (acknowledged prefix across WALs), and
//!   the WAL directory if a WAL was created since its last sync.
//! - A flush of a single family needs no WAL synced: its table is synced before the
//!   MANIFEST names it, and the WALs it makes obsolete are deleted after. With more than one
//!   family (a batch may span families, and the flushed one's table would hold data newer
//!   than a hole in another family's WAL), with two-phase commit, and with atomic flush,
//!   the flush first syncs the closed WALs (RocksDB's `FlushMemTableToOutputFile` /
//!   `AtomicFlushMemTablesToOutputFiles`).
//! - A WAL never synced may be torn by a crash: recovery (`open.rs`) stops at the first
//!   damage in point-in-time mode and replays a later WAL only when its first batch
//!   continues the sequence, as RocksDB's.
//!
//! With `track_and_verify_wals_in_manifest`, a closed WAL found synced (at the roll, when it
//! was already synced whole, or by a later sync) is recorded in the MANIFEST with its size
//! (RocksDB's `MarkLogsSynced` adding a `WalAddition` for inactive WALs).
//!
//! Locks, as RocksDB's `SyncWalImpl` (which marks the WALs to sync under
//! `log_write_mutex_` and fsyncs them after releasing it):
//! - `DbInner::wal_meta`, a leaf lock never held across file I/O, holds the closed WALs'
//!   list; a sync takes the list under it, fsyncs without it (a closed WAL's writer has a
//!   mutex of its own), then takes the synced ones off the list under it again.
//! - `DbInner::wal` guards the current WAL's writer. A sync write's leader fsyncs under it
//!   (it holds write leadership too, as RocksDB's leader fsyncs its WAL itself). A
//!   `flush_wal(true)`/`SyncWAL` caller, or a flush with nothing to switch, only marks
//!   under it: it flushes the writer, takes a sync handle of the file
//!   (`WritableFile::sync_handle`, a duplicated descriptor) and the write count, and fsyncs
//!   after releasing it (`sync_wals_unlocked`), so a memtable switch (a flush's, which
//!   needs `wal` to roll the WAL) and the write leader's appends go on meanwhile. The WAL
//!   is then marked synced only if no write came and no switch happened meanwhile; a WAL a
//!   switch closed meanwhile stays on the closed list (a later sync syncs it again).
//!   `wal` is never taken with the DB mutex held, so a flush or compaction install never
//!   waits for a WAL fsync.

use std::sync::Arc;

use super::{DbInner, DbState, WalMeta, WalState};
use crate::error::Result;
use crate::statistics::{record_tick, Ticker};
use crate::version::edit::WalAddition;
use crate::wal::LogWriter;

/// A WAL closed by a memtable switch whose bytes are not known to be synced.
pub struct ClosedWal {
    pub number: u64,
    /// Its size when it was closed (no byte is appended after).
    pub size: u64,
    pub writer: Arc<parking_lot::Mutex<LogWriter>>,
}

impl DbInner {
    /// Under the WAL lock: syncs every closed WAL not yet synced, oldest first, then the
    /// current one, then the WAL directory if a WAL was created since its last sync (what a
    /// sync write, `flush_wal(true)` and `SyncWAL` do in RocksDB). The closed WALs leave the
    /// list once synced. An error leaves the list as it was (the caller makes it a WAL
    /// write error).
    pub fn sync_wals_locked(&self, wal: &mut WalState) -> Result<()> {
        // The closed WALs to sync are marked (listed) under `wal_meta` and synced without it.
        let todo = self.closed_wals_to_sync();
        for (_, _, w) in &todo {
            w.lock().sync()?;
        }
        wal.writer.sync()?;
        if !wal.dir_synced {
            self.fs.sync_dir(&self.wal_dir())?;
            wal.dir_synced = true;
        }
        self.mark_closed_wals_synced(&mut self.wal_meta.lock(), &todo);
        wal.unsynced = false;
        Ok(())
    }

    /// RocksDB's `SyncWalImpl`: syncs the closed WALs not yet synced, then the current one,
    /// then the WAL directory if a WAL was created since its last sync, holding the WAL
    /// lock only to mark what to sync and, after, what was synced (see the module comment).
    /// `flush_first`: the current writer's buffer goes to the OS first (`flush_wal`).
    /// Returns false when there was nothing to sync. A file that gives no sync handle is
    /// synced under the lock, as before.
    pub fn sync_wals_unlocked(&self, flush_first: bool) -> Result<bool> {
        let (number, writes, handle, need_dir) = {
            let mut wal = self.lock_or_halt(&self.wal, "WAL")?;
            if flush_first {
                wal.writer.flush()?;
            }
            if !wal.unsynced && self.wal_meta.lock().closed.is_empty() {
                return Ok(false);
            }
            match wal.writer.sync_handle() {
                Some(h) => (wal.number, wal.unsynced_writes, h, !wal.dir_synced),
                None => {
                    self.sync_wals_locked(&mut wal)?;
                    return Ok(true);
                }
            }
        };
        let todo = self.closed_wals_to_sync();
        for (_, _, w) in &todo {
            w.lock().sync()?;
        }
        handle.sync()?;
        if need_dir {
            self.fs.sync_dir(&self.wal_dir())?;
        }
        self.mark_closed_wals_synced(&mut self.wal_meta.lock(), &todo);
        let mut wal = self.lock_or_halt(&self.wal, "WAL")?;
        if wal.number == number {
            if wal.unsynced_writes == writes {
                wal.unsynced = false;
            }
            if need_dir {
                wal.dir_synced = true;
            }
        }
        Ok(true)
    }

    /// The closed WALs not yet synced (number, size, writer), taken under `wal_meta`.
    fn closed_wals_to_sync(&self) -> Vec<(u64, u64, Arc<parking_lot::Mutex<LogWriter>>)> {
        self.wal_meta.lock().closed.iter().map(|c| (c.number, c.size, c.writer.clone())).collect()
    }

    /// Takes the closed WALs `synced` off the list (RocksDB's `MarkLogsSynced`), recording
    /// them for the MANIFEST with `track_and_verify_wals_in_manifest`.
    fn mark_closed_wals_synced(
        &self,
        meta: &mut WalMeta,
        synced: &[(u64, u64, Arc<parking_lot::Mutex<LogWriter>>)],
    ) {
        let track = self.config.track_and_verify_wals_in_manifest;
        let keep_open = self.closes_inactive_wals_in_background();
        for (number, size, _) in synced {
            // Another sync may have synced and removed it meanwhile.
            if let Some(pos) = meta.closed.iter().position(|c| c.number == *number) {
                let wal = meta.closed.remove(pos);
                if keep_open {
                    // Closed by the next purge, not by this sync (RocksDB's `MarkLogsSynced`
                    // moving it to `wals_to_free_`).
                    meta.to_free.push(wal.writer);
                }
                if track && *size > 0 {
                    meta.synced_closed.push(WalAddition { number: *number, synced_size: Some(*size) });
                }
            }
        }
    }

    /// `background_close_inactive_wals` in force: RocksDB's `SyncWalImpl` closes an inactive
    /// WAL after its last sync when WALs are recycled (the file is reused) or the option is
    /// off; else it stays open until a purge frees it.
    pub fn closes_inactive_wals_in_background(&self) -> bool {
        self.config.background_close_inactive_wals && self.config.recycle_log_file_num == 0
    }

    /// Takes the writers of synced inactive WALs kept open (`WalMeta::to_free`), for the
    /// purge to drop (close) without the DB mutex.
    pub fn take_wals_to_free(&self) -> Vec<Arc<parking_lot::Mutex<LogWriter>>> {
        std::mem::take(&mut self.wal_meta.lock().to_free)
    }

    /// RocksDB's `SyncClosedWals`: syncs the closed WALs not yet synced (and the directory
    /// when a WAL was created since its last sync) without holding the WAL lock across the
    /// syncs. Returns the number of the WAL that was current when it started: on success
    /// every WAL below it is synced. Called by a flush with the DB mutex released.
    pub fn sync_closed_wals(&self) -> Result<u64> {
        let (current, need_dir) = {
            let wal = self.lock_or_halt(&self.wal, "WAL")?;
            (wal.number, !wal.dir_synced)
        };
        let todo = self.closed_wals_to_sync();
        record_tick(self.config.statistics.as_deref(), Ticker::WalFileSynced, 1);
        if todo.is_empty() {
            return Ok(current);
        }
        for (_, _, w) in &todo {
            w.lock().sync()?;
        }
        if need_dir {
            // The closed WALs' names are durable; the current WAL's name is then durable
            // too, but RocksDB leaves that to the next sync of the current WAL.
            self.fs.sync_dir(&self.wal_dir())?;
        }
        self.mark_closed_wals_synced(&mut self.wal_meta.lock(), &todo);
        Ok(current)
    }

    /// Whether a flush must sync the closed WALs first (RocksDB's
    /// `needs_to_sync_closed_wals`: more than one family, or two-phase commit; atomic flush
    /// always does).
    pub fn flush_syncs_closed_wals(&self, st: &DbState) -> bool {
        self.config.atomic_flush || self.config.allow_2pc || st.cfs.len() > 1
    }

    /// Moves the closed WALs recorded as synced to the MANIFEST's pending additions (DB
    /// mutex held; `wal_meta` is a leaf lock).
    pub fn take_synced_wal_additions(&self, st: &mut DbState) {
        st.pending_wal_additions.append(&mut self.wal_meta.lock().synced_closed);
    }

    /// Takes the closed WALs below `min_log` off the list (they are about to be deleted,
    /// synced or not); their writers are dropped by the caller without the DB mutex.
    pub fn release_closed_wals(&self, below: u64) -> Vec<ClosedWal> {
        let mut meta = self.wal_meta.lock();
        let (gone, keep): (Vec<ClosedWal>, Vec<ClosedWal>) =
            std::mem::take(&mut meta.closed).into_iter().partition(|c| c.number < below);
        meta.closed = keep;
        gone
    }
}
