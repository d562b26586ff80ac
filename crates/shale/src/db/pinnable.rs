//! `get_pinned` (a value that derefs to `[u8]`, as rust-rocksdb's `DBPinnableSlice`) and
//! `key_may_exist`.

use std::marker::PhantomData;
use std::ops::Deref;

use super::{DBCommon, DBInner, ThreadMode};
use crate::cf_ref::AsColumnFamilyRef;
use crate::error::Result;
use crate::options::ReadOptions;

/// A value read by `get_pinned`. rust-rocksdb pins RocksDB's block; Shale owns a copy, which
/// reads the same through `Deref<Target = [u8]>` and `AsRef<[u8]>`.
pub struct DBPinnableSlice<'a> {
    value: Vec<u8>,
    _db: PhantomData<&'a ()>,
}

impl Deref for DBPinnableSlice<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.value
    }
}

impl AsRef<[u8]> for DBPinnableSlice<'_> {
    fn as_ref(&self) -> &[u8] {
        &self.value
    }
}

impl std::fmt::Debug for DBPinnableSlice<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("DBPinnableSlice").field(&self.value).finish()
    }
}

pub(crate) fn pin<'a>(v: Option<Vec<u8>>) -> Option<DBPinnableSlice<'a>> {
    v.map(|value| DBPinnableSlice { value, _db: PhantomData })
}

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    pub fn get_pinned<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<DBPinnableSlice<'_>>> {
        self.get(key).map(pin)
    }

    pub fn get_pinned_opt<K: AsRef<[u8]>>(
        &self,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.get_opt(key, readopts).map(pin)
    }

    pub fn get_pinned_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.get_cf(cf, key).map(pin)
    }

    pub fn get_pinned_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> Result<Option<DBPinnableSlice<'_>>> {
        self.get_cf_opt(cf, key, readopts).map(pin)
    }

    /// False only when the key is certainly absent. Shale answers with a full read, so it is
    /// exact (an error counts as "may exist", as RocksDB's answer on I/O trouble).
    pub fn key_may_exist<K: AsRef<[u8]>>(&self, key: K) -> bool {
        self.key_may_exist_opt(key, &ReadOptions::default())
    }

    pub fn key_may_exist_opt<K: AsRef<[u8]>>(&self, key: K, readopts: &ReadOptions) -> bool {
        !matches!(self.get_opt(key, readopts), Ok(None))
    }

    pub fn key_may_exist_cf<K: AsRef<[u8]>>(&self, cf: &impl AsColumnFamilyRef, key: K) -> bool {
        self.key_may_exist_cf_opt(cf, key, &ReadOptions::default())
    }

    pub fn key_may_exist_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> bool {
        !matches!(self.get_cf_opt(cf, key, readopts), Ok(None))
    }
}

#[cfg(test)]
mod tests {
    use crate::{Options, DB};

    #[test]
    fn pinned_values_and_key_may_exist() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = Options::default();
        o.create_if_missing(true);
        let db = DB::open(&o, dir.path()).unwrap();
        db.put(b"k", b"value").unwrap();
        let p = db.get_pinned(b"k").unwrap().unwrap();
        assert_eq!(&*p, b"value");
        assert_eq!(p.as_ref(), b"value");
        assert!(db.get_pinned(b"x").unwrap().is_none());
        assert!(db.key_may_exist(b"k"));
        assert!(!db.key_may_exist(b"x"));
        db.delete(b"k").unwrap();
        assert!(!db.key_may_exist(b"k"));
    }
}
