//! rust-rocksdb's transactions: `TransactionDB` (pessimistic), `OptimisticTransactionDB`,
//! `Transaction` and their options, over Shale's engine (RocksDB's
//! utilities/transactions, WRITE_COMMITTED policy).
//!
//! - `lock_mgr.rs`: the striped point lock manager (timeouts, expiration and lock
//!   stealing, deadlock detection, `max_num_locks`).
//! - `wbwi.rs`: a transaction's writes indexed for its own reads, and the merged view of
//!   them over the database that its gets and iterators read.
//! - `txn.rs`: one transaction's rules (locking or conflict tracking, savepoints, commit,
//!   rollback, two-phase commit).
//! - two-phase commit in the WAL and its recovery: `db/twopc.rs` (the database's WAL
//!   bookkeeping); write-conflict checks: `db/write_conflict.rs`.
//!
//! A `TransactionDB`'s own writes (`put`, `delete`, `merge`, `write`) lock their keys as
//! a one-operation transaction would, with `default_lock_timeout`, as RocksDB's do.

use crate::db::HandleOf;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::Arc;

use crate::batch::WriteBatchWithTransaction;
use crate::cf_ref::{AsColumnFamilyRef, CfId};
use crate::db::thread_mode::{BoundColumnFamily, DBAccess, MultiThreaded, SingleThreaded, ThreadMode};
use crate::db::{
    pinned_value, ColumnFamily, ColumnFamilyDescriptor, DBCommon, DBIteratorWithThreadMode, DBPinnableSlice,
    DBRawIteratorWithThreadMode, DBWithThreadMode, Direction, IteratorMode, SnapshotWithThreadMode,
};
use crate::error::{Error, Result};
use crate::ffi_util::CStrLike;
use crate::key::ValueType;
use crate::options::{FlushOptions, Options, ReadOptions, WriteOptions};

mod lock_mgr;
mod options;
mod txn;
mod wbwi;
pub(crate) use wbwi::batch_iterator;

pub use options::{OptimisticTransactionOptions, TransactionDBOptions, TransactionOptions};
use txn::{Kind, OccShared, TxnCore, TxnDbShared, NO_SNAPSHOT};

#[cfg(not(feature = "multi-threaded-cf"))]
type DefaultThreadMode = SingleThreaded;
#[cfg(feature = "multi-threaded-cf")]
type DefaultThreadMode = MultiThreaded;

/// Commit-lock buckets of an optimistic transaction database (RocksDB's default is 2^20;
/// a bucket is one byte here, and more buckets only mean fewer false collisions).
const OCC_LOCK_BUCKETS: usize = 1 << 16;

/// A pessimistic transaction database, as rust-rocksdb's `TransactionDB`.
pub struct TransactionDB<T: ThreadMode = DefaultThreadMode> {
    pub(crate) db: DBWithThreadMode<T>,
    shared: Arc<TxnDbShared>,
}

/// A transaction, as rust-rocksdb's `Transaction`. It borrows its database.
pub struct Transaction<'db, DB> {
    core: TxnCore,
    _db: PhantomData<&'db DB>,
}

/// The optimistic transaction database kind, as rust-rocksdb's `OptimisticTransactionDBInner`.
pub struct OptimisticTransactionDBInner {
    occ: Arc<OccShared>,
}

impl crate::db::thread_mode::sealed::Sealed for OptimisticTransactionDBInner {}
impl crate::db::DBInner for OptimisticTransactionDBInner {}

/// An optimistic transaction database, as rust-rocksdb's `OptimisticTransactionDB`.
#[cfg(not(feature = "multi-threaded-cf"))]
pub type OptimisticTransactionDB<T = SingleThreaded> = DBCommon<T, OptimisticTransactionDBInner>;
/// An optimistic transaction database, as rust-rocksdb's `OptimisticTransactionDB`.
#[cfg(feature = "multi-threaded-cf")]
pub type OptimisticTransactionDB<T = MultiThreaded> = DBCommon<T, OptimisticTransactionDBInner>;

impl<T: ThreadMode> DBAccess for TransactionDB<T> {
    fn snapshot_acquire(&self) -> u64 {
        self.db.snapshot_acquire()
    }

    fn snapshot_release(&self, seq: u64) {
        self.db.snapshot_release(seq)
    }

    fn raw_iterator_impl(
        &self,
        cf: Option<u32>,
        readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'_, Self> {
        match cf {
            None => self.raw_iterator_opt(readopts),
            Some(id) => self.raw_iterator_cf_opt(&CfId(id), readopts),
        }
    }

    fn get_opt<K: AsRef<[u8]>>(&self, key: K, readopts: &ReadOptions) -> Result<Option<Vec<u8>>> {
        self.db.get_opt(key, readopts)
    }

    fn get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        self.db.get_cf_opt(cf, key, readopts)
    }

    fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.db.get_pinned_opt(key, readopts)
    }

    fn get_pinned_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.db.get_pinned_cf_opt(cf, key, readopts)
    }

    fn multi_get_opt<K, I>(&self, keys: I, readopts: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        self.db.multi_get_opt(keys, readopts)
    }

    fn multi_get_cf_opt<'b, K, I, W>(
        &self,
        keys_cf: I,
        readopts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = (&'b W, K)>,
        W: AsColumnFamilyRef + 'b,
    {
        self.db.multi_get_cf_opt(keys_cf, readopts)
    }
}

impl<DB> DBAccess for Transaction<'_, DB> {
    fn snapshot_acquire(&self) -> u64 {
        match self.core.snapshot_seq() {
            Some(s) => {
                self.core.inner.hold_snapshot(s);
                s
            }
            // No snapshot: the handle reads the latest data, as RocksDB's null snapshot.
            None => NO_SNAPSHOT,
        }
    }

    fn snapshot_release(&self, seq: u64) {
        if seq != NO_SNAPSHOT {
            self.core.inner.release_user_snapshot(seq);
        }
    }

    fn raw_iterator_impl(
        &self,
        cf: Option<u32>,
        readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'_, Self> {
        self.raw_iter(cf.unwrap_or(self.core.default_cf.id), &readopts)
    }

    fn get_opt<K: AsRef<[u8]>>(&self, key: K, readopts: &ReadOptions) -> Result<Option<Vec<u8>>> {
        Transaction::get_opt(self, key, readopts)
    }

    fn get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        Transaction::get_cf_opt(self, cf, key, readopts)
    }

    fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        Transaction::get_pinned_opt(self, key, readopts)
    }

    fn get_pinned_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        Transaction::get_pinned_cf_opt(self, cf, key, readopts)
    }

    fn multi_get_opt<K, I>(&self, keys: I, readopts: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        Transaction::multi_get_opt(self, keys, readopts)
    }

    fn multi_get_cf_opt<'b, K, I, W>(
        &self,
        keys_cf: I,
        readopts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = (&'b W, K)>,
        W: AsColumnFamilyRef + 'b,
    {
        let keys: Vec<(&'b W, K)> = keys_cf.into_iter().collect();
        self.consistent(readopts, |ro| keys.iter().map(|(cf, k)| self.get_cf_opt(*cf, k, ro)).collect())
    }
}

impl<DB> Transaction<'_, DB> {
    fn new(core: TxnCore) -> Self {
        Transaction { core, _db: PhantomData }
    }

    /// Runs `f` with read options of one sequence number for a whole multi-get (a snapshot
    /// registered for the call when the caller gives none: `DbInner::with_pinned_read`).
    fn consistent<T>(&self, ro: &ReadOptions, f: impl FnOnce(&ReadOptions) -> T) -> T {
        let mut o = ro.clone();
        if o.snapshot == Some(NO_SNAPSHOT) {
            o.snapshot = None;
        }
        self.core.inner.with_pinned_read(&o, f)
    }

    fn raw_iter<'b>(&self, cf: u32, ro: &ReadOptions) -> DBRawIteratorWithThreadMode<'b, Self> {
        match self.core.handle(cf) {
            Ok(h) => self.core.raw_iterator(&h, ro),
            Err(e) => DBRawIteratorWithThreadMode::failed(&self.core.default_cf, e),
        }
    }

    fn get_impl(&self, cf: u32, key: &[u8], ro: &ReadOptions) -> Result<Option<Vec<u8>>> {
        let h = self.core.handle(cf)?;
        self.core.get(&h, key, ro)
    }

    fn get_for_update_impl(
        &self,
        cf: u32,
        key: &[u8],
        exclusive: bool,
        ro: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        let h = self.core.handle(cf)?;
        self.core.get_for_update(&h, key, exclusive, ro)
    }

    fn default_id(&self) -> u32 {
        self.core.default_cf.id
    }

    pub fn multi_get_cf<'a, 'b: 'a, K, I, W>(&'a self, keys: I) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = (&'b W, K)>,
        W: 'b + AsColumnFamilyRef,
    {
        self.multi_get_cf_opt(keys, &ReadOptions::default())
    }

    pub fn multi_get_cf_opt<'a, 'b: 'a, K, I, W>(
        &'a self,
        keys: I,
        readopts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = (&'b W, K)>,
        W: 'b + AsColumnFamilyRef,
    {
        DBAccess::multi_get_cf_opt(self, keys, readopts)
    }

    pub fn iterator<'a: 'b, 'b>(&'a self, mode: IteratorMode) -> DBIteratorWithThreadMode<'b, Self> {
        self.iterator_opt(mode, ReadOptions::default())
    }

    pub fn iterator_opt<'a: 'b, 'b>(
        &'a self,
        mode: IteratorMode,
        readopts: ReadOptions,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        DBIteratorWithThreadMode::new(self.raw_iterator_opt(readopts), mode)
    }

    pub fn iterator_cf_opt<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        readopts: ReadOptions,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        DBIteratorWithThreadMode::new(self.raw_iterator_cf_opt(cf_handle, readopts), mode)
    }

    pub fn full_iterator<'a: 'b, 'b>(&'a self, mode: IteratorMode) -> DBIteratorWithThreadMode<'b, Self> {
        let mut ro = ReadOptions::default();
        ro.set_total_order_seek(true);
        self.iterator_opt(mode, ro)
    }

    pub fn prefix_iterator<'a: 'b, 'b, P: AsRef<[u8]>>(
        &'a self,
        prefix: P,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        let mut ro = ReadOptions::default();
        ro.set_prefix_same_as_start(true);
        self.iterator_opt(IteratorMode::From(prefix.as_ref(), Direction::Forward), ro)
    }

    pub fn iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        self.iterator_cf_opt(cf_handle, ReadOptions::default(), mode)
    }

    pub fn full_iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        let mut ro = ReadOptions::default();
        ro.set_total_order_seek(true);
        self.iterator_cf_opt(cf_handle, ro, mode)
    }

    pub fn prefix_iterator_cf<'a, P: AsRef<[u8]>>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        prefix: P,
    ) -> DBIteratorWithThreadMode<'a, Self> {
        let mut ro = ReadOptions::default();
        ro.set_prefix_same_as_start(true);
        self.iterator_cf_opt(cf_handle, ro, IteratorMode::From(prefix.as_ref(), Direction::Forward))
    }

    pub fn raw_iterator<'a: 'b, 'b>(&'a self) -> DBRawIteratorWithThreadMode<'b, Self> {
        self.raw_iterator_opt(ReadOptions::default())
    }

    pub fn raw_iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
    ) -> DBRawIteratorWithThreadMode<'b, Self> {
        self.raw_iterator_cf_opt(cf_handle, ReadOptions::default())
    }

    pub fn raw_iterator_opt<'a: 'b, 'b>(
        &'a self,
        readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'b, Self> {
        self.raw_iter(self.default_id(), &readopts)
    }

    pub fn raw_iterator_cf_opt<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'b, Self> {
        self.raw_iter(cf_handle.cf_id(), &readopts)
    }

    /// Commits: the writes become visible atomically (see `txn.rs` for the checks).
    pub fn commit(self) -> Result<()> {
        self.core.commit()
    }

    /// Names the transaction, for two-phase commit (1 to 512 bytes, unique among the live
    /// transactions).
    pub fn set_name(&self, name: &[u8]) -> Result<()> {
        self.core.set_name(name)
    }

    pub fn get_name(&self) -> Option<Vec<u8>> {
        self.core.name()
    }

    /// Writes the transaction's prepare section to the WAL (two-phase commit).
    pub fn prepare(&self) -> Result<()> {
        self.core.prepare()
    }

    /// The transaction's snapshot (one that reads the latest data if it has none).
    pub fn snapshot(&self) -> SnapshotWithThreadMode<'_, Self> {
        SnapshotWithThreadMode::new(self)
    }

    /// Drops every write and releases every lock (a prepared transaction writes a
    /// rollback marker).
    pub fn rollback(&self) -> Result<()> {
        self.core.rollback()
    }

    pub fn set_savepoint(&self) {
        self.core.set_savepoint()
    }

    /// Undoes the writes since the last savepoint (NotFound without one).
    pub fn rollback_to_savepoint(&self) -> Result<()> {
        self.core.rollback_to_savepoint()
    }

    pub fn get<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, &ReadOptions::default())
    }

    pub fn get_pinned<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<DBPinnableSlice<'_>>> {
        self.get_pinned_opt(key, &ReadOptions::default())
    }

    pub fn get_cf<K: AsRef<[u8]>>(&self, cf: &impl AsColumnFamilyRef, key: K) -> Result<Option<Vec<u8>>> {
        self.get_cf_opt(cf, key, &ReadOptions::default())
    }

    pub fn get_pinned_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.get_pinned_cf_opt(cf, key, &ReadOptions::default())
    }

    pub fn get_for_update<K: AsRef<[u8]>>(&self, key: K, exclusive: bool) -> Result<Option<Vec<u8>>> {
        self.get_for_update_opt(key, exclusive, &ReadOptions::default())
    }

    pub fn get_pinned_for_update<K: AsRef<[u8]>>(
        &self,
        key: K,
        exclusive: bool,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.get_pinned_for_update_opt(key, exclusive, &ReadOptions::default())
    }

    pub fn get_for_update_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        exclusive: bool,
    ) -> Result<Option<Vec<u8>>> {
        self.get_for_update_cf_opt(cf, key, exclusive, &ReadOptions::default())
    }

    pub fn get_pinned_for_update_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        exclusive: bool,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.get_pinned_for_update_cf_opt(cf, key, exclusive, &ReadOptions::default())
    }

    pub fn get_opt<K: AsRef<[u8]>>(&self, key: K, readopts: &ReadOptions) -> Result<Option<Vec<u8>>> {
        self.get_impl(self.default_id(), key.as_ref(), readopts)
    }

    pub fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.get_opt(key, readopts).map(pinned_value)
    }

    pub fn get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        self.get_impl(cf.cf_id(), key.as_ref(), readopts)
    }

    pub fn get_pinned_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.get_cf_opt(cf, key, readopts).map(pinned_value)
    }

    pub fn get_for_update_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        exclusive: bool,
        opts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        self.get_for_update_impl(self.default_id(), key.as_ref(), exclusive, opts)
    }

    pub fn get_pinned_for_update_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        exclusive: bool,
        opts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.get_for_update_opt(key, exclusive, opts).map(pinned_value)
    }

    pub fn get_for_update_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        exclusive: bool,
        opts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        self.get_for_update_impl(cf.cf_id(), key.as_ref(), exclusive, opts)
    }

    pub fn get_pinned_for_update_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        exclusive: bool,
        opts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.get_for_update_cf_opt(cf, key, exclusive, opts).map(pinned_value)
    }

    pub fn multi_get<K, I>(&self, keys: I) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        self.multi_get_opt(keys, &ReadOptions::default())
    }

    pub fn multi_get_opt<K, I>(&self, keys: I, readopts: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        let id = self.default_id();
        self.consistent(readopts, |ro| keys.into_iter().map(|k| self.get_impl(id, k.as_ref(), ro)).collect())
    }

    pub fn put<K: AsRef<[u8]>, V: AsRef<[u8]>>(&self, key: K, value: V) -> Result<()> {
        self.core.write(self.default_id(), ValueType::Value, key.as_ref(), value.as_ref())
    }

    pub fn put_cf<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
    ) -> Result<()> {
        self.core.write(cf.cf_id(), ValueType::Value, key.as_ref(), value.as_ref())
    }

    /// A Merge in the transaction. Reads of the key through the transaction resolve it with
    /// the family's merge operator, as the database's reads do (InvalidArgument when the
    /// family has none, as RocksDB).
    pub fn merge<K: AsRef<[u8]>, V: AsRef<[u8]>>(&self, key: K, value: V) -> Result<()> {
        self.core.write(self.default_id(), ValueType::Merge, key.as_ref(), value.as_ref())
    }

    pub fn merge_cf<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
    ) -> Result<()> {
        self.core.write(cf.cf_id(), ValueType::Merge, key.as_ref(), value.as_ref())
    }

    pub fn delete<K: AsRef<[u8]>>(&self, key: K) -> Result<()> {
        self.core.write(self.default_id(), ValueType::Deletion, key.as_ref(), &[])
    }

    pub fn delete_cf<K: AsRef<[u8]>>(&self, cf: &impl AsColumnFamilyRef, key: K) -> Result<()> {
        self.core.write(cf.cf_id(), ValueType::Deletion, key.as_ref(), &[])
    }

    /// The transaction's writes as a batch.
    pub fn get_writebatch(&self) -> WriteBatchWithTransaction<true> {
        self.core.write_batch()
    }

    /// Replays `writebatch`'s writes into the transaction (taking their locks), as
    /// RocksDB's `RebuildFromWriteBatch`.
    pub fn rebuild_from_writebatch(&self, writebatch: &WriteBatchWithTransaction<true>) -> Result<()> {
        writebatch.for_each(&mut |e| match e.value_type {
            ValueType::RangeDeletion => {
                // RocksDB's RebuildFromWriteBatch handler has no DeleteRangeCF: the
                // handler's default answers.
                Err(Error::invalid_argument("DeleteRangeCF not implemented"))
            }
            t => self.core.write(e.cf_id, t, e.key, e.value),
        })
    }
}

impl<T: ThreadMode> TransactionDB<T> {
    fn pessimistic(&self, txn_opts: &TransactionOptions) -> Kind {
        let timeout_ms =
            if txn_opts.lock_timeout < 0 { self.shared.opts.txn_lock_timeout } else { txn_opts.lock_timeout };
        Kind::Pessimistic {
            db: self.shared.clone(),
            lock_timeout_us: TxnDbShared::timeout_us(timeout_ms),
            deadlock_detect: txn_opts.deadlock_detect,
            deadlock_detect_depth: txn_opts.deadlock_detect_depth,
            skip_prepare: txn_opts.skip_prepare,
            max_write_batch_size: txn_opts.max_write_batch_size,
        }
    }

    fn core(&self, write_opts: &WriteOptions, txn_opts: &TransactionOptions) -> TxnCore {
        TxnCore::new(
            self.db.inner.clone(),
            self.db.default_handle().handle.clone(),
            write_opts,
            self.pessimistic(txn_opts),
            txn_opts.set_snapshot,
            txn_opts.expiration,
        )
    }

    /// A one-operation transaction for the database's own writes: it waits
    /// `default_lock_timeout` for its locks (negative: forever).
    fn internal(&self, write_opts: &WriteOptions) -> TxnCore {
        let mut kind = self.pessimistic(&TransactionOptions::default());
        if let Kind::Pessimistic { lock_timeout_us, .. } = &mut kind {
            *lock_timeout_us = TxnDbShared::timeout_us(self.shared.opts.default_lock_timeout);
        }
        TxnCore::new(
            self.db.inner.clone(),
            self.db.default_handle().handle.clone(),
            write_opts,
            kind,
            false,
            -1,
        )
    }

    fn write_one(&self, wo: &WriteOptions, cf: u32, t: ValueType, key: &[u8], value: &[u8]) -> Result<()> {
        let core = self.internal(wo);
        core.write(cf, t, key, value)?;
        core.commit()
    }

    pub fn transaction_opt<'a>(
        &'a self,
        write_opts: &WriteOptions,
        txn_opts: &TransactionOptions,
    ) -> Transaction<'a, Self> {
        Transaction::new(self.core(write_opts, txn_opts))
    }

    pub fn multi_get_cf<'a, 'b: 'a, K, I, W>(&'a self, keys: I) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = (&'b W, K)>,
        W: 'b + AsColumnFamilyRef,
    {
        self.db.multi_get_cf(keys)
    }

    pub fn multi_get_cf_opt<'a, 'b: 'a, K, I, W>(
        &'a self,
        keys: I,
        readopts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = (&'b W, K)>,
        W: 'b + AsColumnFamilyRef,
    {
        self.db.multi_get_cf_opt(keys, readopts)
    }

    pub fn iterator<'a: 'b, 'b>(&'a self, mode: IteratorMode) -> DBIteratorWithThreadMode<'b, Self> {
        self.iterator_opt(mode, ReadOptions::default())
    }

    pub fn iterator_opt<'a: 'b, 'b>(
        &'a self,
        mode: IteratorMode,
        readopts: ReadOptions,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        DBIteratorWithThreadMode::new(self.raw_iterator_opt(readopts), mode)
    }

    pub fn iterator_cf_opt<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        readopts: ReadOptions,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        DBIteratorWithThreadMode::new(self.raw_iterator_cf_opt(cf_handle, readopts), mode)
    }

    pub fn full_iterator<'a: 'b, 'b>(&'a self, mode: IteratorMode) -> DBIteratorWithThreadMode<'b, Self> {
        let mut ro = ReadOptions::default();
        ro.set_total_order_seek(true);
        self.iterator_opt(mode, ro)
    }

    pub fn prefix_iterator<'a: 'b, 'b, P: AsRef<[u8]>>(
        &'a self,
        prefix: P,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        let mut ro = ReadOptions::default();
        ro.set_prefix_same_as_start(true);
        self.iterator_opt(IteratorMode::From(prefix.as_ref(), Direction::Forward), ro)
    }

    pub fn iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        self.iterator_cf_opt(cf_handle, ReadOptions::default(), mode)
    }

    pub fn full_iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        let mut ro = ReadOptions::default();
        ro.set_total_order_seek(true);
        self.iterator_cf_opt(cf_handle, ro, mode)
    }

    pub fn prefix_iterator_cf<'a, P: AsRef<[u8]>>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        prefix: P,
    ) -> DBIteratorWithThreadMode<'a, Self> {
        let mut ro = ReadOptions::default();
        ro.set_prefix_same_as_start(true);
        self.iterator_cf_opt(cf_handle, ro, IteratorMode::From(prefix.as_ref(), Direction::Forward))
    }

    pub fn raw_iterator<'a: 'b, 'b>(&'a self) -> DBRawIteratorWithThreadMode<'b, Self> {
        self.raw_iterator_opt(ReadOptions::default())
    }

    pub fn raw_iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
    ) -> DBRawIteratorWithThreadMode<'b, Self> {
        self.raw_iterator_cf_opt(cf_handle, ReadOptions::default())
    }

    pub fn raw_iterator_opt<'a: 'b, 'b>(
        &'a self,
        readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'b, Self> {
        DBRawIteratorWithThreadMode::new(&self.db.inner, &self.db.default_handle().handle, &readopts)
    }

    pub fn raw_iterator_cf_opt<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'b, Self> {
        match self.db.inner.handle_of(cf_handle) {
            Ok(h) => DBRawIteratorWithThreadMode::new(&self.db.inner, &h, &readopts),
            Err(e) => DBRawIteratorWithThreadMode::failed(&self.db.default_handle().handle, e),
        }
    }

    pub fn open_default<P: AsRef<Path>>(path: P) -> Result<Self> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        Self::open(&opts, &TransactionDBOptions::default(), path)
    }

    pub fn open<P: AsRef<Path>>(opts: &Options, txn_db_opts: &TransactionDBOptions, path: P) -> Result<Self> {
        Self::open_cf(opts, txn_db_opts, path, None::<&str>)
    }

    pub fn open_cf<P, I, N>(
        opts: &Options,
        txn_db_opts: &TransactionDBOptions,
        path: P,
        cfs: I,
    ) -> Result<Self>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = N>,
        N: AsRef<str>,
    {
        let cfs = cfs.into_iter().map(|n| ColumnFamilyDescriptor::new(n.as_ref(), Options::default()));
        Self::open_cf_descriptors(opts, txn_db_opts, path, cfs)
    }

    /// Opens with two-phase commit allowed (RocksDB's `allow_2pc`); prepared transactions
    /// found in the WAL keep their locks until `prepared_transactions` hands them out.
    pub fn open_cf_descriptors<P, I>(
        opts: &Options,
        txn_db_opts: &TransactionDBOptions,
        path: P,
        cfs: I,
    ) -> Result<Self>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = ColumnFamilyDescriptor>,
    {
        // Shale's TransactionDB is RocksDB's WRITE_COMMITTED policy.
        if opts.unordered_write {
            return Err(Error::not_supported("WRITE_COMMITTED is incompatible with unordered_writes"));
        }
        let mut o = opts.clone();
        o.allow_2pc = true;
        let db = DBWithThreadMode::<T>::open_cf_descriptors(&o, path, cfs)?;
        let shared = Arc::new(TxnDbShared::new(txn_db_opts));
        let recovered = db.inner.prep_tracker().take_recovered();
        let default_cf = db.default_handle().handle.clone();
        for (name, batch, log) in recovered {
            let core = TxnCore::new(
                db.inner.clone(),
                default_cf.clone(),
                &WriteOptions::default(),
                Kind::Pessimistic {
                    db: shared.clone(),
                    lock_timeout_us: 0,
                    deadlock_detect: false,
                    deadlock_detect_depth: 0,
                    skip_prepare: true,
                    max_write_batch_size: 0,
                },
                false,
                -1,
            );
            core.restore_prepared(&name, &crate::WriteBatch { b: batch }, log)?;
            shared.recovered.lock().push(core);
        }
        Ok(TransactionDB { db, shared })
    }

    pub fn list_cf<P: AsRef<Path>>(opts: &Options, path: P) -> Result<Vec<String>> {
        crate::DB::list_cf(opts, path)
    }

    pub fn destroy<P: AsRef<Path>>(opts: &Options, path: P) -> Result<()> {
        crate::DB::destroy(opts, path)
    }

    pub fn repair<P: AsRef<Path>>(opts: &Options, path: P) -> Result<()> {
        crate::DB::repair(opts, path)
    }

    pub fn path(&self) -> &Path {
        self.db.path()
    }

    pub fn flush_wal(&self, sync: bool) -> Result<()> {
        self.db.flush_wal(sync)
    }

    pub fn flush_opt(&self, flushopts: &FlushOptions) -> Result<()> {
        self.db.flush_opt(flushopts)
    }

    pub fn flush(&self) -> Result<()> {
        self.db.flush()
    }

    pub fn flush_cf_opt(&self, cf: &impl AsColumnFamilyRef, flushopts: &FlushOptions) -> Result<()> {
        self.db.flush_cf_opt(cf, flushopts)
    }

    pub fn flush_cfs_opt(&self, cfs: &[&impl AsColumnFamilyRef], opts: &FlushOptions) -> Result<()> {
        self.db.flush_cfs_opt(cfs, opts)
    }

    pub fn flush_cf(&self, cf: &impl AsColumnFamilyRef) -> Result<()> {
        self.db.flush_cf(cf)
    }

    pub fn transaction(&self) -> Transaction<'_, Self> {
        self.transaction_opt(&WriteOptions::default(), &TransactionOptions::default())
    }

    /// The prepared transactions recovered from the WAL at open, to commit or roll back
    /// (each is handed out once).
    pub fn prepared_transactions(&self) -> Vec<Transaction<'_, Self>> {
        std::mem::take(&mut *self.shared.recovered.lock()).into_iter().map(Transaction::new).collect()
    }

    pub fn get<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<Vec<u8>>> {
        self.db.get(key)
    }

    pub fn get_cf<K: AsRef<[u8]>>(&self, cf: &impl AsColumnFamilyRef, key: K) -> Result<Option<Vec<u8>>> {
        self.db.get_cf(cf, key)
    }

    pub fn get_opt<K: AsRef<[u8]>>(&self, key: K, readopts: &ReadOptions) -> Result<Option<Vec<u8>>> {
        self.db.get_opt(key, readopts)
    }

    pub fn get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        self.db.get_cf_opt(cf, key, readopts)
    }

    pub fn get_pinned<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<DBPinnableSlice<'_>>> {
        self.db.get_pinned(key)
    }

    pub fn get_pinned_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.db.get_pinned_cf(cf, key)
    }

    pub fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.db.get_pinned_opt(key, readopts)
    }

    pub fn get_pinned_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.db.get_pinned_cf_opt(cf, key, readopts)
    }

    pub fn multi_get<K, I>(&self, keys: I) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        self.db.multi_get(keys)
    }

    pub fn multi_get_opt<K, I>(&self, keys: I, readopts: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        self.db.multi_get_opt(keys, readopts)
    }

    pub fn put<K, V>(&self, key: K, value: V) -> Result<()>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        self.put_opt(key, value, &WriteOptions::default())
    }

    pub fn put_cf<K, V>(&self, cf: &impl AsColumnFamilyRef, key: K, value: V) -> Result<()>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        self.put_cf_opt(cf, key, value, &WriteOptions::default())
    }

    pub fn put_opt<K, V>(&self, key: K, value: V, writeopts: &WriteOptions) -> Result<()>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        let id = self.db.default_handle().handle.id;
        self.write_one(writeopts, id, ValueType::Value, key.as_ref(), value.as_ref())
    }

    pub fn put_cf_opt<K, V>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
        writeopts: &WriteOptions,
    ) -> Result<()>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        self.write_one(writeopts, cf.cf_id(), ValueType::Value, key.as_ref(), value.as_ref())
    }

    pub fn write(&self, batch: WriteBatchWithTransaction<true>) -> Result<()> {
        self.write_opt(batch, &WriteOptions::default())
    }

    /// Writes `batch` atomically after locking every key it writes (RocksDB's
    /// `PessimisticTransactionDB::Write`).
    pub fn write_opt(&self, batch: WriteBatchWithTransaction<true>, writeopts: &WriteOptions) -> Result<()> {
        let core = self.internal(writeopts);
        batch.for_each(&mut |e| match e.value_type {
            ValueType::RangeDeletion => {
                // RocksDB's LockBatch handler has no DeleteRangeCF: the handler's default
                // answers.
                Err(Error::invalid_argument("DeleteRangeCF not implemented"))
            }
            _ => core.lock_key(e.cf_id, e.key),
        })?;
        crate::db::twopc::write_to(&self.db.inner, batch.into_engine(), &writeopts.engine())
    }

    pub fn merge<K, V>(&self, key: K, value: V) -> Result<()>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        self.merge_opt(key, value, &WriteOptions::default())
    }

    pub fn merge_cf<K, V>(&self, cf: &impl AsColumnFamilyRef, key: K, value: V) -> Result<()>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        self.merge_cf_opt(cf, key, value, &WriteOptions::default())
    }

    pub fn merge_opt<K, V>(&self, key: K, value: V, writeopts: &WriteOptions) -> Result<()>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        let id = self.db.default_handle().handle.id;
        self.write_one(writeopts, id, ValueType::Merge, key.as_ref(), value.as_ref())
    }

    pub fn merge_cf_opt<K, V>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
        writeopts: &WriteOptions,
    ) -> Result<()>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        self.write_one(writeopts, cf.cf_id(), ValueType::Merge, key.as_ref(), value.as_ref())
    }

    pub fn delete<K: AsRef<[u8]>>(&self, key: K) -> Result<()> {
        self.delete_opt(key, &WriteOptions::default())
    }

    pub fn delete_cf<K: AsRef<[u8]>>(&self, cf: &impl AsColumnFamilyRef, key: K) -> Result<()> {
        self.delete_cf_opt(cf, key, &WriteOptions::default())
    }

    pub fn delete_opt<K: AsRef<[u8]>>(&self, key: K, writeopts: &WriteOptions) -> Result<()> {
        let id = self.db.default_handle().handle.id;
        self.write_one(writeopts, id, ValueType::Deletion, key.as_ref(), &[])
    }

    pub fn delete_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        writeopts: &WriteOptions,
    ) -> Result<()> {
        self.write_one(writeopts, cf.cf_id(), ValueType::Deletion, key.as_ref(), &[])
    }

    pub fn snapshot(&self) -> SnapshotWithThreadMode<'_, Self> {
        SnapshotWithThreadMode::new(self)
    }
}

impl TransactionDB<SingleThreaded> {
    pub fn create_cf<N: AsRef<str>>(&mut self, name: N, opts: &Options) -> Result<()> {
        self.db.create_cf(name, opts)
    }

    pub fn cf_handle(&self, name: &str) -> Option<&ColumnFamily> {
        self.db.cf_handle(name)
    }

    pub fn drop_cf(&mut self, name: &str) -> Result<()> {
        self.db.drop_cf(name)
    }
}

impl TransactionDB<MultiThreaded> {
    pub fn create_cf<N: AsRef<str>>(&self, name: N, opts: &Options) -> Result<()> {
        self.db.create_cf(name, opts)
    }

    pub fn cf_handle(&self, name: &str) -> Option<Arc<BoundColumnFamily<'_>>> {
        self.db.cf_handle(name)
    }

    pub fn drop_cf(&self, name: &str) -> Result<()> {
        self.db.drop_cf(name)
    }

    pub fn property_value(&self, name: impl CStrLike) -> Result<Option<String>> {
        self.db.property_value(name)
    }

    pub fn property_int_value(&self, name: impl CStrLike) -> Result<Option<u64>> {
        self.db.property_int_value(name)
    }
}

impl<T: ThreadMode> OptimisticTransactionDB<T> {
    pub fn open_default<P: AsRef<Path>>(path: P) -> Result<Self> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        Self::open(&opts, path)
    }

    pub fn open<P: AsRef<Path>>(opts: &Options, path: P) -> Result<Self> {
        Self::open_cf(opts, path, None::<&str>)
    }

    pub fn open_cf<P, I, N>(opts: &Options, path: P, cfs: I) -> Result<Self>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = N>,
        N: AsRef<str>,
    {
        let cfs = cfs.into_iter().map(|n| ColumnFamilyDescriptor::new(n.as_ref(), Options::default()));
        Self::open_cf_descriptors(opts, path, cfs)
    }

    pub fn open_cf_descriptors<P, I>(opts: &Options, path: P, cfs: I) -> Result<Self>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = ColumnFamilyDescriptor>,
    {
        // As RocksDB's OptimisticTransactionDB::Open: families that keep no memtable history
        // keep `max_write_buffer_number * write_buffer_size` bytes of it (-1), so conflict
        // checks reach back past recent flushes.
        let with_history = |o: &Options| {
            let mut o = o.clone();
            if o.max_write_buffer_size_to_maintain == 0 {
                o.max_write_buffer_size_to_maintain = -1;
            }
            o
        };
        let opts = with_history(opts);
        let cfs: Vec<ColumnFamilyDescriptor> = cfs
            .into_iter()
            .map(|mut d| {
                d.options = with_history(&d.options);
                d
            })
            .collect();
        let db = DBWithThreadMode::<T>::open_cf_descriptors(&opts, path, cfs)?;
        Ok(db.into_kind(OptimisticTransactionDBInner { occ: Arc::new(OccShared::new(OCC_LOCK_BUCKETS)) }))
    }

    pub fn transaction(&self) -> Transaction<'_, Self> {
        self.transaction_opt(&WriteOptions::default(), &OptimisticTransactionOptions::default())
    }

    pub fn transaction_opt(
        &self,
        writeopts: &WriteOptions,
        otxn_opts: &OptimisticTransactionOptions,
    ) -> Transaction<'_, Self> {
        Transaction::new(TxnCore::new(
            self.inner.clone(),
            self.default_handle().handle.clone(),
            writeopts,
            Kind::Optimistic { occ: self.kind.occ.clone() },
            otxn_opts.set_snapshot,
            -1,
        ))
    }

    pub fn write_opt(&self, batch: WriteBatchWithTransaction<true>, writeopts: &WriteOptions) -> Result<()> {
        self.write_batch(batch.into_kind(), writeopts)
    }

    pub fn write(&self, batch: WriteBatchWithTransaction<true>) -> Result<()> {
        self.write_opt(batch, &WriteOptions::default())
    }

    pub fn write_without_wal(&self, batch: WriteBatchWithTransaction<true>) -> Result<()> {
        let mut o = WriteOptions::default();
        o.disable_wal(true);
        self.write_opt(batch, &o)
    }

    pub fn delete_range_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        from: K,
        to: K,
        writeopts: &WriteOptions,
    ) -> Result<()> {
        let mut b = crate::batch::WriteBatch::default();
        b.delete_range_cf(cf, from, to);
        self.write_batch(b, writeopts)
    }

    pub fn delete_range_cf<K: AsRef<[u8]>>(&self, cf: &impl AsColumnFamilyRef, from: K, to: K) -> Result<()> {
        self.delete_range_cf_opt(cf, from, to, &WriteOptions::default())
    }
}
