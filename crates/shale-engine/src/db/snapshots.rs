//! The database's snapshot list: sequence numbers registered so flushes and compactions
//! keep what they can see, their release, and the bottommost-files recheck a release may
//! ask for. The user's snapshot handles are the facade's (`shale::db::snapshot`).

use super::DbInner;
use crate::error::Result;

impl DbInner {
    /// Registers a snapshot at the last sequence and returns that sequence. A poisoned
    /// snapshot list halts the database (`halt.rs`): the sequence is then returned
    /// unregistered, and every read with it returns the halt error.
    pub fn acquire_snapshot(&self) -> u64 {
        let Ok(mut snaps) = self.lock_or_halt(&self.snapshots, "snapshot list") else {
            return self.last_sequence();
        };
        // Read the sequence under the list's lock, so compaction never misses it.
        let seq = self.last_sequence();
        *snaps.entry(seq).or_insert(0) += 1;
        self.note_snapshot_time(seq);
        seq
    }

    /// Registers one more holder of a snapshot already taken at `seq` (an auto-refreshing
    /// iterator keeps its snapshot's entries from compaction even if the caller releases
    /// the snapshot first). Undo with `release_snapshot`.
    pub fn hold_snapshot(&self, seq: u64) {
        // A poisoned list halts the database (`halt.rs`); nothing is registered then.
        let Ok(mut snaps) = self.lock_or_halt(&self.snapshots, "snapshot list") else { return };
        *snaps.entry(seq).or_insert(0) += 1;
        self.note_snapshot_time(seq);
    }

    /// Keeps when the first snapshot at `seq` was taken (a leaf lock, taken under the
    /// snapshot list's).
    fn note_snapshot_time(&self, seq: u64) {
        let now =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        self.stats.snapshot_times.lock().entry(seq).or_insert(now);
    }

    /// RocksDB's `GetOldestSnapshotTime`: when the oldest snapshot held was taken, in
    /// seconds since the epoch; 0 without snapshots. A poisoned snapshot list halts the
    /// database (`halt.rs`) and is the error.
    pub fn oldest_snapshot_time(&self) -> Result<u64> {
        let _snaps = self.lock_or_halt(&self.snapshots, "snapshot list")?;
        Ok(self.stats.snapshot_times.lock().values().next().copied().unwrap_or(0))
    }

    /// Runs `f` (a read of several keys at one sequence number, such as a multi-get) with
    /// `ro` pinned: to the caller's snapshot, else to one registered for the call and
    /// released after it. An unregistered sequence read before a later lookup takes its
    /// SuperVersion could miss a version a flush or compaction meanwhile dropped.
    pub fn with_pinned_read<R, T>(&self, ro: &R, f: impl FnOnce(&R) -> T) -> T
    where
        R: Clone + std::borrow::BorrowMut<crate::config::ReadSettings>,
    {
        if ro.borrow().snapshot.is_some() {
            return f(ro);
        }
        struct Release<'a>(&'a DbInner, u64);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                self.0.release_snapshot(self.1);
            }
        }
        let held = Release(self, self.acquire_snapshot());
        let mut o = ro.clone();
        o.borrow_mut().snapshot = Some(held.1);
        f(&o)
    }

    pub fn release_snapshot(&self, seq: u64) {
        self.release_snapshot_oldest_left(seq);
    }

    /// `release_snapshot`, returning the oldest snapshot left (`Some(None)`: none is left;
    /// None: the list is poisoned and nothing was released).
    fn release_snapshot_oldest_left(&self, seq: u64) -> Option<Option<u64>> {
        // A poisoned list halts the database (`halt.rs`); nothing is released then.
        let Ok(mut snaps) = self.lock_or_halt(&self.snapshots, "snapshot list") else { return None };
        if let Some(n) = snaps.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                snaps.remove(&seq);
                self.stats.snapshot_times.lock().remove(&seq);
            }
        }
        Some(snaps.keys().next().copied())
    }

    /// `release_snapshot` of a snapshot the user took (rust-rocksdb's snapshots, a
    /// transaction's), RocksDB's `DB::ReleaseSnapshot`: bottommost files the oldest snapshot
    /// left frees become compactions' inputs (`note_oldest_snapshot`). An iterator's own
    /// snapshot is released by `release_snapshot` alone: RocksDB's iterators take none.
    pub fn release_user_snapshot(&self, seq: u64) {
        let Some(oldest) = self.release_snapshot_oldest_left(seq) else { return };
        self.note_oldest_snapshot(oldest.unwrap_or_else(|| self.last_sequence()));
    }

    /// RocksDB's `ReleaseSnapshot` step for bottommost files: records `oldest` (the oldest
    /// snapshot left, or the last sequence) for the picker, and when it passes the DB's
    /// threshold (a bottommost file it now frees), asks a compaction thread for a pass over
    /// the families (`recheck_bottommost_files`). Atomics, and the DB mutex taken briefly to
    /// wake the thread (`wake_workers`) only when the threshold is passed: a release comes
    /// from a user's thread, which holds no DB lock.
    fn note_oldest_snapshot(&self, oldest: u64) {
        use std::sync::atomic::Ordering;
        self.oldest_snapshot_released.fetch_max(oldest, Ordering::AcqRel);
        if oldest > self.bottommost_threshold.load(Ordering::Acquire) {
            // The pass recomputes the threshold; releases until then ask nothing more.
            self.bottommost_threshold.store(u64::MAX, Ordering::Release);
            self.bottommost_recheck.store(true, Ordering::Release);
            self.wake_workers();
        }
    }

    /// A compaction thread's pass after `note_oldest_snapshot`: each family is asked for a
    /// compaction again (the picker finds the bottommost files now eligible) and lowers the
    /// threshold by those still held by the oldest snapshot.
    pub fn recheck_bottommost_files(&self, st: &mut super::DbState) {
        let ids: Vec<u32> = st.cfs.keys().copied().collect();
        for id in ids {
            self.schedule_compaction(st, id);
        }
    }
}
