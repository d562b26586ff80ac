//! rust-rocksdb's transactions: `TransactionDB`, `OptimisticTransactionDB`, `Transaction`
//! and their options. Transactions are issue 16's. Until then every open of a transaction
//! database returns NotSupported, so no `TransactionDB` or `Transaction` value can exist:
//! they hold an uninhabited field, and their methods (which keep rust-rocksdb's signatures,
//! so code using them compiles) are statically unreachable — not stubs that could return a
//! made-up answer.

#![allow(clippy::needless_lifetimes, unused_variables)]

use std::convert::Infallible;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::Arc;

use crate::batch::WriteBatchWithTransaction;
use crate::cf_ref::AsColumnFamilyRef;
use crate::db::{
    ColumnFamily, ColumnFamilyDescriptor, DBCommon, DBIteratorWithThreadMode, DBPinnableSlice,
    DBRawIteratorWithThreadMode, IteratorMode, SnapshotWithThreadMode,
};
use crate::error::{Error, Result};
use crate::ffi_util::CStrLike;
use crate::options::{FlushOptions, Options, ReadOptions, WriteOptions};
use crate::thread_mode::{BoundColumnFamily, DBAccess, MultiThreaded, SingleThreaded, ThreadMode};

mod options;
pub use options::{OptimisticTransactionOptions, TransactionDBOptions, TransactionOptions};

fn unsupported(what: &str) -> Error {
    Error::not_supported(format!("{what} is not supported by Shale yet (transactions, issue 16)"))
}

#[cfg(not(feature = "multi-threaded-cf"))]
type DefaultThreadMode = SingleThreaded;
#[cfg(feature = "multi-threaded-cf")]
type DefaultThreadMode = MultiThreaded;

/// A pessimistic transaction database, as rust-rocksdb's `TransactionDB` (issue 16).
pub struct TransactionDB<T: ThreadMode = DefaultThreadMode> {
    never: Infallible,
    _mode: PhantomData<T>,
}

/// A transaction, as rust-rocksdb's `Transaction` (issue 16). It borrows its database.
pub struct Transaction<'db, DB> {
    never: Infallible,
    _db: PhantomData<&'db DB>,
}

/// The optimistic transaction database kind, as rust-rocksdb's `OptimisticTransactionDBInner`.
pub struct OptimisticTransactionDBInner {
    pub(crate) never: Infallible,
}

impl crate::thread_mode::sealed::Sealed for OptimisticTransactionDBInner {}
impl crate::db::DBInner for OptimisticTransactionDBInner {}

/// An optimistic transaction database, as rust-rocksdb's `OptimisticTransactionDB` (issue 16).
#[cfg(not(feature = "multi-threaded-cf"))]
pub type OptimisticTransactionDB<T = SingleThreaded> = DBCommon<T, OptimisticTransactionDBInner>;
/// An optimistic transaction database, as rust-rocksdb's `OptimisticTransactionDB` (issue 16).
#[cfg(feature = "multi-threaded-cf")]
pub type OptimisticTransactionDB<T = MultiThreaded> = DBCommon<T, OptimisticTransactionDBInner>;

impl<T: ThreadMode> DBAccess for TransactionDB<T> {
    fn snapshot_acquire(&self) -> u64 {
        match self.never {}
    }

    fn snapshot_release(&self, _seq: u64) {
        match self.never {}
    }

    fn raw_iterator_impl(
        &self,
        _cf: Option<u32>,
        _readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'_, Self> {
        match self.never {}
    }

    fn get_opt<K: AsRef<[u8]>>(&self, key: K, readopts: &ReadOptions) -> Result<Option<Vec<u8>>> {
        match self.never {}
    }

    fn get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        match self.never {}
    }

    fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        match self.never {}
    }

    fn get_pinned_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        match self.never {}
    }

    fn multi_get_opt<K, I>(&self, keys: I, readopts: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        match self.never {}
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
        match self.never {}
    }
}

impl<DB> DBAccess for Transaction<'_, DB> {
    fn snapshot_acquire(&self) -> u64 {
        match self.never {}
    }

    fn snapshot_release(&self, _seq: u64) {
        match self.never {}
    }

    fn raw_iterator_impl(
        &self,
        _cf: Option<u32>,
        _readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'_, Self> {
        match self.never {}
    }

    fn get_opt<K: AsRef<[u8]>>(&self, key: K, readopts: &ReadOptions) -> Result<Option<Vec<u8>>> {
        match self.never {}
    }

    fn get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        match self.never {}
    }

    fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        match self.never {}
    }

    fn get_pinned_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        match self.never {}
    }

    fn multi_get_opt<K, I>(&self, keys: I, readopts: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        match self.never {}
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
        match self.never {}
    }
}

impl<DB> Transaction<'_, DB> {
    pub fn multi_get_cf<'a, 'b: 'a, K, I, W>(&'a self, keys: I) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = (&'b W, K)>,
        W: 'b + AsColumnFamilyRef,
    {
        match self.never {}
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
        match self.never {}
    }

    pub fn iterator<'a: 'b, 'b>(&'a self, mode: IteratorMode) -> DBIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn iterator_opt<'a: 'b, 'b>(
        &'a self,
        mode: IteratorMode,
        readopts: ReadOptions,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn iterator_cf_opt<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        readopts: ReadOptions,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn full_iterator<'a: 'b, 'b>(&'a self, mode: IteratorMode) -> DBIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn prefix_iterator<'a: 'b, 'b, P: AsRef<[u8]>>(
        &'a self,
        prefix: P,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn full_iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn prefix_iterator_cf<'a, P: AsRef<[u8]>>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        prefix: P,
    ) -> DBIteratorWithThreadMode<'a, Self> {
        match self.never {}
    }

    pub fn raw_iterator<'a: 'b, 'b>(&'a self) -> DBRawIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn raw_iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
    ) -> DBRawIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn raw_iterator_opt<'a: 'b, 'b>(
        &'a self,
        readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn raw_iterator_cf_opt<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn commit(self) -> Result<()> {
        match self.never {}
    }

    pub fn set_name(&self, name: &[u8]) -> Result<()> {
        match self.never {}
    }

    pub fn get_name(&self) -> Option<Vec<u8>> {
        match self.never {}
    }

    pub fn prepare(&self) -> Result<()> {
        match self.never {}
    }

    pub fn snapshot(&self) -> SnapshotWithThreadMode<'_, Self> {
        match self.never {}
    }

    pub fn rollback(&self) -> Result<()> {
        match self.never {}
    }

    pub fn set_savepoint(&self) {
        match self.never {}
    }

    pub fn rollback_to_savepoint(&self) -> Result<()> {
        match self.never {}
    }

    pub fn get<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<Vec<u8>>> {
        match self.never {}
    }

    pub fn get_pinned<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<DBPinnableSlice<'_>>> {
        match self.never {}
    }

    pub fn get_cf<K: AsRef<[u8]>>(&self, cf: &impl AsColumnFamilyRef, key: K) -> Result<Option<Vec<u8>>> {
        match self.never {}
    }

    pub fn get_pinned_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        match self.never {}
    }

    pub fn get_for_update<K: AsRef<[u8]>>(&self, key: K, exclusive: bool) -> Result<Option<Vec<u8>>> {
        match self.never {}
    }

    pub fn get_pinned_for_update<K: AsRef<[u8]>>(
        &self,
        key: K,
        exclusive: bool,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        match self.never {}
    }

    pub fn get_for_update_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        exclusive: bool,
    ) -> Result<Option<Vec<u8>>> {
        match self.never {}
    }

    pub fn get_pinned_for_update_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        exclusive: bool,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        match self.never {}
    }

    pub fn get_opt<K: AsRef<[u8]>>(&self, key: K, readopts: &ReadOptions) -> Result<Option<Vec<u8>>> {
        match self.never {}
    }

    pub fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        match self.never {}
    }

    pub fn get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        match self.never {}
    }

    pub fn get_pinned_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        match self.never {}
    }

    pub fn get_for_update_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        exclusive: bool,
        opts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        match self.never {}
    }

    pub fn get_pinned_for_update_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        exclusive: bool,
        opts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        match self.never {}
    }

    pub fn get_for_update_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        exclusive: bool,
        opts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        match self.never {}
    }

    pub fn get_pinned_for_update_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        exclusive: bool,
        opts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        match self.never {}
    }

    pub fn multi_get<K, I>(&self, keys: I) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        match self.never {}
    }

    pub fn multi_get_opt<K, I>(&self, keys: I, readopts: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        match self.never {}
    }

    pub fn put<K: AsRef<[u8]>, V: AsRef<[u8]>>(&self, key: K, value: V) -> Result<()> {
        match self.never {}
    }

    pub fn put_cf<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
    ) -> Result<()> {
        match self.never {}
    }

    pub fn merge<K: AsRef<[u8]>, V: AsRef<[u8]>>(&self, key: K, value: V) -> Result<()> {
        match self.never {}
    }

    pub fn merge_cf<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
    ) -> Result<()> {
        match self.never {}
    }

    pub fn delete<K: AsRef<[u8]>>(&self, key: K) -> Result<()> {
        match self.never {}
    }

    pub fn delete_cf<K: AsRef<[u8]>>(&self, cf: &impl AsColumnFamilyRef, key: K) -> Result<()> {
        match self.never {}
    }

    pub fn get_writebatch(&self) -> WriteBatchWithTransaction<true> {
        match self.never {}
    }

    pub fn rebuild_from_writebatch(&self, writebatch: &WriteBatchWithTransaction<true>) -> Result<()> {
        match self.never {}
    }
}

impl<T: ThreadMode> TransactionDB<T> {
    pub fn transaction_opt<'a>(
        &'a self,
        write_opts: &WriteOptions,
        txn_opts: &TransactionOptions,
    ) -> Transaction<'a, Self> {
        match self.never {}
    }

    pub fn multi_get_cf<'a, 'b: 'a, K, I, W>(&'a self, keys: I) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = (&'b W, K)>,
        W: 'b + AsColumnFamilyRef,
    {
        match self.never {}
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
        match self.never {}
    }

    pub fn iterator<'a: 'b, 'b>(&'a self, mode: IteratorMode) -> DBIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn iterator_opt<'a: 'b, 'b>(
        &'a self,
        mode: IteratorMode,
        readopts: ReadOptions,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn iterator_cf_opt<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        readopts: ReadOptions,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn full_iterator<'a: 'b, 'b>(&'a self, mode: IteratorMode) -> DBIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn prefix_iterator<'a: 'b, 'b, P: AsRef<[u8]>>(
        &'a self,
        prefix: P,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn full_iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn prefix_iterator_cf<'a, P: AsRef<[u8]>>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        prefix: P,
    ) -> DBIteratorWithThreadMode<'a, Self> {
        match self.never {}
    }

    pub fn raw_iterator<'a: 'b, 'b>(&'a self) -> DBRawIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn raw_iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
    ) -> DBRawIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn raw_iterator_opt<'a: 'b, 'b>(
        &'a self,
        readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'b, Self> {
        match self.never {}
    }

    pub fn raw_iterator_cf_opt<'a: 'b, 'b>(
        &'a self,
        cf_handle: &impl AsColumnFamilyRef,
        readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'b, Self> {
        match self.never {}
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
        let cfs = cfs.into_iter().map(|n| ColumnFamilyDescriptor::new(n.as_ref(), opts.clone()));
        Self::open_cf_descriptors(opts, txn_db_opts, path, cfs)
    }

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
        let _ = (opts, txn_db_opts, path.as_ref(), cfs.into_iter().count());
        Err(unsupported("TransactionDB"))
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
        match self.never {}
    }

    pub fn flush_wal(&self, sync: bool) -> Result<()> {
        match self.never {}
    }

    pub fn flush_opt(&self, flushopts: &FlushOptions) -> Result<()> {
        match self.never {}
    }

    pub fn flush(&self) -> Result<()> {
        match self.never {}
    }

    pub fn flush_cf_opt(&self, cf: &impl AsColumnFamilyRef, flushopts: &FlushOptions) -> Result<()> {
        match self.never {}
    }

    pub fn flush_cfs_opt(&self, cfs: &[&impl AsColumnFamilyRef], opts: &FlushOptions) -> Result<()> {
        match self.never {}
    }

    pub fn flush_cf(&self, cf: &impl AsColumnFamilyRef) -> Result<()> {
        match self.never {}
    }

    pub fn transaction(&self) -> Transaction<'_, Self> {
        match self.never {}
    }

    pub fn prepared_transactions(&self) -> Vec<Transaction<'_, Self>> {
        match self.never {}
    }

    pub fn get<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<Vec<u8>>> {
        match self.never {}
    }

    pub fn get_cf<K: AsRef<[u8]>>(&self, cf: &impl AsColumnFamilyRef, key: K) -> Result<Option<Vec<u8>>> {
        match self.never {}
    }

    pub fn get_opt<K: AsRef<[u8]>>(&self, key: K, readopts: &ReadOptions) -> Result<Option<Vec<u8>>> {
        match self.never {}
    }

    pub fn get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        match self.never {}
    }

    pub fn get_pinned<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<DBPinnableSlice<'_>>> {
        match self.never {}
    }

    pub fn get_pinned_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        match self.never {}
    }

    pub fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        match self.never {}
    }

    pub fn get_pinned_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        match self.never {}
    }

    pub fn multi_get<K, I>(&self, keys: I) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        match self.never {}
    }

    pub fn multi_get_opt<K, I>(&self, keys: I, readopts: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        match self.never {}
    }

    pub fn put<K, V>(&self, key: K, value: V) -> Result<()>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        match self.never {}
    }

    pub fn put_cf<K, V>(&self, cf: &impl AsColumnFamilyRef, key: K, value: V) -> Result<()>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        match self.never {}
    }

    pub fn put_opt<K, V>(&self, key: K, value: V, writeopts: &WriteOptions) -> Result<()>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        match self.never {}
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
        match self.never {}
    }

    pub fn write(&self, batch: WriteBatchWithTransaction<true>) -> Result<()> {
        match self.never {}
    }

    pub fn write_opt(&self, batch: WriteBatchWithTransaction<true>, writeopts: &WriteOptions) -> Result<()> {
        match self.never {}
    }

    pub fn merge<K, V>(&self, key: K, value: V) -> Result<()>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        match self.never {}
    }

    pub fn merge_cf<K, V>(&self, cf: &impl AsColumnFamilyRef, key: K, value: V) -> Result<()>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        match self.never {}
    }

    pub fn merge_opt<K, V>(&self, key: K, value: V, writeopts: &WriteOptions) -> Result<()>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        match self.never {}
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
        match self.never {}
    }

    pub fn delete<K: AsRef<[u8]>>(&self, key: K) -> Result<()> {
        match self.never {}
    }

    pub fn delete_cf<K: AsRef<[u8]>>(&self, cf: &impl AsColumnFamilyRef, key: K) -> Result<()> {
        match self.never {}
    }

    pub fn delete_opt<K: AsRef<[u8]>>(&self, key: K, writeopts: &WriteOptions) -> Result<()> {
        match self.never {}
    }

    pub fn delete_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        writeopts: &WriteOptions,
    ) -> Result<()> {
        match self.never {}
    }

    pub fn snapshot(&self) -> SnapshotWithThreadMode<'_, Self> {
        match self.never {}
    }
}

impl TransactionDB<SingleThreaded> {
    pub fn create_cf<N: AsRef<str>>(&mut self, name: N, opts: &Options) -> Result<()> {
        match self.never {}
    }

    pub fn cf_handle(&self, name: &str) -> Option<&ColumnFamily> {
        match self.never {}
    }

    pub fn drop_cf(&mut self, name: &str) -> Result<()> {
        match self.never {}
    }
}

impl TransactionDB<MultiThreaded> {
    pub fn create_cf<N: AsRef<str>>(&self, name: N, opts: &Options) -> Result<()> {
        match self.never {}
    }

    pub fn cf_handle(&self, name: &str) -> Option<Arc<BoundColumnFamily<'_>>> {
        match self.never {}
    }

    pub fn drop_cf(&self, name: &str) -> Result<()> {
        match self.never {}
    }

    pub fn property_value(&self, name: impl CStrLike) -> Result<Option<String>> {
        match self.never {}
    }

    pub fn property_int_value(&self, name: impl CStrLike) -> Result<Option<u64>> {
        match self.never {}
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
        let cfs = cfs.into_iter().map(|n| ColumnFamilyDescriptor::new(n.as_ref(), opts.clone()));
        Self::open_cf_descriptors(opts, path, cfs)
    }

    pub fn open_cf_descriptors<P, I>(opts: &Options, path: P, cfs: I) -> Result<Self>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = ColumnFamilyDescriptor>,
    {
        let _ = (opts, path.as_ref(), cfs.into_iter().count());
        Err(unsupported("OptimisticTransactionDB"))
    }

    pub fn transaction(&self) -> Transaction<'_, Self> {
        match self.kind.never {}
    }

    pub fn transaction_opt(
        &self,
        writeopts: &WriteOptions,
        otxn_opts: &OptimisticTransactionOptions,
    ) -> Transaction<'_, Self> {
        match self.kind.never {}
    }

    pub fn write_opt(&self, batch: WriteBatchWithTransaction<true>, writeopts: &WriteOptions) -> Result<()> {
        match self.kind.never {}
    }

    pub fn write(&self, batch: WriteBatchWithTransaction<true>) -> Result<()> {
        match self.kind.never {}
    }

    pub fn write_without_wal(&self, batch: WriteBatchWithTransaction<true>) -> Result<()> {
        match self.kind.never {}
    }

    pub fn delete_range_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        from: K,
        to: K,
        writeopts: &WriteOptions,
    ) -> Result<()> {
        match self.kind.never {}
    }

    pub fn delete_range_cf<K: AsRef<[u8]>>(&self, cf: &impl AsColumnFamilyRef, from: K, to: K) -> Result<()> {
        match self.kind.never {}
    }
}
