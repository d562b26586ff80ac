//! Snapshots: a sequence number registered with the database so compaction keeps what it
//! can see, as rust-rocksdb's `SnapshotWithThreadMode` (and `Snapshot` for `DB`).

use super::iterator::{DBIteratorWithThreadMode, DBRawIteratorWithThreadMode, IteratorMode};
use super::pinnable::DBPinnableSlice;
use super::{DBCommon, DBInner, DB};
use crate::cf_ref::AsColumnFamilyRef;
use crate::db::thread_mode::{DBAccess, ThreadMode};
use crate::error::Result;
use crate::options::ReadOptions;

/// A snapshot of a `DB`.
pub type Snapshot<'a> = SnapshotWithThreadMode<'a, DB>;

/// A consistent point-in-time view of a database; released when dropped. It borrows the
/// database, so it cannot outlive it.
pub struct SnapshotWithThreadMode<'a, D: DBAccess> {
    db: &'a D,
    seq: u64,
}

impl<'a, D: DBAccess> SnapshotWithThreadMode<'a, D> {
    /// Takes a snapshot of `db`.
    pub fn new(db: &'a D) -> Self {
        let seq = db.snapshot_acquire();
        SnapshotWithThreadMode { db, seq }
    }

    pub fn sequence_number(&self) -> u64 {
        self.seq
    }

    fn opts(&self, mut ro: ReadOptions) -> ReadOptions {
        ro.snapshot = Some(self.seq);
        ro
    }

    pub fn iterator(&self, mode: IteratorMode) -> DBIteratorWithThreadMode<'a, D> {
        self.iterator_opt(mode, ReadOptions::default())
    }

    pub fn iterator_cf(
        &self,
        cf: &impl AsColumnFamilyRef,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'a, D> {
        self.iterator_cf_opt(cf, ReadOptions::default(), mode)
    }

    pub fn iterator_opt(&self, mode: IteratorMode, ro: ReadOptions) -> DBIteratorWithThreadMode<'a, D> {
        DBIteratorWithThreadMode::new(self.db.raw_iterator_impl(None, self.opts(ro)), mode)
    }

    pub fn iterator_cf_opt(
        &self,
        cf: &impl AsColumnFamilyRef,
        ro: ReadOptions,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'a, D> {
        DBIteratorWithThreadMode::new(self.db.raw_iterator_impl(Some(cf.cf_id()), self.opts(ro)), mode)
    }

    pub fn raw_iterator(&self) -> DBRawIteratorWithThreadMode<'a, D> {
        self.raw_iterator_opt(ReadOptions::default())
    }

    pub fn raw_iterator_cf(&self, cf: &impl AsColumnFamilyRef) -> DBRawIteratorWithThreadMode<'a, D> {
        self.raw_iterator_cf_opt(cf, ReadOptions::default())
    }

    pub fn raw_iterator_opt(&self, ro: ReadOptions) -> DBRawIteratorWithThreadMode<'a, D> {
        self.db.raw_iterator_impl(None, self.opts(ro))
    }

    pub fn raw_iterator_cf_opt(
        &self,
        cf: &impl AsColumnFamilyRef,
        ro: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'a, D> {
        self.db.raw_iterator_impl(Some(cf.cf_id()), self.opts(ro))
    }

    pub fn get<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, ReadOptions::default())
    }

    pub fn get_cf<K: AsRef<[u8]>>(&self, cf: &impl AsColumnFamilyRef, key: K) -> Result<Option<Vec<u8>>> {
        self.get_cf_opt(cf, key, ReadOptions::default())
    }

    pub fn get_opt<K: AsRef<[u8]>>(&self, key: K, ro: ReadOptions) -> Result<Option<Vec<u8>>> {
        self.db.get_opt(key, &self.opts(ro))
    }

    pub fn get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ro: ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        self.db.get_cf_opt(cf, key, &self.opts(ro))
    }

    pub fn get_pinned<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<DBPinnableSlice<'_>>> {
        self.get_pinned_opt(key, ReadOptions::default())
    }

    pub fn get_pinned_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.get_pinned_cf_opt(cf, key, ReadOptions::default())
    }

    pub fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        ro: ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.db.get_pinned_opt(key, &self.opts(ro))
    }

    pub fn get_pinned_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ro: ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.db.get_pinned_cf_opt(cf, key, &self.opts(ro))
    }

    pub fn multi_get<K: AsRef<[u8]>, I>(&self, keys: I) -> Vec<Result<Option<Vec<u8>>>>
    where
        I: IntoIterator<Item = K>,
    {
        self.multi_get_opt(keys, ReadOptions::default())
    }

    pub fn multi_get_cf<'b, K, I, W>(&self, keys_cf: I) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = (&'b W, K)>,
        W: AsColumnFamilyRef + 'b,
    {
        self.multi_get_cf_opt(keys_cf, ReadOptions::default())
    }

    pub fn multi_get_opt<K, I>(&self, keys: I, ro: ReadOptions) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        self.db.multi_get_opt(keys, &self.opts(ro))
    }

    pub fn multi_get_cf_opt<'b, K, I, W>(&self, keys_cf: I, ro: ReadOptions) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = (&'b W, K)>,
        W: AsColumnFamilyRef + 'b,
    {
        self.db.multi_get_cf_opt(keys_cf, &self.opts(ro))
    }
}

impl<D: DBAccess> Drop for SnapshotWithThreadMode<'_, D> {
    fn drop(&mut self) {
        self.db.snapshot_release(self.seq);
    }
}

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// A snapshot of the current state, as rust-rocksdb's `snapshot`.
    pub fn snapshot(&self) -> SnapshotWithThreadMode<'_, Self> {
        SnapshotWithThreadMode::new(self)
    }
}

impl crate::ReadOptions {
    /// Reads at `snapshot`'s sequence number (rust-rocksdb's `ReadOptions::set_snapshot`).
    pub fn set_snapshot<D: DBAccess>(&mut self, snapshot: &SnapshotWithThreadMode<'_, D>) {
        self.snapshot = Some(snapshot.sequence_number());
    }
}
