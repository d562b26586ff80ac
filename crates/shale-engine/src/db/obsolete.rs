//! Where files get deleted (RocksDB's `FindObsoleteFiles` / `PurgeObsoleteFiles`).
//!
//! - Tables: a flush or compaction that removes a table from a family's Version records it
//!   in `DbState::obsolete_tables` with a weak reference to the metadata every Version
//!   holding the table shares (`versions.rs`). Once no Version holds it (no reader, no
//!   iterator, no running job), the weak reference is dead and the table is deleted.
//!   Nothing scans the directory for this, so the cost does not grow with the number of
//!   files or families.
//! - WALs: below the smallest log number any family still needs (`alive_wals`); with
//!   `recycle_log_file_num`, up to that many are kept on `DbState::wal_recycle` instead,
//!   to be reused by the next WAL switches (`write.rs::roll_wal`).
//! - Everything else the directory holds that nothing names (a crash's leftovers: tables
//!   never installed, old MANIFESTs, temporary files) is removed by one directory scan when
//!   the database opens (`purge_unreferenced`).
//!
//! The lists are made under the DB mutex (`find_obsolete_files`); the unlinks happen after
//! it is released (`delete_obsolete_files`). A purge runs after every flush and compaction,
//! and, when an iterator is dropped while tables wait, on the dropping thread or, with
//! `background_purge_on_iterator_cleanup`, on a flush thread (`reader_released`). While a MANIFEST write has failed no table is
//! deleted: the MANIFEST on disk may still name it. While `DbState::file_deletion_holds`
//! is above zero (`disable_file_deletions`, a checkpoint or backup copying) nothing is
//! deleted; the files wait on the lists (`live_files.rs`).
//!
//! With `avoid_unnecessary_blocking_io` (RocksDB's option of that name) no user thread
//! unlinks: a manual compaction, ingestion, family drop, `resume` or the end of a deletion
//! hold only asks for a purge (RocksDB's `SchedulePurge`) and a flush-pool thread does it
//! (`scheduler.rs`); the background jobs hand their purges to it too. `close` purges what is
//! still asked for before it returns.

use std::collections::BTreeSet;

use super::filename::{self, FileType};
use super::{DbInner, DbState};

/// Files to delete, found under the DB mutex, deleted without it.
#[derive(Default)]
pub struct ObsoleteFiles {
    /// Table numbers and files (in the family's table path, `paths.rs`).
    tables: Vec<(u64, std::path::PathBuf)>,
    wals: Vec<u64>,
    /// Writers of those WALs closed and never synced (`wal_sync.rs`), dropped (closed)
    /// without the DB mutex, before their files are unlinked.
    closed_wals: Vec<super::wal_sync::ClosedWal>,
    /// `background_close_inactive_wals`: writers of synced inactive WALs kept open until
    /// now, closed without the DB mutex.
    freed_wals: Vec<std::sync::Arc<parking_lot::Mutex<crate::wal::LogWriter>>>,
    blobs: Vec<u64>,
    /// The job id of the deletion events (`info_log.rs`).
    job: i32,
    /// A full scan of the directories is due (`delete_obsolete_files_period_micros`).
    full_scan: Option<FullScan>,
}

/// What a full scan of the database's directories keeps, taken under the DB mutex (RocksDB's
/// `FindObsoleteFiles` with `doing_the_full_scan`); the scan itself runs without it.
pub struct FullScan {
    /// Table and blob files of every Version still alive (current ones, and those waiting
    /// for their last reader on the obsolete lists).
    live: BTreeSet<u64>,
    /// Files numbered this or above are kept (RocksDB's `min_pending_output`): the smallest
    /// output being written, or the next file number when none is.
    keep_from: u64,
    /// WALs below this one and not kept for recycling are obsolete.
    min_wal: u64,
    recycle: Vec<u64>,
    manifest: u64,
    /// Blob files are left alone while a family writes blobs on the write path: its files
    /// are named by no Version until a flush (`blob_direct.rs`).
    blobs: bool,
}

/// Microseconds since the epoch (RocksDB's `SystemClock::NowMicros`).
pub fn now_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

impl ObsoleteFiles {
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
            && self.wals.is_empty()
            && self.blobs.is_empty()
            && self.freed_wals.is_empty()
            && self.full_scan.is_none()
    }
}

impl DbInner {
    /// The oldest WAL still needed: the log number of every family with unflushed data
    /// (the newest WAL when none has any), lowered to the oldest WAL holding a prepare
    /// section of a two-phase commit still undecided (`db/twopc.rs`).
    pub fn min_wal_to_keep(&self, st: &DbState) -> u64 {
        let wal_now = st.alive_wals.back().copied().unwrap_or(0);
        let min_log = st
            .cfs
            .values()
            .map(|c| if c.mem.is_empty() && c.imm.is_empty() { wal_now } else { c.log_number })
            .min()
            .unwrap_or(wal_now);
        self.prep_tracker().min_log_to_keep(min_log).map_or(min_log, |p| min_log.min(p))
    }

    /// The WALs and tables that nothing needs any more, taken off the lists.
    pub fn find_obsolete_files(&self, st: &mut DbState) -> ObsoleteFiles {
        let job = st.purge_job.take();
        let mut out = ObsoleteFiles::default();
        if st.file_deletion_holds > 0 {
            // A checkpoint or backup is copying, or deletions were disabled: the lists
            // keep everything until the last hold goes (`live_files.rs`).
            return out;
        }
        out.freed_wals = self.take_wals_to_free();
        let wal_now = st.alive_wals.back().copied().unwrap_or(0);
        let min_log = self.min_wal_to_keep(st);
        let recycle = self.config.recycle_log_file_num;
        let mut recycled = Vec::new();
        while let Some(&w) = st.alive_wals.front() {
            if w >= min_log || w == wal_now {
                break;
            }
            st.alive_wals.pop_front();
            // RocksDB's FindObsoleteFiles: kept for reuse while the list has room.
            if recycle > st.wal_recycle.len() && w >= st.min_wal_to_recycle {
                self.info_log.buffer_line(format_args!("adding log {w} to recycle list"));
                st.wal_recycle.push_back(w);
                recycled.push(w);
            } else {
                out.wals.push(w);
            }
        }
        if !out.wals.is_empty() || !recycled.is_empty() {
            out.closed_wals = self.release_closed_wals(st.alive_wals.front().copied().unwrap_or(wal_now));
            self.wal_total.removed(&out.wals);
            self.wal_total.removed(&recycled);
        }
        self.wal_total.refresh(st);
        if self.versions.manifest_write_failed() {
            return out;
        }
        st.obsolete_tables.retain(|(number, meta, path)| {
            if meta.strong_count() > 0 || self.versions.is_pending_output(*number) {
                return true;
            }
            out.tables.push((*number, path.clone()));
            false
        });
        st.obsolete_blobs.retain(|(number, meta)| {
            if meta.strong_count() > 0 || self.versions.is_pending_output(*number) {
                return true;
            }
            out.blobs.push(*number);
            false
        });
        self.note_obsolete(st);
        if self.full_scan_due() {
            out.full_scan = Some(self.full_scan_of(st));
        }
        if !out.tables.is_empty() || !out.blobs.is_empty() || out.full_scan.is_some() {
            out.job = job.unwrap_or_else(|| self.info_log.new_job_id());
        }
        out
    }

    /// RocksDB's `FindObsoleteFiles(force=false)`: the purge scans the directories when
    /// `delete_obsolete_files_period_micros` is 0 or has passed since the last scan (that
    /// time starts at open).
    fn full_scan_due(&self) -> bool {
        use std::sync::atomic::Ordering;
        let period = self.delete_obsolete_files_period.load(Ordering::Relaxed);
        if period == 0 {
            return true;
        }
        let now = now_micros();
        let last = self.delete_obsolete_files_last_run.load(Ordering::Relaxed);
        if last.saturating_add(period) < now {
            self.delete_obsolete_files_last_run.store(now, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// What a full scan keeps (DB mutex held).
    fn full_scan_of(&self, st: &DbState) -> FullScan {
        let mut live: BTreeSet<u64> = BTreeSet::new();
        for c in st.cfs.values() {
            live.extend(c.current.all_files().map(|(_, f)| f.number));
            live.extend(c.current.blob_files().keys().copied());
        }
        live.extend(st.obsolete_tables.iter().map(|(n, _, _)| *n));
        live.extend(st.obsolete_blobs.iter().map(|(n, _)| *n));
        FullScan {
            live,
            keep_from: self.versions.min_pending_output(),
            min_wal: st.alive_wals.front().copied().unwrap_or(0),
            recycle: st.wal_recycle.iter().copied().collect(),
            manifest: self.versions.manifest_number(),
            blobs: st.cfs.values().all(|c| c.handle.direct_write.is_none()),
        }
    }

    /// The full scan (RocksDB's `PurgeObsoleteFiles` of a full scan's candidates): every
    /// table, blob file, WAL, MANIFEST and temporary file of the database's directories that
    /// `scan` does not keep is deleted. Call without the DB mutex.
    fn delete_unreferenced(&self, scan: &FullScan, job: i32) {
        let dead_number =
            |n: u64| !scan.live.contains(&n) && n < scan.keep_from && !self.versions.is_pending_output(n);
        let stats = self.config.statistics.as_deref();
        let delete_table = |path: &std::path::Path, n: u64| {
            self.table_cache.evict(n);
            let status = match self.fs.remove_file(path) {
                Ok(()) => {
                    crate::statistics::record_tick(
                        stats,
                        crate::statistics::Ticker::FilesDeletedImmediately,
                        1,
                    );
                    "OK".to_string()
                }
                Err(e) => e.to_string(),
            };
            self.info_log.event(super::info_log::table_file_deletion_event(job, n, &status));
        };
        for dir in self.table_dirs_all().into_iter().filter(|d| *d != self.path) {
            let Ok(children) = self.fs.children(&dir) else { continue };
            for name in children {
                if let Some(FileType::Table(n)) = filename::parse_file_name(&name) {
                    if dead_number(n) {
                        delete_table(&dir.join(&name), n);
                    }
                }
            }
        }
        let wal_dir = self.wal_dir();
        let dead_wal = |n: u64| n < scan.min_wal && n < scan.keep_from && !scan.recycle.contains(&n);
        if wal_dir != self.path {
            if let Ok(children) = self.fs.children(&wal_dir) {
                for name in children {
                    if let Some(FileType::Wal(n)) = filename::parse_file_name(&name) {
                        if dead_wal(n) {
                            self.dispose_wal(&wal_dir, n);
                        }
                    }
                }
            }
        }
        let Ok(children) = self.fs.children(&self.path) else { return };
        for name in children {
            let path = self.path.join(&name);
            match filename::parse_file_name(&name) {
                Some(FileType::Table(n)) if dead_number(n) => delete_table(&path, n),
                Some(FileType::Blob(n))
                    if scan.blobs
                        && dead_number(n)
                        && !crate::blob_direct::should_keep_footerless_blob(&*self.fs, &path) =>
                {
                    self.blob_cache.evict(n);
                    let status = match self.fs.remove_file(&path) {
                        Ok(()) => "OK".to_string(),
                        Err(e) => e.to_string(),
                    };
                    self.info_log.event(super::info_log::blob_file_deletion_event(job, n, &status));
                }
                Some(FileType::Wal(n)) if wal_dir == self.path && dead_wal(n) => {
                    self.dispose_wal(&wal_dir, n)
                }
                Some(FileType::Manifest(n)) if n < scan.manifest => {
                    let _ = self.fs.remove_file(&path);
                }
                Some(FileType::Temp(n)) if dead_number(n) => {
                    let _ = self.fs.remove_file(&path);
                }
                _ => {}
            }
        }
    }

    /// Records whether tables wait for their last reader (DB mutex held).
    pub fn note_obsolete(&self, st: &DbState) {
        self.has_obsolete.store(
            !st.obsolete_tables.is_empty() || !st.obsolete_blobs.is_empty(),
            std::sync::atomic::Ordering::Release,
        );
    }

    /// Called when an iterator lets go of a SuperVersion (dropped or refreshed), as
    /// RocksDB's `CleanupIteratorState`: if files wait for their last reader, with
    /// `background` (the read's `background_purge_on_iterator_cleanup`, or the DB's
    /// `avoid_unnecessary_blocking_io`) a flush thread purges them soon; otherwise this
    /// thread does, finding them under the DB mutex and deleting them without it. Never call
    /// with the DB mutex held.
    pub fn reader_released(&self, background: bool) {
        use std::sync::atomic::Ordering;
        if !self.has_obsolete.load(Ordering::Acquire) {
            return;
        }
        if background || self.config.avoid_unnecessary_blocking_io {
            // Without the DB mutex: notified after taking it, so no flush thread misses it.
            self.purge_requested.store(true, Ordering::Release);
            self.wake_workers();
            return;
        }
        let mut st = self.lock_state();
        self.purge_now(&mut st);
    }

    /// Finds obsolete files under the DB mutex and deletes them with it released; with
    /// `avoid_unnecessary_blocking_io`, asks a background thread to (`schedule_purge`).
    pub fn purge_obsolete_files(&self, st: &mut parking_lot::MutexGuard<'_, DbState>) {
        if self.config.avoid_unnecessary_blocking_io {
            self.schedule_purge();
            return;
        }
        self.purge_now(st);
    }

    /// RocksDB's `SchedulePurge`: a flush-pool thread runs `purge_now` soon. The caller
    /// holds the DB mutex, so the notification reaches a thread that looked and found nothing
    /// (see `scheduler::idle_wait`).
    pub fn schedule_purge(&self) {
        self.purge_requested.store(true, std::sync::atomic::Ordering::Release);
        self.work_cv.notify_all();
    }

    /// The purge itself, on the calling thread.
    pub fn purge_now(&self, st: &mut parking_lot::MutexGuard<'_, DbState>) {
        let dead = self.find_obsolete_files(st);
        if !dead.is_empty() {
            super::unlocked(st, || {
                self.info_log.flush_buffered();
                self.delete_obsolete_files(dead)
            });
        } else if self.info_log.has_buffered() {
            // Event lines made under the mutex (`info_log.rs`) are written without it.
            super::unlocked(st, || self.info_log.flush_buffered());
        }
    }

    /// Deletes what `find_obsolete_files` found. Call without the DB mutex.
    pub fn delete_obsolete_files(&self, files: ObsoleteFiles) {
        let job = files.job;
        let deleted = |n: u64, status: &str| {
            self.info_log.event(super::info_log::table_file_deletion_event(job, n, status));
        };
        for (n, path) in files.tables {
            self.table_cache.evict(n);
            let stats = self.config.statistics.as_deref();
            match self.fs.remove_file(&path) {
                // RocksDB's DeleteScheduler without a rate limit deletes at once and counts it.
                Ok(()) => {
                    crate::statistics::record_tick(
                        stats,
                        crate::statistics::Ticker::FilesDeletedImmediately,
                        1,
                    );
                    deleted(n, "OK");
                }
                Err(e) => {
                    // Not under its path id (db_paths given in another order): wherever it is.
                    let elsewhere = self
                        .table_dirs_all()
                        .into_iter()
                        .map(|d| filename::table_file(&d, n))
                        .find(|p| self.fs.file_exists(p));
                    match elsewhere {
                        Some(p) => match self.fs.remove_file(&p) {
                            Ok(()) => {
                                crate::statistics::record_tick(
                                    stats,
                                    crate::statistics::Ticker::FilesDeletedImmediately,
                                    1,
                                );
                                deleted(n, "OK");
                            }
                            Err(e) => deleted(n, e.as_ref()),
                        },
                        None => {
                            self.info_log.log_at(
                                crate::config::LogLevel::Warn,
                                format_args!("deleting obsolete table {n}: {e}"),
                            );
                            deleted(n, e.as_ref());
                        }
                    }
                }
            }
        }
        for n in files.blobs {
            self.blob_cache.evict(n);
            let status = match self.fs.remove_file(&crate::blob::blob_file_path(&self.path, n)) {
                Ok(()) => "OK".to_string(),
                Err(e) => {
                    self.info_log.log_at(
                        crate::config::LogLevel::Warn,
                        format_args!("deleting obsolete blob file {n}: {e}"),
                    );
                    e.to_string()
                }
            };
            self.info_log.event(super::info_log::blob_file_deletion_event(job, n, &status));
        }
        drop(files.closed_wals);
        drop(files.freed_wals);
        let wal_dir = self.wal_dir();
        for w in files.wals {
            self.dispose_wal(&wal_dir, w);
        }
        if let Some(scan) = &files.full_scan {
            self.delete_unreferenced(scan, job);
        }
        self.purge_wal_archive();
    }

    /// Every table directory of the database: its `db_paths` and the open families'
    /// `cf_paths` (`paths.rs`), the database directory among them when no path is set.
    pub fn table_dirs_all(&self) -> Vec<std::path::PathBuf> {
        let mut dirs: Vec<std::path::PathBuf> = self.config.db_paths.iter().map(|(d, _)| d.clone()).collect();
        if dirs.is_empty() {
            dirs.push(self.path.clone());
        }
        let handles = self.handles.read();
        for h in handles.iter().flatten() {
            for (d, _) in &h.table_dirs {
                if !dirs.contains(d) {
                    dirs.push(d.clone());
                }
            }
        }
        dirs
    }

    /// Removes every file of the database's kinds that nothing names: tables of no
    /// Version, WALs below the oldest one needed, MANIFESTs but the current one, temporary
    /// files. One directory scan; run at open, before background work starts.
    pub fn purge_unreferenced(&self, st: &mut DbState) {
        let dead = self.find_obsolete_files(st);
        self.delete_obsolete_files(dead);
        if self.versions.manifest_write_failed() {
            return;
        }
        let mut live: BTreeSet<u64> = BTreeSet::new();
        for c in st.cfs.values() {
            live.extend(c.current.all_files().map(|(_, f)| f.number));
            live.extend(c.current.blob_files().keys().copied());
        }
        let min_wal = st.alive_wals.front().copied().unwrap_or(0);
        let manifest = self.versions.manifest_number();
        // Tables of every path (`paths.rs`): the database directory's other files are
        // handled below.
        for dir in self.table_dirs_all().into_iter().filter(|d| *d != self.path) {
            let Ok(children) = self.fs.children(&dir) else { continue };
            for name in children {
                if let Some(FileType::Table(n)) = filename::parse_file_name(&name) {
                    if !live.contains(&n) && !self.versions.is_pending_output(n) {
                        let _ = self.fs.remove_file(&dir.join(&name));
                    }
                }
            }
        }
        let wal_dir = self.wal_dir();
        if wal_dir != self.path {
            if let Ok(children) = self.fs.children(&wal_dir) {
                for name in children {
                    if let Some(FileType::Wal(n)) = filename::parse_file_name(&name) {
                        if n < min_wal {
                            self.dispose_wal(&wal_dir, n);
                        }
                    }
                }
            }
        }
        let Ok(children) = self.fs.children(&self.path) else { return };
        for name in children {
            let dead = match filename::parse_file_name(&name) {
                Some(FileType::Table(n)) => !live.contains(&n) && !self.versions.is_pending_output(n),
                // RocksDB 11.8.1 keeps a blob file without a valid footer (one blob direct
                // write was appending to; `blob_direct.rs`).
                Some(FileType::Blob(n)) if !live.contains(&n) && !self.versions.is_pending_output(n) => {
                    let keep =
                        crate::blob_direct::should_keep_footerless_blob(&*self.fs, &self.path.join(&name));
                    if keep {
                        // Kept, but in no Version: reads of its blob indexes fail as RocksDB's.
                        self.blob_cache.mark_unregistered(n);
                    }
                    !keep
                }
                Some(FileType::Blob(_)) => false,
                Some(FileType::Wal(n)) if wal_dir == self.path => {
                    if n < min_wal {
                        self.dispose_wal(&wal_dir, n);
                    }
                    false
                }
                Some(FileType::Manifest(n)) => n != manifest,
                Some(FileType::Temp(n)) => !self.versions.is_pending_output(n),
                _ => false,
            };
            if dead {
                let _ = self.fs.remove_file(&self.path.join(&name));
            }
        }
        // The archive is purged after the WALs found here went to it, as RocksDB's
        // PurgeObsoleteFiles archives before `PurgeObsoleteWALFiles`: the purge that
        // `delete_obsolete_files` made above does not count for its interval.
        self.wal_archive_purged_at.store(0, std::sync::atomic::Ordering::Relaxed);
        self.purge_wal_archive();
    }
}
