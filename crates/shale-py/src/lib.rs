//! rocksdict's Python API over Shale: the extension module `rocksdict`.
//!
//! A drop-in for rocksdict 0.3.27 (PyPI `rocksdict`): the same classes and methods, the same
//! bytes on disk, on top of the `shale` crate's public API (rust-rocksdb 0.25's) instead of a
//! bundled C++ RocksDB.
//!
//! - `encoder`: rocksdict's default-mode encoding (a type byte before each key and value) and
//!   its `rocksdict` comparator, which orders integer keys by value.
//! - `rdict`: `Rdict` (the database or one of its column families), `AccessType`,
//!   `ColumnFamily`, and `rocksdict-config.json` (raw mode and prefix extractors).
//! - `options`: `Options` and the small option classes.
//! - `iter`: `RdictIter` and the `items`/`keys`/`values`/`columns`/`entities` iterators.
//! - `extras`: `WriteBatch`, `SstFileWriter`, `Snapshot`, `Checkpoint`.
//!
//! Every call that may touch a file or wait (reads, writes, iteration steps, flush, compaction,
//! open, close) runs with the GIL released (`Python::allow_threads`), so Python threads using
//! one database run in parallel.

mod encoder;
mod extras;
mod iter;
mod options;
mod rdict;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(rocksdict, DbClosedError, PyException, "Raised when accessing a closed database instance.");

/// The database type behind every `Rdict`: column families are created and dropped through a
/// shared reference.
pub(crate) type Db = shale::DBWithThreadMode<shale::MultiThreaded>;

/// A Shale error as rocksdict raises it: `Exception` carrying RocksDB's status text.
pub(crate) fn db_err(e: shale::Error) -> PyErr {
    PyException::new_err(e.to_string())
}

/// Locks `m` without holding the GIL while waiting for it. A thread holding such a lock may
/// have released the GIL around engine work and then wait to take it back; waiting for the
/// lock with the GIL held would deadlock the two threads (say two threads stepping one
/// iterator). The first try holds the GIL (no wait, the common case); while the lock is
/// taken, the wait happens with the GIL released, then the try is made again.
#[inline]
pub(crate) fn lock_released<'a, T: Send>(
    py: Python<'_>,
    m: &'a std::sync::Mutex<T>,
    what: &str,
) -> PyResult<std::sync::MutexGuard<'a, T>> {
    match m.try_lock() {
        Ok(g) => Ok(g),
        Err(e) => lock_released_slow(py, m, what, e),
    }
}

/// `lock_released` once the first try found the lock taken (or poisoned).
#[cold]
fn lock_released_slow<'a, T: Send>(
    py: Python<'_>,
    m: &'a std::sync::Mutex<T>,
    what: &str,
    mut e: std::sync::TryLockError<std::sync::MutexGuard<'a, T>>,
) -> PyResult<std::sync::MutexGuard<'a, T>> {
    loop {
        match e {
            std::sync::TryLockError::Poisoned(_) => {
                return Err(PyException::new_err(format!("{what} lock poisoned")))
            }
            std::sync::TryLockError::WouldBlock => py.allow_threads(|| drop(m.lock())),
        }
        e = match m.try_lock() {
            Ok(g) => return Ok(g),
            Err(e) => e,
        };
    }
}

/// The error of every operation on a closed database.
pub(crate) fn closed_err() -> PyErr {
    DbClosedError::new_err("DB instance already closed")
}

#[pymodule]
fn rocksdict(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("DbClosedError", m.py().get_type::<DbClosedError>())?;
    rdict::register(m)?;
    options::register(m)?;
    iter::register(m)?;
    extras::register(m)?;
    Ok(())
}
