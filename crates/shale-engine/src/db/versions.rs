//! The one install path for a change of the LSM shape (RocksDB's `LogAndApply`): flushes,
//! compactions, family creation and drop, error recovery all come through `log_and_apply`.
//!
//! 1. With the DB mutex: wait until no other change is in flight (`manifest_busy`), take
//!    the base Version of each family the edits touch, and (only when a new MANIFEST is
//!    due) the snapshot of the whole state that starts it.
//! 2. Without the DB mutex: build the new Versions and append the edits to the MANIFEST
//!    with one fsync (`VersionSet::write`).
//! 3. With the DB mutex again: make the new Versions current, run the caller's `install`
//!    (memtables flushed, families added or removed), publish new SuperVersions, record the
//!    tables no Version names any more (`obsolete.rs` deletes them once no reader holds
//!    them), recompute write stalls, and queue the families for compaction if they need it.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::MutexGuard;

use super::error_handler::BgErrorReason;
use super::{write_controller, CfState, DbInner, DbState};
use crate::error::Result;
use crate::version::edit::VersionEdit;
use crate::version::set::VersionSet;
use crate::version::Version;

impl DbInner {
    /// Makes `edits` durable and installs them; see the module comment. `install` runs under
    /// the DB mutex after the new Versions are current and before SuperVersions are
    /// published. On failure nothing is installed and the error is a background error.
    pub fn log_and_apply(
        &self,
        st: &mut MutexGuard<'_, DbState>,
        mut edits: Vec<VersionEdit>,
        install: impl FnOnce(&mut DbState),
    ) -> Result<()> {
        while st.manifest_busy {
            self.manifest_cv.wait(st);
        }
        st.manifest_busy = true;
        if self.config.track_and_verify_wals_in_manifest {
            // Closed WALs a sync found synced (`wal_sync.rs`).
            self.take_synced_wal_additions(st);
            super::wal_tracking::add_wal_edits(st, &mut edits);
        }
        // A family with timestamps records the boundaries of its tables without them when the
        // tables hold none (RocksDB's `EncodeFileBoundaries`).
        for e in edits.iter_mut() {
            let ts = st.cfs.get(&e.column_family).map_or(0, |cf| cf.handle.icmp.timestamp_size());
            for (_, f) in e.new_files.iter_mut().filter(|(_, f)| !f.user_defined_timestamps_persisted) {
                f.stripped_ts_size = ts;
            }
        }
        // Families whose files change, with their base Versions.
        let mut bases: BTreeMap<u32, Arc<Version>> = BTreeMap::new();
        for e in &edits {
            if e.new_files.is_empty()
                && e.deleted_files.is_empty()
                && e.blob_file_additions.is_empty()
                && e.blob_file_garbages.is_empty()
            {
                continue;
            }
            if let Some(cf) = st.cfs.get(&e.column_family) {
                bases.entry(e.column_family).or_insert_with(|| cf.current.clone());
            }
        }
        let handles: BTreeMap<u32, Arc<super::cf::CfHandle>> =
            bases.keys().filter_map(|id| st.cfs.get(id).map(|cf| (*id, cf.handle.clone()))).collect();
        let snapshot = self.versions.needs_new_manifest().then(|| self.snapshot_edits(st));
        let result = super::unlocked(st, || -> Result<Vec<(u32, Arc<Version>)>> {
            let mut built = Vec::with_capacity(bases.len());
            for (id, base) in &bases {
                let mine: Vec<&VersionEdit> = edits.iter().filter(|e| e.column_family == *id).collect();
                let v = VersionSet::build(base, &mine)?;
                // The counts the picker weighs, read now, without the mutex (RocksDB's
                // `PrepareAppend` in `ProcessManifestWrites`; `file_stats.rs`).
                if let Some(h) = handles.get(id) {
                    super::file_stats::init_file_stats(&self.table_cache, h, &v, Some(&self.info_log));
                }
                built.push((*id, v));
            }
            self.versions.write(&mut edits, snapshot)?;
            Ok(built)
        });
        st.manifest_busy = false;
        self.manifest_cv.notify_one();
        let built = match result {
            Ok(b) => b,
            Err(e) => {
                self.set_bg_error_in(st, e.clone(), BgErrorReason::ManifestWrite);
                return Err(e);
            }
        };
        for (id, version) in built {
            let Some(cf) = st.cfs.get_mut(&id) else { continue };
            let old = cf.current.clone();
            let handle = cf.handle.clone();
            let dropped_blobs: Vec<(u64, std::sync::Weak<crate::version::edit::BlobFileAddition>)> = old
                .blob_files()
                .iter()
                .filter(|(n, _)| !version.blob_files().contains_key(n))
                .map(|(n, b)| (*n, Arc::downgrade(&b.shared)))
                .collect();
            cf.set_current(version);
            // Tables this edit removes (and does not re-add, as a trivial move does) are
            // deleted once no Version holds them.
            let mut gone = Vec::new();
            // RocksDB ignores `uncache_aggressiveness` with mmap reads.
            let uncache =
                if self.config.allow_mmap_reads { 0 } else { handle.config().uncache_aggressiveness };
            for e in edits.iter().filter(|e| e.column_family == id) {
                for (level, number) in &e.deleted_files {
                    if e.new_files.iter().any(|(_, f)| f.number == *number) {
                        continue;
                    }
                    if let Some(f) = old.files(*level as usize).iter().find(|f| f.number == *number) {
                        self.table_cache.mark_obsolete(f, uncache);
                        gone.push((*number, Arc::downgrade(f), handle.table_path(&self.path, f)));
                    }
                }
            }
            st.obsolete_tables.extend(gone);
            // Blob files the new Version dropped go once no Version holds them.
            st.obsolete_blobs.extend(dropped_blobs);
        }
        install(st);
        self.note_obsolete(st);
        let touched: Vec<u32> = {
            let mut t: Vec<u32> = edits.iter().map(|e| e.column_family).collect();
            t.sort_unstable();
            t.dedup();
            t
        };
        for id in touched {
            if let Some(cf) = st.cfs.get_mut(&id) {
                cf.install_super_version();
            }
            self.stall_changed(st, id);
            self.schedule_compaction(st, id);
        }
        Ok(())
    }

    /// Recomputes family `id`'s write-stall condition; wakes stalled writers when it eases.
    pub fn stall_changed(&self, st: &mut DbState, id: u32) {
        if write_controller::recalculate(st, id) {
            self.done_cv.notify_all();
        }
        self.update_write_attention(st);
    }

    /// The records that start a new MANIFEST: per family one naming it (added, for
    /// non-default ones) with its comparator, then one with its files and log number; last
    /// the file numbering, last sequence and max column family.
    pub fn snapshot_edits(&self, st: &DbState) -> Vec<VersionEdit> {
        let mut edits = snapshot_edits(
            &st.cfs,
            self.versions.next_file_number(),
            self.versions.last_sequence(),
            st.max_column_family,
            self.versions.db_id(),
        );
        // A new MANIFEST starts with the WALs it tracks (RocksDB's WriteCurrentStateToManifest).
        if !st.tracked_wals.is_empty() {
            let wal_additions = st
                .tracked_wals
                .iter()
                .map(|(&number, &synced_size)| crate::version::edit::WalAddition { number, synced_size })
                .collect();
            // After the DB id record, which comes first as in RocksDB.
            let at = usize::from(self.versions.db_id().is_some());
            edits.insert(at, VersionEdit { wal_additions, ..Default::default() });
        }
        edits
    }
}

/// See `DbInner::snapshot_edits`.
pub fn snapshot_edits(
    cfs: &BTreeMap<u32, CfState>,
    next_file_number: u64,
    last_sequence: u64,
    max_column_family: u32,
    db_id: Option<&str>,
) -> Vec<VersionEdit> {
    let mut edits = Vec::new();
    // RocksDB starts each MANIFEST with the DB id (with `write_dbid_to_manifest`, its default).
    if let Some(id) = db_id {
        edits.push(VersionEdit { db_id: Some(id.to_string()), ..Default::default() });
    }
    for (id, cf) in cfs {
        // Recovery (RocksDB's and ours) takes nothing but the family from an edit that adds
        // a family, so the files and log number go in an edit of their own.
        let mut add = VersionEdit { column_family: *id, ..Default::default() };
        if *id != 0 {
            add.column_family_add = Some(cf.handle.name.clone());
        }
        add.comparator = Some(cf.handle.icmp.user_comparator().name().to_string());
        // RocksDB records the flag in the edit that names the comparator.
        add.persist_user_defined_timestamps = Some(cf.handle.config().persist_user_defined_timestamps);
        edits.push(add);
        let mut e = VersionEdit { column_family: *id, ..Default::default() };
        e.log_number = Some(cf.log_number);
        let ts_low = cf.handle.full_history_ts_low();
        if !ts_low.is_empty() {
            e.full_history_ts_low = Some(ts_low);
        }
        for (level, f) in cf.current.all_files() {
            e.new_files.push((level, (**f).clone()));
        }
        // RocksDB's WriteCurrentStateToManifest: `edit.SetCompactCursors`.
        e.compact_cursors = cf.current.compact_cursors().iter().map(|(l, k)| (*l, k.clone())).collect();
        for b in cf.current.blob_files().values() {
            e.blob_file_additions.push((*b.shared).clone());
            if b.garbage_blob_count > 0 || b.garbage_blob_bytes > 0 {
                e.blob_file_garbages.push(crate::version::edit::BlobFileGarbage {
                    number: b.number(),
                    garbage_blob_count: b.garbage_blob_count,
                    garbage_blob_bytes: b.garbage_blob_bytes,
                });
            }
        }
        edits.push(e);
    }
    edits.push(VersionEdit {
        next_file_number: Some(next_file_number),
        last_sequence: Some(last_sequence),
        max_column_family: Some(max_column_family),
        prev_log_number: Some(0),
        ..Default::default()
    });
    edits
}
