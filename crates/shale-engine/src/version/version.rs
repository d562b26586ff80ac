//! A `Version`: the immutable set of table files of one column family at one point in
//! time, arranged by level.
//!
//! Level 0 holds files whose key ranges may overlap; they are kept newest first (largest
//! sequence number descending, then smallest sequence number descending, then file number
//! descending, RocksDB's order). Levels 1 and up hold files with disjoint key ranges, kept in
//! key order (smallest internal key, then file number).

use std::cmp::Ordering;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::key::{user_key, InternalKeyComparator};
use crate::version::blob_files::BlobFiles;
use crate::version::edit::FileMetaData;

#[derive(Clone)]
pub struct Version {
    icmp: InternalKeyComparator,
    levels: Vec<Vec<Arc<FileMetaData>>>,
    /// Files given on levels the version does not have (kept so that nothing is lost;
    /// `check_consistency` reports them).
    excess: Vec<(u32, Arc<FileMetaData>)>,
    /// Blob files (BlobDB) the version keeps (`blob_files.rs`).
    blob_files: Arc<BlobFiles>,
    /// RocksDB's compact cursors (`compaction_pri` kRoundRobin): per level, the smallest
    /// internal key of the file the next round-robin compaction of that level starts from
    /// (the MANIFEST's `kCompactCursor` records; levels without one are absent).
    compact_cursors: Arc<std::collections::BTreeMap<u32, Vec<u8>>>,
}

/// Level-0 order: newest first.
pub fn l0_order(a: &FileMetaData, b: &FileMetaData) -> Ordering {
    b.largest_seqno
        .cmp(&a.largest_seqno)
        .then(b.smallest_seqno.cmp(&a.smallest_seqno))
        .then(b.number.cmp(&a.number))
}

impl Version {
    /// Builds a version of `num_levels` levels (at least 1) from `(level, file)` pairs. Files
    /// on a level at or beyond `num_levels` are kept aside: `all_files` lists them and
    /// `check_consistency` reports them.
    pub fn new(
        icmp: InternalKeyComparator,
        num_levels: usize,
        files: Vec<(u32, Arc<FileMetaData>)>,
    ) -> Version {
        let mut levels = vec![Vec::new(); num_levels.max(1)];
        let mut excess = Vec::new();
        for (level, f) in files {
            match levels.get_mut(level as usize) {
                Some(l) => l.push(f),
                None => excess.push((level, f)),
            }
        }
        for (i, level) in levels.iter_mut().enumerate() {
            if i == 0 {
                level.sort_by(|a, b| l0_order(a, b));
            } else {
                level.sort_by(|a, b| icmp.compare(&a.smallest, &b.smallest).then(a.number.cmp(&b.number)));
            }
        }
        Version {
            icmp,
            levels,
            excess,
            blob_files: Arc::new(BlobFiles::new()),
            compact_cursors: Arc::default(),
        }
    }

    /// An empty version.
    pub fn empty(icmp: InternalKeyComparator, num_levels: usize) -> Version {
        Version::new(icmp, num_levels, Vec::new())
    }

    /// This version with `blobs` as its blob files, pruned by RocksDB's rule
    /// (`blob_files::retained_blob_files`).
    pub fn with_blob_files(mut self, blobs: &BlobFiles) -> Version {
        let kept =
            crate::version::blob_files::retained_blob_files(blobs, self.all_files().map(|(_, f)| &**f));
        self.blob_files = Arc::new(kept);
        self
    }

    /// This version with `cursors` as its compact cursors (levels it does not have are
    /// dropped, as RocksDB's `ApplyCompactCursors` omits them when `num_levels` shrank).
    pub fn with_compact_cursors(mut self, cursors: &std::collections::BTreeMap<u32, Vec<u8>>) -> Version {
        let n = self.levels.len() as u32;
        self.compact_cursors =
            Arc::new(cursors.iter().filter(|(l, _)| **l < n).map(|(l, k)| (*l, k.clone())).collect());
        self
    }

    /// The compact cursors of this version (`with_compact_cursors`).
    pub fn compact_cursors(&self) -> &std::collections::BTreeMap<u32, Vec<u8>> {
        &self.compact_cursors
    }

    /// The compact cursor of `level`, if one was recorded.
    pub fn compact_cursor(&self, level: usize) -> Option<&[u8]> {
        self.compact_cursors.get(&(level as u32)).map(Vec::as_slice)
    }

    /// The blob files of this version, by number.
    pub fn blob_files(&self) -> &BlobFiles {
        &self.blob_files
    }

    pub fn icmp(&self) -> &InternalKeyComparator {
        &self.icmp
    }

    pub fn num_levels(&self) -> usize {
        self.levels.len()
    }

    /// The files of `level` in the level's order; empty for a level that does not exist.
    pub fn files(&self, level: usize) -> &[Arc<FileMetaData>] {
        self.levels.get(level).map(|v| v.as_slice()).unwrap_or(&[])
    }

    pub fn num_files(&self, level: usize) -> usize {
        self.files(level).len()
    }

    pub fn total_files(&self) -> usize {
        self.levels.iter().map(Vec::len).sum::<usize>() + self.excess.len()
    }

    /// Sum of the sizes of the files of `level`.
    pub fn level_bytes(&self, level: usize) -> u64 {
        self.files(level).iter().map(|f| f.file_size).sum()
    }

    /// Every file with its level, level by level in each level's order (then any files
    /// on levels the version does not have).
    pub fn all_files(&self) -> impl Iterator<Item = (u32, &Arc<FileMetaData>)> {
        let in_levels =
            self.levels.iter().enumerate().flat_map(|(l, files)| files.iter().map(move |f| (l as u32, f)));
        in_levels.chain(self.excess.iter().map(|(l, f)| (*l, f)))
    }

    fn before(&self, f: &FileMetaData, lo: Option<&[u8]>) -> bool {
        lo.is_some_and(|lo| self.icmp.compare_user_without_ts(user_key(&f.largest), lo) == Ordering::Less)
    }

    fn after(&self, f: &FileMetaData, hi: Option<&[u8]>) -> bool {
        hi.is_some_and(|hi| self.icmp.compare_user_without_ts(user_key(&f.smallest), hi) == Ordering::Greater)
    }

    /// Files of `level` whose user-key range meets `[smallest_user, largest_user]` (None =
    /// unbounded on that side). On level 0 the range grows to cover each file found, until no
    /// further file overlaps, so the result is closed under overlap (as RocksDB's
    /// `GetOverlappingInputs`). The result keeps the level's order.
    ///
    /// With user-defined timestamps the bounds carry them (as every user key does) and keys
    /// are compared without them (RocksDB's `CompareWithoutTimestamp` there): a file holding
    /// any version of a key the range holds a version of overlaps it, so a compaction takes
    /// every version of its keys that the level holds.
    pub fn overlapping_files(
        &self,
        level: usize,
        smallest_user: Option<&[u8]>,
        largest_user: Option<&[u8]>,
    ) -> Vec<Arc<FileMetaData>> {
        let files = self.files(level);
        if level > 0 {
            let start = match smallest_user {
                Some(lo) => files.partition_point(|f| self.before(f, Some(lo))),
                None => 0,
            };
            return files[start..].iter().take_while(|f| !self.after(f, largest_user)).cloned().collect();
        }
        let mut lo = smallest_user.map(|k| k.to_vec());
        let mut hi = largest_user.map(|k| k.to_vec());
        let mut taken = vec![false; files.len()];
        loop {
            let mut grew = false;
            for (i, f) in files.iter().enumerate() {
                if taken[i] || self.before(f, lo.as_deref()) || self.after(f, hi.as_deref()) {
                    continue;
                }
                taken[i] = true;
                grew = true;
                let (fs, fl) = (user_key(&f.smallest), user_key(&f.largest));
                if let Some(l) = &mut lo {
                    if self.icmp.compare_user_without_ts(fs, l) == Ordering::Less {
                        *l = fs.to_vec();
                    }
                }
                if let Some(h) = &mut hi {
                    if self.icmp.compare_user_without_ts(fl, h) == Ordering::Greater {
                        *h = fl.to_vec();
                    }
                }
            }
            if !grew {
                break;
            }
        }
        files.iter().zip(taken).filter(|(_, t)| *t).map(|(f, _)| f.clone()).collect()
    }

    /// On a level of 1 or more: the index of the first file whose largest key is at or
    /// after the internal key `ikey`, which is the only file that can hold it. None when
    /// every file ends before `ikey`, and for level 0 (not ordered by key).
    pub fn find_file(&self, level: usize, ikey: &[u8]) -> Option<usize> {
        if level == 0 {
            return None;
        }
        let files = self.files(level);
        let i = files.partition_point(|f| self.icmp.compare(&f.largest, ikey) == Ordering::Less);
        (i < files.len()).then_some(i)
    }

    /// The files of `level` that can hold the internal key `ikey`: every file of level 0
    /// (newest first, as stored), at most one file of a level above it ([`Version::find_file`]).
    pub fn files_for_key(&self, level: usize, ikey: &[u8]) -> &[Arc<FileMetaData>] {
        let files = self.files(level);
        if level == 0 {
            return files;
        }
        match self.find_file(level, ikey) {
            Some(i) => &files[i..i + 1],
            None => &[],
        }
    }

    /// Checks the invariants RocksDB checks: no file sits on a level the column family does
    /// not have, and the level layout ([`Version::check_level_order`]).
    pub fn check_consistency(&self) -> Result<()> {
        self.check_consistency_with(true)
    }

    /// [`Version::check_consistency`] as a family's `force_consistency_checks` says: the
    /// level count always (RocksDB's `CheckConsistencyForNumLevels`), the level layout only
    /// when `force` (RocksDB's release builds skip `VersionBuilder::CheckConsistency`
    /// without it).
    pub fn check_consistency_with(&self, force: bool) -> Result<()> {
        if !self.excess.is_empty() {
            return Err(Error::invalid_argument("db has more levels than options.num_levels"));
        }
        if force {
            self.check_level_order()?;
        }
        Ok(())
    }

    /// RocksDB's `VersionBuilder::CheckConsistency`: every file's smallest key is not after
    /// its largest; on levels 1+ files are in key order and do not overlap. Corruption in
    /// RocksDB 11.8.1's words, prefixed `force_consistency_checks: VersionBuilder: `, the
    /// keys shown as its `InternalKey::DebugString(true)` (`'HEX' seq:N, type:T`).
    pub fn check_level_order(&self) -> Result<()> {
        let fail =
            |what: String| Error::corruption(format!("force_consistency_checks: VersionBuilder: {what}"));
        for (level, files) in self.levels.iter().enumerate() {
            for f in files {
                if self.icmp.compare(&f.smallest, &f.largest) == Ordering::Greater {
                    return Err(fail(format!(
                        "L{level} file #{} has smallest key after its largest key",
                        f.number
                    )));
                }
            }
            if level == 0 {
                continue;
            }
            for pair in files.windows(2) {
                let (a, b) = (&pair[0], &pair[1]);
                if self.icmp.compare(&a.smallest, &b.smallest) == Ordering::Greater {
                    return Err(fail(format!(
                        "L{level} files are not sorted properly: files #{}, #{}",
                        a.number, b.number
                    )));
                }
                if self.icmp.compare(&a.largest, &b.smallest) != Ordering::Less {
                    return Err(fail(format!(
                        "L{level} has overlapping ranges: file #{} largest key: {} vs. file #{} smallest key: {}",
                        a.number,
                        key_debug_string(&a.largest),
                        b.number,
                        key_debug_string(&b.smallest)
                    )));
                }
            }
        }
        Ok(())
    }
}

/// RocksDB's `InternalKey::DebugString(true)`: `'<user key in upper-case hex>' seq:N, type:T`,
/// or `(bad)` and the escaped bytes for a key that does not parse.
fn key_debug_string(ikey: &[u8]) -> String {
    match crate::key::parse_internal_key(ikey) {
        Ok(p) => {
            let hex: String = p.user_key.iter().map(|b| format!("{b:02X}")).collect();
            format!("'{hex}' seq:{}, type:{}", p.sequence, p.value_type as u8)
        }
        Err(_) => format!("(bad){}", ikey.escape_ascii()),
    }
}

impl std::fmt::Debug for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Version");
        for (level, files) in self.levels.iter().enumerate() {
            if !files.is_empty() {
                let numbers: Vec<u64> = files.iter().map(|f| f.number).collect();
                d.field(&format!("L{level}"), &numbers);
            }
        }
        if !self.excess.is_empty() {
            d.field(
                "beyond_last_level",
                &self.excess.iter().map(|(l, f)| (*l, f.number)).collect::<Vec<_>>(),
            );
        }
        d.finish()
    }
}

#[cfg(test)]
#[path = "version_tests.rs"]
mod tests;
