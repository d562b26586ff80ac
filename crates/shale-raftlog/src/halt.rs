//! One rule for a log whose state is no longer known: the engine stops writing.
//!
//! After a failed write or fsync of a log file (or a failed rotation to the next file), the
//! file's tail is unknown: the bytes may be on disk, partly on disk or not at all, and the
//! page cache may have dropped them (Linux clears the error after reporting it once, so a
//! retried fsync can "succeed" on data that is gone). After a writer panicked, or a lock on the write path was poisoned,
//! the index may hold part of a batch. Writing on would acknowledge writes on top of a
//! state nobody knows. So the first such error is kept here ([`Halt::halt`]) and every
//! later write, sync, rotation and purge returns it ([`Halt::check`]), in both queues: this
//! is RocksDB's background-error rule (a hard error stops writes and writes return the
//! stored error); raft-engine itself panics on a failed fsync.
//!
//! ```text
//!   append / sync / rotation fails ─┐
//!   a group leader panics ──────────┼─► Halt::halt(first error kept)
//!   a batch written but not         │
//!   applied to the index ───────────┘
//!   write / sync / purge ─► Halt::check ─► Err(the kept error, same kind and message)
//! ```
//!
//! Reads go on: the index holds only batches that were written (and synced, when asked)
//! before the halt. Reopening the engine is the way back: recovery rebuilds the index
//! from the files, which hold every acknowledged write.

use std::sync::OnceLock;

use crate::{Error, Result};

/// The engine's stored background error (see the module comment).
#[derive(Default)]
pub(crate) struct Halt(OnceLock<Error>);

impl Halt {
    /// Stops the engine with `e` unless it is stopped already; returns the error the engine
    /// now returns (the first one).
    pub fn halt(&self, e: Error) -> Error {
        self.0.get_or_init(|| e).duplicate()
    }

    /// Err with the stored error once the engine is stopped.
    #[inline]
    pub fn check(&self) -> Result<()> {
        match self.0.get() {
            None => Ok(()),
            Some(e) => Err(e.duplicate()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_error_is_kept_and_returned_every_time() {
        let h = Halt::default();
        assert!(h.check().is_ok());
        let first: Error = shale_base::Error::io_code("sync 0000000000000001.raftlog", 5).into();
        let text = first.to_string();
        assert_eq!(h.halt(first).to_string(), text);
        assert_eq!(h.halt(Error::Corruption("later".into())).to_string(), text);
        for _ in 0..2 {
            let e = h.check().err().map(|e| (e.to_string(), e.os_code()));
            assert_eq!(e, Some((text.clone(), Some(5))));
        }
    }
}
