//! Blocks: prefix-compressed sorted entries with restart points.
//!
//! ```text
//! block        : entry* | restart offset fixed32 * num_restarts | footer fixed32
//! footer       : num_restarts (low 28 bits) | data-block hash index flag (bit 31)
//!                | uniform-keys flag (bit 29: RocksDB 11's `uniform_cv_threshold`, index
//!                  blocks whose restart keys are evenly spread) | separated keys and
//!                  values (bit 28: RocksDB 11's `separate_key_value_in_data_block`, below);
//!                  bit 30 reserved
//! data entry   : shared varint32 | unshared varint32 | value_len varint32
//!                | key[shared..] (unshared bytes) | value
//! separated    : (bit 28, data blocks only)
//!   block      : key entry* | value* | restart offset fixed32 * num_restarts
//!                | [hash index] | values_section_offset fixed32 | footer fixed32
//!   key entry  : shared varint32 | unshared varint32 | value_len varint32
//!                | value_offset varint32 (restart entries only: the value's offset from
//!                  values_section_offset) | key[shared..]
//!                another entry's value starts where the previous entry's value ends
//! index entry  : (format_version >= 4, "value delta encoded")
//!                shared varint32 | unshared varint32 | key delta | handle
//!                handle = offset varint64 | size varint64        when shared == 0
//!                       = zigzag varint64 (size - previous size) otherwise; the offset is
//!                         previous offset + previous size + 5
//!                | [first key len varint64 | first key]  (kBinarySearchWithFirstKey: the
//!                  data block's first internal key, after the handle in either form and
//!                  after a whole handle before format_version 4)
//! ```
//! A restart point is an entry stored with `shared == 0`; a reader binary-searches the
//! restart points and then scans forward. A separated block is rewritten into the ordinary
//! layout when it is read (`interleave_separated`), so the iterator knows one layout. With
//! the hash-index flag set (RocksDB's kDataBlockBinaryAndHash, blocks up to 64 KiB), a hash
//! map of `num_buckets` bytes and a fixed16 `num_buckets` sit between the restart array and
//! the footer (`data_block_hash.rs`); point lookups (`BlockIter::seek_for_get`) probe it.
//!
//! A data block read from a file with `read_amp_bytes_per_bit` set (and statistics on)
//! carries RocksDB's read-amplification bitmap ([`ReadAmpBitmap`], in memory only): one bit
//! per `bytes_per_bit` bytes of the entries (up to the restart array), set as a cursor hands
//! out an entry's value.
//!
//! With `block_protection_bytes_per_key` = N (1, 2, 4 or 8; RocksDB's per key-value
//! checksum protection of in-memory blocks), a data, index or metaindex block read from
//! its file carries, in memory only, one checksum of N bytes per entry ([`KvProtection`]):
//!
//! ```text
//! sums  : entry 0's N bytes | entry 1's N bytes | ...   (entries in block order)
//! entry : low N bytes (little-endian) of key::kv_checksum(stored key, value as stored)
//! index : entry i of restart interval r is entry  r * interval + i  (every interval but
//!         the last holds `interval` entries, as RocksDB's builder writes them), or
//!         bases[r] + i when a block's intervals differ
//! ```
//! Every entry a cursor lands on is checked against its bytes (`block_iter.rs`); a
//! mismatch leaves the cursor invalid with RocksDB's Corruption "Corrupted block entry:
//! per key-value checksum verification failed. Offset: <o>. Entry index: <i>.". The sums
//! are charged to the block's memory (block cache usage), as RocksDB's `checksum_size_`.

use std::sync::atomic::{AtomicU32, Ordering as AtomicOrdering};
use std::sync::Arc;

use crate::coding::{decode_fixed32, decode_varint32, put_fixed32, put_varint32, put_varint64};
use crate::error::{Error, Result};
use crate::key::InternalKeyComparator;

use super::data_block_hash::HashIndexBuilder;
use super::format::{BlockHandle, BLOCK_TRAILER_SIZE};

const HASH_INDEX_FLAG: u32 = 1 << 31;
/// RocksDB 11's `kUniformKeysBit`: a hint for its interpolation search; the keys and their
/// order do not depend on it.
const UNIFORM_KEYS_FLAG: u32 = 1 << 29;
/// RocksDB 11's `kSeparatedKVBit`.
const SEPARATED_KV_FLAG: u32 = 1 << 28;
/// RocksDB 11's `DataBlockFooter::kMaxNumRestarts`.
const MAX_NUM_RESTARTS: u32 = (1 << 28) - 1;
const MAX_HASH_INDEX_BLOCK: usize = 1 << 16;

/// Builds one block.
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    counter: usize,
    restart_interval: usize,
    last_key: Vec<u8>,
    delta_values: bool,
    /// RocksDB's `use_delta_encoding` (data blocks; on elsewhere): keys share a prefix with
    /// the key before. Off, every entry stores `shared == 0`.
    delta_keys: bool,
    finished: bool,
    /// The data-block hash index being collected (`DataBlockIndexType::BinaryAndHash`).
    hash: Option<HashIndexBuilder>,
    /// RocksDB's `uniform_cv_threshold` on an index block: (threshold, keys are user keys).
    uniform: Option<(f64, bool)>,
    /// RocksDB 11's `separate_key_value_in_data_block` (data blocks): the values gathered
    /// apart, written after the keys by `finish`.
    values: Option<Vec<u8>>,
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
            delta_keys: true,
            finished: false,
            hash: None,
            uniform: None,
            values: None,
        }
    }

    /// RocksDB's `uniform_cv_threshold` (index blocks; < 0: off): the footer's uniform-keys
    /// flag is set when the coefficient of variation of the gaps between the restart keys
    /// (each read as a big-endian u64 after their common prefix, the internal-key trailer
    /// left out unless `is_user_key`) is below `threshold`, as RocksDB's
    /// `BlockBuilder::ScanForUniformity`.
    pub fn with_uniform_cv_threshold(mut self, threshold: f64, is_user_key: bool) -> Self {
        self.uniform = (threshold >= 0.0).then_some((threshold, is_user_key));
        self
    }

    /// The key stored at restart point `i` (stored whole there).
    fn restart_key(&self, i: usize) -> Option<&[u8]> {
        let mut p = *self.restarts.get(i)? as usize;
        let mut next = || -> Option<usize> {
            let (v, n) = crate::coding::decode_varint32(self.buf.get(p..)?)?;
            p += n;
            Some(v as usize)
        };
        let _shared = next()?;
        let non_shared = next()?;
        if !self.delta_values {
            next()?;
        }
        self.buf.get(p..p + non_shared)
    }

    /// RocksDB's `ScanForUniformity` (see [`BlockBuilder::with_uniform_cv_threshold`]).
    fn keys_are_uniform(&self) -> bool {
        let Some((threshold, is_user_key)) = self.uniform else { return false };
        let n = self.restarts.len();
        if n < 3 {
            return false;
        }
        let trim = |k: &'_ [u8]| -> Option<Vec<u8>> {
            if is_user_key {
                Some(k.to_vec())
            } else {
                k.len().checked_sub(8).map(|l| k[..l].to_vec())
            }
        };
        let (Some(first), Some(last)) =
            (self.restart_key(0).and_then(trim), self.restart_key(n - 1).and_then(trim))
        else {
            return false;
        };
        let prefix = first.iter().zip(&last).take_while(|(a, b)| a == b).count();
        // Welford's running mean and squared deviation of the gaps.
        let (mut prev, mut count, mut mean, mut m2) = (0u64, 0usize, 0f64, 0f64);
        for i in 0..n {
            let Some(k) = self.restart_key(i).and_then(trim) else { return false };
            let at = prefix.min(k.len());
            let mut v = [0u8; 8];
            let take = (k.len() - at).min(8);
            v[..take].copy_from_slice(&k[at..at + take]);
            let value = u64::from_be_bytes(v);
            if count > 0 {
                let gap = value.wrapping_sub(prev) as f64;
                let delta = gap - mean;
                mean += delta / count as f64;
                m2 += delta * (gap - mean);
            }
            prev = value;
            count += 1;
        }
        let gaps = count - 1;
        if gaps < 2 || mean <= 0.0 {
            return false;
        }
        let cv = (m2 / gaps as f64).sqrt() / mean;
        cv >= 0.0 && cv < threshold
    }

    /// RocksDB's `use_delta_encoding = false`: keys are stored whole (`shared == 0`).
    pub fn without_key_delta(mut self) -> Self {
        self.delta_keys = false;
        self
    }

    /// RocksDB 11's `separate_key_value_in_data_block`: a data block with its keys first,
    /// then its values, each restart entry naming its value's offset among the values.
    pub fn with_separated_values(mut self) -> Self {
        self.values = Some(Vec::new());
        self
    }

    /// A data-block builder that also writes the hash index, `util_ratio` keys per bucket.
    pub fn new_with_hash_index(restart_interval: usize, util_ratio: f64) -> Self {
        let mut b = Self::new(restart_interval);
        b.hash = Some(HashIndexBuilder::new(util_ratio));
        b
    }

    pub fn reset(&mut self) {
        self.buf.clear();
        self.restarts.clear();
        self.restarts.push(0);
        self.counter = 0;
        self.last_key.clear();
        self.finished = false;
        if let Some(v) = self.values.as_mut() {
            v.clear();
        }
        // As RocksDB's BlockBuilder::Reset: an index turned off by too many restart
        // intervals stays off for the rest of the table.
        if let Some(h) = self.hash.as_mut().filter(|h| h.valid()) {
            h.reset();
        }
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The size of the block if finished now.
    pub fn current_size_estimate(&self) -> usize {
        self.buf.len()
            + 4 * self.restarts.len()
            + 4
            + self.hash.as_ref().filter(|h| h.valid()).map_or(0, |h| h.estimate_size())
            + self.values.as_ref().map_or(0, |v| v.len() + 4)
    }

    /// RocksDB's estimate of the size after adding `key`/`value` (used by the flush policy).
    /// In an index block with delta-encoded values, an entry off a restart point is
    /// counted with half the handle and no value length, as RocksDB's `EstimateSizeAfterKV`.
    pub fn estimate_size_after(&self, key: &[u8], value: &[u8]) -> usize {
        let restart = self.counter >= self.restart_interval;
        let full_value = !self.delta_values || restart;
        let mut est =
            self.current_size_estimate() + key.len() + if full_value { value.len() } else { value.len() / 2 };
        if restart {
            est += 4;
        }
        if let Some(v) = self.values.as_ref().filter(|_| restart || self.counter == 0) {
            est += crate::coding::varint_length(v.len() as u64);
        }
        est += 4 + crate::coding::varint_length(key.len() as u64);
        if full_value {
            est += crate::coding::varint_length(value.len() as u64);
        }
        est
    }

    /// Starts an entry: returns the shared prefix length and writes the key delta.
    /// `share`: false stores the key whole (RocksDB's `skip_delta_encoding`).
    fn start_entry(&mut self, key: &[u8], value_len: Option<usize>, share: bool) -> usize {
        debug_assert!(!self.finished);
        let mut shared = 0;
        if self.counter >= self.restart_interval {
            self.restarts.push(self.buf.len() as u32);
            self.counter = 0;
        } else if share && self.delta_keys {
            shared = key.iter().zip(&self.last_key).take_while(|(a, b)| a == b).count();
        }
        put_varint32(&mut self.buf, shared as u32);
        put_varint32(&mut self.buf, (key.len() - shared) as u32);
        if let Some(n) = value_len {
            put_varint32(&mut self.buf, n as u32);
        }
        if let Some(v) = self.values.as_ref().filter(|_| self.counter == 0) {
            put_varint32(&mut self.buf, v.len() as u32);
        }
        self.buf.extend_from_slice(&key[shared..]);
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.counter += 1;
        shared
    }

    /// Adds an entry; keys must arrive in increasing order.
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        self.start_entry(key, Some(value.len()), true);
        self.values.as_mut().unwrap_or(&mut self.buf).extend_from_slice(value);
        if let Some(h) = self.hash.as_mut().filter(|h| h.valid()) {
            // Data blocks hold internal keys: the index maps their user keys.
            h.add(&key[..key.len().saturating_sub(8)], self.restarts.len() - 1);
        }
    }

    /// Adds an index entry pointing at `handle`; `prev_handle` is the handle of the entry
    /// before (blocks are contiguous, so only the size difference is stored when the
    /// value is delta-encoded and the key shares a prefix with the previous one).
    pub fn add_index(&mut self, key: &[u8], handle: BlockHandle, prev_handle: Option<BlockHandle>) {
        self.add_index_with_first_key(key, handle, prev_handle, None)
    }

    /// `add_index` for kBinarySearchWithFirstKey: `first_key` (the data block's first
    /// internal key) follows the handle, length-prefixed, as RocksDB's
    /// `IndexValue::EncodeTo` with `have_first_key` writes it (after the full handle, or after
    /// the size delta of a delta-encoded value).
    pub fn add_index_with_first_key(
        &mut self,
        key: &[u8],
        handle: BlockHandle,
        prev_handle: Option<BlockHandle>,
        first_key: Option<&[u8]>,
    ) {
        let mut full = handle.encoded();
        let put_first = |buf: &mut Vec<u8>| {
            if let Some(k) = first_key {
                put_varint64(buf, k.len() as u64);
                buf.extend_from_slice(k);
            }
        };
        if !self.delta_values {
            put_first(&mut full);
            self.add(key, &full);
            return;
        }
        // Without the previous handle (the first entry, or one after padding) the entry is
        // stored whole, so that a reader decodes its full handle.
        let shared = self.start_entry(key, None, prev_handle.is_some());
        match prev_handle {
            Some(prev) if shared != 0 => {
                debug_assert_eq!(handle.offset, prev.offset + prev.size + BLOCK_TRAILER_SIZE as u64);
                let delta = handle.size.wrapping_sub(prev.size) as i64;
                put_varint64(&mut self.buf, ((delta << 1) ^ (delta >> 63)) as u64);
            }
            _ => self.buf.extend_from_slice(&full),
        }
        put_first(&mut self.buf);
    }

    /// Appends the restart array and footer; the builder must be `reset` before reuse.
    pub fn finish(&mut self) -> &[u8] {
        if !self.finished {
            let with_hash = self
                .hash
                .as_ref()
                .is_some_and(|h| h.valid() && self.current_size_estimate() <= MAX_HASH_INDEX_BLOCK);
            let uniform = self.keys_are_uniform();
            let values_offset = self.buf.len() as u32;
            if let Some(v) = self.values.as_ref() {
                self.buf.extend_from_slice(v);
            }
            for &r in &self.restarts {
                put_fixed32(&mut self.buf, r);
            }
            let mut footer = self.restarts.len() as u32;
            if uniform {
                footer |= UNIFORM_KEYS_FLAG;
            }
            if let (true, Some(h)) = (with_hash, self.hash.as_ref()) {
                h.finish(&mut self.buf);
                footer |= HASH_INDEX_FLAG;
            }
            if self.values.is_some() {
                put_fixed32(&mut self.buf, values_offset);
                footer |= SEPARATED_KV_FLAG;
            }
            put_fixed32(&mut self.buf, footer);
            self.finished = true;
        }
        &self.buf
    }
}

/// A parsed, immutable block.
pub struct Block {
    pub(super) data: Vec<u8>,
    pub(super) restart_offset: usize,
    pub(super) num_restarts: usize,
    /// The hash index's bucket array, `data[start..end]` (data blocks written with
    /// kDataBlockBinaryAndHash).
    pub(super) hash_buckets: Option<(usize, usize)>,
    /// The footer's uniform-keys flag (RocksDB 11's `is_uniform`): `IndexBlockSearch::Auto`
    /// searches such an index block by interpolation.
    pub(super) uniform: bool,
    /// RocksDB's read-amplification bitmap (`read_amp_bytes_per_bit`; data blocks only).
    pub(super) read_amp: Option<Box<ReadAmpBitmap>>,
    /// The per-entry checksums (`block_protection_bytes_per_key`; see the module doc).
    pub(super) kv: Option<Box<KvProtection>>,
}

/// The per-entry checksums of a protected block (see the module doc).
pub struct KvProtection {
    /// N: bytes kept per entry (1, 2, 4 or 8).
    pub(super) bytes: u8,
    /// Entry i's checksum is `sums[i * N..(i + 1) * N]`.
    pub(super) sums: Box<[u8]>,
    /// Entries per restart interval (every interval but the last).
    pub(super) interval: u32,
    /// The index of each restart interval's first entry, when the intervals are not all
    /// `interval` entries long.
    pub(super) bases: Option<Box<[u32]>>,
}

impl KvProtection {
    /// The index of the first entry of restart interval `r`.
    #[inline]
    pub(super) fn base(&self, r: usize) -> Option<u32> {
        match &self.bases {
            Some(b) => b.get(r).copied(),
            None => u32::try_from(r).ok()?.checked_mul(self.interval),
        }
    }

    /// Whether entry `i` with `key` and (stored) `value` matches its checksum.
    #[inline]
    pub(super) fn matches(&self, i: u32, key: &[u8], value: &[u8]) -> bool {
        let n = usize::from(self.bytes);
        let at = i as usize * n;
        self.sums
            .get(at..at + n)
            .is_some_and(|s| crate::key::kv_checksum(key, value).to_le_bytes()[..n] == *s)
    }

    /// The memory the checksums take (RocksDB's `checksum_size_`, plus the bases when kept).
    pub fn memory(&self) -> usize {
        self.sums.len() + self.bases.as_ref().map_or(0, |b| b.len() * 4)
    }
}

/// RocksDB's `BlockReadAmpBitmap`: which parts of a data block's entries were handed out.
///
/// ```text
/// bit i : bytes [i * 2^pow - rnd, (i + 1) * 2^pow - rnd) of the entries were read
///         (2^pow: bytes_per_bit rounded down to a power of two; rnd: a random offset in
///          0..bytes_per_bit drawn per block, so that estimates are unbiased)
/// ```
/// Made when the block is read from its file, which counts the entries' bytes in
/// `rocksdb.read.amp.total.read.bytes`; marking an entry whose first bit is new counts the
/// bits it spans, times `2^pow`, in `rocksdb.read.amp.estimate.useful.bytes`. The bits are
/// atomic: cursors on several threads share a cached block.
pub struct ReadAmpBitmap {
    bits: Box<[AtomicU32]>,
    pow: u32,
    rnd: u32,
    statistics: Arc<crate::statistics::Statistics>,
}

thread_local! {
    /// This thread's xorshift64 state for the bitmaps' random offsets (RocksDB draws them
    /// from its thread-local `Random`); seeded on first use.
    static READ_AMP_RNG: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// A draw in `0..n` (n > 0) from this thread's generator.
fn uniform_below(n: u32) -> u32 {
    let x = READ_AMP_RNG
        .try_with(|c| {
            let mut x = c.get();
            if x == 0 {
                use std::hash::{BuildHasher, Hasher};
                let mut h = std::collections::hash_map::RandomState::new().build_hasher();
                h.write_u64(0x5eed);
                x = h.finish() | 1;
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            c.set(x);
            x
        })
        .unwrap_or(0);
    (x % u64::from(n.max(1))) as u32
}

impl ReadAmpBitmap {
    /// A bitmap over `block_size` bytes (> 0) at `bytes_per_bit` (> 0) bytes a bit; counts
    /// the bytes in `rocksdb.read.amp.total.read.bytes`.
    pub fn new(
        block_size: usize,
        bytes_per_bit: u32,
        statistics: Arc<crate::statistics::Statistics>,
    ) -> Self {
        // As RocksDB's: the offset is drawn below the value as given, the bit width is that
        // value rounded down to a power of two.
        let rnd = uniform_below(bytes_per_bit);
        let pow = bytes_per_bit.max(1).ilog2();
        let bits_needed = ((block_size.max(1) - 1) >> pow) + 1;
        let words = (bits_needed - 1) / 32 + 1;
        statistics.record_tick(crate::statistics::Ticker::ReadAmpTotalReadBytes, block_size as u64);
        ReadAmpBitmap { bits: (0..words).map(|_| AtomicU32::new(0)).collect(), pow, rnd, statistics }
    }

    /// The bytes one bit stands for (a power of two).
    pub fn bytes_per_bit(&self) -> u32 {
        1 << self.pow
    }

    /// Marks the entry at `start..=end` (block offsets) as read, as RocksDB's `Mark`: when
    /// the bit of its first whole `2^pow` span was clear, the spans it covers count as
    /// useful bytes. The arithmetic wraps as RocksDB's 32-bit arithmetic does.
    pub fn mark(&self, start: u32, end: u32) {
        let unit = 1u32 << self.pow;
        let start_bit = start.wrapping_add(unit).wrapping_sub(self.rnd).wrapping_sub(1) >> self.pow;
        let end_bit = end.wrapping_add(unit).wrapping_sub(self.rnd) >> self.pow;
        if start_bit >= end_bit {
            return;
        }
        let Some(word) = self.bits.get((start_bit / 32) as usize) else { return };
        let mask = 1u32 << (start_bit % 32);
        if word.fetch_or(mask, AtomicOrdering::Relaxed) & mask == 0 {
            let useful = u64::from(end_bit - start_bit) << self.pow;
            self.statistics.record_tick(crate::statistics::Ticker::ReadAmpEstimateUsefulBytes, useful);
        }
    }

    /// The bitmap's memory, as RocksDB's `ApproximateMemoryUsage` adds it to its block's.
    pub fn memory(&self) -> usize {
        std::mem::size_of::<Self>() + self.bits.len() * 4
    }
}

/// Rewrites a data block written with RocksDB 11's `separate_key_value_in_data_block`
/// (footer bit 28) into the ordinary layout: each entry's value moved back behind its key,
/// the restart offsets recomputed, the hash index and the uniform flag kept. An entry at a
/// restart point (its offset is in the restart array, as RocksDB's reader counts it by
/// `block_restart_interval`) carries its value's offset in the values section; every other
/// entry's value follows the previous entry's. Only data blocks use the layout (RocksDB's
/// table builder sets it on the data block builder alone), so entries are read as
/// `shared | unshared | value_len`.
///
/// Why a rewrite and not a second decoding path in the iterator: the iterator's entry
/// loops (forward, backward cache, seek scans, hash lookups) stay as they are, so tables of
/// the ordinary layout pay nothing; a separated block costs one copy when it is read from
/// the file (the block cache then keeps the rewritten block).
fn interleave_separated(data: &[u8]) -> Result<Vec<u8>> {
    let size = data.len();
    let corrupt =
        |what: &str| Error::corruption(format!("separated key/value block of {size} bytes: {what}"));
    if size < 8 {
        return Err(corrupt("too small for its values-section offset"));
    }
    let packed = decode_fixed32(&data[size - 4..]);
    let values_off = decode_fixed32(&data[size - 8..size - 4]) as usize;
    let num_restarts = (packed & MAX_NUM_RESTARTS) as usize;
    if packed & !(HASH_INDEX_FLAG | UNIFORM_KEYS_FLAG | SEPARATED_KV_FLAG) > MAX_NUM_RESTARTS {
        return Err(Error::corruption("Unrecognized feature in block footer (reserved bits set)"));
    }
    let mut end = size - 8;
    let mut hash = &data[end..end];
    if packed & HASH_INDEX_FLAG != 0 {
        if end < 2 {
            return Err(corrupt("too small for its hash index"));
        }
        let buckets = u16::from_le_bytes([data[end - 2], data[end - 1]]) as usize;
        let start = end
            .checked_sub(2 + buckets)
            .filter(|_| buckets > 0)
            .ok_or_else(|| corrupt(&format!("hash index of {buckets} buckets overruns the block")))?;
        hash = &data[start..end];
        end = start;
    }
    let restart_offset = num_restarts
        .checked_mul(4)
        .and_then(|n| end.checked_sub(n))
        .ok_or_else(|| corrupt(&format!("cannot hold {num_restarts} restarts")))?;
    if values_off > restart_offset {
        return Err(corrupt(&format!(
            "values section offset {values_off} beyond the restart array at {restart_offset}"
        )));
    }
    let restart_at = |i: usize| decode_fixed32(&data[restart_offset + 4 * i..]) as usize;
    let mut out = Vec::with_capacity(size);
    let mut restarts = Vec::with_capacity(num_restarts);
    let mut next_restart = 0usize;
    let mut p = 0usize;
    let mut value_pos = values_off;
    let keys = &data[..values_off];
    let varint = |p: &mut usize| -> Result<usize> {
        let (v, n) = decode_varint32(keys.get(*p..).unwrap_or_default())
            .ok_or_else(|| corrupt(&format!("bad entry header at offset {}", *p)))?;
        *p += n;
        Ok(v as usize)
    };
    while p < values_off {
        let entry = p;
        let at_restart = next_restart < num_restarts && restart_at(next_restart) == entry;
        let shared = varint(&mut p)?;
        let non_shared = varint(&mut p)?;
        let value_len = varint(&mut p)?;
        if at_restart {
            value_pos = values_off
                .checked_add(varint(&mut p)?)
                .ok_or_else(|| corrupt(&format!("value offset overflows at offset {entry}")))?;
            restarts.push(out.len());
            next_restart += 1;
        } else if restarts.is_empty() {
            return Err(corrupt("first entry is not a restart point"));
        }
        let key_end = p
            .checked_add(non_shared)
            .filter(|&e| e <= values_off)
            .ok_or_else(|| corrupt(&format!("key of the entry at offset {entry} overruns the keys")))?;
        let value_end = value_pos
            .checked_add(value_len)
            .filter(|&e| e <= restart_offset)
            .ok_or_else(|| corrupt(&format!("value of the entry at offset {entry} overruns the values")))?;
        put_varint32(&mut out, shared as u32);
        put_varint32(&mut out, non_shared as u32);
        put_varint32(&mut out, value_len as u32);
        out.extend_from_slice(&data[p..key_end]);
        out.extend_from_slice(&data[value_pos..value_end]);
        p = key_end;
        value_pos = value_end;
    }
    // An empty block's restart points (RocksDB writes one) sit at the end of the keys.
    while next_restart < num_restarts && restart_at(next_restart) == values_off {
        restarts.push(out.len());
        next_restart += 1;
    }
    if next_restart != num_restarts {
        return Err(corrupt(&format!(
            "{} of {num_restarts} restart points name no entry start",
            num_restarts - next_restart
        )));
    }
    for r in restarts {
        let r = u32::try_from(r).map_err(|_| corrupt("rewritten block exceeds 4 GiB"))?;
        put_fixed32(&mut out, r);
    }
    out.extend_from_slice(hash);
    put_fixed32(&mut out, packed & !SEPARATED_KV_FLAG);
    Ok(out)
}

impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Block({} bytes, {} restarts)", self.data.len(), self.num_restarts)
    }
}

/// A dropped block hands its buffer to the dropping thread's next uncompressed block
/// (`shale_base::block_buf`): a Get that reads a block from the file evicts another from the
/// cache, and this skips that buffer's free and the next one's malloc.
impl Drop for Block {
    fn drop(&mut self) {
        shale_base::block_buf::give(std::mem::take(&mut self.data));
    }
}

impl Block {
    /// Validates the footer and restart array bounds.
    pub fn new(data: Vec<u8>) -> Result<Block> {
        let size = data.len();
        if size < 4 {
            return Err(Error::corruption(format!("block too small ({size} bytes) for its footer")));
        }
        // Offsets in a block are 32-bit (the restart array's; RocksDB's `Block` too), and
        // the block iterator's backward cache keeps them as u32.
        if u32::try_from(size).is_err() {
            return Err(Error::corruption(format!("block of {size} bytes is larger than 4 GiB")));
        }
        let mut footer = decode_fixed32(&data[size - 4..]);
        let mut end = size - 4;
        // RocksDB 11's feature bits (28, 29) below the hash-index bit: the uniform-keys hint
        // is a search hint only; a block with keys and values stored apart is rewritten in
        // memory into the ordinary layout (`interleave_separated`) before it is used.
        let low = footer & !HASH_INDEX_FLAG;
        let mut uniform = false;
        if low > MAX_NUM_RESTARTS {
            if low & SEPARATED_KV_FLAG != 0 {
                return Block::new(interleave_separated(&data)?);
            }
            uniform = footer & UNIFORM_KEYS_FLAG != 0;
            footer &= !UNIFORM_KEYS_FLAG;
            if footer & !HASH_INDEX_FLAG > MAX_NUM_RESTARTS {
                return Err(Error::corruption("Unrecognized feature in block footer (reserved bits set)"));
            }
        }
        let mut num_restarts = footer as usize;
        let mut hash_buckets = None;
        if size <= MAX_HASH_INDEX_BLOCK && footer & HASH_INDEX_FLAG != 0 {
            num_restarts = (footer & !HASH_INDEX_FLAG) as usize;
            if end < 2 {
                return Err(Error::corruption("block too small for its hash index"));
            }
            let buckets = u16::from_le_bytes([data[end - 2], data[end - 1]]) as usize;
            end = end.checked_sub(2 + buckets).filter(|_| buckets > 0).ok_or_else(|| {
                Error::corruption(format!("hash index of {buckets} buckets overruns a {size}-byte block"))
            })?;
            hash_buckets = Some((end, end + buckets));
        }
        let restart_offset =
            num_restarts.checked_mul(4).and_then(|n| end.checked_sub(n)).ok_or_else(|| {
                Error::corruption(format!("block of {size} bytes cannot hold {num_restarts} restarts"))
            })?;
        Ok(Block { data, restart_offset, num_restarts, hash_buckets, uniform, read_amp: None, kv: None })
    }

    /// This data block with RocksDB's read-amplification bitmap (`read_amp_bytes_per_bit`,
    /// 0: none) over its entries, counting in `statistics`, as RocksDB's `Block` constructor
    /// makes one for a data block read with statistics on (and entries to cover).
    pub fn with_read_amp(
        mut self,
        bytes_per_bit: u32,
        statistics: Option<&Arc<crate::statistics::Statistics>>,
    ) -> Block {
        if let (true, Some(s)) = (bytes_per_bit != 0 && self.restart_offset != 0, statistics) {
            self.read_amp = Some(Box::new(ReadAmpBitmap::new(self.restart_offset, bytes_per_bit, s.clone())));
        }
        self
    }

    /// This data or metaindex block (entries `shared | unshared | value_len | key | value`)
    /// with a checksum of `bytes` bytes per entry (`block_protection_bytes_per_key`; 0:
    /// none), as RocksDB's `InitializeDataBlockProtectionInfo` and
    /// `InitializeMetaIndexBlockProtectionInfo`.
    pub fn protected(self, bytes: u8) -> Result<Block> {
        self.with_protection(bytes, EntryFormat::Plain)
    }

    /// This index block (a flat index, an index partition, the top level of a partitioned
    /// index or filter) of format `opts` with a checksum of `bytes` bytes per entry over its
    /// key and its value as stored, as RocksDB's `InitializeIndexBlockProtectionInfo`.
    pub fn protected_index(self, bytes: u8, opts: IndexFormat) -> Result<Block> {
        self.with_protection(bytes, Self::index_entry(opts))
    }

    fn with_protection(mut self, bytes: u8, format: EntryFormat) -> Result<Block> {
        if bytes == 0 || self.num_restarts == 0 {
            return Ok(self);
        }
        if ![1, 2, 4, 8].contains(&bytes) {
            return Err(Error::invalid_argument(
                "Block per key-value checksum protection only supports 0, 1, 2, 4 or 8 bytes per key.",
            ));
        }
        let n = usize::from(bytes);
        let mut sums = Vec::new();
        let mut bases = Vec::with_capacity(self.num_restarts);
        let count = {
            let mut it = BlockIter::new(&self, KeyOrder::Bytewise, format);
            it.seek_to_first_impl();
            let mut count = 0u32;
            while it.is_valid() {
                // Each restart point must be the start of an entry.
                while bases.len() < self.num_restarts {
                    let Some(r) = it.restart_point(bases.len()) else { break };
                    if r > it.current {
                        break;
                    }
                    if r < it.current {
                        return Err(Error::corruption(format!(
                            "bad entry in block: restart point {} at offset {r} is inside an entry",
                            bases.len()
                        )));
                    }
                    bases.push(count);
                }
                let sum = crate::key::kv_checksum(it.cur_key(), it.raw_value()).to_le_bytes();
                sums.extend_from_slice(&sum[..n]);
                count = count.checked_add(1).ok_or_else(|| Error::corruption("block of 2^32 entries"))?;
                it.next_impl();
            }
            it.status.clone()?;
            count
        };
        if count == 0 {
            return Ok(self);
        }
        if bases.len() != self.num_restarts {
            return Err(Error::corruption(format!(
                "bad entry in block: restart point {} does not start an entry",
                bases.len()
            )));
        }
        let interval = bases.get(1).copied().unwrap_or(u32::try_from(sums.len() / n).unwrap_or(u32::MAX));
        let uniform = bases.iter().enumerate().all(|(r, &b)| Some(b) == (r as u32).checked_mul(interval));
        self.kv = Some(Box::new(KvProtection {
            bytes,
            sums: sums.into_boxed_slice(),
            interval,
            bases: (!uniform).then(|| bases.into_boxed_slice()),
        }));
        Ok(self)
    }

    /// The block's per-entry checksums, if it has them (`block_protection_bytes_per_key`).
    pub fn kv_protection(&self) -> Option<&KvProtection> {
        self.kv.as_deref()
    }

    /// Bytes this block takes in memory beyond its contents, charged with it to the block
    /// cache: the read-amplification bitmap and the per-entry checksums, as RocksDB's
    /// `Block::ApproximateMemoryUsage` adds them.
    pub fn extra_memory(&self) -> usize {
        self.read_amp.as_ref().map_or(0, |b| b.memory()) + self.kv.as_ref().map_or(0, |k| k.memory())
    }

    /// Test hook: flips the bits of byte `at` of the block's contents after it was parsed
    /// (and protected), as an in-memory corruption would.
    #[cfg(test)]
    pub fn corrupt_byte_for_test(&mut self, at: usize) {
        if let Some(b) = self.data.get_mut(at) {
            *b ^= 0xff;
        }
    }

    /// The block's read-amplification bitmap, if it has one.
    pub fn read_amp(&self) -> Option<&ReadAmpBitmap> {
        self.read_amp.as_deref()
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

    /// Whether the footer carries RocksDB 11's uniform-keys flag (`uniform_cv_threshold`).
    pub fn is_uniform(&self) -> bool {
        self.uniform
    }

    /// An iterator over a data block whose keys are internal keys.
    pub fn iter(self: &Arc<Self>, icmp: &InternalKeyComparator) -> BlockIter {
        BlockIter::new(self.clone(), KeyOrder::internal(icmp), EntryFormat::Plain)
    }

    /// `iter` on a borrowed block, for a point read (no reference count is touched).
    pub fn iter_ref<'a>(&'a self, icmp: &InternalKeyComparator) -> BlockIter<&'a Block> {
        BlockIter::new(self, KeyOrder::internal(icmp), EntryFormat::Plain)
    }

    /// An iterator over a meta block (metaindex, properties, range deletions) in
    /// bytewise key order.
    pub fn meta_iter(self: &Arc<Self>) -> BlockIter {
        BlockIter::new(self.clone(), KeyOrder::Bytewise, EntryFormat::Plain)
    }

    /// All entries of the block in order, checking every entry.
    pub fn entries(self: &Arc<Self>) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        use crate::iter::InternalIterator;
        let mut it = self.meta_iter();
        let mut out = Vec::new();
        it.seek_to_first();
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        it.status().map(|_| out)
    }

    /// An iterator over an index block.
    pub fn index_iter(self: &Arc<Self>, icmp: &InternalKeyComparator, opts: IndexFormat) -> IndexBlockIter {
        let mut inner = BlockIter::new(self.clone(), Self::index_order(icmp, opts), Self::index_entry(opts));
        inner.set_interpolation(self.interpolates(opts.search));
        IndexBlockIter { inner }
    }

    /// `index_iter` on a borrowed block, for a point read.
    pub fn index_iter_ref<'a>(
        &'a self,
        icmp: &InternalKeyComparator,
        opts: IndexFormat,
    ) -> IndexBlockIter<&'a Block> {
        let mut inner = BlockIter::new(self, Self::index_order(icmp, opts), Self::index_entry(opts));
        inner.set_interpolation(self.interpolates(opts.search));
        IndexBlockIter { inner }
    }

    /// RocksDB's `Block::NewIndexIterator` resolution of `index_block_search_type`: `Auto`
    /// interpolates on a block flagged uniform, `Interpolation` on every block. The block
    /// iterator interpolates only in bytewise key order (RocksDB refuses `kInterpolation`
    /// with another comparator at open; `kAuto` falls back to binary search).
    fn interpolates(&self, search: IndexBlockSearch) -> bool {
        match search {
            IndexBlockSearch::Binary => false,
            IndexBlockSearch::Interpolation => true,
            IndexBlockSearch::Auto => self.uniform,
        }
    }

    fn index_order(icmp: &InternalKeyComparator, opts: IndexFormat) -> KeyOrder {
        if opts.key_is_user_key {
            KeyOrder::user(icmp)
        } else {
            KeyOrder::internal(icmp)
        }
    }

    fn index_entry(opts: IndexFormat) -> EntryFormat {
        EntryFormat::Index { delta: opts.value_delta_encoded, first_key: opts.has_first_key }
    }
}

/// How an index block is encoded (from the table properties).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexFormat {
    pub key_is_user_key: bool,
    pub value_delta_encoded: bool,
    /// kBinarySearchWithFirstKey: each value carries the block's first internal key.
    pub has_first_key: bool,
    /// How a seek searches the block's restart points (the reader's
    /// `index_block_search_type`, not a property of the table).
    pub search: IndexBlockSearch,
}

impl IndexFormat {
    /// This format searched by binary search (RocksDB searches the top level of a
    /// partitioned index or filter so, whatever `index_block_search_type` says).
    pub fn binary(self) -> IndexFormat {
        IndexFormat { search: IndexBlockSearch::Binary, ..self }
    }
}

/// RocksDB's `BlockBasedTableOptions::BlockSearchType` (`index_block_search_type`): how a
/// seek finds the restart point in an index block (a flat index or an index partition).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IndexBlockSearch {
    /// `kBinary` (RocksDB's default): binary search over the restart keys.
    #[default]
    Binary,
    /// `kInterpolation`: interpolation search, guessing each probe from the 8 bytes that
    /// follow the prefix shared by the block's first and last keys (bytewise order only).
    Interpolation,
    /// `kAuto`: interpolation on blocks written with the uniform-keys flag
    /// (`uniform_cv_threshold`), binary search on the others.
    Auto,
}

pub use super::block_iter::{BlockIter, IndexBlockIter};
use super::block_iter::{EntryFormat, KeyOrder};

#[cfg(test)]
#[path = "block_tests.rs"]
mod tests;
