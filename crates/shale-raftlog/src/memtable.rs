//! The in-memory index: per raft group, where each live entry is and the group's
//! key-value pairs.
//!
//! ```text
//! MemTables ── 64 shards ── RwLock<HashMap<region id, Region>>
//! Region
//!   first_index          index of ends[0]
//!   runs: VecDeque<Run>  24 bytes per run of entries sharing one entries blob
//!   ends: VecDeque<u32>  4 bytes per entry: its end offset in the uncompressed blob
//!   base: u64            runs store their first index relative to it
//!   kvs: BTreeMap<key, (value, queue, file seq)>
//!   tombstones (recovery only): cleaned, compact_to, trunc_from, deleted keys
//! Run (24 bytes): the entries of one entries item of one batch
//!   blob_offset: u64   file offset of the batch's entries blob; top bit = LZ4
//!   seq_q: u32         file seq << 1 | queue (1 = rewrite); seqs up to 2^31 - 1
//!   blob_len: u32      entries blob length, checksum included
//!   rel_first: u32     index of the run's first entry - base
//!   start: u32         offset of the run's first entry in the uncompressed blob
//! ```
//! An entry's index is implicit (`first_index` + position) and the entries of one item
//! lie back to back in their blob, so an entry costs 4 bytes (its end; its start is the
//! previous entry's end, or the run's `start`) plus its share of a run: with k entries per
//! item, 4 + 24/k bytes (5.5 at 16, 6.4 at 10, 28 at 1), where raft-engine's `EntryIndex`
//! takes 48 bytes per entry. Looking an entry up is a binary search over the runs.
//! `base` moves (every run rewritten, rare) only when an index no longer fits in u32 above
//! it; a region holds at most 2^32 - 1 entries in memory.
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
use crate::log_batch::{Command, CompressionType, LogItem, LogItemContent};
use crate::poison;
use crate::{Error, Result};

const SHARDS: usize = 64;
const LZ4_BIT: u64 = 1 << 63;

/// Where one batch's entries blob is (shared by the entries of a run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BlobLoc {
    blob_offset: u64,
    seq_q: u32,
    blob_len: u32,
}

/// The largest file sequence number the index can hold.
pub(crate) const MAX_FILE_SEQ: FileSeq = (1 << 31) - 1;

impl BlobLoc {
    pub fn new(
        file: FileId,
        blob_offset: u64,
        blob_len: usize,
        compression: CompressionType,
    ) -> Result<BlobLoc> {
        if file.seq > MAX_FILE_SEQ || blob_offset >= LZ4_BIT || blob_len > u32::MAX as usize {
            return Err(Error::InvalidArgument(format!(
                "entry location out of the index's range: file {file}, blob at {blob_offset} len {blob_len}"
            )));
        }
        let q = matches!(file.queue, LogQueue::Rewrite) as u32;
        let c = if compression == CompressionType::Lz4 { LZ4_BIT } else { 0 };
        Ok(BlobLoc {
            blob_offset: blob_offset | c,
            seq_q: (file.seq as u32) << 1 | q,
            blob_len: blob_len as u32,
        })
    }

    pub fn file(&self) -> FileId {
        let queue = if self.seq_q & 1 == 1 { LogQueue::Rewrite } else { LogQueue::Append };
        FileId::new(queue, (self.seq_q >> 1) as u64)
    }

    pub fn blob_offset(&self) -> u64 {
        self.blob_offset & !LZ4_BIT
    }

    pub fn blob_len(&self) -> u32 {
        self.blob_len
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

/// Where one entry lives (a lookup's answer; the index stores runs and ends, see the
/// module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EntryLoc {
    pub blob: BlobLoc,
    pub entry_offset: u32,
    pub entry_len: u32,
}

impl EntryLoc {
    pub fn file(&self) -> FileId {
        self.blob.file()
    }

    pub fn blob_offset(&self) -> u64 {
        self.blob.blob_offset()
    }

    pub fn blob_len(&self) -> u32 {
        self.blob.blob_len()
    }

    pub fn compression(&self) -> CompressionType {
        self.blob.compression()
    }

    pub fn in_rewrite(&self) -> bool {
        self.blob.in_rewrite()
    }
}

/// Entries of one item, as written: consecutive indexes from `first`, back to back in
/// `blob` from offset `start`; `ends[i]` is where entry `first + i` ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NewRun {
    pub first: u64,
    pub blob: BlobLoc,
    pub start: u32,
    pub ends: Vec<u32>,
}

impl NewRun {
    /// Checks that the offsets never go backwards and the indexes do not overflow.
    pub fn new(first: u64, blob: BlobLoc, start: u32, ends: Vec<u32>) -> Result<NewRun> {
        let mut prev = start;
        for &e in &ends {
            if e < prev {
                return Err(Error::corruption(format!(
                    "{}: entry end offset {e} before the previous one ({prev}) in the blob at {}",
                    blob.file(),
                    blob.blob_offset()
                )));
            }
            prev = e;
        }
        if first.checked_add(ends.len() as u64).is_none() {
            return Err(Error::corruption(format!("entry indexes overflow: {first} + {}", ends.len())));
        }
        Ok(NewRun { first, blob, start, ends })
    }
}

/// One run of entries sharing a blob (see the module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    blob: BlobLoc,
    rel_first: u32,
    start: u32,
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
    /// Runs of entries, ascending by first index; when there are entries, the first run
    /// starts at `first_index`.
    runs: VecDeque<Run>,
    ends: VecDeque<u32>,
    base: u64,
    pub kvs: BTreeMap<Vec<u8>, KvLoc>,
    // Tombstones gathered while replaying a table that will be merged over an older one.
    cleaned: bool,
    compact_to: u64,
    trunc_from: Option<u64>,
    deleted_keys: HashSet<Vec<u8>>,
}

/// The locations of a region's entries from one index on, in index order.
pub(crate) struct Locs<'a> {
    r: &'a Region,
    pos: usize,
    run: usize,
}

impl Iterator for Locs<'_> {
    type Item = EntryLoc;

    fn next(&mut self) -> Option<EntryLoc> {
        let r = self.r;
        let end = *r.ends.get(self.pos)?;
        let index = r.first_index + self.pos as u64;
        while self.run + 1 < r.runs.len() && r.run_first(self.run + 1) <= index {
            self.run += 1;
        }
        let run = r.runs.get(self.run)?;
        let start = if r.run_first(self.run) == index || self.pos == 0 {
            run.start
        } else {
            r.ends.get(self.pos - 1).copied().unwrap_or(run.start)
        };
        self.pos += 1;
        Some(EntryLoc { blob: run.blob, entry_offset: start, entry_len: end.saturating_sub(start) })
    }
}

impl Region {
    pub fn last_index(&self) -> Option<u64> {
        if self.ends.is_empty() {
            None
        } else {
            Some(self.first_index + self.ends.len() as u64 - 1)
        }
    }

    pub fn first(&self) -> Option<u64> {
        if self.ends.is_empty() {
            None
        } else {
            Some(self.first_index)
        }
    }

    /// How many entries the region holds.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty() && self.kvs.is_empty()
    }

    fn run_first(&self, i: usize) -> u64 {
        self.runs.get(i).map_or(u64::MAX, |r| self.base + r.rel_first as u64)
    }

    /// The run holding `index` (which must be one of the region's entries).
    fn run_of(&self, index: u64) -> usize {
        let rel = index.saturating_sub(self.base);
        self.runs.partition_point(|r| r.rel_first as u64 <= rel).saturating_sub(1)
    }

    /// `index` relative to `base`, moving `base` to `first_index` first when it does not
    /// fit (the region holds fewer than 2^32 entries, so everything fits above it).
    fn rel(&mut self, index: u64) -> u32 {
        if index < self.base || index - self.base > u32::MAX as u64 {
            let new_base = self.first_index.min(index);
            for r in self.runs.iter_mut() {
                // (The first run may still start below `first_index` mid-compaction; it is
                // reset right after.)
                let abs = self.base + r.rel_first as u64;
                r.rel_first = u32::try_from(abs.saturating_sub(new_base)).unwrap_or(u32::MAX);
            }
            self.base = new_base;
        }
        u32::try_from(index - self.base).unwrap_or(u32::MAX)
    }

    fn check_room(&self, more: usize) -> Result<()> {
        if self.ends.len() + more > u32::MAX as usize {
            return Err(Error::InvalidArgument(format!(
                "a raft group may hold at most {} entries in the index (has {}, adding {more})",
                u32::MAX,
                self.ends.len()
            )));
        }
        Ok(())
    }

    /// The location of entry `index`.
    pub fn get_entry(&self, index: u64) -> Option<EntryLoc> {
        if index < self.first_index || index - self.first_index >= self.ends.len() as u64 {
            return None;
        }
        self.locs_from(index).next()
    }

    /// The locations of the entries from `index` on (none when `index` is not held).
    pub fn locs_from(&self, index: u64) -> Locs<'_> {
        if index < self.first_index || index - self.first_index >= self.ends.len() as u64 {
            return Locs { r: self, pos: self.ends.len(), run: 0 };
        }
        Locs { r: self, pos: (index - self.first_index) as usize, run: self.run_of(index) }
    }

    /// The locations of every entry.
    pub fn locs(&self) -> Locs<'_> {
        Locs { r: self, pos: 0, run: 0 }
    }

    /// Keeps the first `keep` entries; true when a removed one lived in the rewrite queue.
    fn truncate(&mut self, keep: usize) -> bool {
        if keep >= self.ends.len() {
            return false;
        }
        let cut = self.first_index + keep as u64;
        let ri = self.run_of(cut);
        let dirty = self.runs.iter().skip(ri).any(|r| r.blob.in_rewrite());
        self.ends.truncate(keep);
        let keep_runs = if self.run_first(ri) < cut { ri + 1 } else { ri };
        self.runs.truncate(keep_runs);
        dirty
    }

    /// Removes every entry; true when one lived in the rewrite queue.
    fn clear_entries(&mut self) -> bool {
        let dirty = self.runs.iter().any(|r| r.blob.in_rewrite());
        self.runs.clear();
        self.ends.clear();
        dirty
    }

    /// Adds a run after the last entry (which must be `first - 1`, or there are none).
    fn push_run(&mut self, first: u64, blob: BlobLoc, start: u32, ends: &[u32]) -> Result<()> {
        if ends.is_empty() {
            return Ok(());
        }
        self.check_room(ends.len())?;
        if self.ends.is_empty() {
            self.runs.clear();
            self.first_index = first;
            self.base = first;
        }
        let rel_first = self.rel(first);
        self.runs.push_back(Run { blob, rel_first, start });
        self.ends.extend(ends.iter().copied());
        Ok(())
    }

    /// Appends entries starting at `run.first`, cutting off every entry at or after it.
    /// Returns true when something living in the rewrite queue was cut off.
    pub fn append(&mut self, run: NewRun) -> Result<bool> {
        if run.ends.is_empty() {
            return Ok(false);
        }
        let first = run.first;
        self.trunc_from = Some(self.trunc_from.map_or(first, |t| t.min(first)));
        let dirty = match self.last_index() {
            Some(last) if first >= self.first_index && first <= last + 1 => {
                self.truncate((first - self.first_index) as usize)
            }
            // Empty, overwriting from before the first entry, or a hole after the last:
            // the new entries replace everything.
            _ => self.clear_entries(),
        };
        self.push_run(first, run.blob, run.start, &run.ends)?;
        Ok(dirty)
    }

    /// Removes entries below `index`; returns (how many, whether any lived in the rewrite
    /// queue).
    pub fn compact_to(&mut self, index: u64) -> (u64, bool) {
        self.compact_to = self.compact_to.max(index);
        if index <= self.first_index || self.ends.is_empty() {
            return (0, false);
        }
        let n = ((index - self.first_index) as usize).min(self.ends.len());
        if n == self.ends.len() {
            let dirty = self.clear_entries();
            self.first_index = index;
            return (n as u64, dirty);
        }
        let new_first = self.first_index + n as u64;
        let ri = self.run_of(new_first);
        let mid = self.run_first(ri) < new_first;
        let dirty = self.runs.iter().take(ri + mid as usize).any(|r| r.blob.in_rewrite());
        let new_start = if mid { self.ends.get(n - 1).copied() } else { None };
        self.runs.drain(..ri);
        self.ends.drain(..n);
        self.first_index = new_first;
        let rel_first = self.rel(new_first);
        if let Some(r) = self.runs.front_mut() {
            r.rel_first = rel_first;
            if let Some(s) = new_start {
                r.start = s;
            }
        }
        (n as u64, dirty)
    }

    /// Points entries `[first, first + ends.len())` at a new blob (a rewrite copied them
    /// there); `start` and `ends` are their offsets in it, as in [`NewRun`]. The range
    /// must lie within the region's entries.
    fn replace(&mut self, first: u64, blob: BlobLoc, start: u32, ends: &[u32]) {
        let Some(last) = self.last_index() else { return };
        let y = first + ends.len() as u64; // one past
        if ends.is_empty() || first < self.first_index || y > last + 1 {
            return;
        }
        let (px, py) = ((first - self.first_index) as usize, (y - self.first_index) as usize);
        // Entry y keeps its old place: a run must start there if one did not.
        let tail = if py < self.ends.len() {
            let ri = self.run_of(y);
            let rs = self.run_first(ri);
            match self.runs.get(ri) {
                Some(r) if rs < y => Some((r.blob, self.ends.get(py - 1).copied().unwrap_or(r.start))),
                _ => None,
            }
        } else {
            None
        };
        for (i, &e) in ends.iter().enumerate() {
            if let Some(slot) = self.ends.get_mut(px + i) {
                *slot = e;
            }
        }
        let lo = self.runs.partition_point(|r| self.base + (r.rel_first as u64) < first);
        let hi = self.runs.partition_point(|r| self.base + (r.rel_first as u64) < y);
        self.runs.drain(lo..hi);
        let rel_first = self.rel(first);
        self.runs.insert(lo, Run { blob, rel_first, start });
        if let Some((b, s)) = tail {
            let rel_y = self.rel(y);
            self.runs.insert(lo + 1, Run { blob: b, rel_first: rel_y, start: s });
        }
    }

    /// Repoints entries from `first` that still sit where `old` says at `new` (a rewrite
    /// copied them; anything replaced meanwhile keeps its newer place).
    pub fn repoint(&mut self, old: &[EntryLoc], new: &NewRun) {
        let first = new.first;
        // Maximal stretches where the index still says `old`.
        let mut stretches: Vec<(usize, usize)> = Vec::new();
        let mut open: Option<usize> = None;
        let mut cur = self.locs_from(first.max(self.first_index));
        let skip = self.first_index.saturating_sub(first) as usize;
        for (i, o) in old.iter().enumerate().take(new.ends.len()) {
            let same = i >= skip && cur.next().is_some_and(|c| c == *o);
            match (same, open) {
                (true, None) => open = Some(i),
                (false, Some(s)) => {
                    stretches.push((s, i));
                    open = None;
                }
                _ => {}
            }
        }
        if let Some(s) = open {
            stretches.push((s, old.len().min(new.ends.len())));
        }
        for (s, e) in stretches {
            let start = if s == 0 { new.start } else { new.ends[s - 1] };
            self.replace(first + s as u64, new.blob, start, &new.ends[s..e]);
        }
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
        self.runs.front().is_some_and(|r| r.blob.in_rewrite())
            || self.kvs.values().any(|k| k.file.queue == LogQueue::Rewrite)
    }

    /// The oldest append-queue file this region's live data is in.
    pub fn min_append_seq(&self) -> Option<FileSeq> {
        let e = self.runs.iter().find(|r| !r.blob.in_rewrite()).map(|r| r.blob.file().seq);
        let k = self.kvs.values().filter(|k| k.file.queue == LogQueue::Append).map(|k| k.file.seq).min();
        match (e, k) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// How many entries live in files `pick` chooses.
    pub fn count_entries(&self, pick: impl Fn(FileId) -> bool) -> usize {
        let mut n = 0;
        for (i, r) in self.runs.iter().enumerate() {
            if pick(r.blob.file()) {
                let end = self.run_first(i + 1).min(self.first_index + self.ends.len() as u64);
                n += end.saturating_sub(self.run_first(i)) as usize;
            }
        }
        n
    }

    /// Lays `newer` (a table replayed from later files) over this one; true when the
    /// newer tombstones removed data living in the rewrite queue.
    fn merge_newer(&mut self, mut newer: Region) -> Result<bool> {
        if newer.cleaned {
            let dirty = self.has_rewrite_data();
            *self = newer;
            return Ok(dirty);
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
                    self.ends.len()
                };
                dirty |= self.truncate(keep);
            }
        }
        for k in &newer.deleted_keys {
            if let Some(v) = self.kvs.remove(k) {
                dirty |= v.file.queue == LogQueue::Rewrite;
            }
        }
        // Lay the newer data over.
        if !newer.ends.is_empty() {
            let contiguous = self.last_index().is_some_and(|l| l + 1 == newer.first_index);
            if contiguous {
                self.check_room(newer.ends.len())?;
                for i in 0..newer.runs.len() {
                    let rf = newer.run_first(i);
                    if let Some(r) = newer.runs.get(i).copied() {
                        let rel_first = self.rel(rf);
                        self.runs.push_back(Run { blob: r.blob, rel_first, start: r.start });
                    }
                }
                self.ends.append(&mut newer.ends);
            } else {
                dirty |= self.clear_entries();
                self.runs = std::mem::take(&mut newer.runs);
                self.ends = std::mem::take(&mut newer.ends);
                self.base = newer.base;
                self.first_index = newer.first_index;
            }
        } else if self.ends.is_empty() && newer.first_index > self.first_index {
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
        Ok(dirty)
    }

    fn clear_tombstones(&mut self) {
        self.cleaned = false;
        self.compact_to = 0;
        self.trunc_from = None;
        self.deleted_keys = HashSet::new();
    }

    /// Heap bytes of the entry index (capacity of the runs and ends).
    pub fn entry_index_bytes(&self) -> usize {
        self.runs.capacity() * std::mem::size_of::<Run>() + self.ends.capacity() * std::mem::size_of::<u32>()
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
    Append(NewRun),
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
    pub fn into_live(mut self) -> Result<MemTables> {
        self.finish_recovery()?;
        self.track_tombstones = false;
        Ok(self)
    }

    pub fn read<T>(&self, region: u64, f: impl FnOnce(Option<&Region>) -> T) -> Result<T> {
        let shard = poison::read(&self.shards[shard_of(region)], "index shard")?;
        Ok(f(shard.get(&region)))
    }

    /// Judges a batch's appends as raft-engine 0.4.2's `MemTable::append` would, applying
    /// the batch's items in order (so an append may follow a Compact or Clean of the same
    /// batch that emptied its region): with entries held from `first` to `last`, an append
    /// must start within `first..=last + 1`; a region without entries (never written,
    /// cleaned, or compacted past its last entry) takes an append at any index.
    /// raft-engine panics on the two other cases after writing the batch ("memtable has a
    /// hole", "attempt to overwrite compacted entries"); this refuses the batch before
    /// anything is written.
    pub fn check_batch(&self, items: &[LogItem]) -> Result<()> {
        // Each touched region's (first, last) as the batch's items so far leave it.
        let mut spans: HashMap<u64, Option<(u64, u64)>> = HashMap::new();
        for item in items {
            let region = item.raft_group_id;
            let span = match spans.entry(region) {
                MapEntry::Occupied(o) => o.into_mut(),
                MapEntry::Vacant(v) => {
                    v.insert(self.read(region, |r| r.and_then(|r| Some((r.first()?, r.last_index()?))))?)
                }
            };
            match &item.content {
                LogItemContent::Entries { first_index, ends, .. } => {
                    let Some(n) = (ends.len() as u64).checked_sub(1) else { continue };
                    let at = *first_index;
                    let new_last = at.checked_add(n).ok_or_else(|| {
                        Error::InvalidArgument(format!(
                            "entry indexes of region {region} overflow: {at} + {n}"
                        ))
                    })?;
                    *span = match *span {
                        None => Some((at, new_last)),
                        Some((first, _)) if at < first => {
                            return Err(Error::InvalidArgument(format!(
                                "appending entries of region {region} from index {at} would overwrite compacted entries (its first index is {first})"
                            )))
                        }
                        Some((_, last)) if at > last + 1 => {
                            return Err(Error::InvalidArgument(format!(
                                "appending entries of region {region} from index {at} would leave a hole after the last index {last}"
                            )))
                        }
                        Some((first, _)) => Some((first, new_last)),
                    };
                }
                LogItemContent::Command(Command::Compact { index }) => {
                    if let Some((first, last)) = *span {
                        if *index > last {
                            *span = None;
                        } else if *index > first {
                            *span = Some((*index, last));
                        }
                    }
                }
                LogItemContent::Command(Command::Clean) => *span = None,
                LogItemContent::Kv { .. } => {}
            }
        }
        Ok(())
    }

    /// Applies one operation (a live write, or a replay into a fresh table). Fails only
    /// when a region would hold more entries than the index can (see the module comment).
    pub fn apply(&self, region: u64, op: Op) -> Result<()> {
        let mut shard = poison::write(&self.shards[shard_of(region)], "index shard")?;
        let mut dirty = false;
        let mut res = Ok(());
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
                    Op::Append(run) => match r.append(run) {
                        Ok(d) => dirty = d,
                        Err(e) => res = Err(e),
                    },
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
            poison::write(&self.dirty, "dirty regions")?.insert(region);
        }
        res
    }

    /// Lays `newer` over this table (see the module comment).
    pub fn merge_newer(&self, newer: MemTables) -> Result<()> {
        for (i, shard) in newer.shards.into_iter().enumerate() {
            let newer_shard = shard.into_inner().map_err(|_| poison::poisoned("recovered index shard"))?;
            let mut mine = poison::write(&self.shards[i], "index shard")?;
            let mut dirty = Vec::new();
            for (id, region) in newer_shard {
                match mine.entry(id) {
                    MapEntry::Occupied(mut o) => {
                        if o.get_mut().merge_newer(region)? {
                            dirty.push(id);
                        }
                    }
                    MapEntry::Vacant(v) => {
                        v.insert(region);
                    }
                }
            }
            drop(mine);
            poison::write(&self.dirty, "dirty regions")?.extend(dirty);
        }
        Ok(())
    }

    /// After recovery: drops tombstones and regions left empty.
    fn finish_recovery(&mut self) -> Result<()> {
        for shard in &self.shards {
            let mut s = poison::write(shard, "index shard")?;
            s.retain(|_, r| {
                r.clear_tombstones();
                // Replay grew the deques by doubling: give the slack back.
                r.runs.shrink_to_fit();
                r.ends.shrink_to_fit();
                !r.is_empty()
            });
        }
        Ok(())
    }

    /// Ids of the regions holding entries or keys, ascending.
    pub fn region_ids(&self) -> Result<Vec<u64>> {
        let mut out = Vec::new();
        for shard in &self.shards {
            let s = poison::read(shard, "index shard")?;
            out.extend(s.iter().filter(|(_, r)| !r.is_empty()).map(|(id, _)| *id));
        }
        out.sort_unstable();
        Ok(out)
    }

    /// Calls `f` on every region (under its shard's read lock).
    pub fn for_each(&self, mut f: impl FnMut(u64, &Region)) -> Result<()> {
        for shard in &self.shards {
            let s = poison::read(shard, "index shard")?;
            for (id, r) in s.iter() {
                f(*id, r);
            }
        }
        Ok(())
    }

    /// Runs `f` on a region under its shard's write lock.
    pub fn with_region_mut<T>(&self, region: u64, f: impl FnOnce(Option<&mut Region>) -> T) -> Result<T> {
        let mut shard = poison::write(&self.shards[shard_of(region)], "index shard")?;
        Ok(f(shard.get_mut(&region)))
    }

    pub fn take_dirty(&self) -> Result<HashSet<u64>> {
        Ok(std::mem::take(&mut *poison::write(&self.dirty, "dirty regions")?))
    }

    pub fn restore_dirty(&self, d: HashSet<u64>) -> Result<()> {
        poison::write(&self.dirty, "dirty regions")?.extend(d);
        Ok(())
    }

    /// (live entries, heap bytes of the entry index).
    pub fn index_stats(&self) -> Result<(usize, usize)> {
        let (mut n, mut bytes) = (0, 0);
        self.for_each(|_, r| {
            n += r.len();
            bytes += r.entry_index_bytes();
        })?;
        Ok((n, bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(queue: LogQueue, seq: u64) -> BlobLoc {
        BlobLoc::new(FileId::new(queue, seq), 100 + seq, 50, CompressionType::Lz4).unwrap()
    }

    /// `n` one-byte entries from index `first`, at offsets `start..start + n` of a blob.
    fn run(queue: LogQueue, seq: u64, first: u64, start: u32, n: u32) -> NewRun {
        NewRun::new(first, blob(queue, seq), start, (1..=n).map(|i| start + i).collect()).unwrap()
    }

    fn append(r: &mut Region, nr: NewRun) -> bool {
        r.append(nr).unwrap()
    }

    fn entries(r: &Region) -> Vec<(u64, u32)> {
        r.locs().enumerate().map(|(i, e)| (r.first_index + i as u64, e.entry_offset)).collect()
    }

    #[test]
    fn sizes_and_round_trip() {
        assert_eq!(std::mem::size_of::<Run>(), 24);
        assert_eq!(std::mem::size_of::<EntryLoc>(), 24);
        let b = BlobLoc::new(
            FileId::new(LogQueue::Rewrite, MAX_FILE_SEQ),
            (1 << 40) + 3,
            77,
            CompressionType::Lz4,
        )
        .unwrap();
        assert_eq!(b.file(), FileId::new(LogQueue::Rewrite, MAX_FILE_SEQ));
        assert_eq!(
            (b.blob_offset(), b.compression(), b.blob_len()),
            ((1 << 40) + 3, CompressionType::Lz4, 77)
        );
        assert!(BlobLoc::new(FileId::new(LogQueue::Append, MAX_FILE_SEQ + 1), 0, 1, CompressionType::None)
            .is_err());
        assert!(NewRun::new(1, b, 10, vec![12, 11]).is_err());
        assert!(NewRun::new(1, b, 10, vec![9]).is_err());
        assert!(NewRun::new(u64::MAX, b, 10, vec![11]).is_err());
        // 16 entries in one run: 24 + 16 * 4 bytes.
        let mut r = Region::default();
        append(&mut r, run(LogQueue::Append, 1, 1, 0, 16));
        r.runs.shrink_to_fit();
        r.ends.shrink_to_fit();
        assert_eq!(r.entry_index_bytes(), 24 + 64);
    }

    #[test]
    fn append_overwrite_compact() {
        let mut r = Region::default();
        let a = LogQueue::Append;
        append(&mut r, run(a, 1, 10, 0, 5));
        assert_eq!((r.first(), r.last_index()), (Some(10), Some(14)));
        append(&mut r, run(a, 2, 12, 100, 1));
        assert_eq!(entries(&r), vec![(10, 0), (11, 1), (12, 100)]);
        assert_eq!(r.get_entry(12).map(|l| (l.file().seq, l.entry_len)), Some((2, 1)));
        assert_eq!(r.get_entry(13), None);
        assert_eq!(r.compact_to(11), (1, false));
        assert_eq!(entries(&r), vec![(11, 1), (12, 100)]);
        assert_eq!(r.get_entry(11).map(|l| (l.file().seq, l.entry_offset, l.entry_len)), Some((1, 1, 1)));
        assert_eq!(r.compact_to(100), (2, false));
        assert_eq!((r.first(), r.last_index(), r.first_index), (None, None, 100));
        append(&mut r, run(a, 3, 5, 7, 1));
        assert_eq!(entries(&r), vec![(5, 7)]);
    }

    #[test]
    fn deletions_of_rewrite_data_are_dirty() {
        let t = MemTables::default();
        let rw = FileId::new(LogQueue::Rewrite, 1);
        t.apply(1, Op::Append(run(LogQueue::Rewrite, 1, 1, 0, 3))).unwrap();
        t.apply(1, Op::Put(b"k".to_vec(), b"v".to_vec(), rw)).unwrap();
        assert!(t.take_dirty().unwrap().is_empty());
        t.apply(1, Op::Append(run(LogQueue::Append, 5, 3, 0, 1))).unwrap();
        assert_eq!(t.take_dirty().unwrap(), HashSet::from([1]));
        // Shadowing a rewritten value counts: deleting the new one would uncover the old.
        t.apply(1, Op::Put(b"k".to_vec(), b"v2".to_vec(), FileId::new(LogQueue::Append, 5))).unwrap();
        assert_eq!(t.take_dirty().unwrap(), HashSet::from([1]));
        t.apply(1, Op::Put(b"k".to_vec(), b"v".to_vec(), rw)).unwrap();
        assert!(t.take_dirty().unwrap().is_empty());
        t.apply(1, Op::Del(b"k".to_vec())).unwrap();
        assert_eq!(t.take_dirty().unwrap(), HashSet::from([1]));
        t.apply(2, Op::Append(run(LogQueue::Append, 5, 1, 0, 1))).unwrap();
        t.apply(2, Op::Compact(2)).unwrap();
        assert!(t.take_dirty().unwrap().is_empty());
        t.apply(1, Op::Clean).unwrap();
        assert_eq!(t.take_dirty().unwrap(), HashSet::from([1]));
    }

    #[test]
    fn merge_applies_newer_tombstones() {
        let old = MemTables::default();
        let rw = FileId::new(LogQueue::Rewrite, 1);
        old.apply(1, Op::Append(run(LogQueue::Rewrite, 1, 1, 0, 10))).unwrap();
        old.apply(1, Op::Put(b"a".to_vec(), b"1".to_vec(), rw)).unwrap();
        old.apply(1, Op::Put(b"b".to_vec(), b"1".to_vec(), rw)).unwrap();
        old.apply(2, Op::Put(b"c".to_vec(), b"1".to_vec(), rw)).unwrap();
        let newer = MemTables::default();
        let ap = FileId::new(LogQueue::Append, 3);
        newer.apply(1, Op::Compact(3)).unwrap();
        newer.apply(1, Op::Append(run(LogQueue::Append, 3, 8, 80, 1))).unwrap();
        newer.apply(1, Op::Del(b"a".to_vec())).unwrap();
        newer.apply(1, Op::Put(b"b".to_vec(), b"2".to_vec(), ap)).unwrap();
        newer.apply(2, Op::Clean).unwrap();
        newer.apply(2, Op::Put(b"d".to_vec(), b"1".to_vec(), ap)).unwrap();
        old.merge_newer(newer).unwrap();
        let old = old.into_live().unwrap();
        old.read(1, |r| {
            let r = r.unwrap();
            assert_eq!(entries(r), vec![(3, 2), (4, 3), (5, 4), (6, 5), (7, 6), (8, 80)]);
            assert!(!r.kvs.contains_key(&b"a"[..]));
            assert_eq!(r.kvs[&b"b"[..]].value, b"2");
        })
        .unwrap();
        old.read(2, |r| {
            let r = r.unwrap();
            assert!(!r.kvs.contains_key(&b"c"[..]));
            assert!(r.kvs.contains_key(&b"d"[..]));
        })
        .unwrap();
    }

    #[test]
    fn base_moves_when_indexes_outgrow_u32() {
        let mut r = Region::default();
        let a = LogQueue::Append;
        append(&mut r, run(a, 1, 1, 0, 4));
        let far = 1 + (u32::MAX as u64) * 3;
        assert_eq!(r.compact_to(far), (4, false));
        append(&mut r, run(a, 2, far, 0, 3));
        append(&mut r, run(a, 3, far + 3, 10, 2));
        assert_eq!(entries(&r), vec![(far, 0), (far + 1, 1), (far + 2, 2), (far + 3, 10), (far + 4, 11)]);
        assert_eq!(r.get_entry(far + 4).map(|l| l.file().seq), Some(3));
    }

    /// The run-based index against a plain list of locations, under random appends,
    /// overwrites, compactions, rewrites (repoint) and merges.
    #[test]
    fn runs_match_a_plain_list() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n.max(1)
        };
        for _case in 0..200 {
            let mut r = Region::default();
            let mut model: Vec<EntryLoc> = Vec::new();
            let mut model_first = 0u64;
            let mut seq = 1u64;
            for _step in 0..60 {
                let last = model_first + model.len() as u64; // one past
                match rnd(5) {
                    0 | 1 => {
                        let first = if model.is_empty() {
                            1 + rnd(50)
                        } else {
                            model_first + rnd(model.len() as u64 + 1)
                        };
                        let n = 1 + rnd(6) as u32;
                        let start = rnd(100) as u32;
                        seq += 1;
                        let q = if rnd(3) == 0 { LogQueue::Rewrite } else { LogQueue::Append };
                        let nr =
                            NewRun::new(first, blob(q, seq), start, (1..=n).map(|i| start + i * 2).collect())
                                .unwrap();
                        if model.is_empty() || first < model_first || first > last {
                            model.clear();
                            model_first = first;
                        } else {
                            model.truncate((first - model_first) as usize);
                        }
                        let mut prev = nr.start;
                        for &e in &nr.ends {
                            model.push(EntryLoc { blob: nr.blob, entry_offset: prev, entry_len: e - prev });
                            prev = e;
                        }
                        append(&mut r, nr);
                    }
                    2 => {
                        let to = model_first + rnd(model.len() as u64 + 2);
                        r.compact_to(to);
                        if to > model_first {
                            let n = ((to - model_first) as usize).min(model.len());
                            model.drain(..n);
                            model_first =
                                if model.is_empty() { to.max(model_first) } else { model_first + n as u64 };
                        }
                    }
                    3 if !model.is_empty() => {
                        // A rewrite copied [a, b) elsewhere; meanwhile one entry may have moved.
                        let a = rnd(model.len() as u64) as usize;
                        let b = a + 1 + rnd((model.len() - a) as u64) as usize;
                        let old: Vec<EntryLoc> = model[a..b].to_vec();
                        if rnd(2) == 0 {
                            let k = rnd(model.len() as u64) as usize;
                            seq += 1;
                            let moved = run(LogQueue::Append, seq, model_first + k as u64, 500, 1);
                            model.truncate(k);
                            model.push(EntryLoc { blob: moved.blob, entry_offset: 500, entry_len: 1 });
                            append(&mut r, moved);
                        }
                        seq += 1;
                        let start = rnd(30) as u32;
                        let new = NewRun::new(
                            model_first + a as u64,
                            blob(LogQueue::Rewrite, seq),
                            start,
                            (1..=old.len() as u32).map(|i| start + i * 3).collect(),
                        )
                        .unwrap();
                        r.repoint(&old, &new);
                        let mut prev = new.start;
                        for (i, &e) in new.ends.iter().enumerate() {
                            if let Some(m) = model.get_mut(a + i) {
                                if *m == old[i] {
                                    *m = EntryLoc { blob: new.blob, entry_offset: prev, entry_len: e - prev };
                                }
                            }
                            prev = e;
                        }
                    }
                    _ => {
                        // Merge a newer table holding a contiguous append.
                        if model.is_empty() {
                            continue;
                        }
                        let mut newer = Region::default();
                        seq += 1;
                        let nr = run(LogQueue::Append, seq, last, 40, 1 + rnd(4) as u32);
                        let mut prev = nr.start;
                        for &e in &nr.ends {
                            model.push(EntryLoc { blob: nr.blob, entry_offset: prev, entry_len: e - prev });
                            prev = e;
                        }
                        append(&mut newer, nr);
                        newer.trunc_from = None;
                        r.merge_newer(newer).unwrap();
                    }
                }
                let got: Vec<EntryLoc> = r.locs().collect();
                assert_eq!(got, model, "case {_case}");
                if !model.is_empty() {
                    assert_eq!(r.first_index, model_first);
                    let i = rnd(model.len() as u64) as usize;
                    assert_eq!(r.get_entry(model_first + i as u64), Some(model[i]));
                    let from: Vec<EntryLoc> = r.locs_from(model_first + i as u64).collect();
                    assert_eq!(from, model[i..].to_vec());
                }
            }
        }
    }
}
