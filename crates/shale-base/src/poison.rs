//! The workspace's one rule for a poisoned lock: it is an error, never a default value.
//!
//! A thread that panicked holding a lock may have left what the lock guards half changed.
//! Entering it anyway (`lock().unwrap_or_else(|p| p.into_inner())`) or reading a default
//! out of it (`.map(..).unwrap_or_default()`) goes on with a guess. Every `std::sync` lock
//! of the workspace that can be poisoned is taken through [`lock`], [`read`], [`write`] or
//! [`wait`], which return [`poisoned`]: a `Corruption` ("... lock is poisoned ...") naming
//! the lock, since the state it guards can no longer be trusted. The lock stays poisoned,
//! so every later caller gets the same error. Callers wrap it as their layer needs: the
//! database halts (`shale::db::halt`), the raft engine maps it to its own `Corruption`
//! (`shale_raftlog::poison`). A call whose signature has no error (a trait method that
//! returns a `bool` or a size, a test aid) passes the error to [`or_panic`]: the panic goes
//! on rather than an answer made up.

use std::sync::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::error::{Error, Result};

/// The error of the poisoned lock `what` (a Corruption).
pub fn poisoned(what: &str) -> Error {
    Error::corruption(format!("the {what} lock is poisoned (a thread panicked holding it)"))
}

/// Locks `m`; a poisoned lock is [`poisoned`].
pub fn lock<'a, T>(m: &'a Mutex<T>, what: &str) -> Result<MutexGuard<'a, T>> {
    m.lock().map_err(|_| poisoned(what))
}

/// Takes `l` shared; a poisoned lock is [`poisoned`].
pub fn read<'a, T>(l: &'a RwLock<T>, what: &str) -> Result<RwLockReadGuard<'a, T>> {
    l.read().map_err(|_| poisoned(what))
}

/// Takes `l` exclusively; a poisoned lock is [`poisoned`].
pub fn write<'a, T>(l: &'a RwLock<T>, what: &str) -> Result<RwLockWriteGuard<'a, T>> {
    l.write().map_err(|_| poisoned(what))
}

/// Waits on `cv` with `g`; a lock poisoned meanwhile is [`poisoned`].
pub fn wait<'a, T>(cv: &Condvar, g: MutexGuard<'a, T>, what: &str) -> Result<MutexGuard<'a, T>> {
    cv.wait(g).map_err(|_| poisoned(what))
}

/// Moves the value out of a mutex being taken apart; a poisoned one is [`poisoned`].
pub fn into_inner<T>(m: Mutex<T>, what: &str) -> Result<T> {
    m.into_inner().map_err(|_| poisoned(what))
}

/// For a call whose signature has no error: the error becomes a panic (with its message)
/// instead of a made-up answer.
pub fn or_panic<T, E: std::fmt::Display>(r: std::result::Result<T, E>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("{e}"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_poisoned_lock_is_a_corruption_every_time() {
        let m = Arc::new(Mutex::new(1));
        let l = Arc::new(RwLock::new(1));
        let (m2, l2) = (m.clone(), l.clone());
        let r = std::thread::spawn(move || {
            let _a = m2.lock();
            let _b = l2.write();
            panic!("on purpose, holding both locks");
        })
        .join();
        assert!(r.is_err());
        for _ in 0..2 {
            let e = lock(&m, "test").err().unwrap();
            assert_eq!(e.kind(), crate::error::ErrorKind::Corruption);
            assert!(e.to_string().contains("the test lock is poisoned"), "{e}");
            assert!(read(&l, "test").is_err() && write(&l, "test").is_err());
        }
        assert!(std::panic::catch_unwind(|| or_panic(read(&l, "test").map(|g| *g))).is_err());
        let m = Arc::try_unwrap(m).unwrap();
        assert!(into_inner(m, "test").is_err());
    }
}
