//! `async_wal_precreate` (RocksDB 11.8.1's `MaybeScheduleAsyncWALPrecreate`,
//! `BGWorkAsyncWALPrecreate` and `WaitForAsyncWALPrecreate`): the next WAL's file is created
//! ahead, in the background, so that a memtable switch finds it made.
//!
//! After the open (and after each memtable switch) a file number is taken for the next WAL
//! and a background thread (`shale:walpre`, RocksDB's HIGH pool job) creates the empty file
//! with the WAL's preallocation. It holds nothing and is no WAL yet: a switch that starts a
//! new WAL takes it, with its number, writes its first records (compression type,
//! predecessor) and makes it the current WAL; a switch that finds the creation under way
//! waits for it (`rocksdb.wal.precreate.waited`, `.wait.micros`); one that finds none
//! creates its WAL itself (`.miss`); a creation that failed leaves none (`.failed`; the
//! error goes to the LOG). A file made but never taken is left empty when the database
//! closes; recovery finds it holding nothing, and it goes with the other old WALs.
//!
//! Off when `recycle_log_file_num` is set (RocksDB's `SanitizeOptions`: recycling picks old
//! files, not new numbers), and not scheduled once the database is closing or stopped by a
//! background error.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::MutexGuard;

use super::{DbInner, DbState};
use crate::config::LogLevel;
use crate::fs::WritableFile;
use crate::statistics::{record_tick, Ticker};

/// The precreation slot, guarded by the DB mutex (RocksDB's `async_wal_precreate_state_`
/// and `async_wal_precreate_wal_`).
#[derive(Default)]
pub enum Precreate {
    #[default]
    Idle,
    /// Scheduled: the number is reserved, no thread has started on it yet.
    Pending { number: u64, write_buffer_size: u64 },
    /// The background thread is creating the file.
    Creating { number: u64 },
    /// Made, waiting for a switch.
    Ready { number: u64, file: Box<dyn WritableFile> },
}

impl DbInner {
    /// `async_wal_precreate` in force (RocksDB's `AsyncWALPrecreateEnabled`).
    pub fn wal_precreate_enabled(&self) -> bool {
        self.config.async_wal_precreate && self.config.recycle_log_file_num == 0
    }

    /// Reserves the next WAL's number and asks the background thread to create its file,
    /// unless one is already scheduled or made (RocksDB's `MaybeScheduleAsyncWALPrecreate`).
    /// `write_buffer_size` sizes its preallocation.
    pub fn maybe_schedule_wal_precreate(&self, st: &mut DbState, write_buffer_size: u64) {
        if !self.wal_precreate_enabled()
            || self.shutting_down.load(Ordering::Acquire)
            || st.errors.is_db_stopped()
            || !matches!(st.wal_precreate, Precreate::Idle)
        {
            return;
        }
        st.wal_precreate = Precreate::Pending { number: self.versions.new_file_number(), write_buffer_size };
        self.work_cv.notify_all();
    }

    /// The precreated WAL file, waiting while it is being made (RocksDB's
    /// `WaitForAsyncWALPrecreate`); None when there is none (a miss, counted by the caller
    /// once it makes a WAL: see [`count_wal_precreate`](Self::count_wal_precreate)).
    pub fn take_wal_precreate(
        &self,
        st: &mut MutexGuard<'_, DbState>,
    ) -> Option<(u64, Box<dyn WritableFile>)> {
        if !self.wal_precreate_enabled() {
            return None;
        }
        let mut waited: Option<Instant> = None;
        loop {
            match st.wal_precreate {
                Precreate::Pending { .. } if self.shutting_down.load(Ordering::Acquire) => {
                    // The background thread has stopped: nothing will make it.
                    st.wal_precreate = Precreate::Idle;
                }
                Precreate::Pending { .. } | Precreate::Creating { .. } => {
                    waited.get_or_insert_with(|| {
                        record_tick(self.config.statistics.as_deref(), Ticker::WalPrecreateWaited, 1);
                        Instant::now()
                    });
                    self.done_cv.wait_for(st, Duration::from_millis(100));
                    continue;
                }
                _ => {}
            }
            break;
        }
        if let Some(t) = waited {
            let micros = u64::try_from(t.elapsed().as_micros()).unwrap_or(u64::MAX);
            record_tick(self.config.statistics.as_deref(), Ticker::WalPrecreateWaitMicros, micros);
        }
        match std::mem::take(&mut st.wal_precreate) {
            Precreate::Ready { number, file } => Some((number, file)),
            other => {
                st.wal_precreate = other;
                None
            }
        }
    }

    /// Puts back a precreated file a switch took but did not use (its WAL was empty).
    pub fn return_wal_precreate(&self, st: &mut DbState, number: u64, file: Box<dyn WritableFile>) {
        st.wal_precreate = Precreate::Ready { number, file };
    }

    /// Counts a WAL a switch made: from the precreated file (`hit`) or not.
    pub fn count_wal_precreate(&self, hit: bool) {
        if self.wal_precreate_enabled() {
            let t = if hit { Ticker::WalPrecreateHit } else { Ticker::WalPrecreateMiss };
            record_tick(self.config.statistics.as_deref(), t, 1);
        }
    }
}

/// The background thread that creates precreated WAL files (RocksDB's
/// `BGWorkAsyncWALPrecreate`, run on its HIGH pool). It never waits for writers, so a switch
/// may wait for it.
pub fn precreate_worker(inner: Arc<DbInner>) {
    let mut st = inner.lock_state();
    loop {
        if inner.shutting_down.load(Ordering::Acquire) {
            if matches!(st.wal_precreate, Precreate::Pending { .. }) {
                st.wal_precreate = Precreate::Idle;
            }
            inner.done_cv.notify_all();
            return;
        }
        let Precreate::Pending { number, write_buffer_size } = st.wal_precreate else {
            // Nothing to make until a switch asks (`Pending`, set and notified under the DB
            // mutex) or the close does: no deadline.
            super::scheduler::idle_wait(&inner, &mut st, None);
            continue;
        };
        st.wal_precreate = Precreate::Creating { number };
        let made = super::unlocked(&mut st, || {
            let path = super::filename::wal_file(&inner.wal_dir(), number);
            inner
                .fs
                .new_writable_file(&path)
                .map(|f| crate::fs::Preallocating::wrap(f, inner.config.wal_preallocation(write_buffer_size)))
        });
        match made {
            Ok(file) => st.wal_precreate = Precreate::Ready { number, file },
            Err(e) => {
                record_tick(inner.config.statistics.as_deref(), Ticker::WalPrecreateFailed, 1);
                inner
                    .info_log
                    .log_at(LogLevel::Warn, format_args!("Async WAL precreate failed for #{number}: {e}"));
                st.wal_precreate = Precreate::Idle;
            }
        }
        inner.done_cv.notify_all();
    }
}
