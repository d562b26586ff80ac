//! The in-memory index: per raft group, where each live entry is and the group's
//! key-value pairs.
//!
//! ```text
//! MemTables ── 64 shards ── RwLock<HashMap<region id, Region>>
//! Region
//!   first_index          index of entries[0]
//!   entries: VecDeque<EntryLoc>        24 bytes per entry (raft-engine: 48)
//!   kvs: BTreeMap<key, (value, queue, file seq)>
//!   tombstones (recovery only): cleaned, compact_to, trunc_from, deleted keys
//! EntryLoc (24 bytes)
//!   blob_offset: u64   file offset of the batch's entries blob; top bit = LZ4
//!   seq_q: u32         file seq << 1 | queue (1 = rewrite); seqs up to 2^31 - 1
//!   blob_len: u32      entries blob length, checksum included
//!   entry_offset: u32  offset of the entry in the uncompressed blob
//!   entry_len: u32
//! ```
//! The index of an entry is implicit (`first_index` + position), so only the location is
//! stored; 24 bytes is half of raft-engine's `EntryIndex` (48 bytes in its `VecDeque`).
//!
//! Recovery replays each queue (and each chunk of files, in parallel) into its own table,
//! then merges them oldest first: a newer table's tombstones (Clean, Compact, the lowest
//! index it appended at, deleted keys) filter the older state before the newer data is
//! laid over it. Merging is associative, so chunk tables can be merged pairwise.
//!
//! "Deleted stays deleted": whenever a live deletion (compact, truncating overwrite, key
//! delete, Clean) removes data that lives in the rewrite queue, the region is marked dirty;
//! purge then writes the region afresh into the rewrite queue (Clean, then every live item
//! of it that lives in the rewrite queue or in the files being purged) before any append
//! file holding the deletion is removed.

use std::collections::hash_map::Entry as MapEntry;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::RwLock;

use crate::format::{FileId, FileSeq, LogQueue};
use crate::log_batch::CompressionType;
use crate::{Error, Result};

const SHARDS: usize = 64;
const LZ4_BIT: u64 = 1 << 63;

/// Where one entry lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EntryLoc {
    blob_offset: u64,
    seq_q: u32,
    pub blob_len: u32,
    pub entry_offset: u32,
    pub entry_len: u32,
}

/// The largest file sequence number the index can hold.
pub(crate) const MAX_FILE_SEQ: FileSeq = (1 << 31) - 1;

impl EntryLoc {
    pub fn new(
        file: FileId,
        blob_offset: u64,
        blob_len: usize,
        compression: CompressionType,
        entry_offset: u32,
        entry_len: u32,
    ) -> Result<EntryLoc> {
        if file.seq > MAX_FILE_SEQ || blob_offset >= LZ4_BIT || blob_len > u32::MAX as usize {
            return Err(Error::InvalidArgument(format!(
                "entry location out of the index's range: file {file}, blob at {blob_offset} len {blob_len}"
            )));
        }
        let q = matches!(file.queue, LogQueue::Rewrite) as u32;
        let c = if compression == CompressionType::Lz4 { LZ4_BIT } else { 0 };
        Ok(EntryLoc {
            blob_offset: blob_offset | c,
            seq_q: (file.seq as u32) << 1 | q,
            blob_len: blob_len as u32,
            entry_offset,
            entry_len,
        })
    }

    pub fn file(&self) -> FileId {
        let queue = if self.seq_q & 1 == 1 { LogQueue::Rewrite } else { LogQueue::Append };
        FileId::new(queue, (self.seq_q >> 1) as u64)
    }

    pub fn blob_offset(&self) -> u64 {
        self.blob_offset & !LZ4_BIT
    }

    pub fn compression(&self) -> CompressionType {
        if self.blob_offset & LZ4_BIT != 0 {
            CompressionType::Lz4
        } else {
            CompressionType::None
        }
    }

    fn in_rewrite(&self) -> bool {
        self.seq_q & 1 == 1
    }
}

/// A stored value and the file it was written in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KvLoc {
    pub value: Vec<u8>,
    pub file: FileId,
}

/// One raft group's index.
#[derive(Default, Debug, Clone)]
pub(crate) struct Region {
    pub first_index: u64,
    pub entries: VecDeque<EntryLoc>,
    pub kvs: BTreeMap<Vec<u8>, KvLoc>,
    // Tombstones gathered while replaying a table that will be merged over an older one.
    cleaned: bool,
    compact_to: u64,
    trunc_from: Option<u64>,
    deleted_keys: HashSet<Vec<u8>>,
}

impl Region {
    pub fn last_index(&self) -> Option<u64> {
        if self.entries.is_empty() {
            None
        } else {
            Some(self.first_index + self.entries.len() as u64 - 1)
        }
    }

    pub fn first(&self) -> Option<u64> {
        if self.entries.is_empty() {
            None
        } else {
            Some(self.first_index)
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.kvs.is_empty()
    }

    pub fn get_entry(&self, index: u64) -> Option<&EntryLoc> {
        if index < self.first_index {
            return None;
        }
        self.entries.get((index - self.first_index) as usize)
    }

    /// Appends entries starting at `first`, cutting off every entry at or after `first`.
    /// Returns true when something living in the rewrite queue was cut off.
    pub fn append(&mut self, first: u64, locs: Vec<EntryLoc>) -> bool {
        if locs.is_empty() {
            return false;
        }
        self.trunc_from = Some(self.trunc_from.map_or(first, |t| t.min(first)));
        let dirty;
        match self.last_index() {
            Some(last) if first >= self.first_index && first <= last + 1 => {
                let keep = (first - self.first_index) as usize;
                dirty = self.entries.iter().skip(keep).any(|e| e.in_rewrite());
                self.entries.truncate(keep);
            }
            _ => {
                // Empty, overwriting from before the first entry, or a hole after the last:
                // the new entries replace everything.
                dirty = self.entries.iter().any(|e| e.in_rewrite());
                self.entries.clear();
                self.first_index = first;
            }
        }
        self.entries.extend(locs);
        dirty
    }

    /// Removes entries below `index`; returns (how many, whether any lived in the rewrite
    /// queue).
    pub fn compact_to(&mut self, index: u64) -> (u64, bool) {
        self.compact_to = self.compact_to.max(index);
        if index <= self.first_index || self.entries.is_empty() {
            return (0, false);
        }
        let n = ((index - self.first_index) as usize).min(self.entries.len());
        let dirty = self.entries.iter().take(n).any(|e| e.in_rewrite());
        self.entries.drain(..n);
        self.first_index += n as u64;
        if self.entries.is_empty() {
            self.first_index = index;
        }
        (n as u64, dirty)
    }

    /// Puts a key; true when the value it replaces lived in the rewrite queue (the old
    /// copy there would come back if this one were deleted and its file purged).
    pub fn put(&mut self, key: Vec<u8>, value: Vec<u8>, file: FileId) -> bool {
        self.deleted_keys.remove(&key);
        let old = self.kvs.insert(key, KvLoc { value, file });
        file.queue == LogQueue::Append
            && matches!(old, Some(KvLoc { file, .. }) if file.queue == LogQueue::Rewrite)
    }

    /// Deletes a key; true when the deleted value lived in the rewrite queue.
    pub fn delete(&mut self, key: &[u8]) -> bool {
        self.deleted_keys.insert(key.to_vec());
        matches!(self.kvs.remove(key), Some(KvLoc { file, .. }) if file.queue == LogQueue::Rewrite)
    }

    /// True when anything of this region lives in the rewrite queue.
    pub fn has_rewrite_data(&self) -> bool {
        self.entries.front().is_some_and(|e| e.in_rewrite())
            || self.kvs.values().any(|k| k.file.queue == LogQueue::Rewrite)
    }

    /// The oldest append-queue file this region's live data is in.
    pub fn min_append_seq(&self) -> Option<FileSeq> {
        let e = self.entries.iter().find(|e| !e.in_rewrite()).map(|e| e.file().seq);
        let k = self.kvs.values().filter(|k| k.file.queue == LogQueue::Append).map(|k| k.file.seq).min();
        match (e, k) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Lays `newer` (a table replayed from later files) over this one; true when the
    /// newer tombstones removed data living in the rewrite queue.
    fn merge_newer(&mut self, mut newer: Region) -> bool {
        if newer.cleaned {
            let dirty = self.has_rewrite_data();
            *self = newer;
            return dirty;
        }
        // Filter this (older) state by the newer table's tombstones.
        let mut dirty = false;
        if newer.compact_to > 0 {
            dirty |= self.compact_to(newer.compact_to).1;
        }
        if let Some(t) = newer.trunc_from {
            if let Some(last) = self.last_index() {
                let keep = if t <= self.first_index {
                    0
                } else if t <= last {
                    (t - self.first_index) as usize
                } else {
                    self.entries.len()
                };
                dirty |= self.entries.iter().skip(keep).any(|e| e.in_rewrite());
                self.entries.truncate(keep);
            }
        }
        for k in &newer.deleted_keys {
            if let Some(v) = self.kvs.remove(k) {
                dirty |= v.file.queue == LogQueue::Rewrite;
            }
        }
        // Lay the newer data over.
        if !newer.entries.is_empty() {
            let contiguous = self.last_index().is_some_and(|l| l + 1 == newer.first_index);
            if contiguous {
                self.entries.append(&mut newer.entries);
            } else {
                dirty |= self.entries.iter().any(|e| e.in_rewrite());
                self.entries = std::mem::take(&mut newer.entries);
                self.first_index = newer.first_index;
            }
        } else if self.entries.is_empty() && newer.first_index > self.first_index {
            self.first_index = newer.first_index;
        }
        for (k, v) in std::mem::take(&mut newer.kvs) {
            let newer_in_append = v.file.queue == LogQueue::Append;
            if let Some(old) = self.kvs.insert(k, v) {
                dirty |= newer_in_append && old.file.queue == LogQueue::Rewrite;
            }
        }
        self.compact_to = self.compact_to.max(newer.compact_to);
        self.trunc_from = match (self.trunc_from, newer.trunc_from) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.deleted_keys.extend(newer.deleted_keys);
        dirty
    }

    fn clear_tombstones(&mut self) {
        self.cleaned = false;
        self.compact_to = 0;
        self.trunc_from = None;
        self.deleted_keys = HashSet::new();
    }

    /// Heap bytes of the entry index (capacity of the deque).
    pub fn entry_index_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<EntryLoc>()
    }
}

fn shard_of(region: u64) -> usize {
    // splitmix64, so consecutive ids spread over shards.
    let mut i = region;
    i = (i ^ (i >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    i = (i ^ (i >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((i ^ (i >> 31)) as usize) & (SHARDS - 1)
}

/// Every region's index, sharded by region id.
pub(crate) struct MemTables {
    shards: Vec<RwLock<HashMap<u64, Region>>>,
    /// Regions with deletions of rewrite-queue data not yet made durable in the rewrite
    /// queue (see the module comment).
    dirty: RwLock<HashSet<u64>>,
    /// Replay tables keep tombstones for merging; the live table does not.
    track_tombstones: bool,
}

impl Default for MemTables {
    fn default() -> MemTables {
        MemTables::new(true)
    }
}

/// What one replayed or written item does to the index.
pub(crate) enum Op {
    Append { first: u64, locs: Vec<EntryLoc> },
    Clean,
    Compact(u64),
    Put(Vec<u8>, Vec<u8>, FileId),
    Del(Vec<u8>),
}

impl MemTables {
    pub fn new(track_tombstones: bool) -> MemTables {
        MemTables {
            shards: (0..SHARDS).map(|_| RwLock::new(HashMap::new())).collect(),
            dirty: RwLock::new(HashSet::new()),
            track_tombstones,
        }
    }

    /// Stops tracking tombstones (the recovered table becomes the live one).
    pub fn into_live(mut self) -> MemTables {
        self.finish_recovery();
        self.track_tombstones = false;
        self
    }

    pub fn read<T>(&self, region: u64, f: impl FnOnce(Option<&Region>) -> T) -> T {
        let shard = self.shards[shard_of(region)].read().unwrap_or_else(|p| p.into_inner());
        f(shard.get(&region))
    }

    /// Checks that appending at `first` leaves no hole in `region`'s log.
    pub fn check_append(&self, region: u64, first: u64) -> Result<()> {
        self.read(region, |r| match r.and_then(|r| r.last_index()) {
            Some(last) if first > last + 1 => Err(Error::InvalidArgument(format!(
                "appending entries of region {region} from index {first} would leave a hole after the last index {last}"
            ))),
            _ => Ok(()),
        })
    }

    /// Applies one operation (a live write, or a replay into a fresh table).
    pub fn apply(&self, region: u64, op: Op) {
        let mut shard = self.shards[shard_of(region)].write().unwrap_or_else(|p| p.into_inner());
        let mut dirty = false;
        match op {
            Op::Clean => {
                let old = shard.remove(&region);
                dirty = old.as_ref().is_some_and(|r| r.has_rewrite_data());
                if self.track_tombstones {
                    // Keep a tombstone-only region so a merge knows the group was cleaned.
                    shard.insert(region, Region { cleaned: true, ..Region::default() });
                }
            }
            op => {
                let r = shard.entry(region).or_default();
                match op {
                    Op::Append { first, locs } => dirty = r.append(first, locs),
                    Op::Compact(i) => dirty = r.compact_to(i).1,
                    Op::Put(k, v, f) => dirty = r.put(k, v, f),
                    Op::Del(k) => dirty = r.delete(&k),
                    Op::Clean => {}
                }
                if !self.track_tombstones {
                    r.clear_tombstones();
                    if r.is_empty() {
                        shard.remove(&region);
                    }
                }
            }
        }
        drop(shard);
        if dirty {
            self.dirty.write().unwrap_or_else(|p| p.into_inner()).insert(region);
        }
    }

    /// Lays `newer` over this table (see the module comment).
    pub fn merge_newer(&self, newer: MemTables) {
        for (i, shard) in newer.shards.into_iter().enumerate() {
            let newer_shard = shard.into_inner().unwrap_or_else(|p| p.into_inner());
            let mut mine = self.shards[i].write().unwrap_or_else(|p| p.into_inner());
            let mut dirty = Vec::new();
            for (id, region) in newer_shard {
                match mine.entry(id) {
                    MapEntry::Occupied(mut o) => {
                        if o.get_mut().merge_newer(region) {
                            dirty.push(id);
                        }
                    }
                    MapEntry::Vacant(v) => {
                        v.insert(region);
                    }
                }
            }
            drop(mine);
            self.dirty.write().unwrap_or_else(|p| p.into_inner()).extend(dirty);
        }
    }

    /// After recovery: drops tombstones and regions left empty.
    fn finish_recovery(&mut self) {
        for shard in &self.shards {
            let mut s = shard.write().unwrap_or_else(|p| p.into_inner());
            s.retain(|_, r| {
                r.clear_tombstones();
                // Replay grew the deques by doubling: give the slack back.
                r.entries.shrink_to_fit();
                !r.is_empty()
            });
        }
    }

    /// Ids of the regions holding entries or keys, ascending.
    pub fn region_ids(&self) -> Vec<u64> {
        let mut out = Vec::new();
        for shard in &self.shards {
            let s = shard.read().unwrap_or_else(|p| p.into_inner());
            out.extend(s.iter().filter(|(_, r)| !r.is_empty()).map(|(id, _)| *id));
        }
        out.sort_unstable();
        out
    }

    /// Calls `f` on every region (under its shard's read lock).
    pub fn for_each(&self, mut f: impl FnMut(u64, &Region)) {
        for shard in &self.shards {
            let s = shard.read().unwrap_or_else(|p| p.into_inner());
            for (id, r) in s.iter() {
                f(*id, r);
            }
        }
    }

    /// Runs `f` on a region under its shard's write lock.
    pub fn with_region_mut<T>(&self, region: u64, f: impl FnOnce(Option<&mut Region>) -> T) -> T {
        let mut shard = self.shards[shard_of(region)].write().unwrap_or_else(|p| p.into_inner());
        f(shard.get_mut(&region))
    }

    pub fn take_dirty(&self) -> HashSet<u64> {
        std::mem::take(&mut *self.dirty.write().unwrap_or_else(|p| p.into_inner()))
    }

    pub fn restore_dirty(&self, d: HashSet<u64>) {
        self.dirty.write().unwrap_or_else(|p| p.into_inner()).extend(d);
    }

    /// (live entries, heap bytes of the entry index).
    pub fn index_stats(&self) -> (usize, usize) {
        let (mut n, mut bytes) = (0, 0);
        self.for_each(|_, r| {
            n += r.entries.len();
            bytes += r.entry_index_bytes();
        });
        (n, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(queue: LogQueue, seq: u64, off: u32) -> EntryLoc {
        EntryLoc::new(FileId::new(queue, seq), 100, 50, CompressionType::Lz4, off, 1).unwrap()
    }

    fn entries(r: &Region) -> Vec<(u64, u32)> {
        r.entries.iter().enumerate().map(|(i, e)| (r.first_index + i as u64, e.entry_offset)).collect()
    }

    #[test]
    fn entry_loc_is_24_bytes_and_round_trips() {
        assert_eq!(std::mem::size_of::<EntryLoc>(), 24);
        let l = EntryLoc::new(
            FileId::new(LogQueue::Rewrite, MAX_FILE_SEQ),
            (1 << 40) + 3,
            77,
            CompressionType::Lz4,
            5,
            6,
        )
        .unwrap();
        assert_eq!(l.file(), FileId::new(LogQueue::Rewrite, MAX_FILE_SEQ));
        assert_eq!((l.blob_offset(), l.compression(), l.blob_len), ((1 << 40) + 3, CompressionType::Lz4, 77));
        assert!(EntryLoc::new(
            FileId::new(LogQueue::Append, MAX_FILE_SEQ + 1),
            0,
            1,
            CompressionType::None,
            0,
            0
        )
        .is_err());
    }

    #[test]
    fn append_overwrite_compact() {
        let mut r = Region::default();
        let a = LogQueue::Append;
        r.append(10, (0..5).map(|i| loc(a, 1, i)).collect());
        assert_eq!((r.first(), r.last_index()), (Some(10), Some(14)));
        r.append(12, vec![loc(a, 2, 100)]);
        assert_eq!(entries(&r), vec![(10, 0), (11, 1), (12, 100)]);
        assert_eq!(r.compact_to(11), (1, false));
        assert_eq!(r.compact_to(100), (2, false));
        assert_eq!((r.first(), r.last_index(), r.first_index), (None, None, 100));
        r.append(5, vec![loc(a, 3, 7)]);
        assert_eq!(entries(&r), vec![(5, 7)]);
    }

    #[test]
    fn deletions_of_rewrite_data_are_dirty() {
        let t = MemTables::default();
        let rw = FileId::new(LogQueue::Rewrite, 1);
        t.apply(1, Op::Append { first: 1, locs: (0..3).map(|i| loc(LogQueue::Rewrite, 1, i)).collect() });
        t.apply(1, Op::Put(b"k".to_vec(), b"v".to_vec(), rw));
        assert!(t.take_dirty().is_empty());
        t.apply(1, Op::Append { first: 3, locs: vec![loc(LogQueue::Append, 5, 0)] });
        assert_eq!(t.take_dirty(), HashSet::from([1]));
        // Shadowing a rewritten value counts: deleting the new one would uncover the old.
        t.apply(1, Op::Put(b"k".to_vec(), b"v2".to_vec(), FileId::new(LogQueue::Append, 5)));
        assert_eq!(t.take_dirty(), HashSet::from([1]));
        t.apply(1, Op::Put(b"k".to_vec(), b"v".to_vec(), rw));
        assert!(t.take_dirty().is_empty());
        t.apply(1, Op::Del(b"k".to_vec()));
        assert_eq!(t.take_dirty(), HashSet::from([1]));
        t.apply(2, Op::Append { first: 1, locs: vec![loc(LogQueue::Append, 5, 0)] });
        t.apply(2, Op::Compact(2));
        assert!(t.take_dirty().is_empty());
        t.apply(1, Op::Clean);
        assert_eq!(t.take_dirty(), HashSet::from([1]));
    }

    #[test]
    fn merge_applies_newer_tombstones() {
        let old = MemTables::default();
        let rw = FileId::new(LogQueue::Rewrite, 1);
        old.apply(1, Op::Append { first: 1, locs: (0..10).map(|i| loc(LogQueue::Rewrite, 1, i)).collect() });
        old.apply(1, Op::Put(b"a".to_vec(), b"1".to_vec(), rw));
        old.apply(1, Op::Put(b"b".to_vec(), b"1".to_vec(), rw));
        old.apply(2, Op::Put(b"c".to_vec(), b"1".to_vec(), rw));
        let newer = MemTables::default();
        let ap = FileId::new(LogQueue::Append, 3);
        newer.apply(1, Op::Compact(3));
        newer.apply(1, Op::Append { first: 8, locs: vec![loc(LogQueue::Append, 3, 80)] });
        newer.apply(1, Op::Del(b"a".to_vec()));
        newer.apply(1, Op::Put(b"b".to_vec(), b"2".to_vec(), ap));
        newer.apply(2, Op::Clean);
        newer.apply(2, Op::Put(b"d".to_vec(), b"1".to_vec(), ap));
        old.merge_newer(newer);
        let old = old.into_live();
        old.read(1, |r| {
            let r = r.unwrap();
            assert_eq!(entries(r), vec![(3, 2), (4, 3), (5, 4), (6, 5), (7, 6), (8, 80)]);
            assert!(!r.kvs.contains_key(&b"a"[..]));
            assert_eq!(r.kvs[&b"b"[..]].value, b"2");
        });
        old.read(2, |r| {
            let r = r.unwrap();
            assert!(!r.kvs.contains_key(&b"c"[..]));
            assert!(r.kvs.contains_key(&b"d"[..]));
        });
    }
}
