//! The memtable memory budget: RocksDB's `WriteBufferManager`, shared by every column
//! family of a database and, when the user passes one manager to several databases, by all
//! of them.
//!
//! Accounting is by arena block, as RocksDB's `AllocTracker`: a memtable's arena reserves
//! each block it allocates (`memory_used` and `memory_active` grow), gives its blocks up
//! from the active count when the memtable becomes immutable (`schedule_free`), and frees
//! them when the memtable is dropped (`free`). Every operation is a few atomic additions,
//! so the write path asks `should_flush` / `should_stall` on every write group without a
//! lock, whatever the number of families.
//!
//! The rules are RocksDB's (`write_buffer_manager.h`):
//! - flush when the active (mutable) memtables hold more than 7/8 of the buffer size, or
//!   when all memtables hold the buffer size and the active ones at least half of it;
//! - with `allow_stall`, writers wait while all memtables hold the buffer size or more,
//!   and are woken when a free brings the usage below it.
//!
//! Which memtable a database switches when `should_flush` says so is the database's choice
//! (`db/write.rs`: the family with the oldest data in its active memtable).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// The shared counters and the stall wait queue. Share it through `Arc`.
#[derive(Debug)]
pub struct WriteBufferManagerState {
    buffer_size: AtomicUsize,
    mutable_limit: AtomicUsize,
    /// Bytes of every tracked memtable (active and immutable) not yet freed.
    memory_used: AtomicUsize,
    /// Bytes of the tracked memtables that still accept writes.
    memory_active: AtomicUsize,
    allow_stall: AtomicBool,
    /// Writers stalled by `allow_stall` sleep here; frees wake them.
    stall_lock: Mutex<()>,
    stall_cv: Condvar,
}

impl WriteBufferManagerState {
    /// A budget of `buffer_size` bytes (0: unlimited, only counting).
    pub fn new(buffer_size: usize, allow_stall: bool) -> WriteBufferManagerState {
        WriteBufferManagerState {
            buffer_size: AtomicUsize::new(buffer_size),
            mutable_limit: AtomicUsize::new(mutable_limit(buffer_size)),
            memory_used: AtomicUsize::new(0),
            memory_active: AtomicUsize::new(0),
            allow_stall: AtomicBool::new(allow_stall),
            stall_lock: Mutex::new(()),
            stall_cv: Condvar::new(),
        }
    }

    pub fn buffer_size(&self) -> usize {
        self.buffer_size.load(Ordering::Relaxed)
    }

    /// Changes the budget (RocksDB's `SetBufferSize`); stalled writers re-check it.
    pub fn set_buffer_size(&self, size: usize) {
        self.buffer_size.store(size, Ordering::Relaxed);
        self.mutable_limit.store(mutable_limit(size), Ordering::Relaxed);
        self.wake_stalled();
    }

    pub fn set_allow_stall(&self, allow: bool) {
        self.allow_stall.store(allow, Ordering::Relaxed);
        if !allow {
            self.wake_stalled();
        }
    }

    pub fn enabled(&self) -> bool {
        self.buffer_size() > 0
    }

    /// Bytes of all memtables charged to this budget.
    pub fn memory_usage(&self) -> usize {
        self.memory_used.load(Ordering::Relaxed)
    }

    /// Bytes of the memtables that still take writes.
    pub fn mutable_memtable_memory_usage(&self) -> usize {
        self.memory_active.load(Ordering::Relaxed)
    }

    /// An arena allocated `bytes` for a memtable that takes writes.
    pub fn reserve(&self, bytes: usize) {
        self.memory_used.fetch_add(bytes, Ordering::Relaxed);
        self.memory_active.fetch_add(bytes, Ordering::Relaxed);
    }

    /// A memtable holding `bytes` stopped taking writes (it waits for its flush).
    pub fn schedule_free(&self, bytes: usize) {
        self.memory_active.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// A memtable holding `bytes` was dropped.
    pub fn free(&self, bytes: usize) {
        let before = self.memory_used.fetch_sub(bytes, Ordering::Relaxed);
        let size = self.buffer_size();
        if self.allow_stall.load(Ordering::Relaxed) && before >= size && before - bytes < size {
            self.wake_stalled();
        }
    }

    /// RocksDB's `ShouldFlush`: time to switch a memtable to free memory.
    #[inline]
    pub fn should_flush(&self) -> bool {
        let size = self.buffer_size();
        if size == 0 {
            return false;
        }
        let active = self.memory_active.load(Ordering::Relaxed);
        if active > self.mutable_limit.load(Ordering::Relaxed) {
            return true;
        }
        self.memory_used.load(Ordering::Relaxed) >= size && active >= size / 2
    }

    /// RocksDB's `ShouldStall`: with `allow_stall`, writers must wait for memory.
    #[inline]
    pub fn should_stall(&self) -> bool {
        let size = self.buffer_size();
        size > 0 && self.allow_stall.load(Ordering::Relaxed) && self.memory_usage() >= size
    }

    /// Sleeps until a free, a budget change or `timeout` (the caller re-checks).
    pub fn wait_for_room(&self, timeout: Duration) {
        let g = self.stall_lock.lock().unwrap_or_else(|p| p.into_inner());
        if self.should_stall() {
            let _ = self.stall_cv.wait_timeout(g, timeout);
        }
    }

    fn wake_stalled(&self) {
        // Taking the lock orders the wake-up after a waiter's check, so none is missed.
        drop(self.stall_lock.lock().unwrap_or_else(|p| p.into_inner()));
        self.stall_cv.notify_all();
    }
}

/// RocksDB's `mutable_limit_`: 7/8 of the buffer size.
fn mutable_limit(buffer_size: usize) -> usize {
    buffer_size / 8 * 7
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flush_rules_follow_rocksdb() {
        let w = WriteBufferManagerState::new(800, false);
        w.reserve(700);
        assert!(!w.should_flush(), "700 active is the 7/8 limit, not over it");
        w.reserve(1);
        assert!(w.should_flush(), "active over 7/8");
        w.schedule_free(701);
        assert!(!w.should_flush(), "nothing active");
        w.reserve(400);
        assert_eq!(w.memory_usage(), 1101);
        assert!(w.should_flush(), "used over the budget and active at half");
        w.free(701);
        assert!(!w.should_flush());
        assert_eq!(w.mutable_memtable_memory_usage(), 400);
        assert!(!WriteBufferManagerState::new(0, true).should_flush());
    }

    #[test]
    fn stall_only_with_allow_stall_and_ends_on_free() {
        let w = std::sync::Arc::new(WriteBufferManagerState::new(100, false));
        w.reserve(150);
        assert!(!w.should_stall());
        w.set_allow_stall(true);
        assert!(w.should_stall());
        let w2 = w.clone();
        let t = std::thread::spawn(move || {
            let start = std::time::Instant::now();
            while w2.should_stall() {
                w2.wait_for_room(Duration::from_secs(10));
            }
            start.elapsed()
        });
        std::thread::sleep(Duration::from_millis(50));
        w.schedule_free(150);
        w.free(150);
        let waited = t.join().unwrap_or_default();
        assert!(waited < Duration::from_secs(5), "the free must wake the stalled writer");
        assert!(!w.should_stall());
    }
}
