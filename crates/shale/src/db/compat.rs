//! Small rust-rocksdb conveniences over the core API: `flush_cfs_opt`, `get_db_identity`.

use super::{DBCommon, DBInner, ThreadMode};
use crate::cf_ref::AsColumnFamilyRef;
use crate::db::HandleOf;
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

    /// The database's unique id: the one open settled on (RocksDB's `GetDbIdentity` returns
    /// its `db_id_`; with `write_identity_file` false there is no IDENTITY file), else, for a
    /// database opened without one (read-only), the IDENTITY file without its newline.
    pub fn get_db_identity(&self) -> Result<Vec<u8>> {
        if let Some(ids) = &self.inner.config.table_ids {
            return Ok(ids.db_id.as_bytes().to_vec());
        }
        let path = super::filename::identity_file(&self.inner.path);
        let mut id = crate::fs::read_file(&*self.inner.fs, &path)?;
        if id.last() == Some(&b'\n') {
            id.pop();
        }
        Ok(id)
    }
}
