//! Cursors over a [`Block`]: [`BlockIter`] for data and meta blocks (internal-key or
//! bytewise order) and [`IndexBlockIter`] for index blocks, whose values are block handles
//! (full, or delta-encoded against the previous entry; see `block.rs` for the layout).
//!
//! ```text
//! entry at p : shared | unshared [| value_len] | key delta | value
//! seek       : binary search over restart keys (shared == 0), then a forward scan
//! prev       : back to the restart point before the current entry, then scan forward,
//!              keeping every entry of that interval in a cache so that the following
//!              `prev` steps within the interval are O(1) (RocksDB's prev-entries cache)
//! ```

use std::cell::RefCell;
use std::cmp::Ordering;
use std::ops::Deref;
use std::sync::Arc;

use crate::coding::{decode_fixed32, decode_varint32, decode_varint64};
use crate::error::{Error, Result};
use crate::key::{bytewise_compare, trailer, user_key, InternalKeyComparator};

use super::block::Block;
use super::format::{BlockHandle, BLOCK_TRAILER_SIZE};

/// Decodes `shared | unshared [| value_len]` at `p`; returns them and the offset after.
fn decode_entry_header(
    data: &[u8],
    mut p: usize,
    has_value_len: bool,
) -> Option<(usize, usize, Option<usize>, usize)> {
    let mut next = || -> Option<usize> {
        let (v, n) = decode_varint32(data.get(p..)?)?;
        p += n;
        Some(v as usize)
    };
    let shared = next()?;
    let non_shared = next()?;
    let value_len = if has_value_len { Some(next()?) } else { None };
    Some((shared, non_shared, value_len, p))
}

/// Appends the first `shared` bytes of the key at `key_buf[from..]` (the last key in the
/// buffer, at least `shared` bytes long) to `key_buf`. Keys are short, and one or two
/// fixed 16-byte copies cut to length cost less than a call to memcpy.
#[inline]
fn append_prefix(key_buf: &mut Vec<u8>, from: usize, shared: usize) {
    let start = key_buf.len();
    if shared == 0 {
        return;
    }
    if shared <= 16 && start - from >= 16 {
        let mut chunk = [0u8; 16];
        chunk.copy_from_slice(&key_buf[from..from + 16]);
        key_buf.extend_from_slice(&chunk);
        key_buf.truncate(start + shared);
    } else if (16..=32).contains(&shared) {
        // The first 16 and the last 16 bytes of the prefix, overlapping (a whole user
        // key shared: versions of one key).
        let mut head = [0u8; 16];
        let mut tail = [0u8; 16];
        head.copy_from_slice(&key_buf[from..from + 16]);
        tail.copy_from_slice(&key_buf[from + shared - 16..from + shared]);
        key_buf.extend_from_slice(&head);
        key_buf.truncate(start + shared - 16);
        key_buf.extend_from_slice(&tail);
    } else {
        key_buf.extend_from_within(from..from + shared);
    }
}

#[derive(Clone)]
pub(super) enum KeyOrder {
    Internal(InternalKeyComparator),
    /// `Internal` with user keys in byte order: compared in place (`bytewise_compare`), and
    /// a cursor holds no comparator (no reference count touched per block seek, which many
    /// reader threads would contend on).
    InternalBytewise,
    /// Stored keys are user keys; targets are internal keys compared by their user part.
    User(InternalKeyComparator),
    /// `User` with user keys in byte order.
    UserBytewise,
    Bytewise,
}

impl KeyOrder {
    /// The order of internal keys under `icmp`.
    pub(super) fn internal(icmp: &InternalKeyComparator) -> KeyOrder {
        if icmp.is_bytewise() {
            KeyOrder::InternalBytewise
        } else {
            KeyOrder::Internal(icmp.clone())
        }
    }

    /// Stored user keys against internal-key targets, under `icmp`.
    pub(super) fn user(icmp: &InternalKeyComparator) -> KeyOrder {
        if icmp.is_bytewise() {
            KeyOrder::UserBytewise
        } else {
            KeyOrder::User(icmp.clone())
        }
    }

    /// Orders the user keys `a` and `b` (counted as a user-key comparison, as the
    /// comparator's `compare_user` counts one).
    #[inline]
    fn compare_user(&self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            KeyOrder::Internal(c) | KeyOrder::User(c) => c.compare_user(a, b),
            KeyOrder::InternalBytewise | KeyOrder::UserBytewise => {
                crate::perf::count(crate::perf::Field::UserKeyComparisonCount, 1);
                bytewise_compare(a, b)
            }
            KeyOrder::Bytewise => a.cmp(b),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum EntryFormat {
    Plain,
    Index { delta: bool, first_key: bool },
}

/// A cursor over a block. Implements [`crate::iter::InternalIterator`] for data blocks.
/// `B` holds the block: an `Arc` for iterators, a reference for a point read (which then
/// touches no reference count shared with other reader threads).
pub struct BlockIter<B: Deref<Target = Block> = Arc<Block>> {
    block: B,
    order: KeyOrder,
    format: EntryFormat,
    /// Offset of the current entry; `restart_offset` when not valid.
    pub(super) current: usize,
    next: usize,
    restart_index: usize,
    /// The current key is `key_buf[key_start..]`. While `prev` scans an interval, each
    /// entry's key is appended after the previous one, so the cached entries' keys stay
    /// in this buffer and stepping back is a truncation.
    key_buf: Vec<u8>,
    key_start: usize,
    /// The current value is `block.data[value_start..next]`.
    value_start: usize,
    handle: BlockHandle,
    pub(super) status: Result<()>,
    /// Entries of the restart interval last scanned backward, up to the current one.
    prev_cache: PrevCache,
    /// An index block searched by interpolation (`IndexBlockSearch`, resolved per block).
    interpolation: bool,
    /// The entry last marked in the block's read-amplification bitmap (RocksDB's
    /// `last_bitmap_offset_`; `usize::MAX`: none yet).
    last_marked: std::cell::Cell<usize>,
    /// The block carries per-entry checksums (`block_protection_bytes_per_key`): each
    /// entry the cursor lands on is checked (`verify_entry`). Read once per block.
    pub(super) protected: bool,
    /// The block carries a read-amplification bitmap (`read_amp_bytes_per_bit`): `value`
    /// marks it. Read once per block, so that `value` tests a flag of the cursor only.
    read_amp: bool,
    /// (offset, end, index) of the entry last checked, so that a step to a neighbour
    /// finds its entry index without a scan (`usize::MAX`: none yet).
    verified: (usize, usize, u32),
}

/// One decoded entry of a restart interval, as `prev` needs it back: block offsets and
/// where its key lies in `key_buf` (u32: a block is smaller than 4 GiB, `Block::new`
/// refuses blocks of 4 GiB or more). An index block's handle goes
/// to `PrevCache::handles` instead, so that data blocks' entries stay 20 bytes.
#[derive(Clone, Copy)]
struct CachedEntry {
    current: u32,
    next: u32,
    value_start: u32,
    key_start: u32,
    key_end: u32,
}

/// The entries of one restart interval up to the current one, in block order; their keys
/// lie end to end in `key_buf`. Any forward step or seek empties it.
#[derive(Default)]
struct PrevCache {
    restart_index: usize,
    entries: Vec<CachedEntry>,
    /// Index blocks only: the handle of each entry of `entries`.
    handles: Vec<BlockHandle>,
}

impl PrevCache {
    #[inline]
    fn clear(&mut self) {
        self.entries.clear();
        self.handles.clear();
    }
}

/// Orders internal key `key` against a target given as its user key and trailer: user
/// keys in byte order, then the larger trailer (newer entry) first.
#[inline]
fn internal_bytewise(key: &[u8], target_user: &[u8], target_trailer: u64) -> Ordering {
    match bytewise_compare(user_key(key), target_user) {
        Ordering::Equal => target_trailer.cmp(&trailer(key)),
        o => o,
    }
}

thread_local! {
    /// Key buffers of this thread's dropped cursors, for its next ones. A point read makes
    /// two cursors in each table it searches (index block, data block); each allocated its
    /// key buffer at its first entry and freed it when dropped: about six allocations and
    /// frees a Get at db_bench's defaults, some 1.3k of its 30k instructions (callgrind).
    static SPARE_KEY_BUFS: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// Spare key buffers kept per thread, and the largest capacity kept (a cursor over long
/// keys gives its buffer back to the allocator).
const SPARE_KEY_BUFS_MAX: usize = 4;
const SPARE_KEY_BUF_MAX_CAPACITY: usize = 1024;

/// Blocks of at least this many restart points (index blocks of large tables) are searched
/// with the loads of the next steps asked for ahead (`prefetch_search`).
const PREFETCH_MIN_RESTARTS: usize = 64;

/// An empty key buffer: a spare one of this thread's, else a new (unallocated) one.
fn take_key_buf() -> Vec<u8> {
    SPARE_KEY_BUFS
        .try_with(|s| s.try_borrow_mut().ok().and_then(|mut v| v.pop()))
        .ok()
        .flatten()
        .unwrap_or_default()
}

impl<B: Deref<Target = Block>> Drop for BlockIter<B> {
    fn drop(&mut self) {
        let mut buf = std::mem::take(&mut self.key_buf);
        if buf.capacity() == 0 || buf.capacity() > SPARE_KEY_BUF_MAX_CAPACITY {
            return;
        }
        buf.clear();
        // During thread teardown the spares may be gone: the buffer is then just freed.
        let _ = SPARE_KEY_BUFS.try_with(|s| {
            if let Ok(mut v) = s.try_borrow_mut() {
                if v.len() < SPARE_KEY_BUFS_MAX {
                    v.push(buf);
                }
            }
        });
    }
}

impl<B: Deref<Target = Block>> BlockIter<B> {
    pub(super) fn new(block: B, order: KeyOrder, format: EntryFormat) -> Self {
        let end = block.restart_offset;
        BlockIter {
            block,
            order,
            format,
            current: end,
            next: end,
            restart_index: 0,
            key_buf: take_key_buf(),
            key_start: 0,
            value_start: 0,
            handle: BlockHandle::default(),
            status: Ok(()),
            prev_cache: PrevCache::default(),
            interpolation: false,
            last_marked: std::cell::Cell::new(usize::MAX),
            protected: false,
            read_amp: false,
            verified: (usize::MAX, usize::MAX, 0),
        }
        .with_protection_state()
    }

    /// Reads whether the block carries per-entry checksums (once per block).
    fn with_protection_state(mut self) -> Self {
        self.protected = self.block.kv.is_some();
        self.read_amp = self.block.read_amp.is_some();
        self
    }

    /// RocksDB's `DataBlockIter::value`: the entry handed out is marked in the block's
    /// read-amplification bitmap, once per entry moved to.
    #[inline(never)]
    fn mark_read_amp(&self) {
        if let Some(bitmap) = self.block.read_amp.as_deref() {
            if self.current < self.block.restart_offset && self.current != self.last_marked.get() {
                bitmap.mark(self.current as u32, (self.next as u32).wrapping_sub(1));
                self.last_marked.set(self.current);
            }
        }
    }

    /// After a move: checks the entry the cursor landed on against its checksum, when the
    /// block has them (one test of a flag otherwise).
    #[inline(always)]
    fn check_entry(&mut self) {
        if self.protected {
            self.verify_entry();
        }
    }

    /// RocksDB's per key-value check in `BlockIter::UpdateKey`: the current entry's key and
    /// value against its checksum; on a mismatch the cursor is invalid with RocksDB's
    /// Corruption, naming the entry's offset and index.
    #[inline(never)]
    fn verify_entry(&mut self) {
        if !self.is_valid() {
            return;
        }
        let (vc, vn, vi) = self.verified;
        let index = if self.current == vc {
            Some(vi)
        } else if self.current == vn {
            vi.checked_add(1)
        } else if self.next == vc {
            vi.checked_sub(1)
        } else {
            self.entry_index()
        };
        let ok = match (self.block.kv.as_deref(), index) {
            (Some(kv), Some(i)) => kv.matches(i, self.cur_key(), self.raw_value()),
            _ => false,
        };
        if ok {
            self.verified = (self.current, self.next, index.unwrap_or(0));
            return;
        }
        let shown = index.map_or_else(|| "unknown".to_string(), |i| i.to_string());
        self.status = Err(Error::corruption(format!(
            "Corrupted block entry: per key-value checksum verification failed. Offset: {}. Entry index: {shown}.",
            self.current
        )));
        self.invalidate();
    }

    /// The index of the current entry among the block's: its restart interval's first
    /// entry index, plus the entries from the interval's start to it (counted by a second
    /// cursor). None when the restart array does not lead to it.
    fn entry_index(&self) -> Option<u32> {
        let kv = self.block.kv.as_deref()?;
        // The last restart point at or before the current entry.
        let (mut lo, mut hi) = (0usize, self.block.num_restarts.checked_sub(1)?);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if self.restart_point(mid)? <= self.current {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let mut index = kv.base(lo)?;
        let mut walk = BlockIter::new(&*self.block, KeyOrder::Bytewise, self.format);
        if !walk.seek_to_restart(lo) {
            return None;
        }
        while walk.parse_next() {
            match walk.current.cmp(&self.current) {
                Ordering::Equal => return Some(index),
                Ordering::Greater => return None,
                Ordering::Less => index = index.checked_add(1)?,
            }
        }
        None
    }

    /// Seeks search the restart points by interpolation (index blocks in bytewise order
    /// only: in another order the keys' bytes say nothing of their place).
    pub(super) fn set_interpolation(&mut self, on: bool) {
        self.interpolation = on && matches!(self.order, KeyOrder::InternalBytewise | KeyOrder::UserBytewise);
    }

    /// Moves this cursor to another block of the same kind, keeping its buffers (a table
    /// iterator reuses one cursor for every data block it visits).
    pub(super) fn reset_block(&mut self, block: B) {
        self.block = block;
        self.status = Ok(());
        self.prev_cache.clear();
        self.last_marked.set(usize::MAX);
        self.protected = self.block.kv.is_some();
        self.read_amp = self.block.read_amp.is_some();
        self.verified = (usize::MAX, usize::MAX, 0);
        self.invalidate();
    }

    /// The block this cursor is on (what its keys and values lie in).
    pub(super) fn block(&self) -> &B {
        &self.block
    }

    #[inline]
    pub(super) fn is_valid(&self) -> bool {
        self.status.is_ok() && self.current < self.block.restart_offset
    }

    pub(super) fn raw_value(&self) -> &[u8] {
        &self.block.data[self.value_start..self.next]
    }

    fn corrupt(&mut self, what: &str) {
        self.status =
            Err(Error::corruption(format!("bad entry in block: {what} (at block offset {})", self.next)));
        self.invalidate();
    }

    fn invalidate(&mut self) {
        self.value_start = 0;
        self.current = self.block.restart_offset;
        self.next = self.block.restart_offset;
        self.restart_index = self.block.num_restarts;
    }

    pub(super) fn restart_point(&self, i: usize) -> Option<usize> {
        let p = self.block.restart_offset + 4 * i;
        let off = decode_fixed32(self.block.data.get(p..p + 4)?) as usize;
        (off <= self.block.restart_offset).then_some(off)
    }

    fn seek_to_restart(&mut self, i: usize) -> bool {
        match self.restart_point(i) {
            Some(off) => {
                self.key_buf.clear();
                self.key_start = 0;
                self.prev_cache.clear();
                self.restart_index = i;
                self.next = off;
                self.current = self.block.restart_offset;
                true
            }
            None => {
                self.corrupt("restart point out of range");
                false
            }
        }
    }

    /// The current key.
    #[inline]
    pub(super) fn cur_key(&self) -> &[u8] {
        &self.key_buf[self.key_start..]
    }

    /// Decodes the entry at `self.next`, replacing the current key; false at the end or on
    /// corruption.
    fn parse_next(&mut self) -> bool {
        self.prev_cache.clear();
        self.parse_next_entry(false)
    }

    /// Decodes the entry at `self.next`. With `append`, the new key is written after the
    /// current one (which stays in `key_buf`, for the prev cache) instead of over it.
    fn parse_next_entry(&mut self, append: bool) -> bool {
        let limit = self.block.restart_offset;
        self.current = self.next;
        if self.current >= limit {
            self.invalidate();
            return false;
        }
        let has_value_len = !matches!(self.format, EntryFormat::Index { delta: true, .. });
        let data = &self.block.data[..limit];
        let at = self.current;
        // Three one-byte varints at once (RocksDB's `DecodeEntry` fast path), else the
        // general decoding.
        let header = match data.get(at..at + 3) {
            Some(&[a, b, c]) if has_value_len && (a | b | c) < 0x80 => {
                Some((a as usize, b as usize, Some(c as usize), at + 3))
            }
            _ => decode_entry_header(data, at, has_value_len),
        };
        let Some((shared, non_shared, value_len, p)) = header else {
            self.corrupt("truncated entry header");
            return false;
        };
        if shared > self.key_buf.len() - self.key_start || limit - p < non_shared {
            self.corrupt("key overruns block");
            return false;
        }
        if append {
            let start = self.key_buf.len();
            append_prefix(&mut self.key_buf, self.key_start, shared);
            self.key_start = start;
        } else {
            self.key_buf.truncate(self.key_start + shared);
        }
        self.key_buf.extend_from_slice(&self.block.data[p..p + non_shared]);
        let vstart = p + non_shared;
        let vend = match (self.format, value_len) {
            (EntryFormat::Index { first_key, .. }, None) => {
                match self.decode_handle_delta(vstart, limit, shared != 0, first_key) {
                    Some(end) => end,
                    None => {
                        self.corrupt("bad delta-encoded index value");
                        return false;
                    }
                }
            }
            (_, n) => {
                let n = n.unwrap_or(0);
                if limit - vstart < n {
                    self.corrupt("value overruns block");
                    return false;
                }
                if let EntryFormat::Index { first_key, .. } = self.format {
                    if self.decode_handle_delta(vstart, vstart + n, false, first_key).is_none() {
                        self.corrupt("bad block handle in index entry");
                        return false;
                    }
                }
                vstart + n
            }
        };
        self.value_start = vstart;
        self.next = vend;
        if append {
            if u32::try_from(self.key_buf.len()).is_err() {
                self.corrupt("keys of a restart interval exceed 4 GiB");
                return false;
            }
            // Built from locals: re-reading the fields just stored stalls store forwarding.
            // Offsets within the block (`Block::new` refuses blocks of 4 GiB or more) and `key_buf`.
            self.prev_cache.entries.push(CachedEntry {
                current: self.current as u32,
                next: vend as u32,
                value_start: vstart as u32,
                key_start: self.key_start as u32,
                key_end: self.key_buf.len() as u32,
            });
            if matches!(self.format, EntryFormat::Index { .. }) {
                self.prev_cache.handles.push(self.handle);
            }
        }
        if shared == 0 {
            while self.restart_index + 1 < self.block.num_restarts {
                match self.restart_point(self.restart_index + 1) {
                    Some(r) if r <= self.current => self.restart_index += 1,
                    _ => break,
                }
            }
        }
        true
    }

    /// Decodes an index value (full or delta handle, then the optional first key) starting
    /// at `start`; returns its end.
    fn decode_handle_delta(
        &mut self,
        start: usize,
        limit: usize,
        is_delta: bool,
        first_key: bool,
    ) -> Option<usize> {
        let src = &self.block.data[start..limit];
        let mut used;
        if is_delta {
            let (z, n) = decode_varint64(src)?;
            let delta = ((z >> 1) as i64) ^ -((z & 1) as i64);
            let prev = self.handle;
            self.handle = BlockHandle::new(
                prev.offset.wrapping_add(prev.size).wrapping_add(BLOCK_TRAILER_SIZE as u64),
                prev.size.wrapping_add(delta as u64),
            );
            used = n;
        } else {
            let mut d = crate::coding::Decoder::new(src);
            self.handle = BlockHandle::decode_from(&mut d)?;
            used = src.len() - d.remaining().len();
        }
        if first_key {
            let (n, l) = decode_varint32(&src[used..])?;
            used += l;
            if src.len() - used < n as usize {
                return None;
            }
            used += n as usize;
        }
        Some(start + used)
    }

    #[inline]
    fn compare(&self, key: &[u8], target: &[u8]) -> Ordering {
        match &self.order {
            KeyOrder::Internal(c) => c.compare(key, target),
            KeyOrder::InternalBytewise => {
                crate::perf::count(crate::perf::Field::UserKeyComparisonCount, 1);
                internal_bytewise(key, user_key(target), trailer(target))
            }
            KeyOrder::User(c) => c.compare_user(key, user_key(target)),
            KeyOrder::UserBytewise => {
                crate::perf::count(crate::perf::Field::UserKeyComparisonCount, 1);
                bytewise_compare(key, user_key(target))
            }
            KeyOrder::Bytewise => key.cmp(target),
        }
    }

    pub(super) fn seek_to_first_impl(&mut self) {
        self.status = Ok(());
        if self.block.num_restarts == 0 {
            self.invalidate();
            return;
        }
        if self.seek_to_restart(0) {
            self.parse_next();
        }
    }

    fn seek_to_last_impl(&mut self) {
        self.status = Ok(());
        if self.block.num_restarts == 0 {
            self.invalidate();
            return;
        }
        self.scan_interval_before(self.block.num_restarts - 1, self.block.restart_offset);
    }

    /// Decodes the entries of restart interval `i` that start before offset `end`, caching
    /// each, and leaves the cursor on the last of them.
    fn scan_interval_before(&mut self, i: usize, end: usize) {
        if self.format == EntryFormat::Plain {
            return self.scan_plain_interval_before(i, end);
        }
        if !self.seek_to_restart(i) {
            return;
        }
        self.prev_cache.restart_index = i;
        while self.parse_next_entry(true) {
            if self.next >= end {
                break;
            }
        }
    }

    /// `scan_interval_before` for plain entries (data and meta blocks), in one loop over
    /// the interval: an entry header of three one-byte varints is read at once (RocksDB's
    /// `DecodeEntry` fast path), the restart index is `i` throughout, and each key is
    /// appended to `key_buf` after the one before it, for the cache.
    fn scan_plain_interval_before(&mut self, i: usize, end: usize) {
        if !self.seek_to_restart(i) {
            return;
        }
        self.prev_cache.restart_index = i;
        let limit = self.block.restart_offset;
        let data = &self.block.data[..limit];
        let key_buf = &mut self.key_buf;
        let entries = &mut self.prev_cache.entries;
        let mut p = self.next;
        let mut key_start = 0usize;
        let mut failure = None;
        while p < limit {
            let header = match data.get(p..p + 3) {
                Some(&[a, b, c]) if (a | b | c) < 0x80 => Some((a as usize, b as usize, c as usize, p + 3)),
                _ => match decode_entry_header(data, p, true) {
                    Some((shared, non_shared, Some(value_len), q)) => {
                        Some((shared, non_shared, value_len, q))
                    }
                    _ => None,
                },
            };
            let Some((shared, non_shared, value_len, q)) = header else {
                failure = Some((p, "truncated entry header"));
                break;
            };
            if shared > key_buf.len() - key_start || limit - q < non_shared {
                failure = Some((p, "key overruns block"));
                break;
            }
            let vstart = q + non_shared;
            if limit - vstart < value_len {
                failure = Some((p, "value overruns block"));
                break;
            }
            let new_start = key_buf.len();
            append_prefix(key_buf, key_start, shared);
            key_buf.extend_from_slice(&data[q..vstart]);
            if u32::try_from(key_buf.len()).is_err() {
                failure = Some((p, "keys of a restart interval exceed 4 GiB"));
                break;
            }
            let vend = vstart + value_len;
            // Offsets within the block (`Block::new` refuses blocks of 4 GiB or more).
            entries.push(CachedEntry {
                current: p as u32,
                next: vend as u32,
                value_start: vstart as u32,
                key_start: new_start as u32,
                key_end: key_buf.len() as u32,
            });
            key_start = new_start;
            p = vend;
            if vend >= end {
                break;
            }
        }
        if let Some((at, what)) = failure {
            self.next = at;
            return self.corrupt(what);
        }
        match entries.last() {
            Some(e) => {
                self.key_start = key_start;
                self.current = e.current as usize;
                self.next = e.next as usize;
                self.value_start = e.value_start as usize;
            }
            None => self.invalidate(),
        }
    }

    /// Steps back within the cached interval; false when the cache does not hold the
    /// entry before the current one.
    #[inline]
    fn prev_from_cache(&mut self) -> bool {
        let cache = &mut self.prev_cache;
        let n = cache.entries.len();
        if n < 2 || cache.entries[n - 1].current as usize != self.current {
            return false;
        }
        cache.entries.pop();
        let e = cache.entries[n - 2];
        if !cache.handles.is_empty() {
            cache.handles.pop();
            if let Some(h) = cache.handles.last() {
                self.handle = *h;
            }
        }
        self.key_buf.truncate(e.key_end as usize);
        self.key_start = e.key_start as usize;
        self.current = e.current as usize;
        self.next = e.next as usize;
        self.value_start = e.value_start as usize;
        self.restart_index = cache.restart_index;
        true
    }

    /// The key of restart entry `i`, read in place: a restart entry shares no prefix, so
    /// its key lies whole in the block and the binary search compares it there, without
    /// copying it or decoding the entry's value. `Err` names what is wrong.
    #[inline]
    fn restart_key(&self, i: usize) -> std::result::Result<&[u8], &'static str> {
        let off = self.restart_point(i).ok_or("restart point out of range")?;
        let data = &self.block.data[..self.block.restart_offset];
        let has_value_len = !matches!(self.format, EntryFormat::Index { delta: true, .. });
        // Two or three one-byte varints at once (RocksDB's `DecodeEntry` fast path).
        let (shared, non_shared, p) = match data.get(off..off + 3) {
            Some(&[a, b, c]) if has_value_len && (a | b | c) < 0x80 => (a as usize, b as usize, off + 3),
            Some(&[a, b, _]) if !has_value_len && (a | b) < 0x80 => (a as usize, b as usize, off + 2),
            _ => match decode_entry_header(data, off, has_value_len) {
                Some((shared, non_shared, _, p)) => (shared, non_shared, p),
                None => return Err("truncated entry header"),
            },
        };
        if shared != 0 {
            return Err("restart entry shares a prefix");
        }
        data.get(p..p + non_shared).ok_or("key overruns block")
    }

    fn seek_impl(&mut self, target: &[u8]) {
        self.status = Ok(());
        if self.block.num_restarts == 0 {
            self.invalidate();
            return;
        }
        if self.interpolation {
            self.seek_interpolated(target);
            return;
        }
        // Find the last restart point whose key is < target; the keys are compared where
        // they lie in the block.
        let (mut lo, mut hi) = (0usize, self.block.num_restarts - 1);
        let ahead = self.block.num_restarts >= PREFETCH_MIN_RESTARTS;
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if ahead {
                self.prefetch_search(lo, mid, hi);
            }
            let less = match self.restart_key(mid) {
                Ok(k) => self.compare(k, target) == Ordering::Less,
                Err(what) => {
                    self.next = self.restart_point(mid).unwrap_or(self.block.restart_offset);
                    self.corrupt(what);
                    return;
                }
            };
            if less {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        if !self.seek_to_restart(lo) {
            return;
        }
        if self.format == EntryFormat::Plain && matches!(self.order, KeyOrder::InternalBytewise) {
            self.scan_internal_bytewise(target);
            return;
        }
        while self.parse_next() {
            if self.compare(self.cur_key(), target) != Ordering::Less {
                return;
            }
        }
    }

    /// Asks the processor to load, while the binary search compares restart key `mid` of
    /// `lo..=hi`, the keys of the two restart points the next step may compare and the
    /// restart-array entries of the four after them. In a large index block (a 64 MiB
    /// table's has some 17000 restart points) each step of a Get's search read an entry of
    /// the restart array and then the key it points to, two loads one after the other,
    /// each a cache miss in the lower steps (a profile of readrandom with an 8 MiB cache put
    /// 10% of the cycles in this search, nine tenths at those two loads); loaded ahead, the
    /// next steps' misses overlap this one's.
    #[inline]
    fn prefetch_search(&self, lo: usize, mid: usize, hi: usize) {
        let data = self.block.data.as_ptr();
        let restarts = self.block.restart_offset;
        // The next range is mid..=hi (the key is less than the target) or lo..=mid - 1.
        for (l, h) in [(mid, hi), (lo, mid - 1)] {
            if l >= h {
                continue;
            }
            let next = (l + h).div_ceil(2);
            if let Some(off) = self.restart_point(next) {
                shale_base::sys::prefetch(data.wrapping_add(off));
            }
            for (gl, gh) in [(next, h), (l, next - 1)] {
                if gl < gh {
                    shale_base::sys::prefetch(data.wrapping_add(restarts + 4 * (gl + gh).div_ceil(2)));
                }
            }
        }
    }

    /// `seek_impl` by interpolation search (RocksDB's `InterpolationSeekRestartPointIndex`):
    /// the restart point found is the same as binary search's, the last one whose key is
    /// below `target` (else the first), then the same forward scan.
    fn seek_interpolated(&mut self, target: &[u8]) {
        let lo = match self.interpolation_restart(target) {
            Ok(i) => i,
            Err((i, what)) => {
                self.next = self.restart_point(i).unwrap_or(self.block.restart_offset);
                self.corrupt(what);
                return;
            }
        };
        if !self.seek_to_restart(lo) {
            return;
        }
        while self.parse_next() {
            if self.compare(self.cur_key(), target) != Ordering::Less {
                return;
            }
        }
    }

    /// The last restart point whose key is below `target` (0 if none), found by
    /// interpolation: each restart key is valued by the 8 bytes (big-endian, zero padded)
    /// of its user key that follow the prefix shared by the block's first and last user
    /// keys (in bytewise order every key between shares it), and the next probe is placed
    /// where the target's value falls between the values of the window's ends. As RocksDB's,
    /// a window of 8 restarts or fewer, equal end values, or 8 probes in a row that did not
    /// halve the window turn the rest of the search binary. Only the probes are compared
    /// (and counted as key comparisons); reading the ends' bytes is not a comparison.
    /// `Err` names the restart point that could not be read and what is wrong with it.
    fn interpolation_restart(&self, target: &[u8]) -> std::result::Result<usize, (usize, &'static str)> {
        const GUARD_LEN: usize = 8;
        const MAX_POOR_SEARCHES: u32 = 8;
        let internal = matches!(self.order, KeyOrder::InternalBytewise);
        let user = |k: &'_ [u8]| -> usize {
            if internal {
                k.len().saturating_sub(8)
            } else {
                k.len()
            }
        };
        let key = |i: usize| self.restart_key(i).map_err(|w| (i, w));
        let (mut lo, mut hi) = (0usize, self.block.num_restarts - 1);
        let first = key(lo)?;
        let first = &first[..user(first)];
        let last = key(hi)?;
        let last = &last[..user(last)];
        let shared = first.iter().zip(last).take_while(|(a, b)| a == b).count();
        let value = |k: &[u8]| -> u64 {
            let mut b = [0u8; 8];
            let rest = k.get(shared..).unwrap_or_default();
            let n = rest.len().min(8);
            b[..n].copy_from_slice(&rest[..n]);
            u64::from_be_bytes(b)
        };
        let target_user = user_key(target);
        let n = target_user.len().min(shared);
        let target_value = match target_user[..n].cmp(&first[..n]) {
            Ordering::Equal if n == shared => value(target_user),
            // Shorter than the shared prefix and a prefix of it, or below it: before every key.
            Ordering::Equal | Ordering::Less => 0,
            Ordering::Greater => u64::MAX,
        };
        let mut poor = 0u32;
        while lo < hi {
            let mut mid = (lo + hi).div_ceil(2);
            if hi - lo > GUARD_LEN && poor < MAX_POOR_SEARCHES {
                let lo_key = key(lo)?;
                let hi_key = key(hi)?;
                let (lo_value, hi_value) = (value(&lo_key[..user(lo_key)]), value(&hi_key[..user(hi_key)]));
                if lo_value < hi_value {
                    mid = if target_value <= lo_value {
                        lo + 1
                    } else if target_value >= hi_value {
                        hi
                    } else {
                        let span = (target_value - lo_value) as u128 * (hi - lo) as u128;
                        let offset = (span / (hi_value - lo_value) as u128) as usize;
                        (lo + offset).clamp(lo + 1, hi)
                    };
                }
            }
            let less = self.compare(key(mid)?, target) == Ordering::Less;
            let before = hi - lo;
            if less {
                lo = mid;
            } else {
                hi = mid - 1;
            }
            if hi - lo > before / 2 {
                poor += 1;
            } else {
                poor = 0;
            }
        }
        Ok(lo)
    }

    /// `seek_impl`'s forward scan from the restart point just set, for a data block of
    /// internal keys in byte order (the default table): the loop of `parse_next` and
    /// `compare`, with nothing done per entry that only the entry the scan stops at needs
    /// (the cursor's fields, the restart index, the prev cache, the perf count). A point
    /// read scans about half a restart interval in each data block it searches; the general
    /// loop cost about 200 instructions an entry. Leaves the cursor as that loop does:
    /// on the first entry >= target, invalid at the block's end, or with the same
    /// corruption status.
    fn scan_internal_bytewise(&mut self, target: &[u8]) {
        let limit = self.block.restart_offset;
        let (tu, tt) = (user_key(target), trailer(target));
        let mut p = self.next;
        let mut compares = 0u64;
        // The key buffer holds only the current key (`seek_to_restart` emptied it).
        debug_assert_eq!(self.key_start, 0);
        let stop = loop {
            if p >= limit {
                break None;
            }
            let data = &self.block.data[..limit];
            let header = match data.get(p..p + 3) {
                Some(&[a, b, c]) if (a | b | c) < 0x80 => Some((a as usize, b as usize, c as usize, p + 3)),
                _ => decode_entry_header(data, p, true).map(|(s, n, v, q)| (s, n, v.unwrap_or(0), q)),
            };
            let Some((shared, non_shared, value_len, q)) = header else {
                self.next = p;
                self.corrupt("truncated entry header");
                return;
            };
            if shared > self.key_buf.len() || limit - q < non_shared {
                self.next = p;
                self.corrupt("key overruns block");
                return;
            }
            self.key_buf.truncate(shared);
            self.key_buf.extend_from_slice(&data[q..q + non_shared]);
            let vstart = q + non_shared;
            if limit - vstart < value_len {
                self.next = p;
                self.corrupt("value overruns block");
                return;
            }
            compares += 1;
            let k = &self.key_buf[..];
            let ord = internal_bytewise(k, tu, tt);
            if ord != Ordering::Less {
                break Some((p, vstart, vstart + value_len));
            }
            p = vstart + value_len;
        };
        crate::perf::count(crate::perf::Field::UserKeyComparisonCount, compares);
        match stop {
            None => self.invalidate(),
            Some((current, value_start, next)) => {
                self.current = current;
                self.value_start = value_start;
                self.next = next;
                // As `parse_next_entry` moves it at each entry that starts an interval.
                while self.restart_index + 1 < self.block.num_restarts {
                    match self.restart_point(self.restart_index + 1) {
                        Some(r) if r <= current => self.restart_index += 1,
                        _ => break,
                    }
                }
            }
        }
    }

    /// A point lookup's seek (RocksDB's `DataBlockIter::SeekForGet`): with the block's hash
    /// index, only the restart interval the index names for `target`'s user key is scanned.
    /// Returns false when that user key is in neither this block nor any later one (the
    /// cursor's position then means nothing); otherwise the cursor is where `seek` would
    /// put it for the lookup, or past the end of the block.
    pub fn seek_for_get(&mut self, target: &[u8]) -> bool {
        let found = self.seek_for_get_impl(target);
        self.check_entry();
        found
    }

    fn seek_for_get_impl(&mut self, target: &[u8]) -> bool {
        let Some((start, end)) = self.block.hash_buckets else {
            self.seek_impl(target);
            return true;
        };
        let uk = user_key(target);
        let n = self.block.num_restarts;
        let restart = match super::data_block_hash::lookup(&self.block.data[start..end], uk) {
            super::data_block_hash::COLLISION => {
                self.seek_impl(target);
                return true;
            }
            // The key may still be in the next block (a boundary key between blocks may be
            // any key): scan the last interval, which stops at the first key >= target.
            super::data_block_hash::NO_ENTRY => n.saturating_sub(1),
            r => r as usize,
        };
        self.status = Ok(());
        if restart >= n {
            self.corrupt("hash index names a restart interval the block does not have");
            return true;
        }
        if !self.seek_to_restart(restart) {
            return true;
        }
        let limit = if restart + 1 < n {
            match self.restart_point(restart + 1) {
                Some(l) => l,
                None => {
                    self.corrupt("restart point out of range");
                    return true;
                }
            }
        } else {
            self.block.restart_offset
        };
        // Scan the interval only: stop at the first key >= target, or at the first key of
        // the next interval.
        while self.parse_next() {
            if self.compare(self.cur_key(), target) != Ordering::Less || self.current >= limit {
                break;
            }
        }
        if !self.is_valid() {
            // The end of the block (or corruption, in the status): the key may be in the next block.
            return true;
        }
        let found = self.order.compare_user(user_key(self.cur_key()), uk);
        if found != Ordering::Equal {
            return false;
        }
        // RocksDB keeps the hash answer only for these entry kinds; others seek again.
        let k = self.cur_key();
        let vtype = k.len().checked_sub(8).map_or(0xff, |i| k[i]);
        const KEPT: [u8; 7] = [0x1, 0x0, 0x2, 0x7, 0x11, 0x16, 0x18];
        if !KEPT.contains(&vtype) {
            self.seek_impl(target);
        }
        true
    }

    fn seek_for_prev_impl(&mut self, target: &[u8]) {
        self.seek_impl(target);
        if self.status.is_err() {
            return;
        }
        if !self.is_valid() {
            self.seek_to_last_impl();
        }
        while self.is_valid() && self.compare(self.cur_key(), target) == Ordering::Greater {
            self.prev_impl();
        }
    }

    pub(super) fn next_impl(&mut self) {
        if self.is_valid() {
            self.parse_next();
        }
    }

    /// One step back: the cached interval in the common case (inlined into callers), the
    /// scan of the previous interval otherwise.
    #[inline]
    fn prev_impl(&mut self) {
        if self.is_valid() && !self.prev_from_cache() {
            self.prev_slow();
        }
    }

    #[inline(never)]
    fn prev_slow(&mut self) {
        let original = self.current;
        loop {
            match self.restart_point(self.restart_index) {
                Some(r) if r < original => break,
                Some(_) => {}
                None => return self.corrupt("restart point out of range"),
            }
            if self.restart_index == 0 {
                self.invalidate();
                return;
            }
            self.restart_index -= 1;
        }
        self.scan_interval_before(self.restart_index, original);
    }
}

impl<B: Deref<Target = Block> + Send> crate::iter::InternalIterator for BlockIter<B> {
    fn valid(&self) -> bool {
        self.is_valid()
    }
    fn seek_to_first(&mut self) {
        self.seek_to_first_impl();
        self.check_entry();
    }
    fn seek_to_last(&mut self) {
        self.seek_to_last_impl();
        self.check_entry();
    }
    fn seek(&mut self, target: &[u8]) {
        self.seek_impl(target);
        self.check_entry();
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.seek_for_prev_impl(target);
        self.check_entry();
    }
    fn next(&mut self) {
        self.next_impl();
        self.check_entry();
    }
    fn prev(&mut self) {
        self.prev_impl();
        self.check_entry();
    }
    fn key(&self) -> &[u8] {
        self.cur_key()
    }
    #[inline]
    fn value(&self) -> &[u8] {
        if self.read_amp {
            self.mark_read_amp();
        }
        self.raw_value()
    }
    fn status(&self) -> Result<()> {
        self.status.clone()
    }
}

/// A cursor over an index block; each entry's value is the handle of a data block.
/// Keys are internal keys, or user keys when the table says `index_key_is_user_key`
/// (targets are always internal keys).
pub struct IndexBlockIter<B: Deref<Target = Block> = Arc<Block>> {
    pub(super) inner: BlockIter<B>,
}

impl<B: Deref<Target = Block>> IndexBlockIter<B> {
    pub fn valid(&self) -> bool {
        self.inner.is_valid()
    }
    pub fn seek_to_first(&mut self) {
        self.inner.seek_to_first_impl();
        self.inner.check_entry();
    }
    pub fn seek_to_last(&mut self) {
        self.inner.seek_to_last_impl();
        self.inner.check_entry();
    }
    /// Positions at the first entry whose key is >= `target` (an internal key).
    pub fn seek(&mut self, target: &[u8]) {
        self.inner.seek_impl(target);
        self.inner.check_entry();
    }
    pub fn next(&mut self) {
        self.inner.next_impl();
        self.inner.check_entry();
    }
    pub fn prev(&mut self) {
        self.inner.prev_impl();
        self.inner.check_entry();
    }
    /// The separator key as stored (an internal key or a user key).
    pub fn key(&self) -> &[u8] {
        self.inner.cur_key()
    }
    pub fn handle(&self) -> BlockHandle {
        self.inner.handle
    }
    pub fn status(&self) -> Result<()> {
        self.inner.status.clone()
    }

    /// kBinarySearchWithFirstKey: the first internal key of the current entry's data block
    /// (the length-prefixed tail of the value, after its full or delta-encoded handle).
    /// None when the index carries no first keys, the cursor is not valid, or the entry
    /// is malformed. Decoded on demand (only `sst_dump --command=raw` asks), so the
    /// cursor's stepping stays as it is.
    pub fn first_internal_key(&self) -> Option<&[u8]> {
        let EntryFormat::Index { delta, first_key: true } = self.inner.format else {
            return None;
        };
        if !self.inner.is_valid() {
            return None;
        }
        let data = self.inner.block.data.get(..self.inner.block.restart_offset)?;
        let (shared, _, value_len, _) = decode_entry_header(data, self.inner.current, !delta)?;
        let v = self.inner.raw_value();
        // As `parse_next_entry`: without a stored value length, an entry sharing a key
        // prefix holds a delta-encoded size (one varint), else a full handle (two).
        let varints = if value_len.is_none() && shared != 0 { 1 } else { 2 };
        let mut used = 0;
        for _ in 0..varints {
            let (_, n) = decode_varint64(v.get(used..)?)?;
            used += n;
        }
        let (len, n) = decode_varint32(v.get(used..)?)?;
        let start = used + n;
        v.get(start..start.checked_add(len as usize)?)
    }
}
