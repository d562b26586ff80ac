//! The blob files of a Version (RocksDB's `BlobFileMetaData` and the blob part of its
//! `VersionBuilder`).
//!
//! A blob file enters with a `BlobFileAddition` and gathers garbage with
//! `BlobFileGarbage` records (counts add up). When a Version is built, RocksDB's rule decides
//! which blob files it keeps: an SST "links" to the blob file its
//! `oldest_blob_file_number` names; blob files below the smallest linked one are dropped, and
//! so is any blob file without linked SSTs whose garbage count reached its total count. A
//! dropped blob file is deleted (`db/obsolete.rs`) once no Version holds its shared
//! metadata any more.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::version::edit::{BlobFileAddition, FileMetaData, VersionEdit};

/// Links table `meta` to the blob files the blob columns of `entity` (a wide-column entity
/// being written to the table) point into: its `oldest_blob_file_number` becomes the
/// smallest of them, as RocksDB's `FileMetaData::UpdateBoundaries` does with
/// `ForEachBlobFileNumber` (TTL blob indexes are skipped there too). Without the link a
/// Version would drop a blob file the entity still reads.
pub fn link_entity_blob_files(meta: &mut FileMetaData, entity: &[u8]) -> Result<()> {
    shale_format::wide_columns::for_each_blob_index(entity, |index| {
        let bi = shale_format::blob::BlobIndex::decode(index)?;
        if bi.expiration.is_none()
            && (meta.oldest_blob_file_number == 0 || bi.file_number < meta.oldest_blob_file_number)
        {
            meta.oldest_blob_file_number = bi.file_number;
        }
        Ok(())
    })
}

/// One blob file in a Version: what never changes (shared by every Version holding the
/// file: its weak reference tells when the file may be deleted) and its garbage so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobFileMeta {
    pub shared: Arc<BlobFileAddition>,
    pub garbage_blob_count: u64,
    pub garbage_blob_bytes: u64,
}

impl BlobFileMeta {
    pub fn number(&self) -> u64 {
        self.shared.number
    }
}

/// Blob files by number.
pub type BlobFiles = BTreeMap<u64, BlobFileMeta>;

/// Applies one edit's blob additions and garbage to `blobs`; on error `blobs` is unchanged.
pub fn apply_blob_edit(blobs: &mut BlobFiles, edit: &VersionEdit) -> Result<()> {
    if edit.blob_file_additions.is_empty() && edit.blob_file_garbages.is_empty() {
        return Ok(());
    }
    let mut next = blobs.clone();
    for a in &edit.blob_file_additions {
        if next.contains_key(&a.number) {
            return Err(Error::corruption(format!("VersionBuilder: Blob file #{} already added", a.number)));
        }
        next.insert(
            a.number,
            BlobFileMeta { shared: Arc::new(a.clone()), garbage_blob_count: 0, garbage_blob_bytes: 0 },
        );
    }
    for g in &edit.blob_file_garbages {
        let Some(m) = next.get_mut(&g.number) else {
            return Err(Error::corruption(format!("VersionBuilder: Blob file #{} not found", g.number)));
        };
        m.garbage_blob_count = m.garbage_blob_count.saturating_add(g.garbage_blob_count);
        m.garbage_blob_bytes = m.garbage_blob_bytes.saturating_add(g.garbage_blob_bytes);
        if m.garbage_blob_count > m.shared.total_blob_count
            || m.garbage_blob_bytes > m.shared.total_blob_bytes
        {
            return Err(Error::corruption(format!(
                "VersionBuilder: Garbage overflow for blob file #{}",
                g.number
            )));
        }
    }
    *blobs = next;
    Ok(())
}

/// The blob files a Version with table files `files` keeps (RocksDB's rule, see above).
pub fn retained_blob_files<'a>(
    blobs: &BlobFiles,
    files: impl Iterator<Item = &'a FileMetaData>,
) -> BlobFiles {
    let linked: HashSet<u64> = files.map(|f| f.oldest_blob_file_number).filter(|&n| n != 0).collect();
    let Some(&min_linked) = linked.iter().min() else { return BlobFiles::new() };
    blobs
        .range(min_linked..)
        .filter(|(n, m)| linked.contains(n) || m.garbage_blob_count < m.shared.total_blob_count)
        .map(|(n, m)| (*n, m.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::edit::BlobFileGarbage;

    fn add(n: u64, count: u64) -> BlobFileAddition {
        BlobFileAddition {
            number: n,
            total_blob_count: count,
            total_blob_bytes: count * 100,
            ..Default::default()
        }
    }

    fn sst(oldest: u64) -> FileMetaData {
        FileMetaData { oldest_blob_file_number: oldest, ..Default::default() }
    }

    #[test]
    fn garbage_adds_up_and_dead_files_go() {
        let mut b = BlobFiles::new();
        let e =
            VersionEdit { blob_file_additions: vec![add(5, 2), add(6, 2), add(8, 1)], ..Default::default() };
        apply_blob_edit(&mut b, &e).unwrap();
        // Adding twice, garbage for an unknown file, garbage overflow: Corruption, no change.
        assert!(apply_blob_edit(&mut b, &e).is_err());
        let g = |n, c| VersionEdit {
            blob_file_garbages: vec![BlobFileGarbage {
                number: n,
                garbage_blob_count: c,
                garbage_blob_bytes: c * 100,
            }],
            ..Default::default()
        };
        assert!(apply_blob_edit(&mut b, &g(7, 1)).unwrap_err().to_string().contains("#7 not found"));
        assert!(apply_blob_edit(&mut b, &g(6, 3)).unwrap_err().to_string().contains("Garbage overflow"));
        assert_eq!(b[&6].garbage_blob_count, 0);
        apply_blob_edit(&mut b, &g(6, 1)).unwrap();
        apply_blob_edit(&mut b, &g(6, 1)).unwrap();
        assert_eq!(b[&6].garbage_blob_count, 2);
        // SSTs link 6 and 8: 5 is below the oldest linked file; 6 is all garbage but linked.
        let kept = retained_blob_files(&b, [sst(6), sst(8), sst(0)].iter());
        assert_eq!(kept.keys().copied().collect::<Vec<_>>(), vec![6, 8]);
        // Only 8 linked: 6 goes (all garbage, no SST), 5 too.
        let kept = retained_blob_files(&b, [sst(8)].iter());
        assert_eq!(kept.keys().copied().collect::<Vec<_>>(), vec![8]);
        // No linked SST: no blob file.
        assert!(retained_blob_files(&b, [sst(0)].iter()).is_empty());
        // Files between the oldest linked one and the next keep while they hold live blobs.
        let e2 = VersionEdit { blob_file_additions: vec![add(9, 1)], ..Default::default() };
        apply_blob_edit(&mut b, &e2).unwrap();
        let kept = retained_blob_files(&b, [sst(5)].iter());
        assert_eq!(kept.keys().copied().collect::<Vec<_>>(), vec![5, 8, 9]);
    }
}
