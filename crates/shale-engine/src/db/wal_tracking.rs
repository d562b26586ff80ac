//! `track_and_verify_wals_in_manifest` (RocksDB's WalSet, db/wal_edit.cc): the MANIFEST
//! records which WALs are live and how many bytes of each were synced, so an open can tell
//! a WAL that went missing or was cut short from one that was never written.
//!
//! ```text
//! WAL rolled (its bytes synced)     -> WalAddition { number, synced size }  (tag 8199)
//! flush installed, min log rises    -> WalDeletion { WALs below number }    (tag 8200)
//! new MANIFEST                      -> WalAddition for every WAL still tracked
//! open                              -> every tracked WAL with a synced size must be on
//!                                      disk and at least that long, else Corruption
//! ```
//! The records are edits of their own, appended to the edits of the MANIFEST write that
//! follows (`versions.rs::log_and_apply`). An open replays and flushes every WAL into a new
//! MANIFEST, which then tracks none (RocksDB's `DeleteWalsBefore(max WAL + 1)` at open).

use std::collections::BTreeMap;
use std::path::Path;

use super::DbState;
use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::version::edit::VersionEdit;

/// RocksDB's `WalSet::CheckWals`, with its messages.
pub fn check_wals(
    fs: &dyn FileSystem,
    dir: &Path,
    tracked: &BTreeMap<u64, Option<u64>>,
    on_disk: &[u64],
) -> Result<()> {
    for (&number, &synced) in tracked {
        // Never synced: the file may not have reached the directory.
        let Some(synced) = synced else { continue };
        if !on_disk.contains(&number) {
            return Err(Error::corruption(format!("Missing WAL with log number: {number}.")));
        }
        let size = fs.file_size(&super::filename::wal_file(dir, number))?;
        if size < synced {
            return Err(Error::corruption(format!(
                "Size mismatch: WAL (log number: {number}) in MANIFEST is {synced} bytes , but actually is {size} bytes on disk."
            )));
        }
    }
    Ok(())
}

/// Appends the WAL records due to the MANIFEST write of `edits` (DB mutex held): additions
/// for WALs closed since the last write, and a deletion when the smallest log number any
/// family needs after `edits` has risen.
pub fn add_wal_edits(st: &mut DbState, edits: &mut Vec<VersionEdit>) {
    let additions = std::mem::take(&mut st.pending_wal_additions);
    // As `obsolete.rs`: a family holding nothing in memtables needs no WAL before the
    // current one.
    let wal_now = st.alive_wals.back().copied().unwrap_or(0);
    let min_log = st
        .cfs
        .iter()
        .map(|(id, c)| match edits.iter().rev().find(|e| e.column_family == *id).and_then(|e| e.log_number) {
            Some(l) => l,
            None if c.mem.is_empty() && c.imm.is_empty() => wal_now,
            None => c.log_number,
        })
        .min()
        .unwrap_or(0);
    for a in &additions {
        st.tracked_wals.insert(a.number, a.synced_size);
    }
    if !additions.is_empty() {
        edits.push(VersionEdit { wal_additions: additions, ..Default::default() });
    }
    if min_log > st.wals_deleted_before && st.tracked_wals.keys().next().is_some_and(|&w| w < min_log) {
        st.wals_deleted_before = min_log;
        st.tracked_wals = st.tracked_wals.split_off(&min_log);
        edits.push(VersionEdit { wal_deletion: Some(min_log), ..Default::default() });
    }
}
