//! Background errors and recovery from them, after RocksDB 7.8.3's `ErrorHandler`.
//!
//! An error from a background flush or compaction, a WAL write, a MANIFEST write or a
//! memtable switch gets a severity from where it came from (its [`BgErrorReason`]), its
//! code, and `paranoid_checks` — the same three-level lookup RocksDB does (exact code and
//! subcode, then code, then reason alone):
//!
//! ```text
//! reason        NoSpace (ENOSPC)   other IO error   Corruption      other
//! compaction    soft               fatal            unrecoverable   fatal
//! flush         hard               fatal            unrecoverable   fatal
//! WAL write     hard               fatal            unrecoverable   fatal
//! MANIFEST      hard               fatal            fatal           fatal
//! memtable      fatal              fatal            fatal           fatal
//! (paranoid_checks = false: flush and compaction errors are NoError — retried, not kept)
//! ```
//!
//! What each severity does:
//! - soft: writes continue; the compaction thread retries after a pause (1 s, as RocksDB);
//!   the first background job that succeeds afterwards clears the error.
//! - hard: writes fail with the error (an IO error whose `is_no_space()` tells ENOSPC);
//!   reads go on; `DB::resume()` or automatic recovery bring writes back.
//! - fatal, unrecoverable: writes and background work stop; `resume()` returns the error;
//!   reopening the database is the way back (what was acknowledged is in the WAL and
//!   tables, and is recovered then).
//!
//! A stored error is replaced only by a more severe one.
//!
//! Recovery (RocksDB's `ResumeImpl`), under write leadership so no write slips in: every
//! non-empty memtable becomes immutable and a new WAL starts (the old WAL may end in a torn
//! record; nothing in its unwritten buffer was ever acknowledged, so it is abandoned
//! rather than flushed — where RocksDB retries the buffer and makes a failure fatal); every
//! immutable memtable is flushed; one MANIFEST edit moves every family's log number to the
//! new WAL (so the old WALs, torn tails included, are never replayed) and, after a failed
//! MANIFEST write, starts a new MANIFEST. Only when all of that is durable is the error
//! cleared. Acknowledged writes are in the memtables being flushed, so none is lost.
//!
//! Automatic recovery: every hard error. RocksDB recovers NoSpace errors through its
//! SstFileManager, which polls the free space every 5 s without limit, and other
//! retryable IO errors with a thread bounded by `max_bgerror_resume_count` and
//! `bgerror_resume_retry_interval`. Shale has no SstFileManager and no retryable flag on
//! its errors (ENOSPC is the only error RocksDB's POSIX layer marks retryable, and it takes
//! the NoSpace path), so the flush thread retries every hard error the second way: the
//! first attempt at once, then one per interval, `max_bgerror_resume_count` attempts in
//! all (`<= 0`: none, only `DB::resume()`). Fatal and unrecoverable errors never recover
//! automatically, as in RocksDB.
//!
//! `DB::resume()` while an automatic attempt runs waits for it (RocksDB returns Busy), then
//! returns Ok if the error is gone, or makes an attempt of its own.
//!
//! `rocksdb.background-errors` counts failed background flushes and compactions, as
//! RocksDB's does. WAL write errors are always classified as with `paranoid_checks` (RocksDB
//! ignores them without it and keeps appending after a possibly torn record, which can
//! hide later acknowledged writes from recovery).
//!
//! Everything here is guarded by `DbInner::state`.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::{DbInner, DbState};
use crate::config::DbConfig;
use crate::error::{Error, ErrorKind, Result};
use crate::version::edit::VersionEdit;

/// How bad a background error is (RocksDB's `Status::Severity`, names kept), least to most.
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    NoError = 0,
    SoftError = 1,
    HardError = 2,
    FatalError = 3,
    UnrecoverableError = 4,
}

/// Where a background error came from (RocksDB's `BackgroundErrorReason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BgErrorReason {
    Flush,
    Compaction,
    /// Writing or syncing the WAL for a write (RocksDB's `kWriteCallback`).
    WriteCallback,
    ManifestWrite,
    /// Switching memtables (starting a new WAL).
    MemTable,
    /// Opening the live tables after the open (`open_files_async`, RocksDB's
    /// `kAsyncFileOpen`).
    AsyncFileOpen,
}

impl BgErrorReason {
    fn name(self) -> &'static str {
        match self {
            BgErrorReason::Flush => "flush",
            BgErrorReason::Compaction => "compaction",
            BgErrorReason::WriteCallback => "WAL write",
            BgErrorReason::ManifestWrite => "MANIFEST write",
            BgErrorReason::MemTable => "memtable switch",
            BgErrorReason::AsyncFileOpen => "async file open",
        }
    }
}

/// The severity RocksDB's ErrorHandler gives an error of `reason` (its three maps, most
/// specific first).
pub fn classify(reason: BgErrorReason, e: &Error, paranoid: bool) -> Severity {
    use BgErrorReason::*;
    use Severity::*;
    let io = e.kind() == ErrorKind::IOError;
    // By code and subcode.
    if io && e.is_no_space() {
        match (reason, paranoid) {
            (Compaction, true) => return SoftError,
            (Compaction, false) | (Flush, false) => return NoError,
            (Flush, true) | (WriteCallback, _) | (ManifestWrite, _) => return HardError,
            (MemTable | AsyncFileOpen, _) => {}
        }
    }
    // By code.
    match (reason, e.kind(), paranoid) {
        (Compaction | Flush | WriteCallback, ErrorKind::Corruption, true) => return UnrecoverableError,
        (Compaction | Flush | WriteCallback, ErrorKind::Corruption, false) => return NoError,
        (Compaction | Flush | WriteCallback, ErrorKind::IOError, true) => return FatalError,
        (Compaction | Flush | WriteCallback, ErrorKind::IOError, false) => return NoError,
        (ManifestWrite, ErrorKind::IOError, _) => return FatalError,
        _ => {}
    }
    // By reason alone.
    match (reason, paranoid) {
        (Compaction | Flush, false) => NoError,
        _ => FatalError,
    }
}

/// The database's background error and recovery state (in `DbState`).
pub struct ErrorHandler {
    error: Option<Error>,
    severity: Severity,
    /// Failed background flushes and compactions so far (`rocksdb.background-errors`).
    pub bg_error_count: u64,
    /// A recovery attempt is running (at most one at a time).
    recovering: bool,
    /// The worst error of severity hard or more set while `recovering`.
    recovery_error: Option<(Severity, Error)>,
    /// Automatic attempts left for the current hard error.
    auto_attempts_left: i32,
    /// When the next automatic attempt is due (None: none planned).
    next_auto_attempt: Option<Instant>,
}

impl Default for ErrorHandler {
    fn default() -> Self {
        Self::new()
    }
}

impl ErrorHandler {
    pub fn new() -> ErrorHandler {
        ErrorHandler {
            error: None,
            severity: Severity::NoError,
            bg_error_count: 0,
            recovering: false,
            recovery_error: None,
            auto_attempts_left: 0,
            next_auto_attempt: None,
        }
    }

    pub fn severity(&self) -> Severity {
        self.severity
    }

    /// Writes (and background work other than recovery) stop at hard errors and above.
    pub fn is_db_stopped(&self) -> bool {
        self.severity >= Severity::HardError
    }

    /// The error writers get while writes are stopped.
    pub fn stop_error(&self) -> Option<Error> {
        if self.is_db_stopped() {
            self.error.clone()
        } else {
            None
        }
    }

    /// Records `e` with `severity`. Returns true when it became the database's error.
    fn set(&mut self, e: Error, severity: Severity, config: &DbConfig) -> bool {
        if self.recovering
            && severity >= Severity::HardError
            && self.recovery_error.as_ref().is_none_or(|(s, _)| severity > *s)
        {
            self.recovery_error = Some((severity, e.clone()));
        }
        if severity <= self.severity {
            return false;
        }
        self.error = Some(e);
        self.severity = severity;
        if severity == Severity::HardError && !self.recovering {
            self.auto_attempts_left = config.max_bgerror_resume_count.max(0);
            self.next_auto_attempt = (self.auto_attempts_left > 0).then(Instant::now);
        } else if severity > Severity::HardError {
            self.auto_attempts_left = 0;
            self.next_auto_attempt = None;
        }
        true
    }

    /// Records the halt error (`halt.rs`): unrecoverable, kept until the database closes.
    /// True when it became the database's error.
    pub fn set_halted(&mut self, e: Error, config: &DbConfig) -> bool {
        self.set(e, Severity::UnrecoverableError, config)
    }

    /// Forgets the error (recovery succeeded).
    fn clear(&mut self) {
        self.error = None;
        self.severity = Severity::NoError;
        self.auto_attempts_left = 0;
        self.next_auto_attempt = None;
    }

    /// A soft error goes once a background job succeeds again.
    pub fn background_job_succeeded(&mut self) {
        if self.severity == Severity::SoftError {
            self.clear();
        }
    }

    /// How long until the next automatic recovery attempt (zero: due now), if one is planned.
    pub fn auto_recovery_wait(&self, now: Instant) -> Option<Duration> {
        if self.recovering || self.severity != Severity::HardError {
            return None;
        }
        self.next_auto_attempt.map(|t| t.saturating_duration_since(now))
    }

    /// Books an automatic attempt that starts now; plans the next one.
    pub fn start_auto_attempt(&mut self, interval: Duration) {
        self.auto_attempts_left -= 1;
        self.next_auto_attempt = (self.auto_attempts_left > 0).then(|| Instant::now() + interval);
    }
}

impl DbInner {
    /// Records a background error from `reason` (state locked). Severity decides what
    /// stops; see the module comment.
    pub fn set_bg_error_in(&self, st: &mut DbState, e: Error, reason: BgErrorReason) {
        let paranoid = self.config.paranoid_checks || reason == BgErrorReason::WriteCallback;
        let severity = classify(reason, &e, paranoid);
        // RocksDB's ErrorHandler::SetBGError counts every background error, and I/O ones.
        if let Some(s) = self.config.statistics.as_deref() {
            use crate::statistics::Ticker;
            let io = u64::from(e.kind() == crate::ErrorKind::IOError);
            s.record_ticks(&[
                (Ticker::ErrorHandlerBgErrorCount, 1),
                (Ticker::ErrorHandlerBgIoErrorCount, io),
            ]);
        }
        let stored = st.errors.set(e.clone(), severity, &self.config);
        // Under the DB mutex: buffered, written by the next purge or LOG line.
        self.info_log.buffer_line_at(
            crate::config::LogLevel::Error,
            format_args!(
                "{} failed: {e} (severity {severity:?}{})",
                reason.name(),
                if stored { "" } else { ", a worse or equal error is already set" }
            ),
        );
        self.update_write_attention(st);
        self.done_cv.notify_all();
        self.work_cv.notify_all();
    }

    /// `set_bg_error_in` for callers without the state lock.
    pub fn set_bg_error(&self, e: Error, reason: BgErrorReason) {
        let mut st = self.lock_state();
        self.set_bg_error_in(&mut st, e, reason);
    }

    /// The error writers get while a hard (or worse) error stops writes.
    pub fn check_bg_error(&self) -> Result<()> {
        match self.lock_state().errors.stop_error() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// One recovery attempt (RocksDB's `RecoverFromBGError` + `ResumeImpl`); `manual` for
    /// `DB::resume`. Called without the state lock.
    pub fn recover(&self, manual: bool) -> Result<()> {
        let mut st = self.lock_state();
        while st.errors.recovering {
            if self.shutting_down.load(Ordering::Acquire) {
                return Err(Error::shutdown("Database shutdown"));
            }
            self.done_cv.wait_for(&mut st, Duration::from_millis(50));
        }
        if self.shutting_down.load(Ordering::Acquire) {
            return Err(Error::shutdown("Database shutdown"));
        }
        match st.errors.severity {
            Severity::NoError if !manual => return Ok(()),
            Severity::NoError | Severity::HardError => {}
            Severity::SoftError => {
                st.errors.clear();
                self.update_write_attention(&st);
                return Ok(());
            }
            Severity::FatalError | Severity::UnrecoverableError => {
                let e = st.errors.error.clone().unwrap_or_else(|| Error::io_msg("background error"));
                drop(st);
                self.info_log.log(format_args!("resume refused: {e} needs a reopen"));
                return Err(e);
            }
        }
        st.errors.recovering = true;
        st.errors.recovery_error = None;
        drop(st);
        let r = self.recovery_steps();
        let mut st = self.lock_state();
        st.errors.recovering = false;
        let r = match (r, st.errors.recovery_error.take()) {
            (Ok(()), Some((_, e))) => Err(e),
            (r, _) => r,
        };
        match &r {
            Ok(()) => {
                if st.errors.error.is_some() {
                    self.info_log
                        .buffer_line(format_args!("recovered from background error (writes resume)"));
                }
                st.errors.clear();
            }
            Err(e) => self.info_log.buffer_line(format_args!(
                "{} recovery attempt failed: {e}",
                if manual { "manual" } else { "automatic" }
            )),
        }
        self.update_write_attention(&st);
        // Work queued while writes were stopped can run now.
        let ids: Vec<u32> = st.cfs.keys().copied().collect();
        for id in ids {
            self.schedule_flush(&mut st, id);
            self.schedule_compaction(&mut st, id);
        }
        drop(st);
        self.info_log.flush_buffered();
        self.done_cv.notify_all();
        self.work_cv.notify_all();
        r
    }

    /// New WAL, every memtable flushed, every family's log number past the old WALs.
    fn recovery_steps(&self) -> Result<()> {
        let new_wal = self.exclusive_write(|| {
            let mut st = self.lock_state();
            let ids: Vec<u32> = st.cfs.iter().filter(|(_, c)| !c.mem.is_empty()).map(|(id, _)| *id).collect();
            self.switch_memtables(&mut st, &ids, true)
        })?;
        let mut st = self.lock_state();
        // Flush every family here (the flush threads do not run while writes are stopped),
        // taking each family's flush slot in turn.
        let ids: Vec<u32> = st.cfs.keys().copied().collect();
        for id in ids {
            loop {
                if self.shutting_down.load(Ordering::Acquire) {
                    return Err(Error::shutdown("Database shutdown"));
                }
                let Some(cf) = st.cfs.get_mut(&id) else { break };
                if cf.imm.is_empty() {
                    break;
                }
                if cf.flush_running {
                    self.done_cv.wait_for(&mut st, Duration::from_millis(50));
                    continue;
                }
                cf.flush_running = true;
                cf.force_flush = true;
                let r = self.catch_job_panic("flush", || self.flush_cf(&mut st, id));
                self.note_halt(&mut st);
                if let Some(cf) = st.cfs.get_mut(&id) {
                    cf.flush_running = false;
                }
                self.done_cv.notify_all();
                r?;
            }
        }
        let mut edits: Vec<VersionEdit> = st
            .cfs
            .iter()
            .filter(|(_, c)| c.log_number < new_wal && c.mem.is_empty())
            .map(|(id, _)| VersionEdit {
                column_family: *id,
                log_number: Some(new_wal),
                ..Default::default()
            })
            .collect();
        if edits.is_empty() && self.versions.manifest_write_failed() {
            edits.push(VersionEdit::default()); // only to start a new MANIFEST
        }
        if !edits.is_empty() {
            let ids: Vec<u32> = edits.iter().map(|e| e.column_family).collect();
            self.log_and_apply(&mut st, edits, |st| {
                for id in ids {
                    if let Some(c) = st.cfs.get_mut(&id) {
                        c.log_number = c.log_number.max(new_wal);
                    }
                }
            })?;
        }
        self.purge_obsolete_files(&mut st);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::BgErrorReason::*;
    use super::Severity::*;
    use super::*;

    fn no_space() -> Error {
        Error::io_code("write: No space left on device", libc::ENOSPC)
    }

    #[test]
    fn severities_follow_rocksdb_maps() {
        let eio = Error::io_code("write: Input/output error", libc::EIO);
        let corrupt = Error::corruption("bad block");
        assert_eq!(classify(Compaction, &no_space(), true), SoftError);
        assert_eq!(classify(Compaction, &no_space(), false), NoError);
        assert_eq!(classify(Flush, &no_space(), true), HardError);
        assert_eq!(classify(Flush, &no_space(), false), NoError);
        assert_eq!(classify(WriteCallback, &no_space(), false), HardError);
        assert_eq!(classify(ManifestWrite, &no_space(), true), HardError);
        assert_eq!(classify(MemTable, &no_space(), true), FatalError);
        assert_eq!(classify(Flush, &eio, true), FatalError);
        assert_eq!(classify(Compaction, &eio, false), NoError);
        assert_eq!(classify(WriteCallback, &eio, true), FatalError);
        assert_eq!(classify(ManifestWrite, &eio, false), FatalError);
        assert_eq!(classify(Compaction, &corrupt, true), UnrecoverableError);
        assert_eq!(classify(ManifestWrite, &corrupt, true), FatalError);
        assert_eq!(classify(Flush, &Error::invalid_argument("x"), true), FatalError);
    }

    #[test]
    fn only_a_worse_error_replaces_the_stored_one() {
        let opts = DbConfig::default();
        let mut h = ErrorHandler::new();
        assert!(h.set(no_space(), SoftError, &opts));
        assert!(!h.is_db_stopped());
        assert!(h.set(no_space(), HardError, &opts));
        assert!(h.is_db_stopped());
        assert_eq!(h.auto_recovery_wait(Instant::now()), Some(Duration::ZERO));
        assert!(!h.set(no_space(), SoftError, &opts));
        assert!(h.set(Error::corruption("x"), FatalError, &opts));
        assert_eq!(h.auto_recovery_wait(Instant::now()), None, "fatal errors never auto-recover");
        h.background_job_succeeded();
        assert_eq!(h.severity(), FatalError, "only soft errors clear on success");
    }

    #[test]
    fn auto_attempts_are_bounded() {
        let mut opts = DbConfig { max_bgerror_resume_count: 2, ..DbConfig::default() };
        let mut h = ErrorHandler::new();
        h.set(no_space(), HardError, &opts);
        h.start_auto_attempt(Duration::from_secs(5));
        assert!(h.auto_recovery_wait(Instant::now()).is_some_and(|d| d > Duration::from_secs(4)));
        h.start_auto_attempt(Duration::from_secs(5));
        assert_eq!(h.auto_recovery_wait(Instant::now()), None);
        opts.max_bgerror_resume_count = 0;
        let mut h = ErrorHandler::new();
        h.set(no_space(), HardError, &opts);
        assert_eq!(h.auto_recovery_wait(Instant::now()), None);
    }
}
