//! Applying version edits to a set of files.
//!
//! `VersionBuilder` starts from a `Version` and produces a new one; `FileSetBuilder` does the
//! same on plain `(level, FileMetaData)` pairs, for recovery before the column family's
//! comparator is known. Both follow RocksDB's rules: within one edit the deletions are
//! applied before the additions (so a file may move between levels in one edit); deleting a
//! file that is not on the named level, or adding a file number that is live, is Corruption.
//! A failed `apply` changes nothing.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::key::InternalKeyComparator;
use crate::version::blob_files::{apply_blob_edit, BlobFiles};
use crate::version::edit::{FileMetaData, VersionEdit};
use crate::version::version::Version;

/// Live files by number: (level, file).
#[derive(Clone, Default)]
struct LiveFiles<T> {
    by_number: HashMap<u64, (u32, T)>,
}

impl<T> LiveFiles<T> {
    fn apply(&mut self, edit: &VersionEdit, make: impl Fn(&FileMetaData) -> T) -> Result<()> {
        // Check everything first so that a failing edit leaves the set untouched.
        let deleted: HashSet<(u32, u64)> = edit.deleted_files.iter().copied().collect();
        for &(level, number) in &deleted {
            match self.by_number.get(&number) {
                Some((l, _)) if *l == level => {}
                found => {
                    let where_ = match found {
                        Some((l, _)) => format!("on level {l}"),
                        None => "not in the LSM tree".to_string(),
                    };
                    return Err(Error::corruption(format!(
                        "VersionBuilder: Cannot delete table file #{number} from level {level} since it is {where_}"
                    )));
                }
            }
        }
        let mut added: HashMap<u64, u32> = HashMap::new();
        for (level, f) in &edit.new_files {
            let live_level = match self.by_number.get(&f.number) {
                Some((l, _)) if !deleted.contains(&(*l, f.number)) => Some(*l),
                _ => added.get(&f.number).copied(),
            };
            if let Some(l) = live_level {
                return Err(Error::corruption(format!(
                    "VersionBuilder: Cannot add table file #{} to level {level} since it is already in the LSM tree on level {l}",
                    f.number
                )));
            }
            added.insert(f.number, *level);
        }
        for (_, number) in deleted {
            self.by_number.remove(&number);
        }
        for (level, f) in &edit.new_files {
            self.by_number.insert(f.number, (*level, make(f)));
        }
        Ok(())
    }
}

/// Applies edits to a base version and builds the resulting version.
#[derive(Clone)]
pub struct VersionBuilder {
    icmp: InternalKeyComparator,
    num_levels: usize,
    live: LiveFiles<Arc<FileMetaData>>,
    blobs: BlobFiles,
    cursors: BTreeMap<u32, Vec<u8>>,
}

impl VersionBuilder {
    pub fn new(base: &Version) -> VersionBuilder {
        let mut live = LiveFiles::default();
        for (level, f) in base.all_files() {
            live.by_number.insert(f.number, (level, f.clone()));
        }
        VersionBuilder {
            icmp: base.icmp().clone(),
            num_levels: base.num_levels(),
            live,
            blobs: base.blob_files().clone(),
            cursors: base.compact_cursors().clone(),
        }
    }

    /// Applies one edit's file deletions and additions (other fields are the caller's).
    pub fn apply(&mut self, edit: &VersionEdit) -> Result<()> {
        let mut blobs = self.blobs.clone();
        apply_blob_edit(&mut blobs, edit)?;
        self.live.apply(edit, |f| Arc::new(f.clone()))?;
        self.blobs = blobs;
        apply_compact_cursors(&mut self.cursors, edit);
        Ok(())
    }

    /// The version with every applied edit. Unchanged files are shared with the base.
    pub fn build(&self) -> Version {
        let files = self.live.by_number.values().map(|(l, f)| (*l, f.clone())).collect();
        Version::new(self.icmp.clone(), self.num_levels, files)
            .with_blob_files(&self.blobs)
            .with_compact_cursors(&self.cursors)
    }
}

/// Applies edits to plain file records (recovery, before a comparator is chosen).
#[derive(Clone, Default)]
pub struct FileSetBuilder {
    live: LiveFiles<FileMetaData>,
    blobs: BlobFiles,
    cursors: BTreeMap<u32, Vec<u8>>,
}

/// RocksDB's `ApplyCompactCursors`: an edit's `kCompactCursor` records replace the cursor of
/// their level (the last one recorded wins).
fn apply_compact_cursors(cursors: &mut BTreeMap<u32, Vec<u8>>, edit: &VersionEdit) {
    for (level, key) in &edit.compact_cursors {
        cursors.insert(*level, key.clone());
    }
}

impl FileSetBuilder {
    pub fn new() -> FileSetBuilder {
        FileSetBuilder::default()
    }

    pub fn apply(&mut self, edit: &VersionEdit) -> Result<()> {
        let mut blobs = self.blobs.clone();
        apply_blob_edit(&mut blobs, edit)?;
        self.live.apply(edit, FileMetaData::clone)?;
        self.blobs = blobs;
        apply_compact_cursors(&mut self.cursors, edit);
        Ok(())
    }

    /// The compact cursors recorded, by level (`compaction_pri` kRoundRobin).
    pub fn compact_cursors(&self) -> BTreeMap<u32, Vec<u8>> {
        self.cursors.clone()
    }

    /// The blob files the live files keep (RocksDB's rule, `blob_files.rs`).
    pub fn blob_files(&self) -> BlobFiles {
        crate::version::blob_files::retained_blob_files(
            &self.blobs,
            self.live.by_number.values().map(|(_, f)| f),
        )
    }

    /// The live files, ordered by level then file number.
    pub fn files(&self) -> Vec<(u32, FileMetaData)> {
        let mut v: Vec<(u32, FileMetaData)> = self.live.by_number.values().cloned().collect();
        v.sort_by_key(|(l, f)| (*l, f.number));
        v
    }

    pub fn is_empty(&self) -> bool {
        self.live.by_number.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::key::{bytewise_internal_comparator, make_internal_key, ValueType};

    fn f(number: u64, lo: &str, hi: &str) -> FileMetaData {
        FileMetaData {
            number,
            file_size: 100,
            smallest: make_internal_key(lo.as_bytes(), number, ValueType::Value),
            largest: make_internal_key(hi.as_bytes(), number, ValueType::Value),
            smallest_seqno: number,
            largest_seqno: number,
            ..FileMetaData::default()
        }
    }

    fn add(files: &[(u32, FileMetaData)]) -> VersionEdit {
        VersionEdit { new_files: files.to_vec(), ..VersionEdit::default() }
    }

    fn del(files: &[(u32, u64)]) -> VersionEdit {
        VersionEdit { deleted_files: files.to_vec(), ..VersionEdit::default() }
    }

    #[test]
    fn applies_flushes_and_compactions() {
        let base = Version::empty(bytewise_internal_comparator(), 4);
        let mut b = VersionBuilder::new(&base);
        b.apply(&add(&[(0, f(5, "a", "k")), (0, f(6, "c", "z"))])).unwrap();
        let v1 = b.build();
        assert_eq!(v1.files(0).iter().map(|f| f.number).collect::<Vec<_>>(), vec![6, 5]);
        // Compact both L0 files into two L1 files; move one of them to L2 in the next edit.
        let mut b = VersionBuilder::new(&v1);
        let mut e = add(&[(1, f(8, "n", "z")), (1, f(7, "a", "m"))]);
        e.deleted_files = vec![(0, 5), (0, 6)];
        b.apply(&e).unwrap();
        let mut mv = add(&[(2, f(7, "a", "m"))]);
        mv.deleted_files = vec![(1, 7)];
        b.apply(&mv).unwrap();
        let v2 = b.build();
        v2.check_consistency().unwrap();
        assert_eq!(v2.num_files(0), 0);
        assert_eq!(v2.files(1).iter().map(|f| f.number).collect::<Vec<_>>(), vec![8]);
        assert_eq!(v2.files(2)[0].number, 7);
        // The base is untouched, and unchanged files are shared.
        assert_eq!(v1.num_files(0), 2);
        let mut b = VersionBuilder::new(&v2);
        b.apply(&add(&[(0, f(9, "a", "b"))])).unwrap();
        assert!(Arc::ptr_eq(&b.build().files(1)[0], &v2.files(1)[0]));
    }

    #[test]
    fn bad_edits_are_corruption_and_change_nothing() {
        let mut b = FileSetBuilder::new();
        b.apply(&add(&[(1, f(5, "a", "b"))])).unwrap();
        let err = b.apply(&del(&[(1, 6)])).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corruption);
        assert!(err
            .to_string()
            .contains("Cannot delete table file #6 from level 1 since it is not in the LSM tree"));
        let err = b.apply(&del(&[(2, 5)])).unwrap_err();
        assert!(err.to_string().contains("#5 from level 2 since it is on level 1"), "{err}");
        let err = b.apply(&add(&[(0, f(7, "a", "b")), (3, f(5, "a", "b"))])).unwrap_err();
        assert!(err
            .to_string()
            .contains("Cannot add table file #5 to level 3 since it is already in the LSM tree on level 1"));
        let err = b.apply(&add(&[(0, f(7, "a", "b")), (2, f(7, "a", "b"))])).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corruption);
        // Nothing of the failed edits was applied.
        assert_eq!(b.files().iter().map(|(l, f)| (*l, f.number)).collect::<Vec<_>>(), vec![(1, 5)]);
        // Deleting and re-adding in one edit is a move.
        let mut e = add(&[(3, f(5, "a", "b"))]);
        e.deleted_files = vec![(1, 5), (1, 5)];
        b.apply(&e).unwrap();
        assert_eq!(b.files()[0].0, 3);
    }

    #[test]
    fn files_beyond_the_last_level_are_reported() {
        let base = Version::empty(bytewise_internal_comparator(), 3);
        let mut b = VersionBuilder::new(&base);
        b.apply(&add(&[(5, f(5, "a", "b"))])).unwrap();
        let v = b.build();
        assert_eq!(v.num_levels(), 3);
        assert_eq!(v.all_files().map(|(l, f)| (l, f.number)).collect::<Vec<_>>(), vec![(5, 5)]);
        assert_eq!(v.check_consistency().unwrap_err().kind(), ErrorKind::InvalidArgument);
        // ... and can be deleted again.
        let mut b = VersionBuilder::new(&v);
        b.apply(&del(&[(5, 5)])).unwrap();
        b.build().check_consistency().unwrap();
    }
}
