//! Blocks: prefix-compressed sorted entries with restart points.
//!
//! ```text
//! block        : entry* | restart offset fixed32 * num_restarts | footer fixed32
//! footer       : num_restarts (low 31 bits) | data-block hash index flag (bit 31)
//! data entry   : shared varint32 | unshared varint32 | value_len varint32
//!                | key[shared..] (unshared bytes) | value
//! index entry  : (format_version >= 4, "value delta encoded")
//!                shared varint32 | unshared varint32 | key delta | handle
//!                handle = offset varint64 | size varint64        when shared == 0
//!                       = zigzag varint64 (size - previous size) otherwise; the offset is
//!                         previous offset + previous size + 5
//! ```
//! A restart point is an entry stored with `shared == 0`; a reader binary-searches the
//! restart points and then scans forward. With the hash-index flag set (RocksDB's
//! kDataBlockBinaryAndHash, blocks up to 64 KiB), a hash map of `num_buckets` bytes and a
//! fixed16 `num_buckets` sit between the restart array and the footer; Shale skips it and
//! uses binary search.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::coding::{
    decode_fixed32, decode_varint32, decode_varint64, put_fixed32, put_varint32, put_varint64,
};
use crate::error::{Error, Result};
use crate::key::{user_key, InternalKeyComparator};

use super::format::{BlockHandle, BLOCK_TRAILER_SIZE};

const HASH_INDEX_FLAG: u32 = 1 << 31;
const MAX_HASH_INDEX_BLOCK: usize = 1 << 16;

/// Builds one block.
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    counter: usize,
    restart_interval: usize,
    last_key: Vec<u8>,
    delta_values: bool,
    finished: bool,
}

impl BlockBuilder {
    /// A builder for data, meta and properties blocks.
    pub fn new(restart_interval: usize) -> Self {
        Self::with_value_delta(restart_interval, false)
    }

    /// A builder for index blocks; `delta_values` is format_version >= 4's encoding.
    pub fn new_index(restart_interval: usize, delta_values: bool) -> Self {
        Self::with_value_delta(restart_interval, delta_values)
    }

    fn with_value_delta(restart_interval: usize, delta_values: bool) -> Self {
        BlockBuilder {
            buf: Vec::new(),
            restarts: vec![0],
            counter: 0,
            restart_interval: restart_interval.max(1),
            last_key: Vec::new(),
            delta_values,
            finished: false,
        }
    }

    pub fn reset(&mut self) {
        self.buf.clear();
        self.restarts.clear();
        self.restarts.push(0);
        self.counter = 0;
        self.last_key.clear();
        self.finished = false;
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The size of the block if finished now.
    pub fn current_size_estimate(&self) -> usize {
        self.buf.len() + 4 * self.restarts.len() + 4
    }

    /// RocksDB's estimate of the size after adding `key`/`value` (used by the flush policy).
    pub fn estimate_size_after(&self, key: &[u8], value: &[u8]) -> usize {
        let mut est = self.current_size_estimate() + key.len() + value.len();
        if self.counter >= self.restart_interval {
            est += 4;
        }
        est + 4
            + crate::coding::varint_length(key.len() as u64)
            + crate::coding::varint_length(value.len() as u64)
    }

    /// Starts an entry: returns the shared prefix length and writes the key delta.
    fn start_entry(&mut self, key: &[u8], value_len: Option<usize>) -> usize {
        debug_assert!(!self.finished);
        let mut shared = 0;
        if self.counter >= self.restart_interval {
            self.restarts.push(self.buf.len() as u32);
            self.counter = 0;
        } else {
            shared = key.iter().zip(&self.last_key).take_while(|(a, b)| a == b).count();
        }
        put_varint32(&mut self.buf, shared as u32);
        put_varint32(&mut self.buf, (key.len() - shared) as u32);
        if let Some(n) = value_len {
            put_varint32(&mut self.buf, n as u32);
        }
        self.buf.extend_from_slice(&key[shared..]);
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.counter += 1;
        shared
    }

    /// Adds an entry; keys must arrive in increasing order.
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        self.start_entry(key, Some(value.len()));
        self.buf.extend_from_slice(value);
    }

    /// Adds an index entry pointing at `handle`; `prev_handle` is the handle of the entry
    /// before (blocks are contiguous, so only the size difference is stored when the
    /// value is delta-encoded and the key shares a prefix with the previous one).
    pub fn add_index(&mut self, key: &[u8], handle: BlockHandle, prev_handle: Option<BlockHandle>) {
        let full = handle.encoded();
        if !self.delta_values {
            self.add(key, &full);
            return;
        }
        let shared = self.start_entry(key, None);
        match prev_handle {
            Some(prev) if shared != 0 => {
                debug_assert_eq!(handle.offset, prev.offset + prev.size + BLOCK_TRAILER_SIZE as u64);
                let delta = handle.size.wrapping_sub(prev.size) as i64;
                put_varint64(&mut self.buf, ((delta << 1) ^ (delta >> 63)) as u64);
            }
            _ => self.buf.extend_from_slice(&full),
        }
    }

    /// Appends the restart array and footer; the builder must be `reset` before reuse.
    pub fn finish(&mut self) -> &[u8] {
        if !self.finished {
            for &r in &self.restarts {
                put_fixed32(&mut self.buf, r);
            }
            put_fixed32(&mut self.buf, self.restarts.len() as u32);
            self.finished = true;
        }
        &self.buf
    }
}

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

/// A parsed, immutable block.
pub struct Block {
    data: Vec<u8>,
    restart_offset: usize,
    num_restarts: usize,
}

impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Block({} bytes, {} restarts)", self.data.len(), self.num_restarts)
    }
}

impl Block {
    /// Validates the footer and restart array bounds.
    pub fn new(data: Vec<u8>) -> Result<Block> {
        let size = data.len();
        if size < 4 {
            return Err(Error::corruption(format!("block too small ({size} bytes) for its footer")));
        }
        let footer = decode_fixed32(&data[size - 4..]);
        let mut end = size - 4;
        let mut num_restarts = footer as usize;
        if size <= MAX_HASH_INDEX_BLOCK && footer & HASH_INDEX_FLAG != 0 {
            num_restarts = (footer & !HASH_INDEX_FLAG) as usize;
            if end < 2 {
                return Err(Error::corruption("block too small for its hash index"));
            }
            let buckets = u16::from_le_bytes([data[end - 2], data[end - 1]]) as usize;
            end = end.checked_sub(2 + buckets).ok_or_else(|| {
                Error::corruption(format!("hash index of {buckets} buckets overruns a {size}-byte block"))
            })?;
        }
        let restart_offset =
            num_restarts.checked_mul(4).and_then(|n| end.checked_sub(n)).ok_or_else(|| {
                Error::corruption(format!("block of {size} bytes cannot hold {num_restarts} restarts"))
            })?;
        Ok(Block { data, restart_offset, num_restarts })
    }

    pub fn size(&self) -> usize {
        self.data.len()
    }

    pub fn data(&self) -> &[u8] {
        &self.data
    }

    pub fn num_restarts(&self) -> usize {
        self.num_restarts
    }

    /// An iterator over a data block whose keys are internal keys.
    pub fn iter(self: &Arc<Self>, icmp: InternalKeyComparator) -> BlockIter {
        BlockIter::new(self.clone(), KeyOrder::Internal(icmp), EntryFormat::Plain)
    }

    /// An iterator over a meta block (metaindex, properties, range deletions) in
    /// bytewise key order.
    pub fn meta_iter(self: &Arc<Self>) -> BlockIter {
        BlockIter::new(self.clone(), KeyOrder::Bytewise, EntryFormat::Plain)
    }

    /// All entries of the block in order, checking every entry.
    pub fn entries(self: &Arc<Self>) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut it = self.meta_iter();
        let mut out = Vec::new();
        it.seek_to_first_impl();
        while it.is_valid() {
            out.push((it.key.clone(), it.raw_value().to_vec()));
            it.next_impl();
        }
        it.status.clone().map(|_| out)
    }

    /// An iterator over an index block.
    pub fn index_iter(self: &Arc<Self>, icmp: InternalKeyComparator, opts: IndexFormat) -> IndexBlockIter {
        let order = if opts.key_is_user_key { KeyOrder::User(icmp) } else { KeyOrder::Internal(icmp) };
        let format = EntryFormat::Index { delta: opts.value_delta_encoded, first_key: opts.has_first_key };
        IndexBlockIter { inner: BlockIter::new(self.clone(), order, format) }
    }
}

/// How an index block is encoded (from the table properties).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexFormat {
    pub key_is_user_key: bool,
    pub value_delta_encoded: bool,
    /// kBinarySearchWithFirstKey: each value carries the block's first internal key.
    pub has_first_key: bool,
}

#[derive(Clone)]
enum KeyOrder {
    Internal(InternalKeyComparator),
    /// Stored keys are user keys; targets are internal keys compared by their user part.
    User(InternalKeyComparator),
    Bytewise,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EntryFormat {
    Plain,
    Index { delta: bool, first_key: bool },
}

/// A cursor over a block. Implements [`crate::iter::InternalIterator`] for data blocks.
pub struct BlockIter {
    block: Arc<Block>,
    order: KeyOrder,
    format: EntryFormat,
    /// Offset of the current entry; `restart_offset` when not valid.
    current: usize,
    next: usize,
    restart_index: usize,
    key: Vec<u8>,
    value: (usize, usize),
    handle: BlockHandle,
    status: Result<()>,
}

impl BlockIter {
    fn new(block: Arc<Block>, order: KeyOrder, format: EntryFormat) -> Self {
        let end = block.restart_offset;
        BlockIter {
            block,
            order,
            format,
            current: end,
            next: end,
            restart_index: 0,
            key: Vec::new(),
            value: (0, 0),
            handle: BlockHandle::default(),
            status: Ok(()),
        }
    }

    fn is_valid(&self) -> bool {
        self.status.is_ok() && self.current < self.block.restart_offset
    }

    fn raw_value(&self) -> &[u8] {
        &self.block.data[self.value.0..self.value.1]
    }

    fn corrupt(&mut self, what: &str) {
        self.status =
            Err(Error::corruption(format!("bad entry in block: {what} (at block offset {})", self.next)));
        self.invalidate();
    }

    fn invalidate(&mut self) {
        self.current = self.block.restart_offset;
        self.next = self.block.restart_offset;
        self.restart_index = self.block.num_restarts;
    }

    fn restart_point(&self, i: usize) -> Option<usize> {
        let p = self.block.restart_offset + 4 * i;
        let off = decode_fixed32(self.block.data.get(p..p + 4)?) as usize;
        (off <= self.block.restart_offset).then_some(off)
    }

    fn seek_to_restart(&mut self, i: usize) -> bool {
        match self.restart_point(i) {
            Some(off) => {
                self.key.clear();
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

    /// Decodes the entry at `self.next`; false at the end or on corruption.
    fn parse_next(&mut self) -> bool {
        let limit = self.block.restart_offset;
        self.current = self.next;
        if self.current >= limit {
            self.invalidate();
            return false;
        }
        let has_value_len = !matches!(self.format, EntryFormat::Index { delta: true, .. });
        let Some((shared, non_shared, value_len, p)) =
            decode_entry_header(&self.block.data[..limit], self.current, has_value_len)
        else {
            self.corrupt("truncated entry header");
            return false;
        };
        if shared > self.key.len() || limit - p < non_shared {
            self.corrupt("key overruns block");
            return false;
        }
        self.key.truncate(shared);
        self.key.extend_from_slice(&self.block.data[p..p + non_shared]);
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
        self.value = (vstart, vend);
        self.next = vend;
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

    fn compare(&self, key: &[u8], target: &[u8]) -> Ordering {
        match &self.order {
            KeyOrder::Internal(c) => c.compare(key, target),
            KeyOrder::User(c) => c.compare_user(key, user_key(target)),
            KeyOrder::Bytewise => key.cmp(target),
        }
    }

    fn seek_to_first_impl(&mut self) {
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
        if !self.seek_to_restart(self.block.num_restarts - 1) {
            return;
        }
        while self.parse_next() && self.next < self.block.restart_offset {}
    }

    fn seek_impl(&mut self, target: &[u8]) {
        self.status = Ok(());
        if self.block.num_restarts == 0 {
            self.invalidate();
            return;
        }
        // Find the last restart point whose key is < target.
        let (mut lo, mut hi) = (0usize, self.block.num_restarts - 1);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if !self.seek_to_restart(mid) || !self.parse_next() {
                if self.status.is_ok() {
                    self.corrupt("empty restart interval");
                }
                return;
            }
            if self.compare(&self.key, target) == Ordering::Less {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        if !self.seek_to_restart(lo) {
            return;
        }
        while self.parse_next() {
            if self.compare(&self.key, target) != Ordering::Less {
                return;
            }
        }
    }

    fn seek_for_prev_impl(&mut self, target: &[u8]) {
        self.seek_impl(target);
        if self.status.is_err() {
            return;
        }
        if !self.is_valid() {
            self.seek_to_last_impl();
        }
        while self.is_valid() && self.compare(&self.key, target) == Ordering::Greater {
            self.prev_impl();
        }
    }

    fn next_impl(&mut self) {
        if self.is_valid() {
            self.parse_next();
        }
    }

    fn prev_impl(&mut self) {
        if !self.is_valid() {
            return;
        }
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
        if !self.seek_to_restart(self.restart_index) {
            return;
        }
        while self.parse_next() && self.next < original {}
    }
}

impl crate::iter::InternalIterator for BlockIter {
    fn valid(&self) -> bool {
        self.is_valid()
    }
    fn seek_to_first(&mut self) {
        self.seek_to_first_impl()
    }
    fn seek_to_last(&mut self) {
        self.seek_to_last_impl()
    }
    fn seek(&mut self, target: &[u8]) {
        self.seek_impl(target)
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.seek_for_prev_impl(target)
    }
    fn next(&mut self) {
        self.next_impl()
    }
    fn prev(&mut self) {
        self.prev_impl()
    }
    fn key(&self) -> &[u8] {
        &self.key
    }
    fn value(&self) -> &[u8] {
        self.raw_value()
    }
    fn status(&self) -> Result<()> {
        self.status.clone()
    }
}

/// A cursor over an index block; each entry's value is the handle of a data block.
/// Keys are internal keys, or user keys when the table says `index_key_is_user_key`
/// (targets are always internal keys).
pub struct IndexBlockIter {
    inner: BlockIter,
}

impl IndexBlockIter {
    pub fn valid(&self) -> bool {
        self.inner.is_valid()
    }
    pub fn seek_to_first(&mut self) {
        self.inner.seek_to_first_impl()
    }
    pub fn seek_to_last(&mut self) {
        self.inner.seek_to_last_impl()
    }
    /// Positions at the first entry whose key is >= `target` (an internal key).
    pub fn seek(&mut self, target: &[u8]) {
        self.inner.seek_impl(target)
    }
    pub fn next(&mut self) {
        self.inner.next_impl()
    }
    pub fn prev(&mut self) {
        self.inner.prev_impl()
    }
    /// The separator key as stored (an internal key or a user key).
    pub fn key(&self) -> &[u8] {
        &self.inner.key
    }
    pub fn handle(&self) -> BlockHandle {
        self.inner.handle
    }
    pub fn status(&self) -> Result<()> {
        self.inner.status.clone()
    }
}

#[cfg(test)]
#[path = "block_tests.rs"]
mod tests;
