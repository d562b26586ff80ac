//! Replaying MANIFEST records into a `RecoveredManifest`: RocksDB 7.8.3's
//! `VersionEditHandler` without table loading (see manifest.rs and docs/manifest.md).

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::version::builder::FileSetBuilder;
use crate::version::edit::VersionEdit;
use crate::version::manifest::{RecoveredCf, RecoveredManifest, DEFAULT_COLUMN_FAMILY_NAME};

#[derive(Clone)]
struct CfState {
    name: String,
    comparator: Option<String>,
    log_number: u64,
    files: FileSetBuilder,
    full_history_ts_low: Vec<u8>,
    persist_user_defined_timestamps: Option<bool>,
}

impl CfState {
    fn new(name: String, log_number: u64) -> CfState {
        CfState {
            name,
            comparator: None,
            log_number,
            files: FileSetBuilder::new(),
            full_history_ts_low: Vec::new(),
            persist_user_defined_timestamps: None,
        }
    }
}

/// The replay state: RocksDB's VersionEditHandler without table loading.
pub struct Replay {
    cfs: BTreeMap<u32, CfState>,
    group: Vec<VersionEdit>,
    group_size: usize,
    log_number: Option<u64>,
    next_file_number: Option<u64>,
    last_sequence: Option<u64>,
    prev_log_number: u64,
    min_log_number_to_keep: u64,
    max_column_family: u32,
    db_id: Option<String>,
    wals: BTreeMap<u64, Option<u64>>,
    min_wal_to_keep: u64,
    /// Best-efforts recovery: each family's state at the last point where all its files
    /// were present (`add_point_in_time`); `finish` recovers these instead of the latest.
    point_in_time: Option<BTreeMap<u32, CfState>>,
}

/// Best-efforts recovery's test of one family's files (RocksDB's
/// `VersionEditHandlerPointInTime`): `(family id, its tables by level, its blob files)`,
/// true when every one of them is present as the MANIFEST records it.
pub type FilesPresent<'a> = dyn Fn(u32, &[(u32, crate::version::edit::FileMetaData)], &crate::version::blob_files::BlobFiles) -> bool
    + 'a;

impl Replay {
    pub fn new() -> Replay {
        let mut cfs = BTreeMap::new();
        cfs.insert(0, CfState::new(DEFAULT_COLUMN_FAMILY_NAME.to_string(), 0));
        Replay {
            cfs,
            group: Vec::new(),
            group_size: 0,
            log_number: None,
            next_file_number: None,
            last_sequence: None,
            prev_log_number: 0,
            min_log_number_to_keep: 0,
            max_column_family: 0,
            db_id: None,
            wals: BTreeMap::new(),
            point_in_time: None,
            min_wal_to_keep: 0,
        }
    }

    /// Takes one edit, buffering atomic groups until they are complete.
    pub fn add(&mut self, edit: VersionEdit) -> Result<()> {
        if !edit.is_in_atomic_group {
            if !self.group.is_empty() {
                return Err(Error::corruption("corrupted atomic group"));
            }
            return self.apply(&edit);
        }
        if self.group.is_empty() {
            self.group_size = edit.remaining_entries as usize + 1;
        }
        if self.group.len() + 1 + edit.remaining_entries as usize != self.group_size {
            return Err(Error::corruption("corrupted atomic group"));
        }
        self.group.push(edit);
        if self.group.len() == self.group_size {
            for e in std::mem::take(&mut self.group) {
                self.apply(&e)?;
            }
        }
        Ok(())
    }

    /// True while an atomic group is buffered, not yet complete.
    pub fn in_group(&self) -> bool {
        !self.group.is_empty()
    }

    /// [`add`](Self::add) for best-efforts recovery: after each edit (each whole atomic
    /// group) the families it changed whose files are all `present` are remembered at that
    /// point in time; `finish` recovers each family at its last such point (RocksDB's
    /// `VersionEditHandlerPointInTime`). A family is complete when created (it has no files).
    pub fn add_point_in_time(&mut self, edit: VersionEdit, present: &FilesPresent<'_>) -> Result<()> {
        let mut touched: Vec<u32> = self.group.iter().map(|e| e.column_family).collect();
        touched.push(edit.column_family);
        let dropped = edit.is_column_family_drop.then_some(edit.column_family);
        self.add(edit)?;
        if !self.group.is_empty() {
            return Ok(());
        }
        let pit = self.point_in_time.get_or_insert_with(|| {
            // The default family exists before any edit, with no files.
            let mut m = BTreeMap::new();
            m.insert(0, CfState::new(DEFAULT_COLUMN_FAMILY_NAME.to_string(), 0));
            m
        });
        if let Some(id) = dropped {
            pit.remove(&id);
        }
        touched.sort_unstable();
        touched.dedup();
        for id in touched {
            if let Some(cf) = self.cfs.get(&id) {
                if present(id, &cf.files.files(), &cf.files.blob_files()) {
                    pit.insert(id, cf.clone());
                }
            }
        }
        Ok(())
    }

    fn apply(&mut self, edit: &VersionEdit) -> Result<()> {
        let id = edit.column_family;
        let cf_known = if let Some(name) = &edit.column_family_add {
            if self.cfs.contains_key(&id) {
                return Err(Error::corruption(format!(
                    "MANIFEST adding the same column family twice: {name}"
                )));
            }
            self.cfs.insert(id, CfState::new(name.clone(), edit.log_number.unwrap_or(0)));
            self.max_column_family = self.max_column_family.max(id);
            true
        } else if edit.is_column_family_drop {
            if self.cfs.remove(&id).is_none() {
                return Err(Error::corruption("MANIFEST - dropping non-existing column family"));
            }
            false
        } else if !edit.wal_additions.is_empty() {
            self.add_wals(edit)?;
            false
        } else if let Some(n) = edit.wal_deletion {
            if n > self.min_wal_to_keep {
                self.min_wal_to_keep = n;
                self.wals = self.wals.split_off(&n);
            }
            false
        } else {
            let cf = self
                .cfs
                .get_mut(&id)
                .ok_or_else(|| Error::corruption("MANIFEST record referencing unknown column family"))?;
            cf.files.apply(edit)?;
            true
        };
        self.extract_info(edit, cf_known);
        Ok(())
    }

    fn add_wals(&mut self, edit: &VersionEdit) -> Result<()> {
        for w in &edit.wal_additions {
            if w.number < self.min_wal_to_keep {
                continue;
            }
            match self.wals.get_mut(&w.number) {
                None => {
                    self.wals.insert(w.number, w.synced_size);
                }
                Some(_) if w.synced_size.is_none() => {
                    return Err(Error::corruption(format!(
                        "WalSet::AddWal: WAL {} is created more than once",
                        w.number
                    )));
                }
                Some(old) => *old = (*old).max(w.synced_size),
            }
        }
        Ok(())
    }

    /// The bookkeeping of RocksDB's ExtractInfoFromVersionEdit.
    fn extract_info(&mut self, edit: &VersionEdit, cf_known: bool) {
        if let Some(id) = &edit.db_id {
            self.db_id = Some(id.clone());
        }
        if let Some(cf) = self.cfs.get_mut(&edit.column_family).filter(|_| cf_known) {
            if let Some(n) = edit.log_number {
                // RocksDB ignores (with a warning) a log number that goes backwards.
                if n >= cf.log_number {
                    cf.log_number = n;
                    self.log_number = Some(n);
                }
            }
            if let Some(c) = &edit.comparator {
                cf.comparator = Some(c.clone());
                // RocksDB records the flag in the edit naming the comparator; an edit
                // without it (older RocksDB) means the default, true.
                cf.persist_user_defined_timestamps =
                    Some(edit.persist_user_defined_timestamps.unwrap_or(true));
            }
            if let Some(ts) = &edit.full_history_ts_low {
                cf.full_history_ts_low = ts.clone();
            }
            if let Some(p) = edit.persist_user_defined_timestamps {
                cf.persist_user_defined_timestamps = Some(p);
            }
        }
        if let Some(n) = edit.prev_log_number {
            self.prev_log_number = n;
        }
        if let Some(n) = edit.next_file_number {
            self.next_file_number = Some(n);
        }
        if let Some(n) = edit.max_column_family {
            self.max_column_family = self.max_column_family.max(n);
        }
        if let Some(n) = edit.min_log_number_to_keep {
            self.min_log_number_to_keep = self.min_log_number_to_keep.max(n);
        }
        if let Some(n) = edit.last_sequence {
            self.last_sequence = Some(n);
        }
    }

    pub fn finish(mut self, manifest_number: u64, manifest_size: u64) -> Result<RecoveredManifest> {
        if let Some(pit) = self.point_in_time.take() {
            // Each live family as of its last complete point in time (created complete, so
            // every live family has one).
            for (id, cf) in self.cfs.iter_mut() {
                if let Some(at) = pit.get(id) {
                    *cf = at.clone();
                }
            }
        }
        let (Some(_), Some(next_file_number), Some(last_sequence)) =
            (self.log_number, self.next_file_number, self.last_sequence)
        else {
            let mut missing = Vec::new();
            if self.log_number.is_none() {
                missing.push("log_file_number");
            }
            if self.next_file_number.is_none() {
                missing.push("next_file_number");
            }
            if self.last_sequence.is_none() {
                missing.push("last_sequence");
            }
            return Err(Error::corruption(format!("no {} entry in MANIFEST", missing.join(", "))));
        };
        let column_families = self
            .cfs
            .into_iter()
            .map(|(id, cf)| {
                let files = cf.files.files();
                let blob_files = cf.files.blob_files();
                let compact_cursors = cf.files.compact_cursors();
                (
                    id,
                    RecoveredCf {
                        name: cf.name,
                        comparator: cf.comparator,
                        log_number: cf.log_number,
                        files,
                        full_history_ts_low: cf.full_history_ts_low,
                        persist_user_defined_timestamps: cf.persist_user_defined_timestamps,
                        blob_files,
                        compact_cursors,
                    },
                )
            })
            .collect();
        Ok(RecoveredManifest {
            manifest_number,
            manifest_size,
            next_file_number,
            last_sequence,
            prev_log_number: self.prev_log_number,
            min_log_number_to_keep: self.min_log_number_to_keep,
            max_column_family: self.max_column_family,
            db_id: self.db_id,
            column_families,
            wals: self.wals,
            last_valid_record_end: 0,
            min_wal_to_keep: self.min_wal_to_keep,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::key::{make_internal_key, ValueType};
    use crate::version::edit::FileMetaData;

    fn flush_edit(number: u64, key: &[u8], seq: u64) -> VersionEdit {
        let mut e = VersionEdit {
            log_number: Some(number),
            next_file_number: Some(number + 1),
            ..Default::default()
        };
        e.last_sequence = Some(seq);
        e.new_files.push((
            0,
            FileMetaData {
                number,
                file_size: 100 + number,
                smallest: make_internal_key(key, seq, ValueType::Value),
                largest: make_internal_key(key, seq, ValueType::Value),
                smallest_seqno: seq,
                largest_seqno: seq,
                ..Default::default()
            },
        ));
        e
    }

    fn numbers(r: &RecoveredManifest, cf: u32) -> Vec<u64> {
        r.column_families[&cf].files.iter().map(|(_, f)| f.number).collect()
    }

    #[test]
    fn point_in_time_replay_stops_each_family_at_its_last_complete_edit() {
        let missing = [8u64];
        let present = |_: u32, files: &[(u32, FileMetaData)], _: &crate::version::blob_files::BlobFiles| {
            files.iter().all(|(_, f)| !missing.contains(&f.number))
        };
        let mut r = Replay::new();
        r.add_point_in_time(flush_edit(5, b"a", 1), &present).unwrap();
        r.add_point_in_time(flush_edit(8, b"b", 2), &present).unwrap();
        // Another family, created after and complete at its last edit.
        let add =
            VersionEdit { column_family: 1, column_family_add: Some("other".into()), ..Default::default() };
        r.add_point_in_time(add, &present).unwrap();
        let mut e = flush_edit(9, b"c", 3);
        e.column_family = 1;
        r.add_point_in_time(e, &present).unwrap();
        let got = r.finish(10, 0).unwrap();
        assert_eq!(numbers(&got, 0), vec![5], "the default family before table 8");
        assert_eq!(numbers(&got, 1), vec![9]);
        assert_eq!((got.next_file_number, got.last_sequence), (10, 3), "the latest counters");

        // A plain replay keeps everything.
        let mut r = Replay::new();
        r.add(flush_edit(5, b"a", 1)).unwrap();
        r.add(flush_edit(8, b"b", 2)).unwrap();
        assert_eq!(numbers(&r.finish(10, 0).unwrap(), 0), vec![5, 8]);
    }
}
