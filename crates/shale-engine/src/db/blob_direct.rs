//! The database's side of blob direct write (`crate::blob_direct` writes the files): which
//! families have blob files no flush has added yet, and the sealing of a flushed memtable's
//! files for its VersionEdit.

use super::cf::CfHandle;
use super::{ActiveMems, DbInner, DbState};
use crate::blob_direct::*;
use crate::error::Result;
use crate::version::edit::BlobFileAddition;

impl DbInner {
    /// RocksDB's `HasInFlightBlobDirectWriteFilesWithLockHeld`: a direct-write family has
    /// blob files no flush has added to the MANIFEST yet.
    pub(crate) fn has_in_flight_direct_blobs(&self, st: &DbState) -> bool {
        st.cfs.values().any(|c| {
            c.handle.direct_write.as_ref().is_some_and(|w| w.has_files())
                || c.imm.iter().any(|(m, _)| !m.direct_blobs.lock().is_empty())
        })
    }

    /// Seals the direct-write blob files of the memtables a flush writes (in place: a
    /// failed flush finds them sealed next time) and gives them for its VersionEdit.
    pub(crate) fn seal_direct_blobs(
        &self,
        mems: &[std::sync::Arc<crate::memtable::MemTable>],
    ) -> Result<Vec<BlobFileAddition>> {
        let mut out = Vec::new();
        for m in mems {
            let mut g = m.direct_blobs.lock();
            if !g.is_empty() {
                out.extend(seal_for_flush(
                    &mut [&mut *g],
                    &self.blob_cache,
                    self.config.statistics.as_deref(),
                )?);
            }
        }
        Ok(out)
    }

    /// The write leader's step before the WAL write (RocksDB's
    /// `MaybeTransformBatchForBlobDirectWrite` over the group): in each batch of the group,
    /// the large values of direct-write families go to their blob files and the records
    /// become blob indexes; with `sync`, the files written to are synced first.
    pub(crate) fn direct_write_blobs(
        &self,
        mems: &ActiveMems,
        batches: &mut [&mut Option<crate::batch::Batch>],
        sync: bool,
    ) -> Result<()> {
        let new_number = || self.versions.new_file_number();
        let io = BlobIo {
            fs: &*self.fs,
            dir: &self.path,
            new_file_number: &new_number,
            cache: &self.blob_cache,
            stats: self.config.statistics.as_deref(),
        };
        let mut touched: Vec<std::sync::Arc<DirectBlobWriter>> = Vec::new();
        for slot in batches.iter_mut() {
            // A two-phase commit's batch (its WAL part cut at `wal_end`) stays as it is.
            let Some(batch) = slot.as_ref().filter(|b| b.wal_end.is_none()) else { continue };
            let mut handles: Vec<(u32, std::sync::Arc<CfHandle>)> = Vec::new();
            let transformed = batch.with_blob_indexes(&mut |cf_id, value_type, key, value| {
                let Some(Some(m)) = mems.get(cf_id as usize) else { return Ok(None) };
                let Some(w) = m.direct.as_ref() else { return Ok(None) };
                let handle = match handles.iter().find(|(id, _)| *id == cf_id) {
                    Some((_, h)) => h.clone(),
                    None => {
                        let Some(h) = self.cf_handle_by_id(cf_id) else { return Ok(None) };
                        handles.push((cf_id, h.clone()));
                        h
                    }
                };
                let config = handle.config();
                let warm = config
                    .blob_cache
                    .as_ref()
                    .filter(|_| config.blob.prepopulate_cache)
                    .map(|c| (c, self.blob_cache.session()));
                let index = if value_type == crate::key::ValueType::WideColumnEntity {
                    w.write_entity(&io, &config.blob, key, value, warm)?
                } else {
                    w.write_blob(&io, &config.blob, key, value, warm)?
                };
                if index.is_some() && !touched.iter().any(|t| std::sync::Arc::ptr_eq(t, w)) {
                    touched.push(w.clone());
                }
                Ok(index)
            })?;
            if let Some(t) = transformed {
                **slot = Some(t);
            }
        }
        if sync {
            for w in &touched {
                w.sync_open_files(io.stats)?;
            }
        }
        Ok(())
    }
}
