//! Small rust-rocksdb conveniences over the core API: `open_cf_with_opts`,
//! `full_iterator_cf`, `flush_cfs_opt`, `get_db_identity`.

use std::path::Path;

use super::cf::ColumnFamilyDescriptor;
use super::iterator::{DBIterator, IteratorMode};
use super::DB;
use crate::cf_ref::AsColumnFamilyRef;
use crate::error::Result;
use crate::options::{FlushOptions, Options};

impl DB {
    /// Opens the database with column families given as `(name, options)` pairs.
    pub fn open_cf_with_opts<P, I, N>(opts: &Options, path: P, cfs: I) -> Result<DB>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = (N, Options)>,
        N: AsRef<str>,
    {
        let descs = cfs.into_iter().map(|(name, o)| ColumnFamilyDescriptor::new(name.as_ref(), o));
        DB::open_cf_descriptors(opts, path, descs)
    }

    /// An iterator over the whole of `cf` (Shale has no prefix seek, so every iterator is
    /// a total-order one).
    pub fn full_iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf: &impl AsColumnFamilyRef,
        mode: IteratorMode,
    ) -> DBIterator<'b> {
        self.iterator_cf(cf, mode)
    }

    /// Flushes each of `cfs` (one after another, as RocksDB without atomic_flush).
    pub fn flush_cfs_opt(&self, cfs: &[&impl AsColumnFamilyRef], opts: &FlushOptions) -> Result<()> {
        for cf in cfs {
            self.flush_cf_opt(*cf, opts)?;
        }
        Ok(())
    }

    /// The database's unique id: the IDENTITY file without its trailing newline.
    pub fn get_db_identity(&self) -> Result<Vec<u8>> {
        let path = super::filename::identity_file(&self.inner.path);
        let mut id = crate::fs::read_file(&*self.inner.fs, &path)?;
        if id.last() == Some(&b'\n') {
            id.pop();
        }
        Ok(id)
    }
}
