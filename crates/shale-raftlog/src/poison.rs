//! One rule for a poisoned lock in the raft engine: it is an error, never a guess.
//!
//! A thread that panics while it holds one of the engine's locks (the index shards, the
//! file lists, the write group, the prefill state) may leave what the lock guards half
//! changed: an index shard with part of a batch applied, a file list missing a file.
//! Going on with the data as it is would serve reads or purge files on a guess. So every
//! lock goes through [`lock`], [`read`], [`write`] or [`wait`], which turn a poisoned lock
//! into [`Error::Corruption`] naming it; the lock stays poisoned, so every later call
//! that needs it fails the same way until the engine is reopened (recovery rebuilds the
//! index from the log files, which hold every acknowledged write).
//!
//! raft-engine's API has a few calls that cannot fail (`first_index`, `last_index`,
//! `compact_to`, `raft_groups`, `is_empty`, ...). Those call [`or_panic`]: the panic goes
//! on to the caller, as a `lock().unwrap()` would, rather than an answer made up (`None`
//! for a region that has entries, an empty group list).

use std::sync::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use shale_base::poison as rule;

use crate::{Error, Result};

/// The error of a poisoned lock named `what` (shale-base's rule, as this crate's Corruption).
pub(crate) fn poisoned(what: &str) -> Error {
    rule::poisoned(&format!("raft engine's {what}")).into()
}

/// Locks `m`; a poisoned lock is an error.
pub(crate) fn lock<'a, T>(m: &'a Mutex<T>, what: &str) -> Result<MutexGuard<'a, T>> {
    m.lock().map_err(|_| poisoned(what))
}

/// Takes `l` shared; a poisoned lock is an error.
pub(crate) fn read<'a, T>(l: &'a RwLock<T>, what: &str) -> Result<RwLockReadGuard<'a, T>> {
    l.read().map_err(|_| poisoned(what))
}

/// Takes `l` exclusively; a poisoned lock is an error.
pub(crate) fn write<'a, T>(l: &'a RwLock<T>, what: &str) -> Result<RwLockWriteGuard<'a, T>> {
    l.write().map_err(|_| poisoned(what))
}

/// Waits on `cv` with `g`; a lock poisoned meanwhile is an error.
pub(crate) fn wait<'a, T>(cv: &Condvar, g: MutexGuard<'a, T>, what: &str) -> Result<MutexGuard<'a, T>> {
    cv.wait(g).map_err(|_| poisoned(what))
}

/// For raft-engine's calls that cannot return an error: a poisoned lock panics (with the
/// error's message) instead of answering with a made-up value.
pub(crate) fn or_panic<T>(r: Result<T>) -> T {
    rule::or_panic(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_is_a_corruption_error_every_time() {
        let m = std::sync::Arc::new(Mutex::new(1));
        let l = std::sync::Arc::new(RwLock::new(1));
        let (m2, l2) = (m.clone(), l.clone());
        let r = std::thread::spawn(move || {
            let _a = m2.lock();
            let _b = l2.write();
            panic!("on purpose, holding both locks");
        })
        .join();
        assert!(r.is_err());
        for _ in 0..2 {
            let e = lock(&m, "test").err().map(|e| e.to_string()).unwrap_or_default();
            assert_eq!(
                e,
                "Corruption: the raft engine's test lock is poisoned (a thread panicked holding it)"
            );
            assert!(matches!(read(&l, "test"), Err(Error::Corruption(_))));
            assert!(matches!(write(&l, "test"), Err(Error::Corruption(_))));
        }
        assert!(std::panic::catch_unwind(|| or_panic(read(&l, "test").map(|g| *g))).is_err());
    }
}
