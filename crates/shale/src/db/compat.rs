//! Small rust-rocksdb conveniences over the core API: `flush_cfs_opt`, `get_db_identity`.

use super::{DBCommon, DBInner, ThreadMode};
use crate::cf_ref::AsColumnFamilyRef;
use crate::error::Result;
use crate::options::FlushOptions;

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// Flushes each of `cfs`: one after another, or, with `atomic_flush`, all together (their
    /// memtables switched at once and installed by one MANIFEST write).
    pub fn flush_cfs_opt(&self, cfs: &[&impl AsColumnFamilyRef], opts: &FlushOptions) -> Result<()> {
        if self.inner.config.atomic_flush {
            let mut ids = Vec::with_capacity(cfs.len());
            for cf in cfs {
                ids.push(self.inner.handle_of(*cf)?.id);
            }
            return self.inner.flush_families_atomically(&ids, opts.wait);
        }
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
