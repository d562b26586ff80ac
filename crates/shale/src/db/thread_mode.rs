//! Thread modes and the traits every database kind shares, as rust-rocksdb's: how a
//! database holds its column-family handles (`SingleThreaded`: `&mut self` to create or drop
//! a family, `cf_handle` lends `&ColumnFamily`; `MultiThreaded`: `&self`, `cf_handle` gives
//! an `Arc<BoundColumnFamily>`), and `DBAccess`, what snapshots and iterators need of the
//! database they borrow.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::Arc;

// The map of open families: inserts, removals and lookups, nothing that can panic, so a
// parking_lot lock (no poisoned state; `db/halt.rs`).
use parking_lot::RwLock;

use crate::cf_ref::AsColumnFamilyRef;
use crate::db::{
    ColumnFamily, DBCommon, DBInner, DBPinnableSlice, DBRawIteratorWithThreadMode, DBWithThreadMode,
};
use crate::error::Result;
use crate::options::{Options, ReadOptions};

pub(crate) mod sealed {
    /// Keeps the database-kind traits closed to other crates.
    pub trait Sealed {}
}

/// How a database holds its column-family handles, as rust-rocksdb's `ThreadMode`.
pub trait ThreadMode: Sized {
    #[doc(hidden)]
    fn new_cf_map(cfs: BTreeMap<String, ColumnFamily>) -> Self;
    #[doc(hidden)]
    fn get_handle(&self, name: &str) -> Option<ColumnFamily>;
    #[doc(hidden)]
    fn insert_handle(&mut self, name: &str, cf: ColumnFamily);
    #[doc(hidden)]
    fn remove_handle(&mut self, name: &str);
    /// Forgets every handle (rust-rocksdb calls this before closing).
    fn drop_all_cfs_internal(&mut self);
}

/// Column families created and dropped through `&mut self`; `cf_handle` lends a reference.
pub struct SingleThreaded {
    pub(crate) cfs: BTreeMap<String, ColumnFamily>,
}

/// Column families created and dropped through `&self`; `cf_handle` gives an
/// `Arc<BoundColumnFamily>` that borrows the database.
pub struct MultiThreaded {
    pub(crate) cfs: RwLock<BTreeMap<String, ColumnFamily>>,
}

impl ThreadMode for SingleThreaded {
    fn new_cf_map(cfs: BTreeMap<String, ColumnFamily>) -> Self {
        SingleThreaded { cfs }
    }

    fn get_handle(&self, name: &str) -> Option<ColumnFamily> {
        self.cfs.get(name).map(ColumnFamily::clone_handle)
    }

    fn insert_handle(&mut self, name: &str, cf: ColumnFamily) {
        self.cfs.insert(name.to_string(), cf);
    }

    fn remove_handle(&mut self, name: &str) {
        self.cfs.remove(name);
    }

    fn drop_all_cfs_internal(&mut self) {
        self.cfs.clear();
    }
}

impl MultiThreaded {
    fn map(&self) -> parking_lot::RwLockReadGuard<'_, BTreeMap<String, ColumnFamily>> {
        self.cfs.read()
    }

    fn map_mut(&self) -> parking_lot::RwLockWriteGuard<'_, BTreeMap<String, ColumnFamily>> {
        self.cfs.write()
    }
}

impl ThreadMode for MultiThreaded {
    fn new_cf_map(cfs: BTreeMap<String, ColumnFamily>) -> Self {
        MultiThreaded { cfs: RwLock::new(cfs) }
    }

    fn get_handle(&self, name: &str) -> Option<ColumnFamily> {
        self.map().get(name).map(ColumnFamily::clone_handle)
    }

    fn insert_handle(&mut self, name: &str, cf: ColumnFamily) {
        self.map_mut().insert(name.to_string(), cf);
    }

    fn remove_handle(&mut self, name: &str) {
        self.map_mut().remove(name);
    }

    fn drop_all_cfs_internal(&mut self) {
        self.map_mut().clear();
    }
}

/// A column-family handle of a multi-threaded database, bound to the database's lifetime,
/// as rust-rocksdb's `BoundColumnFamily`. It stays usable after `drop_cf` (reads of a dropped
/// family fail with InvalidArgument) but not after the database.
pub struct BoundColumnFamily<'a> {
    pub(crate) cf: ColumnFamily,
    _db: PhantomData<&'a ()>,
}

impl AsColumnFamilyRef for BoundColumnFamily<'_> {
    fn cf_id(&self) -> u32 {
        self.cf.cf_id()
    }
}

impl BoundColumnFamily<'_> {
    pub fn name(&self) -> &str {
        self.cf.name()
    }
}

/// The handle type `cf_handle` returns, as rust-rocksdb's `ColumnFamilyRef`.
#[cfg(not(feature = "multi-threaded-cf"))]
pub type ColumnFamilyRef<'a> = &'a ColumnFamily;
/// The handle type `cf_handle` returns, as rust-rocksdb's `ColumnFamilyRef`.
#[cfg(feature = "multi-threaded-cf")]
pub type ColumnFamilyRef<'a> = Arc<BoundColumnFamily<'a>>;

impl<I: DBInner> DBCommon<SingleThreaded, I> {
    /// Creates a column family.
    pub fn create_cf<N: AsRef<str>>(&mut self, name: N, opts: &Options) -> Result<()> {
        self.create_cf_internal(name.as_ref(), opts)
    }

    /// Drops a column family: its data becomes unreachable and its files are removed.
    pub fn drop_cf(&mut self, name: &str) -> Result<()> {
        self.drop_cf_internal(name)
    }

    /// The handle of column family `name`, if it exists.
    pub fn cf_handle(&self, name: &str) -> Option<&ColumnFamily> {
        self.cfs.cfs.get(name)
    }
}

impl<I: DBInner> DBCommon<MultiThreaded, I> {
    /// Creates a column family.
    pub fn create_cf<N: AsRef<str>>(&self, name: N, opts: &Options) -> Result<()> {
        let name = name.as_ref();
        // Held across creation, so two threads creating one name cannot both succeed.
        let mut map = self.cfs.map_mut();
        if map.contains_key(name) {
            return Err(crate::Error::invalid_argument(format!("Column family already exists: {name}")));
        }
        let cf = self.create_cf_handle(name, opts)?;
        map.insert(name.to_string(), cf);
        Ok(())
    }

    /// Drops a column family. Handles already taken stay valid objects; using them fails.
    pub fn drop_cf(&self, name: &str) -> Result<()> {
        let mut map = self.cfs.map_mut();
        let cf = self.check_droppable(name, map.get(name))?;
        self.drop_cf_handle(&cf)?;
        map.remove(name);
        Ok(())
    }

    /// The handle of column family `name`, if it exists.
    pub fn cf_handle(&self, name: &str) -> Option<Arc<BoundColumnFamily<'_>>> {
        self.cfs.get_handle(name).map(|cf| Arc::new(BoundColumnFamily { cf, _db: PhantomData }))
    }
}

/// What snapshots and iterators need of the database they borrow, as rust-rocksdb's
/// `DBAccess`: implemented by every database kind.
pub trait DBAccess {
    #[doc(hidden)]
    fn snapshot_acquire(&self) -> u64;
    #[doc(hidden)]
    fn snapshot_release(&self, seq: u64);
    #[doc(hidden)]
    fn raw_iterator_impl(
        &self,
        cf: Option<u32>,
        readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'_, Self>
    where
        Self: Sized;

    fn get_opt<K: AsRef<[u8]>>(&self, key: K, readopts: &ReadOptions) -> Result<Option<Vec<u8>>>;

    fn get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>>;

    fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>>;

    fn get_pinned_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>>;

    fn multi_get_opt<K, I>(&self, keys: I, readopts: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>;

    fn multi_get_cf_opt<'b, K, I, W>(
        &self,
        keys_cf: I,
        readopts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = (&'b W, K)>,
        W: AsColumnFamilyRef + 'b;
}

impl<T: ThreadMode, I: DBInner> DBAccess for DBCommon<T, I> {
    fn snapshot_acquire(&self) -> u64 {
        self.inner.acquire_snapshot()
    }

    fn snapshot_release(&self, seq: u64) {
        self.inner.release_user_snapshot(seq)
    }

    fn raw_iterator_impl(
        &self,
        cf: Option<u32>,
        readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'_, Self> {
        match cf {
            None => DBCommon::raw_iterator_opt(self, readopts),
            Some(id) => DBCommon::raw_iterator_cf_opt(self, &crate::cf_ref::CfId(id), readopts),
        }
    }

    fn get_opt<K: AsRef<[u8]>>(&self, key: K, readopts: &ReadOptions) -> Result<Option<Vec<u8>>> {
        DBCommon::get_opt(self, key, readopts)
    }

    fn get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        DBCommon::get_cf_opt(self, cf, key, readopts)
    }

    fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        DBCommon::get_pinned_opt(self, key, readopts)
    }

    fn get_pinned_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        DBCommon::get_pinned_cf_opt(self, cf, key, readopts)
    }

    fn multi_get_opt<K, It>(&self, keys: It, readopts: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        It: IntoIterator<Item = K>,
    {
        DBCommon::multi_get_opt(self, keys, readopts)
    }

    fn multi_get_cf_opt<'b, K, It, W>(
        &self,
        keys_cf: It,
        readopts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        It: IntoIterator<Item = (&'b W, K)>,
        W: AsColumnFamilyRef + 'b,
    {
        DBCommon::multi_get_cf_opt(self, keys_cf, readopts)
    }
}

impl<T: ThreadMode> std::fmt::Debug for DBWithThreadMode<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RocksDB {{ path: {} }}", self.path().display())
    }
}
