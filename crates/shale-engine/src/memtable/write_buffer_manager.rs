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
//! Made with a cache (`new_write_buffer_manager_with_cache`), the manager also charges the
//! memtables' memory to that cache, as RocksDB's `WriteBufferManager` with a
//! `CacheReservationManager`: reservations of 256 KiB (RocksDB's `kSizeDummyEntry`, role
//! write-buffer, pinned) cover the bytes in use, added as memory is reserved and given back
//! only when the usage falls under 3/4 of what is reserved (RocksDB's delayed decrease). A
//! reservation the cache refuses (strict limit, full) is skipped, as RocksDB absorbs that
//! error; the cache then evicts blocks to make room for the memtables.
//!
//! Which memtable a database switches when `should_flush` says so is the database's choice
//! (`db/write.rs`: the family with the oldest data in its active memtable).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

// Cache reservations pushed and popped, and a wake-up: nothing under these locks can panic,
// so they are parking_lot locks (no poisoned state; `db/halt.rs`).
use parking_lot::{Condvar, Mutex};
use std::time::Duration;

use crate::cache::{role, BlockCache, CacheReservation};

/// RocksDB's `CacheReservationManager` dummy entry size.
pub const CACHE_RESERVATION_UNIT: usize = 256 * 1024;

/// The memtables' charge in a block cache.
struct CacheCharge {
    cache: Arc<BlockCache>,
    entries: Mutex<Vec<CacheReservation>>,
}

impl std::fmt::Debug for CacheCharge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CacheCharge({:?})", self.cache)
    }
}

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
    /// The cache the memtables are charged to, if any.
    cache_charge: Option<CacheCharge>,
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
            cache_charge: None,
        }
    }

    /// A budget whose memtables are also charged to `cache` (see the module doc).
    pub fn with_cache(
        buffer_size: usize,
        allow_stall: bool,
        cache: Arc<BlockCache>,
    ) -> WriteBufferManagerState {
        WriteBufferManagerState {
            cache_charge: Some(CacheCharge { cache, entries: Mutex::new(Vec::new()) }),
            ..Self::new(buffer_size, allow_stall)
        }
    }

    /// Whether the memtables are charged to a cache (RocksDB's `cost_to_cache`).
    pub fn cost_to_cache(&self) -> bool {
        self.cache_charge.is_some()
    }

    /// Bytes reserved in the cache for the memtables (RocksDB's `dummy_entries_in_cache_usage`).
    pub fn dummy_entries_in_cache_usage(&self) -> usize {
        self.cache_charge.as_ref().map_or(0, |c| c.entries.lock().len() * CACHE_RESERVATION_UNIT)
    }

    /// RocksDB's `CacheReservationManagerImpl<delayed_decrease = true>::UpdateCacheReservation`.
    fn update_cache_charge(&self) {
        let Some(c) = &self.cache_charge else { return };
        let mut entries = c.entries.lock();
        let used = self.memory_used.load(Ordering::Relaxed);
        let reserved = entries.len() * CACHE_RESERVATION_UNIT;
        if used > reserved {
            while entries.len() * CACHE_RESERVATION_UNIT < used {
                match c.cache.reserve(CACHE_RESERVATION_UNIT, role::WRITE_BUFFER) {
                    Ok(r) => entries.push(r),
                    Err(_) => break,
                }
            }
        } else if used < reserved / 4 * 3 {
            let keep = used.div_ceil(CACHE_RESERVATION_UNIT);
            entries.truncate(keep);
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
        self.update_cache_charge();
    }

    /// A memtable holding `bytes` stopped taking writes (it waits for its flush).
    pub fn schedule_free(&self, bytes: usize) {
        self.memory_active.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// A memtable holding `bytes` was dropped.
    pub fn free(&self, bytes: usize) {
        let before = self.memory_used.fetch_sub(bytes, Ordering::Relaxed);
        self.update_cache_charge();
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
        let mut g = self.stall_lock.lock();
        if self.should_stall() {
            let _ = self.stall_cv.wait_for(&mut g, timeout);
        }
    }

    fn wake_stalled(&self) {
        // Taking the lock orders the wake-up after a waiter's check, so none is missed.
        drop(self.stall_lock.lock());
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
    fn charges_memtables_to_the_cache() {
        let cache = Arc::new(BlockCache::new(8 << 20));
        let w = WriteBufferManagerState::with_cache(4 << 20, false, cache.clone());
        assert!(w.cost_to_cache());
        w.reserve(100);
        assert_eq!(w.dummy_entries_in_cache_usage(), CACHE_RESERVATION_UNIT);
        assert!(cache.usage() >= CACHE_RESERVATION_UNIT);
        w.reserve(CACHE_RESERVATION_UNIT * 3);
        assert_eq!(w.dummy_entries_in_cache_usage(), 4 * CACHE_RESERVATION_UNIT);
        assert_eq!(cache.pinned_usage(), cache.usage(), "reservations are pinned");
        // Delayed decrease: kept until the usage is under 3/4 of the reservation.
        w.free(50);
        assert_eq!(w.dummy_entries_in_cache_usage(), 4 * CACHE_RESERVATION_UNIT);
        w.free(CACHE_RESERVATION_UNIT * 2);
        assert_eq!(w.dummy_entries_in_cache_usage(), 2 * CACHE_RESERVATION_UNIT);
        w.free(w.memory_usage());
        assert_eq!(w.dummy_entries_in_cache_usage(), 0);
        assert_eq!(cache.usage(), 0);
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
