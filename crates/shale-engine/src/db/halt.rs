//! One rule for panics and poisoned locks: the database stops.
//!
//! A thread that panics while it holds an engine lock may leave what the lock guards half
//! changed (a snapshot list, the WAL writer's buffer, a family's memtable list). Going on
//! with a guess (an empty snapshot list, the lock's data as it is) turns one panic into
//! silent wrong answers on other threads: a flush that believes no snapshot is live drops
//! the versions a snapshot reads. So:
//!
//! - A poisoned `std::sync` engine lock is never entered: [`DbInner::lock_or_halt`] halts
//!   the database and returns the halt error instead. The std locks are the ones a panic
//!   can poison: `wal` (the write leader inserts into the memtables under it, where a
//!   user's comparator runs) and `snapshots`. Locks whose critical sections run no user code
//!   and cannot panic (an Arc cloned or swapped, a Vec pushed to, bookkeeping) are
//!   parking_lot locks, which have no poisoned state: there is nothing to guess about.
//! - A user's compaction filter (or factory) that panicked is never called again: its
//!   slot's poisoned lock makes the next call panic, which the job boundary below catches.
//! - A panic inside a background flush or compaction (a user's comparator, merge operator,
//!   table properties collector or prefix extractor running on that thread, or a bug) is
//!   caught at the job's boundary ([`DbInner::catch_job_panic`]) and halts the database. The
//!   DB mutex (`parking_lot`, which does not poison) is released by the unwinding guard
//!   and taken back by the worker, which records the halt as the background error.
//!
//! Halting: the first halt error is kept ([`DbInner::halted`]); it becomes the background
//! error with severity unrecoverable at the next DB mutex acquisition (`lock_state`), so
//! writes, flushes, compactions and `resume()` return it; reads check it too (one atomic
//! load) and return it. Reopening the database is the way back: what was acknowledged is in
//! the WAL and the tables, which a halted database no longer changes.
//!
//! RocksDB has no such state (a C++ exception or abort ends the process); the error is a
//! `Corruption` because the in-memory state can no longer be trusted.

use std::fmt;
use std::sync::{Mutex, MutexGuard};

use super::{DbInner, DbState};
use crate::error::{Error, Result};

impl DbInner {
    /// Halts the database (see the module comment): keeps the first halt error, wakes
    /// everyone who waits on the database and sends writers to their slow path, which finds
    /// the error. Takes no lock, so it may be called with any lock held. Returns the error
    /// the database now returns (the first one, if it was already halted).
    pub fn halt(&self, why: fmt::Arguments<'_>) -> Error {
        let e = self.halted.get_or_init(|| {
            Error::corruption(format!("the database stopped after {why}; reopen it to go on"))
        });
        self.write_control.set_attention(true);
        self.done_cv.notify_all();
        self.work_cv.notify_all();
        // Writers queued in `write.rs` wait for their own signal (their write done, a task,
        // the front of the queue), which a halt does not change: the leader meets the error.
        e.clone()
    }

    /// Makes the halt error, if any, the background error (DB mutex held; `lock_state` calls
    /// it on every acquisition: one atomic load when not halted).
    #[inline]
    pub fn note_halt(&self, st: &mut DbState) {
        if let Some(e) = self.halted.get() {
            if st.errors.set_halted(e.clone(), &self.config) {
                self.info_log.buffer_line(format_args!("[ERROR] {e} (severity UnrecoverableError)"));
                self.write_control.set_attention(true);
            }
        }
    }

    /// Err with the halt error once the database is halted.
    #[inline]
    pub fn check_halted(&self) -> Result<()> {
        match self.halted.get() {
            None => Ok(()),
            Some(e) => Err(e.clone()),
        }
    }

    /// Locks `m`; a poisoned lock halts the database and is not entered.
    pub fn lock_or_halt<'a, T>(
        &self,
        m: &'a shale_base::lock_rank::Ranked<Mutex<T>>,
        what: &str,
    ) -> Result<shale_base::lock_rank::RankedGuard<MutexGuard<'a, T>>> {
        m.lock().map_err(|_| self.halt(format_args!("a thread panicked holding the {what} lock")))
    }

    /// Runs the background job `f`; a panic in it halts the database and becomes its error.
    pub fn catch_job_panic<T>(&self, what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
            Ok(r) => r,
            Err(p) => {
                let msg = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".to_string());
                Err(self.halt(format_args!("a panic in a {what}: {msg}")))
            }
        }
    }
}
