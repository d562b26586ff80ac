//! Snapshots: a sequence number registered with the database so compaction keeps what it
//! can see, as rust-rocksdb's `Snapshot`.

use super::iterator::{DBIterator, DBRawIterator, IteratorMode};
use super::DB;
use crate::cf_ref::AsColumnFamilyRef;
use crate::error::Result;
use crate::options::ReadOptions;

/// A consistent point-in-time view of the database; released when dropped.
pub struct Snapshot<'a> {
    db: &'a DB,
    seq: u64,
}

impl<'a> Snapshot<'a> {
    pub(crate) fn new(db: &'a DB) -> Snapshot<'a> {
        let mut snaps = db.inner.snapshots.lock().unwrap_or_else(|p| p.into_inner());
        // Read the sequence under the list's lock, so compaction never misses it.
        let seq = db.inner.last_sequence();
        *snaps.entry(seq).or_insert(0) += 1;
        Snapshot { db, seq }
    }

    pub fn sequence_number(&self) -> u64 {
        self.seq
    }

    fn opts(&self, mut ro: ReadOptions) -> ReadOptions {
        ro.snapshot = Some(self.seq);
        ro
    }

    pub fn get<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<Vec<u8>>> {
        self.db.get_opt(key, &self.opts(ReadOptions::default()))
    }

    pub fn get_opt<K: AsRef<[u8]>>(&self, key: K, ro: ReadOptions) -> Result<Option<Vec<u8>>> {
        self.db.get_opt(key, &self.opts(ro))
    }

    pub fn get_cf<K: AsRef<[u8]>>(&self, cf: &impl AsColumnFamilyRef, key: K) -> Result<Option<Vec<u8>>> {
        self.db.get_cf_opt(cf, key, &self.opts(ReadOptions::default()))
    }

    pub fn get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ro: ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        self.db.get_cf_opt(cf, key, &self.opts(ro))
    }

    pub fn multi_get<K: AsRef<[u8]>, I: IntoIterator<Item = K>>(
        &self,
        keys: I,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        self.db.multi_get_opt(keys, &self.opts(ReadOptions::default()))
    }

    pub fn iterator(&self, mode: IteratorMode) -> DBIterator<'a> {
        self.db.iterator_opt(mode, self.opts(ReadOptions::default()))
    }

    pub fn iterator_opt(&self, mode: IteratorMode, ro: ReadOptions) -> DBIterator<'a> {
        self.db.iterator_opt(mode, self.opts(ro))
    }

    pub fn iterator_cf(&self, cf: &impl AsColumnFamilyRef, mode: IteratorMode) -> DBIterator<'a> {
        self.db.iterator_cf_opt(cf, self.opts(ReadOptions::default()), mode)
    }

    pub fn raw_iterator(&self) -> DBRawIterator<'a> {
        self.db.raw_iterator_opt(self.opts(ReadOptions::default()))
    }

    pub fn raw_iterator_opt(&self, ro: ReadOptions) -> DBRawIterator<'a> {
        self.db.raw_iterator_opt(self.opts(ro))
    }

    pub fn raw_iterator_cf(&self, cf: &impl AsColumnFamilyRef) -> DBRawIterator<'a> {
        self.db.raw_iterator_cf_opt(cf, self.opts(ReadOptions::default()))
    }
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        let mut snaps = self.db.inner.snapshots.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = snaps.get_mut(&self.seq) {
            *n -= 1;
            if *n == 0 {
                snaps.remove(&self.seq);
            }
        }
    }
}

impl DB {
    /// A snapshot of the current state, as rust-rocksdb's `snapshot`.
    pub fn snapshot(&self) -> Snapshot<'_> {
        Snapshot::new(self)
    }
}
