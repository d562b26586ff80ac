//! Lock ranks, checked in debug builds.
//!
//! Every lock of the engine that may be held while another is taken carries a rank, written
//! where the lock is declared (`Ranked::new(RANK, lock)`). A thread may take a lock only
//! while every lock it already holds has a lower rank; so locks are always taken in
//! ascending rank, and no two threads can wait on each other in a cycle. Debug builds keep,
//! per thread, the ranks held and panic when a lock is taken out of order, naming both locks
//! (the test that did it fails: the order is a bug to fix, not a state to recover from).
//! Release builds keep nothing: `Ranked` is its lock and the guards are the lock's guards
//! plus a zero-sized token. The test profile CI runs (`ci`, release-like) turns debug
//! assertions on for `shale-base` alone, so the checks run there too (and so does
//! `fs::db_mutex_check`).
//!
//! This is what RocksDB and LevelDB keep by hand (`GUARDED_BY`, "REQUIRES: mutex_ held",
//! the lock-order comments of `db_impl.h`); the engine's order is in `docs/architecture.md`.
//! A `try_lock` cannot wait, so it is not checked, but what it takes counts as held.
//! A guard released for a while (`MutexGuard::unlocked`, a condition variable's wait) is
//! still counted as held, except through [`suspend`], which the DB mutex's `unlocked` uses.

use std::ops::{Deref, DerefMut};

/// Whether this build checks the order (debug builds, and the `ci` profile, which turns
/// debug assertions on for this crate alone).
pub const fn enabled() -> bool {
    cfg!(debug_assertions)
}

/// A lock's place in the order, and its name for the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rank {
    pub order: u16,
    pub name: &'static str,
}

impl Rank {
    pub const fn new(order: u16, name: &'static str) -> Rank {
        Rank { order, name }
    }
}

#[cfg(debug_assertions)]
thread_local! {
    static HELD: std::cell::RefCell<Vec<Rank>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Debug builds: panics if this thread holds a lock of rank `rank` or above.
#[inline]
pub fn check(rank: Rank) {
    #[cfg(debug_assertions)]
    HELD.with(|h| {
        if let Some(top) = h.borrow().iter().max_by_key(|r| r.order) {
            assert!(
                top.order < rank.order,
                "lock order: {} (rank {}) taken while this thread holds {} (rank {})",
                rank.name,
                rank.order,
                top.name,
                top.order
            );
        }
    });
    #[cfg(not(debug_assertions))]
    let _ = rank;
}

/// A held rank: counted from `acquire` until dropped.
#[must_use]
pub struct Held {
    #[cfg(debug_assertions)]
    rank: Rank,
}

fn push(rank: Rank) -> Held {
    #[cfg(debug_assertions)]
    {
        HELD.with(|h| h.borrow_mut().push(rank));
        Held { rank }
    }
    #[cfg(not(debug_assertions))]
    {
        let _ = rank;
        Held {}
    }
}

#[cfg(debug_assertions)]
fn pop(rank: Rank) {
    HELD.with(|h| {
        let mut h = h.borrow_mut();
        if let Some(i) = h.iter().rposition(|r| *r == rank) {
            h.remove(i);
        }
    });
}

impl Drop for Held {
    fn drop(&mut self) {
        #[cfg(debug_assertions)]
        pop(self.rank);
    }
}

/// Checks `rank` against the ranks held, then counts it as held.
pub fn acquire(rank: Rank) -> Held {
    check(rank);
    push(rank)
}

/// A held rank not counted for a while (see [`suspend`]).
#[must_use]
pub struct Suspended {
    #[cfg(debug_assertions)]
    rank: Rank,
}

impl Drop for Suspended {
    fn drop(&mut self) {
        #[cfg(debug_assertions)]
        HELD.with(|h| h.borrow_mut().push(self.rank));
    }
}

/// Stops counting a held `rank` until the returned token drops (the lock released and
/// taken back meanwhile, as `MutexGuard::unlocked` does).
pub fn suspend(rank: Rank) -> Suspended {
    #[cfg(debug_assertions)]
    {
        pop(rank);
        Suspended { rank }
    }
    #[cfg(not(debug_assertions))]
    {
        let _ = rank;
        Suspended {}
    }
}

/// A lock with its rank.
pub struct Ranked<L> {
    rank: Rank,
    lock: L,
}

/// A guard of a `Ranked` lock: derefs to the lock's own guard. The lock is released before
/// its rank stops counting.
pub struct RankedGuard<G> {
    guard: G,
    _held: Held,
}

impl<G> Deref for RankedGuard<G> {
    type Target = G;
    fn deref(&self) -> &G {
        &self.guard
    }
}

impl<G> DerefMut for RankedGuard<G> {
    fn deref_mut(&mut self) -> &mut G {
        &mut self.guard
    }
}

impl<L> Ranked<L> {
    pub const fn new(rank: Rank, lock: L) -> Ranked<L> {
        Ranked { rank, lock }
    }

    pub fn rank(&self) -> Rank {
        self.rank
    }

    /// The lock itself, for what needs no order (exclusive access).
    pub fn get_mut(&mut self) -> &mut L {
        &mut self.lock
    }

    fn guard<'a, G>(&'a self, take: impl FnOnce(&'a L) -> G) -> RankedGuard<G> {
        check(self.rank);
        let guard = take(&self.lock);
        RankedGuard { guard, _held: push(self.rank) }
    }
}

impl<T> Ranked<parking_lot::Mutex<T>> {
    pub fn lock(&self) -> RankedGuard<parking_lot::MutexGuard<'_, T>> {
        self.guard(|l| l.lock())
    }

    pub fn try_lock(&self) -> Option<RankedGuard<parking_lot::MutexGuard<'_, T>>> {
        let guard = self.lock.try_lock()?;
        Some(RankedGuard { guard, _held: push(self.rank) })
    }
}

impl<T> Ranked<parking_lot::RwLock<T>> {
    pub fn read(&self) -> RankedGuard<parking_lot::RwLockReadGuard<'_, T>> {
        self.guard(|l| l.read())
    }

    pub fn write(&self) -> RankedGuard<parking_lot::RwLockWriteGuard<'_, T>> {
        self.guard(|l| l.write())
    }
}

impl<T> Ranked<std::sync::Mutex<T>> {
    /// As `std::sync::Mutex::is_poisoned`.
    pub fn is_poisoned(&self) -> bool {
        self.lock.is_poisoned()
    }

    /// As `std::sync::Mutex::lock`: Err when a thread panicked holding it.
    #[allow(clippy::type_complexity)]
    pub fn lock(
        &self,
    ) -> Result<
        RankedGuard<std::sync::MutexGuard<'_, T>>,
        std::sync::PoisonError<RankedGuard<std::sync::MutexGuard<'_, T>>>,
    > {
        check(self.rank);
        match self.lock.lock() {
            Ok(guard) => Ok(RankedGuard { guard, _held: push(self.rank) }),
            Err(p) => Err(std::sync::PoisonError::new(RankedGuard {
                guard: p.into_inner(),
                _held: push(self.rank),
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const LOW: Rank = Rank::new(10, "low");
    const HIGH: Rank = Rank::new(20, "high");

    #[test]
    fn ascending_order_is_taken() {
        let a = Ranked::new(LOW, parking_lot::Mutex::new(1));
        let b = Ranked::new(HIGH, parking_lot::RwLock::new(2));
        let ga = a.lock();
        let gb = b.read();
        assert_eq!(**ga + **gb, 3);
        drop(gb);
        drop(ga);
        // Released, either may be taken alone.
        let _gb = b.write();
    }

    #[cfg(debug_assertions)]
    #[test]
    fn descending_order_panics_naming_both() {
        let a = Ranked::new(LOW, std::sync::Mutex::new(1));
        let b = Ranked::new(HIGH, parking_lot::Mutex::new(2));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _gb = b.lock();
            let _ga = a.lock();
        }));
        let msg = *r.unwrap_err().downcast::<String>().unwrap();
        assert_eq!(msg, "lock order: low (rank 10) taken while this thread holds high (rank 20)");
        // The unwinding released both: the order starts over.
        let _ga = a.lock().unwrap();
        let _gb = b.lock();
    }

    #[cfg(debug_assertions)]
    #[test]
    fn suspended_rank_allows_a_lower_lock() {
        let a = Ranked::new(LOW, parking_lot::Mutex::new(1));
        let b = Ranked::new(HIGH, parking_lot::Mutex::new(2));
        let mut gb = b.lock();
        {
            let _s = suspend(HIGH);
            parking_lot::MutexGuard::unlocked(&mut gb, || {
                let _ga = a.lock();
            });
        }
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ga = a.lock();
        }));
        assert!(r.is_err(), "the rank counts again once the suspension ends");
    }
}
